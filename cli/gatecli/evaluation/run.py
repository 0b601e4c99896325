"""The whole of ``gatecli eval`` as one function returning data (the command only prints it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gatecli.evaluation import compare
from gatecli.evaluation.halves import HALVES, cut
from gatecli.evaluation.predictors import Predictor, load_predictor
from gatecli.evaluation.scoring import pair, score_turns
from gatecli.evaluation.suites import load_suite, resolve_suites
from gatecli.records import ASK_MARGIN


def _margin(p: Predictor) -> float:
    return float(p.escalation.get("ask_margin", ASK_MARGIN))


def turn_rows(
    suite: str, turns: list[dict[str, Any]], base_turns: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """One row per turn for ``--turns``: gold, prediction, per-head correctness and, with a
    baseline, the baseline's prediction and correctness beside them.

    Why: every diagnosis of a candidate (which follow-ups it executes, which events it adds
    on which suite) needs the turns, not the aggregates; before this each one re-ran the
    model in a throwaway script. Latency is left out (it is a benchmark's number).
    """
    rows = []
    for i, t in enumerate(turns):
        row: dict[str, Any] = {
            "suite": suite, "id": t["id"], "group": t["group"], "source": t["source"],
            "lang": t["lang"], "message": t["message"], "gold": t["gold"], "error": t["error"],
            "pred": _pred(t), "correct": t.get("correct"),
        }  # fmt: skip
        if base_turns is not None:
            b = base_turns[i]
            row["baseline"] = {"error": b["error"], "pred": _pred(b), "correct": b.get("correct")}
        rows.append(row)
    return rows


def _pred(t: dict[str, Any]) -> dict[str, Any] | None:
    if t.get("pred") is None:
        return None
    return {k: v for k, v in t["pred"].items() if k != "latency_ms"}


def evaluate_predictor(
    predictor: Predictor, records: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Predict every record of a suite and score it; returns ``(scores, per-turn rows)``."""
    preds = predictor.predict([r["input"] for r in records]) if records else []
    turns = pair(records, preds)
    return score_turns(turns, predictor.labels, _margin(predictor)), turns


def run_eval(
    model: str | Path | None = None,
    suites: list[str] | None = None,
    *,
    baseline: str | Path | None = None,
    gate_criteria: str | Path | None = None,
    limit: int | None = None,
    data_dir: str | Path | None = None,
    max_flips: int = 200,
    keep_turns: bool = False,
    half: str | None = None,
) -> dict[str, Any]:
    """Evaluate a model (and optionally a baseline) on suites; every number in one dict.

    ``result["gate"]["passed"]`` is False when a baseline was given and a release criterion
    fails (the command exits 1 then). ``keep_turns`` adds ``result["turns"]``: every turn of
    every suite, the candidate's prediction and, with a baseline, the baseline's
    (:func:`turn_rows`; ``gatecli eval --turns FILE`` writes them). ``half`` ("select" or
    "report") evaluates only that half of each held-out selection suite
    (:mod:`gatecli.evaluation.halves`); every other suite is read whole.

    Example:
        >>> res = run_eval("runs/new", ["seeds"], baseline="models/gate-prev")  # doctest: +SKIP
        >>> res["gate"]["passed"], res["comparison"]["seeds"]["n_broken"]  # doctest: +SKIP
        (True, 0)
    """
    if half is not None and half not in HALVES:
        raise ValueError(f"half {half!r}: expected one of {', '.join(HALVES)}")
    paths, skipped = resolve_suites(suites or ["test"], data_dir)
    cand = load_predictor(model)
    base = load_predictor(baseline) if baseline is not None else None
    # Read before the suites run: a bad gate file fails in a second, not after the eval.
    criteria = compare.load_criteria(gate_criteria) if base is not None else []
    out: dict[str, Any] = {
        "model": cand.name, "model_path": str(model) if model else None,
        "baseline": base.name if base else None,
        "baseline_path": str(baseline) if baseline else None,
        "suites": {}, "skipped": skipped, "comparison": {}, "half": half,
    }  # fmt: skip
    paired: dict[str, compare.Paired] = {}
    kept: dict[str, list[dict[str, Any]]] = {}
    for name, path in paths.items():
        records, errors = load_suite(path, limit)
        whole = len(records)
        records = cut(name, records, half)
        scores, turns = evaluate_predictor(cand, records)
        entry: dict[str, Any] = {"path": str(path), "n": len(records), "read_errors": errors,
                                 "model": scores}  # fmt: skip
        if len(records) != whole:
            entry["half"] = {"name": half, "of": whole}
        base_turns = None
        if base is not None:
            entry["baseline"], base_turns = evaluate_predictor(base, records)
            paired[name] = compare.Paired(turns, base_turns, (_margin(cand), _margin(base)))
            fl = compare.flips(turns, base_turns)
            out["comparison"][name] = {
                "deltas": compare.deltas(scores, entry["baseline"]),
                "n_fixed": len(fl["fixed"]), "n_broken": len(fl["broken"]),
                "fixed": fl["fixed"][:max_flips], "broken": fl["broken"][:max_flips],
            }  # fmt: skip
        out["suites"][name] = entry
        if keep_turns:
            kept[name] = turn_rows(name, turns, base_turns)
    if keep_turns:
        out["turns"] = kept
    if base is not None:
        out["gate"] = compare.release_gate(out["suites"], criteria, paired)
        out["gate"]["criteria_file"] = str(gate_criteria or compare.DEFAULT_GATE)
    else:
        out["gate"] = None
    return out
