"""Write ``MODEL_CARD.md`` from ``gatecli eval --json`` results and the training summary.

Every number in the card comes from an evaluation file of this exact model (and, for the
comparison table, of the teacher and the baselines); nothing is typed in by hand.

Usage:
    python -m gatecli_train.card --model models/gatecli_models/gate-small --eval eval.json \\
        --compare teacher=teacher.json --compare tfidf=tfidf.json --summary runs/x/summary.json
    python -m gatecli_train.card --readme-table --eval eval.json --compare tfidf=tfidf.json
    python -m gatecli_train.card --model DIR --eval eval.json --compare-baseline 1.2.74 ...

The second form prints the README's headline table (one row per evaluation file).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from gatecli import artifact
from gatecli.evaluation.report import card_tables
from gatecli.template import ELISION, HEAD_SHARE
from gatecli_train import card_release
from gatecli_train.release_notes import baseline_results

COMPARE_SUITES = ("test", "seeds", "xstest", "when2call", "home_assistant", "xsid")


def _g(tree: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(tree, dict) or k not in tree:
            return None
        tree = tree[k]
    return tree


def _f(v: Any) -> str:
    return "–" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))


def comparison_table(named: dict[str, dict[str, Any]]) -> str:
    """One row per model: the headline numbers on the test split and external suites."""
    cols = [
        ("test decision macro-F1", ("test", "decision", "macro_f1")),
        ("test safety recall", ("test", "decision", "safety_recall")),
        ("test safety AP", ("test", "decision", "safety_ap")),
        ("test events micro-F1", ("test", "events", "micro_f1")),
        ("test false events", ("test", "events", "false_positive_rate")),
        ("test tags macro-F1", ("test", "scenario_tags", "macro_f1")),
        ("test slots micro-F1", ("test", "missing_slots", "micro_f1")),
        ("HA events micro-F1", ("home_assistant", "events", "micro_f1")),
        ("xSID events micro-F1", ("xsid", "events", "micro_f1")),
        ("p50 ms", ("test", "latency_ms", "p50")),
    ]
    head = "| model | " + " | ".join(c for c, _ in cols) + " |\n"
    head += "|---" * (len(cols) + 1) + "|\n"
    rows = []
    for name, res in named.items():
        vals = []
        for _, (suite, *path) in cols:
            vals.append(_f(_g(res, "suites", suite, "model", "overall", *path)))
        rows.append(f"| {name} | " + " | ".join(vals) + " |")
    return head + "\n".join(rows) + "\n"


def _model(res: dict[str, Any], suite: str) -> dict[str, Any]:
    return _g(res, "suites", suite, "model") or {}


def readme_row(name: str, res: dict[str, Any]) -> str:
    """The README's headline numbers for one evaluation file. Safety AP sits beside recall and
    precision because those two are read at each model's own threshold: 1.2.36's first
    evaluation lost test safety recall (0.981 -> 0.966) at an equal AP (0.961 / 0.960), an
    operating point, not a worse ranking."""
    test = _model(res, "test")
    dec = _g(test, "overall", "decision") or {}
    langs = [_g(test, "by_lang", lang, "decision", "macro_f1") for lang in ("en", "zh", "fr")]
    seeds = _g(_model(res, "seeds"), "views", "seeds") or {}
    vals = [
        dec.get("macro_f1"),
        *langs,
        dec.get("safety_recall"),
        _g(dec, "per_class", "safety", "precision"),
        dec.get("safety_ap"),
        _g(test, "overall", "events", "micro_f1"),
        _g(test, "overall", "events", "false_positive_rate"),
        _g(_model(res, "xstest"), "views", "xstest", "over_refusal_rate"),
        _g(_model(res, "when2call"), "views", "when2call", "macro_f1"),
        _g(_model(res, "simple_safety_tests"), "overall", "decision", "safety_recall"),
        f"{seeds['passed']}/{seeds['n']}" if seeds else None,
    ]
    return f"| {name} | " + " | ".join(_f(v) for v in vals) + " |"


README_HEADER = (
    "| model | test decision macro-F1 | en | zh | fr | safety recall | safety precision "
    "| safety AP | events micro-F1 | false events on no-event turns | XSTest over-refusal "
    "| When2Call macro-F1 | SimpleSafetyTests safety recall | seeds passing |\n" + "|---" * 14 + "|"
)


def readme_table(named: dict[str, dict[str, Any]]) -> str:
    return "\n".join([README_HEADER, *(readme_row(n, r) for n, r in named.items())]) + "\n"


def long_message_text(tpl: dict[str, Any]) -> str:
    """How this folder's template fits a message over the token budget (the card must say
    what the folder does: folders before the ``long_message`` key cut from the end).

    Example:
        >>> long_message_text({})[:24]
        'A message over the budge'
    """
    if tpl.get("long_message") == "head_tail":
        return (
            f"A message over the budget keeps its beginning ({HEAD_SHARE:.0%}) and its end, "
            f"joined by `{ELISION}` (`long_message: head_tail`), so a request after pasted "
            "text is read."
        )
    return "A message over the budget is cut from its end."


def tool_overflow_text(tpl: dict[str, Any]) -> str:
    """What this folder's template gives up when a tool list overflows the budget (folders
    before the ``tool_overflow`` key cut the message and kept the whole list).

    Example:
        >>> tool_overflow_text({})[:30]
        'A tool list over the budget is'
    """
    if tpl.get("tool_overflow") == "drop_tools":
        return (
            "A turn over the budget keeps at most a third of it for tool names, those sharing "
            "a word with the message first (`tool_overflow: drop_tools`), before earlier turns "
            "or the message give anything up."
        )
    return (
        "A tool list over the budget is kept whole and the message is cut instead (under "
        "~30 tool names nothing of it is left)."
    )


def render(
    model_dir: Path,
    results: dict[str, Any],
    compare: dict[str, dict[str, Any]],
    summary: dict[str, Any] | None,
    template: str,
    tfidf: str | None = None,
) -> str:
    folder = artifact.load_model_folder(model_dir)
    cfg = folder.config
    heads = "\n".join(
        f"- `{n}` ({h.kind}, {len(h.labels)} labels, temperature {h.temperature:.3f})"
        for n, h in cfg.heads.items()
    )
    thresholds = json.dumps({n: h.thresholds for n, h in cfg.heads.items()}, ensure_ascii=False)
    by_lang = {n: h.thresholds_by_lang for n, h in cfg.heads.items() if h.thresholds_by_lang}
    if by_lang:
        thresholds += "; per language (`thresholds_by_lang`): `" + json.dumps(by_lang) + "`"
    size_mb = folder.model_path.stat().st_size / 1e6
    training = json.dumps(cfg.extra.get("training", {}), indent=1, ensure_ascii=False)
    named = {cfg.model_id: results, **compare}
    return template.format(
        long_message=long_message_text(cfg.template),
        tool_overflow=tool_overflow_text(cfg.template),
        targets=card_release.targets_table(results),
        heldout=card_release.heldout_table(named, cfg.model_id, tfidf),
        model_id=cfg.model_id,
        heads=heads,
        size_mb=f"{size_mb:.1f}",
        max_length=cfg.max_length,
        thresholds=thresholds,
        tables=card_tables(results),
        comparison=comparison_table({cfg.model_id: results, **compare}),
        training=training,
        parity=json.dumps(cfg.extra.get("parity", {})),
        summary=json.dumps(summary or {}, indent=1)[:4000],
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, help="model folder whose MODEL_CARD.md is written")
    ap.add_argument("--readme-table", action="store_true", help="print the README table")
    ap.add_argument("--eval", required=True, type=Path, help="gatecli eval --json of this model")
    ap.add_argument("--compare", action="append", default=[], help="NAME=eval.json")
    ap.add_argument(
        "--compare-baseline",
        metavar="NAME",
        help="also compare the --eval file's own --baseline side (same turns), named NAME",
    )
    ap.add_argument("--summary", type=Path, help="runs/<name>/summary.json")
    ap.add_argument("--tfidf", help="the --compare NAME that is TF-IDF on the same corpus")
    ap.add_argument("--template", type=Path, default=Path(__file__).parent / "assets" / "card.md")
    args = ap.parse_args()
    results = json.loads(args.eval.read_text())
    compare = {}
    for item in args.compare:
        name, _, path = item.partition("=")
        compare[name] = json.loads(Path(path).read_text())
    if args.compare_baseline:
        try:
            compare[args.compare_baseline] = baseline_results(results)
        except ValueError as exc:
            ap.error(f"--compare-baseline: {exc}")
    if args.readme_table:
        own = str(_g(results, "model") or args.eval.stem)
        print(readme_table({own: results, **compare}), end="")
        return
    if args.model is None:
        ap.error("--model is required unless --readme-table")
    summary = json.loads(args.summary.read_text()) if args.summary else None
    template = args.template.read_text(encoding="utf-8")
    text = render(args.model, results, compare, summary, template, tfidf=args.tfidf)
    (args.model / artifact.CARD_FILE).write_text(text, encoding="utf-8")
    print(f"wrote {args.model / artifact.CARD_FILE}")


if __name__ == "__main__":
    main()
