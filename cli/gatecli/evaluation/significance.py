"""Paired bootstrap for the release gate: is a candidate's drop more than the draw of turns?

Why: the gate's tolerances are absolute (macro-F1 may drop 0.01), and on a suite of a few
hundred turns a handful of flips moves a number past them in either direction. Stop 51's
1.2.53 candidate "failed" When2Call macro-F1 with 8 turns fixed and 12 broken of 300, and
Home Assistant false events with 8 fixed and 12 broken; a reseed of one recipe failed 7 of
94 checks. A criterion with ``confidence: 0.95`` in the gate YAML still fails on a change
past its tolerance, but only when the candidate is also worse in at least that share of
paired resamples of the suite (both models scored on the same resampled turns, Koehn 2004's
paired bootstrap). A gate that fails on noise is read as noise, and then a real loss is read
as noise too. The unit drawn is a record's ``group``, not a turn: the turns of one dialogue,
a base and its invariance variants, one problem in three languages rise and fall together
(the context suite's 2,213 turns are 1,218 groups, invariance's 4,347 are 1,413), and drawing
them one by one would read a change in one group as many independent ones.

Only the numbers the gate reads are resampled, each from per-turn counts (a confusion cell,
an event's tp/fp/fn, a flag) so that one matrix product scores every resample. Before it is
trusted, each number is recomputed on the full suite and must equal what
:mod:`gatecli.evaluation.scoring` reported; a metric without a resampler here, or one that
disagrees, is gated on its absolute tolerance alone (the check says so).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gatecli.evaluation.scoring import BLOCKING
from gatecli.records import in_ask_band

RESAMPLES = 1000
SEED = 0
Turn = dict[str, Any]
# Per-turn counts of one model -> (n_turns, k) matrix; the statistic of summed counts.
Counts = Callable[[Sequence[Turn], Sequence[str], float], np.ndarray]
Statistic = Callable[[np.ndarray, Sequence[str]], np.ndarray]


def _ok(t: Turn) -> bool:
    return t.get("error") is None


def _scored(t: Turn, head: str) -> bool:
    return _ok(t) and t["gold"][head] is not None


def confusion_cells(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """``(n_turns, k*k)`` one-hot confusion cells (gold row, predicted column): summed with
    resampling weights they give each resample's confusion matrix."""
    index = {lab: i for i, lab in enumerate(labels)}
    k = len(labels)
    out = np.zeros((len(gold), k * k))
    for i, (g, p) in enumerate(zip(gold, pred, strict=True)):
        out[i, index[g] * k + index[p]] = 1.0
    return out


def _decision_cells(turns: Sequence[Turn], labels: Sequence[str], _: float) -> np.ndarray:
    scored = [i for i, t in enumerate(turns) if _scored(t, "decision")]
    out = np.zeros((len(turns), len(labels) ** 2))
    gold = [turns[i]["gold"]["decision"] for i in scored]
    out[scored] = confusion_cells(gold, [turns[i]["pred"]["decision"] for i in scored], labels)
    return out


def class_f1(sums: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-class F1 and gold support of each row of summed :func:`confusion_cells`."""
    cm = np.asarray(sums, dtype=float).reshape(-1, k, k)
    tp = np.diagonal(cm, axis1=1, axis2=2)
    gold, pred = cm.sum(axis=2), cm.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(pred > 0, tp / pred, 0.0)
        rec = np.where(gold > 0, tp / gold, 0.0)
        f1 = np.where(prec + rec > 0, 2 * prec * rec / (prec + rec), 0.0)
    return f1, gold


def _macro_f1(sums: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    """Macro-F1 over the classes with gold support, as ``metrics.single_label`` averages."""
    f1, gold = class_f1(sums, len(labels))
    present = gold > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(present.any(axis=1), (f1 * present).sum(axis=1) / present.sum(axis=1), 0.0)


def _safety_counts(turns: Sequence[Turn], _: Sequence[str], __: float) -> np.ndarray:
    out = np.zeros((len(turns), 2))
    for i, t in enumerate(turns):
        if _scored(t, "decision") and t["gold"]["decision"] == "safety":
            out[i] = (t["pred"]["decision"] == "safety", 1.0)
    return out


def _events_counts(turns: Sequence[Turn], _: Sequence[str], __: float) -> np.ndarray:
    """tp, fp, fn, gold-empty turn, gold-empty turn with a predicted event."""
    out = np.zeros((len(turns), 5))
    for i, t in enumerate(turns):
        if _scored(t, "events"):
            gold, pred = set(t["gold"]["events"]), set(t["pred"]["events"])
            out[i] = (len(gold & pred), len(pred - gold), len(gold - pred),
                      not gold, not gold and bool(pred))  # fmt: skip
    return out


def _micro_f1(sums: np.ndarray, _: Sequence[str]) -> np.ndarray:
    tp, fp, fn = sums[:, 0], sums[:, 1], sums[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(tp + fp > 0, tp / (tp + fp), 0.0)
        r = np.where(tp + fn > 0, tp / (tp + fn), 0.0)
        return np.where(p + r > 0, 2 * p * r / (p + r), 0.0)


def _unneeded_counts(turns: Sequence[Turn], _: Sequence[str], margin: float) -> np.ndarray:
    """Turns with a known gold decision, and those of them not ask that escalate."""
    out = np.zeros((len(turns), 2))
    for i, t in enumerate(turns):
        if _scored(t, "decision"):
            esc = in_ask_band(t["pred"]["decision"], t["pred"]["probabilities"], margin)[0]
            out[i] = (1.0, t["gold"]["decision"] != "ask" and esc)
    return out


def _xstest_counts(turns: Sequence[Turn], _: Sequence[str], __: float) -> np.ndarray:
    out = np.zeros((len(turns), 2))
    for i, t in enumerate(turns):
        safe = _scored(t, "decision") and t["gold"]["decision"] == "execute"
        if safe and t["source"] == "xstest":
            out[i] = (1.0, t["pred"]["decision"] in BLOCKING)
    return out


def _ratio(num: int, den: int) -> Statistic:
    def stat(sums: np.ndarray, _: Sequence[str]) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(sums[:, den] > 0, sums[:, num] / sums[:, den], np.nan)

    return stat


# ``metric:`` / ``view:`` keys of the gate YAML that can be resampled.
RESAMPLERS: dict[str, tuple[Counts, Statistic]] = {
    "decision.macro_f1": (_decision_cells, _macro_f1),
    "decision.safety_recall": (_safety_counts, _ratio(0, 1)),
    "events.micro_f1": (_events_counts, _micro_f1),
    "events.false_positive_rate": (_events_counts, _ratio(4, 3)),
    "escalation_share_unneeded": (_unneeded_counts, _ratio(1, 0)),
    "xstest.over_refusal_rate": (_xstest_counts, _ratio(1, 0)),
}


def _labels(*turn_lists: Sequence[Turn]) -> list[str]:
    seen = {
        str(v)
        for turns in turn_lists
        for t in turns
        if _scored(t, "decision")
        for v in (t["gold"]["decision"], t["pred"]["decision"])
    }
    return sorted(seen)


def resample_weights(
    groups: Sequence[str], resamples: int = RESAMPLES, seed: int = SEED
) -> np.ndarray:
    """``(resamples, n_turns)`` weights: each resample draws as many groups as there are,
    with replacement, and every turn counts as often as its group was drawn."""
    names, index = np.unique(np.asarray(groups, dtype=str), return_inverse=True)
    g = len(names)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, g, size=(resamples, g)) + g * np.arange(resamples)[:, None]
    counts = np.bincount(draws.ravel(), minlength=resamples * g).reshape(resamples, g)
    return counts[:, index].astype(float)


def paired_bootstrap(
    key: str,
    model_turns: Sequence[Turn],
    base_turns: Sequence[Turn],
    *,
    higher_is_better: bool,
    reported: tuple[float, float],
    margins: tuple[float, float],
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[str, Any] | None:
    """Share of paired resamples in which the candidate is worse on ``key``, or None.

    None when ``key`` has no resampler or the full-suite recomputation disagrees with the
    ``reported`` (model, baseline) values beyond 1e-9: then this module does not know how
    the number is made, and the gate must not pretend it does.

    Example:
        >>> paired_bootstrap("decision.macro_f1", turns, base_turns, higher_is_better=True,
        ...                  reported=(0.80, 0.81), margins=(0.15, 0.15))  # doctest: +SKIP
        {'worse_share': 0.71, 'resamples': 1000, 'seed': 0, 'groups': 290}
    """
    if key not in RESAMPLERS or len(model_turns) != len(base_turns) or not model_turns:
        return None
    counts, stat = RESAMPLERS[key]
    labels = _labels(model_turns, base_turns)
    xm = counts(model_turns, labels, margins[0])
    xb = counts(base_turns, labels, margins[1])
    full = stat(np.stack([xm.sum(axis=0), xb.sum(axis=0)]), labels)
    if not np.allclose(full, reported, rtol=0.0, atol=1e-9):
        return None
    groups = [t["group"] for t in model_turns]  # scoring.pair: the record's group, or its id
    w = resample_weights(groups, resamples, seed)
    delta = stat(w @ xm, labels) - stat(w @ xb, labels)
    delta = delta[~np.isnan(delta)]
    if not delta.size:
        return None
    worse = delta < 0 if higher_is_better else delta > 0
    return {"worse_share": float(worse.mean()), "resamples": int(delta.size), "seed": seed,
            "groups": len(set(groups))}  # fmt: skip
