"""Candidate vs baseline: metric deltas, per-turn flips and the release gate (seed 001).

"No behaviour change without an eval": a new model ships when it is no worse than the one
it replaces on the criteria in a YAML file, and the turns it newly gets wrong are listed by
message so a person can read them, not just a number.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gatecli import yamlfile
from gatecli.evaluation.report import lookup
from gatecli.evaluation.significance import paired_bootstrap

DEFAULT_GATE = Path(__file__).with_name("default_gate.yaml")
DELTA_METRICS = (
    "decision.accuracy", "decision.macro_f1", "decision.safety_recall", "decision.safety_ap",
    "decision.ece", "events.micro_f1", "events.macro_f1", "events.false_positive_rate",
    "events.turn_recall", "scenario_tags.micro_f1", "missing_slots.micro_f1",
    "escalation_share", "escalation_share_unneeded", "latency_ms.p50",
)  # fmt: skip
FLIP_HEADS = ("decision", "events")


@dataclass(frozen=True)
class Paired:
    """Both models' per-turn rows of one suite (same records, same order) and their
    escalation margins: what the paired bootstrap resamples."""

    model_turns: list[dict[str, Any]]
    base_turns: list[dict[str, Any]]
    margins: tuple[float, float]


def deltas(model: dict[str, Any], base: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """``{metric: {model, baseline, delta}}`` over the overall slice of one suite."""
    out = {}
    for key in DELTA_METRICS:
        a, b = lookup(model["overall"], key), lookup(base["overall"], key)
        if a is None and b is None:
            continue
        out[key] = {"model": a, "baseline": b,
                    "delta": a - b if a is not None and b is not None else None}  # fmt: skip
    return out


def flips(
    model_turns: list[dict[str, Any]], base_turns: list[dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """Turns that went wrong -> right (``fixed``) or right -> wrong (``broken``), by head.

    Turns are matched by position (both predictors saw the same records in the same order).
    """
    fixed: list[dict[str, Any]] = []
    broken: list[dict[str, Any]] = []
    for m, b in zip(model_turns, base_turns, strict=True):
        if m["error"] is not None or b["error"] is not None:
            continue
        for head in FLIP_HEADS:
            cm, cb = m["correct"][head], b["correct"][head]
            if cm is None or cm == cb:
                continue
            row = {"id": m["id"], "message": m["message"], "head": head, "gold": m["gold"][head],
                   "model": m["pred"][head], "baseline": b["pred"][head]}  # fmt: skip
            (fixed if cm else broken).append(row)
    return {"fixed": fixed, "broken": broken}


def load_criteria(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The release-gate criteria (default: the YAML shipped beside this module)."""
    p = Path(path) if path else DEFAULT_GATE
    data = yamlfile.safe_load(p.read_text(encoding="utf-8")) or {}
    crit = data.get("criteria") if isinstance(data, dict) else None
    if not isinstance(crit, list):
        raise ValueError(f"{p}: expected a top-level 'criteria:' list")
    check_levels(crit)
    return crit


def check_levels(criteria: list[dict[str, Any]]) -> None:
    """A ``confidence`` outside [0.5, 1) is an error even where no check would read it."""
    for c in criteria:
        if "confidence" in c and not 0.5 <= float(c["confidence"]) < 1.0:
            raise ValueError(f"gate criterion {c.get('name')!r}: confidence must be in [0.5, 1)")


def _check(
    c: dict[str, Any],
    suite: str,
    model: dict[str, Any],
    base: dict[str, Any],
    paired: Paired | None = None,
) -> dict[str, Any] | None:
    name = c.get("name") or c.get("metric") or c.get("view") or c.get("check")
    row = {"name": name, "suite": suite}
    if c.get("check") == "seeds_all_pass":
        mv, bv = lookup(model, "views.seeds"), lookup(base, "views.seeds")
        if mv is None or bv is None:
            return None
        if not bv["all_pass"]:
            return {**row, "passed": True, "skipped": True, "model": mv["passed"],
                    "baseline": bv["passed"],
                    "reason": "skipped: the baseline does not pass every seed"}  # fmt: skip
        return {**row, "passed": mv["all_pass"], "model": mv["passed"], "baseline": bv["passed"],
                "reason": f"{mv['passed']}/{mv['n']} seeds pass"}  # fmt: skip
    key = c.get("metric")
    where = "overall" if key else "views"
    key = key or c.get("view")
    if not key:
        raise ValueError(f"gate criterion {name!r} needs one of metric, view, check")
    mv, bv = lookup(model[where], key), lookup(base[where], key)
    if mv is None or bv is None:
        return None
    skip = _too_small(c, model[where])
    if skip:
        return {**row, "passed": True, "skipped": True, "model": mv, "baseline": bv,
                "reason": skip}  # fmt: skip
    change = mv - bv
    if "max_drop" in c:
        ok = -change <= float(c["max_drop"]) + 1e-12
        reason = f"{key} {bv:.4f} -> {mv:.4f} (may drop {c['max_drop']})"
    elif "max_rise" in c:
        ok = change <= float(c["max_rise"]) + 1e-12
        reason = f"{key} {bv:.4f} -> {mv:.4f} (may rise {c['max_rise']})"
    else:
        raise ValueError(f"gate criterion {name!r} needs max_drop or max_rise")
    out = {**row, "passed": ok, "model": mv, "baseline": bv, "reason": reason}
    if not ok and "confidence" in c:
        out.update(_significance(c, key, (mv, bv), paired))
    return out


def _significance(
    c: dict[str, Any], key: str, reported: tuple[float, float], paired: Paired | None
) -> dict[str, Any]:
    """A past-tolerance change is a failure only if the candidate is worse in at least
    ``confidence`` of paired resamples (:mod:`gatecli.evaluation.significance`); without
    the per-turn rows or a resampler for ``key`` it stays a failure, and says why."""
    level = float(c["confidence"])
    boot = None
    if paired is not None:
        boot = paired_bootstrap(
            key, paired.model_turns, paired.base_turns, higher_is_better="max_drop" in c,
            reported=reported, margins=paired.margins,
        )  # fmt: skip
    if boot is None:
        return {"bootstrap": None, "reason_extra": "; no paired resampling for this number"}
    worse = boot["worse_share"]
    noise = worse < level
    verdict = "within the draw of turns: passes" if noise else "fails"
    return {
        "passed": noise, "bootstrap": boot, "within_noise": noise,
        "reason_extra": f"; worse in {worse:.0%} of {boot['resamples']} paired resamples of "
        f"{boot['groups']} groups (needs {level:.0%} to fail): {verdict}",
    }  # fmt: skip


def _too_small(c: dict[str, Any], overall: dict[str, Any]) -> str | None:
    """Why a criterion with ``support`` + ``min_support`` is skipped on a suite, or None.

    Both models are scored on the same records, so the support (a count of gold labels or
    turns) is the same for both; it is read from the candidate's numbers. A criterion whose
    support is absent from the numbers (an older eval JSON) is checked as before.
    """
    if "min_support" not in c or "support" not in c:
        return None
    n = lookup(overall, str(c["support"]))
    if n is None or n >= int(c["min_support"]):
        return None
    return f"skipped: {c['support']} = {n} < min_support {c['min_support']}"


def release_gate(
    suites: dict[str, dict[str, Any]],
    criteria: list[dict[str, Any]],
    paired: dict[str, Paired] | None = None,
) -> dict[str, Any]:
    """Apply every criterion to every suite that has both values; passed = all pass.

    ``paired`` (suite -> :class:`Paired`) lets criteria with ``confidence`` tell a change
    past tolerance from the draw of turns; without it they gate on the tolerance alone.

    Example:
        >>> release_gate({"seeds": {"model": m, "baseline": b}}, load_criteria())  # doctest: +SKIP
        {'passed': True, 'checks': [...]}
    """
    check_levels(criteria)
    checks = []
    for suite, res in suites.items():
        if "baseline" not in res:
            continue
        for c in criteria:
            if c.get("suites") and suite not in c["suites"]:
                continue
            row = _check(c, suite, res["model"], res["baseline"], (paired or {}).get(suite))
            if row is not None:
                row["reason"] += row.pop("reason_extra", "")
                checks.append(row)
    return {"passed": all(c["passed"] for c in checks), "checks": checks}
