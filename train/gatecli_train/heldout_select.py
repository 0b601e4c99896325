"""Checkpoint selection on held-out sources (``[train] select_on = "heldout"``).

The score a run keeps its best step by is the mean decision macro-F1 (argmax, before the
policy) over the ``select`` half of every :data:`gatecli.evaluation.halves.SELECTION_SUITES`
suite and the dev split, plus ``select_safety_ap`` times dev's safety average precision. A
part weighs ``min(turns, FULL_WEIGHT_TURNS) / FULL_WEIGHT_TURNS``: a suite counts fully from
300 turns. With equal weights the 54 select turns of passages_heldout moved the first run's
score more than any other suite (1.2.59: -0.057 there, +0.027 on its report half). Dev
stays one part of it so that the corpus's own decisions still count; the held-out parts are
there because dev could not tell a good seed from a bad one (stop 52: dev 1.7898 against
1.7877, held-out suites apart by more than the gate's tolerances).

``select_false_events`` subtracts that weight times the false-event rate: of the turns whose
gold events are empty, the share given an event (raw logit > 0, before the fitted
thresholds), per part with at least :data:`MIN_SUPPORT` such turns, weighted as above. The
decision score cannot see events: 1.2.59 failed its release gate on CoCoNot (0.073 ->
0.094) and context (0.135 -> 0.160) false events while its decision score had held.

A run selected this way is reported with ``gatecli eval --half report`` (``release.sh``
passes it when the recipe says so): the turns it chose on are never the turns it is
reported on.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gatecli.evaluation.halves import SELECTION_SUITES, take
from gatecli.evaluation.metrics import multi_label, single_label
from gatecli.evaluation.suites import load_suite, resolve_suites
from gatecli_train import examples, trainer
from gatecli_train.model import GateModel, HeadDef

# A gold class with fewer select-half turns than this does not get a share of its suite's
# score: oasst1_fr's one safety turn would otherwise weigh as much as its 185 ordinary ones.
MIN_SUPPORT = 10
# A part's weight grows with its turns up to this many (see the module docstring).
FULL_WEIGHT_TURNS = 300


def weight(turns: int) -> float:
    """How much a part of ``turns`` turns counts in the mean (0 for none).

    Example:
        >>> weight(54), weight(300), weight(5921)
        (0.18, 1.0, 1.0)
    """
    return min(turns, FULL_WEIGHT_TURNS) / FULL_WEIGHT_TURNS


def selection_records(data_dir: str | Path) -> dict[str, list[dict[str, Any]]]:
    """The select half of every selection suite under ``data_dir`` (``data/``). A missing
    suite or an unreadable line is an error: a run told to select on held-out sources must
    not quietly select on fewer of them."""
    paths, _ = resolve_suites(list(SELECTION_SUITES), data_dir)
    out: dict[str, list[dict[str, Any]]] = {}
    for name in SELECTION_SUITES:
        records, errors = load_suite(paths[name])
        if errors:
            raise ValueError(f"{paths[name]}: {len(errors)} unreadable lines (first: {errors[0]})")
        out[name] = take(records, "select")
    return out


def false_event_rate(logits: Any, targets: Any, known: Any) -> tuple[float, int]:
    """Share of the known turns with no gold event that get one (logit > 0), and how many
    such turns there are: the gate's own ``false_positive_rate`` and ``n_empty``
    (:func:`gatecli.evaluation.metrics.multi_label`), read on raw logits.

    Example:
        >>> import numpy as np
        >>> false_event_rate(np.array([[2.0, -1], [-3, -2], [-1, 0.5]]),
        ...                  np.array([[1, 0], [0, 0], [0, 0]]), np.array([True, True, True]))
        (0.5, 2)
    """
    m = np.asarray(known, dtype=bool)
    gold = [[str(i) for i in np.flatnonzero(row)] for row in np.asarray(targets)[m]]
    pred = [[str(i) for i in np.flatnonzero(row > 0)] for row in np.asarray(logits)[m]]
    res = multi_label(gold, pred, [])
    return res["false_positive_rate"], res["n_empty"]


def weighted_mean(values: dict[str, float], turns: dict[str, int]) -> float:
    """Mean of ``values`` weighted by :func:`weight` of each part's turns.

    Example:
        >>> weighted_mean({"a": 1.0, "b": 0.0}, {"a": 300, "b": 100})
        0.75
    """
    w = {n: weight(turns[n]) for n in values}
    return sum(w[n] * values[n] for n in values) / sum(w.values())


def suite_score(gold: list[str], pred: list[str], labels: Sequence[str]) -> float:
    """Mean F1 over the gold classes with at least :data:`MIN_SUPPORT` turns (all of them
    when none has that many).

    Example:
        >>> suite_score(["execute"] * 10 + ["safety"], ["execute"] * 11, ["execute", "safety"])
        0.9523809523809523
    """
    per = single_label(gold, pred, labels)["per_class"]
    present = {k: v for k, v in per.items() if v["support"]}
    kept = [v["f1"] for v in present.values() if v["support"] >= MIN_SUPPORT]
    return float(np.mean(kept or [v["f1"] for v in present.values()]))


class HeldoutScore:
    """``select_fn`` for :func:`gatecli_train.trainer.train`: ``(score, parts)``, where the
    parts (each suite's score, dev macro-F1, dev safety AP and the dev-only score that
    ``select_on = "dev"`` would have read) go into ``selection.json``."""

    def __init__(
        self,
        suites: dict[str, list[examples.Example]],
        dev: list[examples.Example],
        heads: list[HeadDef],
        safety_ap_weight: float,
        dev_metrics: Any,
        *,
        false_events_weight: float = 0.0,
    ) -> None:
        self.suites, self.dev, self.heads = suites, dev, heads
        self.weight, self.dev_metrics = safety_ap_weight, dev_metrics
        self.fe_weight = false_events_weight
        self.labels = next(h for h in heads if h.name == "decision").labels
        # Gold does not change between selection points: read it once.
        self.gold: dict[str, tuple[Any, list[str]]] = {}
        self.events: dict[str, tuple[Any, Any]] = {}
        for name, exs in suites.items():
            t, k = examples.arrays(exs, heads)
            m = k["decision"]
            self.gold[name] = (m, [self.labels[i] for i in t["decision"][m]])
            if "events" in t:
                self.events[name] = (t["events"], k["events"])
        self.dev_arrays = examples.arrays(dev, heads)
        if "events" in self.dev_arrays[0]:
            self.events["dev"] = (self.dev_arrays[0]["events"], self.dev_arrays[1]["events"])
        self.sizes = {n: len(exs) for n, exs in suites.items()} | {"dev": len(dev)}

    def __call__(self, model: GateModel) -> tuple[float, dict[str, float]]:
        parts: dict[str, float] = {}
        fe: dict[str, tuple[float, int]] = {}
        for name, exs in self.suites.items():
            logits = trainer.predict_logits(model, exs)
            m, gold = self.gold[name]
            pred = [self.labels[i] for i in logits["decision"][m].argmax(-1)]
            parts[name] = suite_score(gold, pred, self.labels)
            if name in self.events:
                fe[name] = false_event_rate(logits["events"], *self.events[name])
        t, k = self.dev_arrays
        dev_logits = trainer.predict_logits(model, self.dev)
        q = self.dev_metrics(self.heads, dev_logits, t, k)
        if "dev" in self.events:
            fe["dev"] = false_event_rate(dev_logits["events"], *self.events["dev"])
        ap = float(q.get("safety_ap") or 0.0)
        parts["dev"], parts["dev_safety_ap"] = float(q["macro_f1"]), ap
        parts["dev_score"] = parts["dev"] + self.weight * ap
        score = weighted_mean({n: parts[n] for n in self.sizes}, self.sizes) + self.weight * ap
        counted = {n: rate for n, (rate, turns) in fe.items() if turns >= MIN_SUPPORT}
        for n, rate in counted.items():
            parts[f"false_events:{n}"] = rate
        if counted:
            parts["false_events"] = weighted_mean(counted, {n: fe[n][1] for n in counted})
            score -= self.fe_weight * parts["false_events"]
        return score, parts
