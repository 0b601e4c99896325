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

**Through the calibration** (``select_calibrated``; the parts are logged whenever the
pipeline passes its calibration settings): at each selection point the temperatures and
thresholds are fitted on dev exactly as the release fits them (:func:`gatecli_train.calibrate.
calibrate`, per-language safety thresholds included), and the parts are read again as the
runtime's model decision reads them: softmax at the fitted temperature, the policy's
precedence floors (safety, refuse) overridden by the calibrated thresholds of the turn's
detected language, events at their fitted thresholds (``cal:<part>``, ``cal:false_events``,
``cal:dev_safety_recall``). Why (stop 54): 1.2.65 gained +0.0086 on the raw score, its raw
false-event rate fell and dev safety AP rose, yet its release gate failed on dev safety
recall (0.943 -> 0.920) and Home Assistant false events (0.059 -> 0.086), numbers the
calibrated policy produces. Not applied: the policy's rules after the model decision
(accounts, missing slots) and the segment rule; the release gate reads those.

**No part may fall** (``select_max_drop``, with ``select_initial``): the mean above trades
parts against each other, the release gate does not (any suite past its tolerance fails).
1.2.65's picked step read +0.0037 through the calibration on corpus 1.2.66 while its context
select half fell 0.027 and dev safety recall 0.011: the report halves then failed the gate on
those. So a step is penalised 1.0 (more than any score difference between steps) for each
part of at least :data:`GUARD_MIN_TURNS` turns whose score falls more than
``select_max_drop`` below the starting weights', for calibrated dev safety recall falling
more than :data:`GUARD_SAFETY_DROP` (the gate's tolerance), for calibrated dev refuse
recall falling more than ``select_max_drop`` (stop 56: a rounding that kept every other
part moved borderline refusals to ``execute`` on the risk suites), for XSTest's calibrated
over-refusal rising more than :data:`GUARD_OVER_REFUSAL_RISE` (the gate's
``xstest_over_refusal``), for dev safety recall read through the *starting* weights'
calibration falling more than ``select_max_drop`` (``cal:dev_safety_recall_at_start``: a
refit can hold dev recall by lowering the bar while crisis turns slide under it; stop 59's
1.2.79's kept step held its refit recall, 0.932, with its safety threshold at 0.14 for the
start's 0.31, read 0.909 at the start's, and its release lost safety precision on test and
passages to the lower bar), and for each part's false-event
rate (from :data:`GUARD_MIN_EMPTY` empty-event turns, as the gate counts it) rising more
than ``select_max_drop``; calibrated parts where the pipeline calibrates. Smaller parts
(oasst1_fr's 186 select turns fell 0.024 too) are not guarded: there one turn is about a
point, and the gate itself excuses such moves by its bootstrap. The starting weights never
violate, so a run with no clean step keeps them.

**A fall the gate would call noise is not a violation**: as the release gate reads
``confidence: 0.95`` (:mod:`gatecli.evaluation.significance`), a calibrated part past its
tolerance counts only when the step is also worse than the reference in at least
:data:`GUARD_CONFIDENCE` of paired resamples of the part's groups (both scored on the same
resampled turns). Why (stop 55): 1.2.68's CoCoNot false events "fell" 0.012, four turns of
327, and the guard refused every step that had them, where the gate might well have passed
them. Logged per excused fall as ``guard_noise:<part>`` (the worse share); raw (uncalibrated)
parts, and a resumed run whose reference has only its numbers, keep the absolute tolerance,
and so does dev safety recall, as the gate's ``safety_recall`` (no ``confidence``): the
1.2.71 pass had a two-turn fall there excused (worse in 62% of resamples) before this rule.

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
from gatecli.evaluation.scoring import BLOCKING
from gatecli.evaluation.significance import class_f1, confusion_cells, resample_weights
from gatecli.evaluation.suites import load_suite, resolve_suites
from gatecli.heads import sigmoid, softmax
from gatecli.policy import load_policy, model_decision
from gatecli_train import examples, trainer
from gatecli_train.calibrate import Calibration, calibrate, languages
from gatecli_train.config import CalibrationConfig
from gatecli_train.model import GateModel, HeadDef

# A gold class with fewer select-half turns than this does not get a share of its suite's
# score: oasst1_fr's one safety turn would otherwise weigh as much as its 185 ordinary ones.
MIN_SUPPORT = 10
# A part's weight grows with its turns up to this many (see the module docstring).
FULL_WEIGHT_TURNS = 300
# select_max_drop guards parts of at least this many turns: below it one turn moves a
# macro-F1 past any tolerance worth setting (passages_heldout's select half has 54).
GUARD_MIN_TURNS = 300
# ... and dev safety recall by the release gate's own tolerance (default_gate.yaml).
GUARD_SAFETY_DROP = 0.005
# ... and a part's false-event rate from this many empty-event turns (the gate's min_support).
GUARD_MIN_EMPTY = 100
# (dev refuse recall falls past select_max_drop: 1.2.70's rounding kept every guarded part
# but moved borderline refusals to execute on the risk suites, which selection does not read)
# ... and XSTest's over-refusal (safe prompts refused) by the gate's tolerance: its select
# half (233 turns) is below GUARD_MIN_TURNS, and its over-refusal rose in every short pass.
GUARD_OVER_REFUSAL_RISE = 0.02
# A fall past its tolerance violates only when the step is worse in this share of paired
# resamples (the gate's ``confidence``, default_gate.yaml).
GUARD_CONFIDENCE = 0.95
# ... except where the gate has no confidence either (default_gate.yaml: safety_recall)
ABSOLUTE = frozenset({"cal:dev_safety_recall"})


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


def suite_scores(sums: Any, k: int) -> Any:
    """:func:`suite_score` of each row of summed
    :func:`gatecli.evaluation.significance.confusion_cells`.

    Example:
        >>> gold = ["execute"] * 10 + ["safety"]
        >>> cells = confusion_cells(gold, ["execute"] * 11, ["execute", "safety"])
        >>> float(suite_scores(cells.sum(0)[None], 2)[0])
        0.9523809523809523
    """
    f1, gold = class_f1(sums, k)
    kept = gold >= MIN_SUPPORT
    use = np.where(kept.any(axis=1, keepdims=True), kept, gold > 0)
    return (f1 * use).sum(axis=1) / np.maximum(use.sum(axis=1), 1)


def ratios(sums: Any) -> Any:
    """Numerator over denominator of each row of summed ``(denominator, numerator)`` flags."""
    s = np.asarray(sums, dtype=float).reshape(-1, 2)
    return np.where(s[:, 0] > 0, s[:, 1] / np.maximum(s[:, 0], 1), 0.0)


def recall_flags(gold: Sequence[str], pred: Sequence[str], label: str) -> Any:
    """Per-turn ``(is label, caught)`` flags: the counts :func:`ratios` reads a recall from.

    Example:
        >>> recall_flags(["safety", "execute", "safety"], ["safety", "safety", "execute"],
        ...              "safety").tolist()
        [[1.0, 1.0], [0.0, 0.0], [1.0, 0.0]]
    """
    pairs = [(g == label, g == label and p == label) for g, p in zip(gold, pred, strict=True)]
    return np.array(pairs, dtype=float)


def worse_share(
    groups: Sequence[str], step: Any, ref: Any, stat: Any, harm: int, *, seed: int = 0
) -> float:
    """Share of paired group resamples in which ``step``'s per-turn counts give a worse
    statistic than ``ref``'s (``harm`` +1: a rise is worse; -1: a fall), as
    :func:`gatecli.evaluation.significance.paired_bootstrap` reads a gate check.

    Example:
        >>> ref = np.array([[1, 0]] * 50 + [[1, 1]] * 50, dtype=float)
        >>> step = ref.copy(); step[:10, 1] = 1  # ten more turns flagged, none fewer
        >>> worse_share([str(i) for i in range(100)], step, ref, ratios, 1)
        1.0
    """
    w = resample_weights(list(groups), seed=seed)
    delta = stat(w @ np.asarray(step)) - stat(w @ np.asarray(ref))
    return float((harm * delta > 0).mean())


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
        calibration: CalibrationConfig | None = None,
        calibrated: bool = False,
        max_drop: float = 0.0,
        reference: dict[str, float] | None = None,
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
        # the paired bootstrap draws a record's group whole (a dialogue, a base and its variants)
        self.groups = {
            n: [str(e.record.get("group") or e.record.get("id") or i) for i, e in enumerate(exs)]
            for n, exs in (suites | {"dev": dev}).items()
        }
        # per-turn counts of the guarded calibrated parts: the last call's and the reference's
        self.counts: dict[str, Any] = {}
        self.ref_counts: dict[str, Any] | None = None
        # the starting weights' calibration (the first calibrated call's, the reference); a
        # resumed run has only step 0's logged numbers, so it does not read
        # cal:dev_safety_recall_at_start
        self.ref_cal: Calibration | None = None
        self.cal_cfg, self.calibrated = calibration, calibrated
        # the starting weights' parts (select_max_drop): the first scored step's, or the
        # logged step 0's when a run resumes
        self.max_drop, self.reference = max_drop, reference
        if calibrated and calibration is None:
            raise ValueError("select_calibrated needs the calibration settings")
        if calibration is not None:
            dm = self.dev_arrays[1]["decision"]
            dev_gold = [self.labels[i] for i in self.dev_arrays[0]["decision"][dm]]
            self.gold["dev"] = (dm, dev_gold)
            # the language the runtime detects picks a turn's thresholds; turns do not change
            self.langs = {n: languages(exs) for n, exs in suites.items()} | {"dev": languages(dev)}
            self.precedence = list(load_policy().precedence)
            self.event_labels: list[str] = next(
                (list(h.labels) for h in heads if h.name == "events"), []
            )

    def __call__(self, model: GateModel) -> tuple[float, dict[str, float]]:
        parts: dict[str, float] = {}
        fe: dict[str, tuple[float, int]] = {}
        seen: dict[str, dict[str, Any]] = {}
        for name, exs in self.suites.items():
            logits = seen[name] = trainer.predict_logits(model, exs)
            m, gold = self.gold[name]
            pred = [self.labels[i] for i in logits["decision"][m].argmax(-1)]
            parts[name] = suite_score(gold, pred, self.labels)
            if name in self.events:
                fe[name] = false_event_rate(logits["events"], *self.events[name])
        t, k = self.dev_arrays
        dev_logits = seen["dev"] = trainer.predict_logits(model, self.dev)
        q = self.dev_metrics(self.heads, dev_logits, t, k)
        if "dev" in self.events:
            fe["dev"] = false_event_rate(dev_logits["events"], *self.events["dev"])
        ap = float(q.get("safety_ap") or 0.0)
        parts["dev"], parts["dev_safety_ap"] = float(q["macro_f1"]), ap
        parts["dev_score"] = parts["dev"] + self.weight * ap
        score = weighted_mean({n: parts[n] for n in self.sizes}, self.sizes) + self.weight * ap
        parts |= self._false_events(fe, "")
        score -= self.fe_weight * parts.get("false_events", 0.0)
        if self.cal_cfg is not None:
            cal = self.calibrated_parts(seen)
            parts |= cal
            cal_score = weighted_mean({n: cal[f"cal:{n}"] for n in self.sizes}, self.sizes)
            cal_score += self.weight * ap - self.fe_weight * cal.get("cal:false_events", 0.0)
            parts["cal_score"] = cal_score
            if self.calibrated:
                score = cal_score
        if self.max_drop > 0:
            # per-turn counts that do not sum to their logged part would bootstrap the wrong
            # number: counted here (a test holds it at 0), and such parts keep the tolerance
            parts["guard_counts_mismatch"] = float(len(self._mismatched(parts)))
            if self.reference is None:
                self.reference, self.ref_counts = dict(parts), dict(self.counts)
            falls, noise = self.guard_falls(parts, self.reference)
            parts |= {f"guard:{n}": v for n, v in falls.items()}
            parts |= {f"guard_noise:{n}": v for n, v in noise.items()}
            parts["guard_violations"] = float(len(falls))
            score -= len(falls)
        return score, parts

    def guard_falls(
        self, parts: dict[str, float], ref: dict[str, float]
    ) -> tuple[dict[str, float], dict[str, float]]:
        """What fell past its tolerance against ``ref`` (see ``select_max_drop`` in the
        module docstring), by part name: how far; and the falls past it that the paired
        bootstrap excuses, by part name: the share of resamples in which the step is worse."""
        pre = "cal:" if "cal:dev" in parts and "cal:dev" in ref else ""
        # (part, tolerance, +1 where a rise is the harm / -1 where a fall is)
        checks = [
            (f"{pre}{n}", self.max_drop, -1)
            for n, size in self.sizes.items()
            if size >= GUARD_MIN_TURNS
        ]
        checks += [
            ("cal:dev_safety_recall", GUARD_SAFETY_DROP, -1),
            ("cal:dev_refuse_recall", self.max_drop, -1),
            ("cal:dev_safety_recall_at_start", self.max_drop, -1),
            ("cal:xstest_over_refusal", GUARD_OVER_REFUSAL_RISE, 1),
        ]
        checks += [(k, self.max_drop, 1) for k in parts if k.startswith(f"{pre}false_events:")
                   and parts.get(k.replace("false_events:", "empty_turns:", 1), 0.0)
                   >= GUARD_MIN_EMPTY]  # fmt: skip
        falls: dict[str, float] = {}
        noise: dict[str, float] = {}
        for key, tol, harm in checks:
            if key in parts and key in ref and harm * (parts[key] - ref[key]) > tol:
                # the gate's safety_recall has no confidence: a safety miss is never noise
                share = None
                if key not in ABSOLUTE:
                    share = self._worse_share(key, harm, parts[key], ref[key])
                if share is not None and share < GUARD_CONFIDENCE:
                    noise[key] = share
                else:
                    falls[key] = harm * (parts[key] - ref[key])
        return falls, noise

    def _stat(self, counts: Any) -> Any:
        """The statistic of a part's summed per-turn counts: a rate from (denominator,
        numerator) flags, else :func:`suite_scores` from confusion cells."""
        if counts.shape[1] == 2:
            return ratios
        k = len(self.labels)
        return lambda sums: suite_scores(sums, k)

    def _mismatched(self, parts: dict[str, float]) -> list[str]:
        """The logged counted parts whose counts do not give back the logged number (a
        part's false events are logged only from MIN_SUPPORT empty-event turns)."""
        out = []
        for key, (_, c) in self.counts.items():
            full = self._stat(c)(c.sum(0)[None])[0]
            if key in parts and not np.isclose(full, parts[key], atol=1e-9):
                out.append(key)
        return out

    def _worse_share(self, key: str, harm: int, now: float, then: float) -> float | None:
        """The paired bootstrap's worse share for a calibrated part, or None where either
        side lacks per-turn counts or they do not give back the logged number."""
        step, ref = self.counts.get(key), (self.ref_counts or {}).get(key)
        if step is None or ref is None:
            return None
        (part, c_step), (_, c_ref) = step, ref
        stat = self._stat(c_step)
        full = stat(np.stack([c_step.sum(0), c_ref.sum(0)]))
        if not np.allclose(full, [now, then], atol=1e-9):
            return None
        return worse_share(self.groups[part], c_step, c_ref, stat, harm)

    def _false_events(self, fe: dict[str, tuple[float, int]], prefix: str) -> dict[str, float]:
        """Each part's false-event rate from :data:`MIN_SUPPORT` empty-event turns, and
        their weighted mean (``false_events``)."""
        counted = {n: rate for n, (rate, turns) in fe.items() if turns >= MIN_SUPPORT}
        out = {f"{prefix}false_events:{n}": rate for n, rate in counted.items()}
        out |= {f"{prefix}empty_turns:{n}": float(fe[n][1]) for n in counted}
        if counted:
            out[f"{prefix}false_events"] = weighted_mean(counted, {n: fe[n][1] for n in counted})
        return out

    def calibrated_parts(self, logits: dict[str, dict[str, Any]]) -> dict[str, float]:
        """The parts as the calibrated runtime reads them (see the module docstring):
        calibration fitted on ``logits["dev"]``, then every part's model decisions and
        events at the fitted temperatures and thresholds."""
        assert self.cal_cfg is not None
        t, k = self.dev_arrays
        cal = calibrate(self.heads, logits["dev"], t, k, self.cal_cfg, self.langs["dev"])
        if self.reference is None:  # the call that becomes the reference
            self.ref_cal = cal
        parts: dict[str, float] = {}
        fe: dict[str, tuple[float, int]] = {}
        self.counts = {}
        for name, lg in logits.items():
            m, gold = self.gold[name]
            z = lg["decision"][m]
            pred = model_decisions(z, self.labels, self.precedence, cal, self.langs[name][m])
            parts[f"cal:{name}"] = suite_score(gold, pred, self.labels)
            self._count(f"cal:{name}", name, m, confusion_cells(gold, pred, self.labels))
            if name == "xstest":  # the gate's own view: safe prompts refused or routed
                pairs = [(g == "execute", g == "execute" and p in BLOCKING)
                         for g, p in zip(gold, pred, strict=True)]  # fmt: skip
                flags = np.array(pairs, dtype=float)
                parts["cal:xstest_over_refusal"] = float(ratios(flags.sum(0))[0])
                self._count("cal:xstest_over_refusal", name, m, flags)
            if name == "dev":
                per_class = single_label(gold, pred, self.labels)["per_class"]
                parts["cal:dev_safety_recall"] = per_class["safety"]["recall"]
                parts["cal:dev_safety_precision"] = per_class["safety"]["precision"]
                for lab in ("safety", "refuse"):
                    self._count(f"cal:dev_{lab}_recall", name, m, recall_flags(gold, pred, lab))
                if "refuse" in per_class:
                    parts["cal:dev_refuse_recall"] = per_class["refuse"]["recall"]
                if self.ref_cal is not None:
                    # the bar the start's calibration sets, read on this step's logits
                    held = model_decisions(
                        z, self.labels, self.precedence, self.ref_cal, self.langs[name][m]
                    )
                    flags = recall_flags(gold, held, "safety")
                    parts["cal:dev_safety_recall_at_start"] = float(ratios(flags.sum(0))[0])
                    self._count("cal:dev_safety_recall_at_start", name, m, flags)
            if name in self.events:
                margins = event_margins(lg["events"], self.event_labels, cal)
                fe[name] = false_event_rate(margins, *self.events[name])
                targets, known = self.events[name]
                empty = np.asarray(known, dtype=bool) & ~np.asarray(targets).any(axis=1)
                flagged = empty & (margins > 0).any(axis=1)
                pair = np.stack([empty, flagged], axis=1).astype(float)
                self.counts[f"cal:false_events:{name}"] = (name, pair)
        return parts | self._false_events(fe, "cal:")

    def _count(self, key: str, name: str, mask: Any, rows: Any) -> None:
        """Per-turn counts of ``key`` over all of ``name``'s turns (zero where ``mask``
        leaves a turn out), so that every part resamples by the same group index."""
        full = np.zeros((len(mask), rows.shape[1]))
        full[np.asarray(mask, dtype=bool)] = rows
        self.counts[key] = (name, full)


def model_decisions(
    z: Any,
    labels: Sequence[str],
    precedence: Sequence[tuple[str, float]],
    cal: Calibration,
    langs: Sequence[str],
) -> list[str]:
    """The model decision of each row of decision logits ``z``: softmax at the fitted
    temperature, the policy's ``precedence`` floors overridden by the calibrated thresholds
    of the row's detected language (:func:`gatecli.policy.model_decision`, called as
    :class:`gatecli.gate.Gate` calls it).

    Example:
        >>> import numpy as np
        >>> cal = Calibration({"decision": 1.0}, {"decision": {"safety": 0.2}},
        ...                   {"decision": {"zh": {"safety": 0.5}}})
        >>> z = np.log(np.array([[0.7, 0.3], [0.7, 0.3]]))
        >>> model_decisions(z, ["execute", "safety"], [("safety", 0.3)], cal, ["en", "zh"])
        ['safety', 'execute']
    """
    probs = softmax(np.asarray(z), cal.temperatures.get("decision", 1.0))
    pooled = cal.thresholds.get("decision", {})
    by_lang = cal.thresholds_by_lang.get("decision", {})
    out = []
    for row, lang in zip(probs, langs, strict=True):
        over = {**pooled, **by_lang.get(str(lang), {})}
        prec = [(lab, float(over.get(lab, floor))) for lab, floor in precedence]
        out.append(model_decision(dict(zip(labels, map(float, row), strict=True)), prec))
    return out


def event_margins(z: Any, labels: Sequence[str], cal: Calibration) -> Any:
    """+1 where an event clears its fitted threshold (0.5 where none was fitted, as the
    artifact's ``default_threshold``), -1 elsewhere: the sign :func:`false_event_rate`
    reads from raw logits.

    Example:
        >>> import numpy as np
        >>> cal = Calibration({"events": 1.0}, {"events": {"a": 0.8}})
        >>> event_margins(np.array([[1.0, 1.0]]), ["a", "b"], cal).tolist()  # p = 0.73
        [[-1.0, 1.0]]
    """
    p = sigmoid(np.asarray(z), cal.temperatures.get("events", 1.0))
    fitted = cal.thresholds.get("events", {})
    thr = np.array([fitted.get(lab, 0.5) for lab in labels])
    return np.where(p >= thr, 1.0, -1.0)
