"""Do the two halves of the held-out suites rank models alike?

Held-out selection (:mod:`gatecli_train.heldout_select`) keeps the step that scores best on
the select half and reports on the other; that is worth something only if a model better on
one half is better on the other. This reads ``gatecli eval --turns`` files of several models
(whole suites, not ``--half``) and prints each suite's score on each half
(:func:`gatecli_train.heldout_select.suite_score` on the runtime's decisions), the mean per
half, and how often the two halves order a pair of models the same way.

    python -m gatecli_train.half_agreement 1.2.40=t40.jsonl 1.2.36=t36.jsonl ... [--json F]

Measured 2026-12-06 (stop 53) on five shipped releases (1.2.9, 1.2.17, 1.2.25, 1.2.36,
1.2.40): both halves rank the five in the same order by their means, and order a pair the
same way on 84 of 104 (suite, pair) cells where both differ.
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from gatecli.evaluation.halves import HALVES, SELECTION_SUITES, half_of
from gatecli.records import DECISIONS, iter_jsonl
from gatecli_train.heldout_select import suite_score

Scores = dict[tuple[str, str], float]


def half_scores(rows: Iterable[Mapping[str, Any]]) -> Scores:
    """``{(suite, half): score}`` over the selection suites in ``rows`` (``--turns`` rows);
    turns without a gold decision or a prediction are left out."""
    cells: dict[tuple[str, str], tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
    for r in rows:
        if r["suite"] not in SELECTION_SUITES or r.get("pred") is None:
            continue
        gold = r["gold"].get("decision")
        if gold is None:
            continue
        gold_list, pred_list = cells[(r["suite"], half_of(str(r["group"])))]
        gold_list.append(gold)
        pred_list.append(r["pred"]["decision"])
    return {k: suite_score(g, p, DECISIONS) for k, (g, p) in cells.items()}


def agreement(models: Mapping[str, Scores]) -> dict[str, Any]:
    """Per-half means and the share of (suite, model pair) cells, among those where both
    halves tell the two models apart, that the halves order alike.

    Example:
        >>> a = {("xstest", "select"): 0.8, ("xstest", "report"): 0.7}
        >>> b = {("xstest", "select"): 0.6, ("xstest", "report"): 0.5}
        >>> agreement({"a": a, "b": b})["same_order"]
        [1, 1]
    """
    suites = sorted({s for sc in models.values() for s, _ in sc})
    both = [s for s in suites if all((s, h) in sc for sc in models.values() for h in HALVES)]
    means = {
        name: {h: sum(sc[(s, h)] for s in both) / max(1, len(both)) for h in HALVES}
        for name, sc in models.items()
    }
    same = told = 0
    for a, b in itertools.combinations(models, 2):
        for s in both:
            d = [models[a][(s, h)] - models[b][(s, h)] for h in HALVES]
            if all(abs(x) > 1e-12 for x in d):
                told += 1
                same += (d[0] > 0) == (d[1] > 0)
    return {"suites": both, "means": means, "same_order": [same, told]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", help="NAME=TURNS.jsonl (gatecli eval --turns)")
    ap.add_argument("--json", default=None, help="write every number here")
    args = ap.parse_args(argv)
    models: dict[str, Scores] = {}
    for spec in args.models:
        name, _, path = spec.partition("=")
        if not path:
            ap.error(f"{spec!r}: NAME=TURNS.jsonl")
        models[name] = half_scores(row for _, row in iter_jsonl(Path(path)))
    res = agreement(models)
    names = list(models)
    print("suite".ljust(18) + "".join(n.rjust(16) for n in names) + "   (select/report)")
    for s in res["suites"]:
        cells = (f"{models[n][(s, 'select')]:.3f}/{models[n][(s, 'report')]:.3f}" for n in names)
        print(s.ljust(18) + "".join(c.rjust(16) for c in cells))
    for h in HALVES:
        print(f"mean {h}".ljust(18) + "".join(f"{res['means'][n][h]:.4f}".rjust(16) for n in names))
    same, told = res["same_order"]
    print(f"pairs ordered alike by both halves: {same}/{told} (suite x model pair)")
    if args.json:
        out = {**res, "scores": {n: {f"{s}:{h}": v for (s, h), v in sc.items()}
                                 for n, sc in models.items()}}  # fmt: skip
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
