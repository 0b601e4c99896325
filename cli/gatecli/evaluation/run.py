"""The whole of ``gatecli eval`` as one function returning data (the command only prints it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gatecli.evaluation import compare
from gatecli.evaluation.predictors import Predictor, load_predictor
from gatecli.evaluation.scoring import pair, score_turns
from gatecli.evaluation.suites import load_suite, resolve_suites
from gatecli.records import ASK_MARGIN


def evaluate_predictor(
    predictor: Predictor, records: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Predict every record of a suite and score it; returns ``(scores, per-turn rows)``."""
    preds = predictor.predict([r["input"] for r in records]) if records else []
    turns = pair(records, preds)
    margin = float(predictor.escalation.get("ask_margin", ASK_MARGIN))
    return score_turns(turns, predictor.labels, margin), turns


def run_eval(
    model: str | Path | None = None,
    suites: list[str] | None = None,
    *,
    baseline: str | Path | None = None,
    gate_criteria: str | Path | None = None,
    limit: int | None = None,
    data_dir: str | Path | None = None,
    max_flips: int = 200,
) -> dict[str, Any]:
    """Evaluate a model (and optionally a baseline) on suites; every number in one dict.

    ``result["gate"]["passed"]`` is False when a baseline was given and a release criterion
    fails (the command exits 1 then).

    Example:
        >>> res = run_eval("runs/new", ["seeds"], baseline="models/gate-prev")  # doctest: +SKIP
        >>> res["gate"]["passed"], res["comparison"]["seeds"]["n_broken"]  # doctest: +SKIP
        (True, 0)
    """
    paths, skipped = resolve_suites(suites or ["test"], data_dir)
    cand = load_predictor(model)
    base = load_predictor(baseline) if baseline is not None else None
    out: dict[str, Any] = {
        "model": cand.name, "model_path": str(model) if model else None,
        "baseline": base.name if base else None,
        "baseline_path": str(baseline) if baseline else None,
        "suites": {}, "skipped": skipped, "comparison": {},
    }  # fmt: skip
    for name, path in paths.items():
        records, errors = load_suite(path, limit)
        scores, turns = evaluate_predictor(cand, records)
        entry: dict[str, Any] = {"path": str(path), "n": len(records), "read_errors": errors,
                                 "model": scores}  # fmt: skip
        if base is not None:
            entry["baseline"], base_turns = evaluate_predictor(base, records)
            fl = compare.flips(turns, base_turns)
            out["comparison"][name] = {
                "deltas": compare.deltas(scores, entry["baseline"]),
                "n_fixed": len(fl["fixed"]), "n_broken": len(fl["broken"]),
                "fixed": fl["fixed"][:max_flips], "broken": fl["broken"][:max_flips],
            }  # fmt: skip
        out["suites"][name] = entry
    if base is not None:
        out["gate"] = compare.release_gate(out["suites"], compare.load_criteria(gate_criteria))
        out["gate"]["criteria_file"] = str(gate_criteria or compare.DEFAULT_GATE)
    else:
        out["gate"] = None
    return out
