"""Who ranks the refusal boundary better, whatever each model's threshold.

Why: TF-IDF trained on the same corpus refuses far fewer ordinary turns than the gate
(ordinary_en false refusal 0.002 against 0.028 for gate-small 1.2.9) and also blocks far
fewer harmful ones (test safety recall 0.58 against 0.93). Each false-refusal rate is read at
its model's own threshold, so "TF-IDF wins" there may say where its threshold sits rather
than how well it tells a harmful turn from an ordinary one. This module measures the second:

* **positives**: gold ``refuse``/``safety`` turns of the ``--positives`` suites (default the
  corpus test split);
* **negatives**: gold ``execute`` turns of each ``--negatives`` suite (default the ordinary
  suites, oasst1_fr, MGSM and XSTest's safe prompts: the held-out suites where TF-IDF wins);
* **score**: P(refuse) + P(safety) of the decision head for the whole turn (what the record
  reports; the segment rule and the policy's rules are not in it);
* per model and negative suite: AUROC (positives against that suite's negatives), the
  false refusal at the model's own decisions, and the false refusal at the threshold that
  blocks a fixed share of the positives (``--recall``, default 0.6 / 0.8 / 0.9), so two
  models are compared at one operating point.

Usage:
    python -m gatecli_train.boundary_rank --model gate-small=models/gatecli_models/gate-small \\
        --model TF-IDF=artifacts/baselines/tfidf --json reports/boundary_rank.json
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gatecli.evaluation import metrics as M
from gatecli.evaluation.halves import HALVES, cut
from gatecli.evaluation.predictors import load_predictor
from gatecli.evaluation.suites import load_suite, resolve_suites

BLOCKING = ("refuse", "safety")
NEGATIVES = ("ordinary_en", "ordinary_zh", "ordinary_fr", "oasst1_fr", "mgsm", "xstest")
RECALLS = (0.6, 0.8, 0.9)


def blocking_scores(
    predictor: Any, records: Sequence[Mapping[str, Any]], gold: Sequence[str]
) -> tuple[list[float], list[bool]]:
    """P(refuse)+P(safety) and "blocked by the model's own decision" of the turns whose
    gold decision is in ``gold``."""
    keep = [r for r in records if r["labels"]["decision"] in gold]
    preds = predictor.predict([r["input"] for r in keep]) if keep else []
    scores, blocked = [], []
    for p in preds:
        if p.get("error"):
            continue
        probs = p.get("probabilities") or {}
        scores.append(sum(float(probs.get(k, 0.0)) for k in BLOCKING))
        blocked.append(p.get("decision") in BLOCKING)
    return scores, blocked


def compare(
    pos: Sequence[float],
    pos_blocked: Sequence[bool],
    neg: Sequence[float],
    neg_blocked: Sequence[bool],
    recalls: Sequence[float] = RECALLS,
) -> dict[str, Any]:
    """One model on one negative suite: ranking and operating points.

    Example:
        >>> r = compare([0.9, 0.8], [True, True], [0.85, 0.1], [True, False], [0.5])
        >>> r["auroc"], r["own"]["false_refusal"], r["at_recall"]["0.5"]
        (0.75, 0.5, 0.0)
    """
    return {
        "n_pos": len(pos),
        "n_neg": len(neg),
        "auroc": M.auroc(pos, neg),
        "own": {
            "recall": sum(pos_blocked) / len(pos_blocked) if pos_blocked else None,
            "false_refusal": sum(neg_blocked) / len(neg_blocked) if neg_blocked else None,
        },
        "at_recall": {f"{r:g}": M.fpr_at_tpr(pos, neg, r) for r in recalls},
    }


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", required=True, help="NAME=DIR, repeatable")
    ap.add_argument("--positives", action="append", default=None, help="suite (default test)")
    ap.add_argument("--negatives", action="append", default=None, help="suite, repeatable")
    ap.add_argument("--recall", action="append", type=float, default=None)
    ap.add_argument("--data-dir", default=None, help="where suite names resolve")
    ap.add_argument("--limit", type=int, default=None, help="first N turns per suite")
    ap.add_argument("--json", default=None, help="write every number here")
    ap.add_argument(
        "--half",
        choices=HALVES,
        default=None,
        help="that half of each held-out selection suite (gatecli eval --half)",
    )
    args = ap.parse_args(argv)
    recalls = tuple(args.recall or RECALLS)
    pos_names = args.positives or ["test"]
    neg_names = args.negatives or list(NEGATIVES)
    paths, _ = resolve_suites([*pos_names, *neg_names], args.data_dir)
    suites = {name: cut(name, load_suite(path, args.limit)[0], args.half)
              for name, path in paths.items()}  # fmt: skip
    report: dict[str, Any] = {"positives": pos_names, "recalls": list(recalls), "models": {},
                              "half": args.half}  # fmt: skip
    for spec in args.model:
        name, _, folder = spec.partition("=")
        if not folder:
            ap.error(f"--model {spec!r}: NAME=DIR")
        predictor = load_predictor(folder)
        pos, pos_b = [], []
        for s in pos_names:
            sc, bl = blocking_scores(predictor, suites[s], BLOCKING)
            pos += sc
            pos_b += bl
        per: dict[str, Any] = {}
        for s in neg_names:
            neg, neg_b = blocking_scores(predictor, suites[s], ("execute",))
            per[s] = compare(pos, pos_b, neg, neg_b, recalls)
        report["models"][name] = per
    cols = " | ".join(f"false refusal at {r:g}" for r in recalls)
    print(f"Positives: gold refuse/safety turns of {', '.join(pos_names)}; score P(refuse)+"
          "P(safety) of the decision head.")  # fmt: skip
    print(f"| negatives | model | AUROC | own recall / false refusal | {cols} |")
    print("|---" * (4 + len(recalls)) + "|")
    for s in neg_names:
        for name, per in report["models"].items():
            r = per[s]
            at = " | ".join(_fmt(r["at_recall"][f"{x:g}"]) for x in recalls)
            own = f"{_fmt(r['own']['recall'])} / {_fmt(r['own']['false_refusal'])}"
            print(f"| {s} ({r['n_neg']}) | {name} | {_fmt(r['auroc'])} | {own} | {at} |")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
