"""Markdown for people: ``report.md`` with PNG plots, and the model-card tables.

The report is meant to be read on GitHub, so it is plain Markdown tables plus images in the
same folder; matplotlib is imported only here and only when plots are asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gatecli.evaluation import boundary_views, tool_views
from gatecli.extras import install_hint

SUMMARY_COLUMNS = (
    ("n", "n"), ("decision.accuracy", "acc"), ("decision.macro_f1", "macro-F1"),
    ("decision.safety_recall", "safety recall"), ("decision.ece", "ECE"),
    ("events.micro_f1", "events µF1"), ("events.false_positive_rate", "events FPR"),
    ("scenario_tags.micro_f1", "tags µF1"), ("missing_slots.micro_f1", "slots µF1"),
    ("escalation_share", "escalated"), ("latency_ms.p50", "p50 ms"), ("latency_ms.p90", "p90 ms"),
)  # fmt: skip


def lookup(tree: Any, dotted: str) -> Any:
    """The value at a dotted path of nested dicts (``"overall.decision.ece"``), or None."""
    for part in dotted.split("."):
        if not isinstance(tree, dict) or part not in tree:
            return None
        tree = tree[part]
    return tree


def verdict(check: dict[str, Any], no: str = "NO") -> str:
    """A gate check's "passed" cell: yes, yes (noise) when only the paired bootstrap let a
    past-tolerance change through, or ``no``."""
    if not check["passed"]:
        return no
    return "yes (noise)" if check.get("within_noise") else "yes"


def fmt_cell(v: Any) -> str:
    """One table cell: floats to 3 places, a dash for missing, Markdown-safe text."""
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _summary_rows(label: str, slices: dict[str, Any]) -> list[list[Any]]:
    return [
        [f"{label}{k}", *(lookup(v, key) for key, _ in SUMMARY_COLUMNS)] for k, v in slices.items()
    ]


def card_tables(results: dict[str, Any]) -> str:
    """The headline metrics as Markdown tables for MODEL_CARD.md (one row per suite, then
    per language, then the benchmark views).

    Example:
        >>> print(card_tables(run_eval(str(default_model_dir()), ["all"])))  # doctest: +SKIP
    """
    header = ["suite", *(name for _, name in SUMMARY_COLUMNS)]
    rows, lang_rows, views = [], [], []
    for suite, entry in results["suites"].items():
        for who in ("model", "baseline"):
            if who not in entry:
                continue
            tag = suite if who == "model" else f"{suite} (baseline {results.get('baseline')})"
            rows += _summary_rows("", {tag: entry[who]["overall"] | {"n": entry[who]["n"]}})
        if entry["model"]["by_lang"]:
            lang_rows += _summary_rows(f"{suite} · ", entry["model"]["by_lang"])
        v = entry["model"]["views"]
        if "xstest" in v:
            views.append(
                [
                    suite,
                    "XSTest over-refusal (safe → refuse/safety)",
                    v["xstest"]["over_refusal_rate"],
                ]
            )
            views.append(
                [suite, "XSTest refusal rate on unsafe", v["xstest"]["refusal_rate_unsafe"]]
            )
        if "when2call" in v:
            views.append(
                [suite, "When2Call macro-F1 (execute/ask/connect)", v["when2call"]["macro_f1"]]
            )
        if "seeds" in v:
            views.append(
                [suite, "seed examples passing", f"{v['seeds']['passed']}/{v['seeds']['n']}"]
            )
        views += boundary_views.card_rows(suite, v)
        views += tool_views.card_rows(suite, v)
    out = f"Model `{results['model']}`.\n\n" + _table(header, rows)
    if lang_rows:
        out += "\nPer language:\n\n" + _table(["suite · lang", *header[1:]], lang_rows)
    if views:
        out += "\nBenchmark views:\n\n" + _table(["suite", "measure", "value"], views)
    return out


def _plots(entry: dict[str, Any], out: Path, stem: str) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(f"plots need matplotlib: {install_hint('eval', 'matplotlib')}") from exc
    d = entry["model"]["overall"].get("decision")
    if not d:
        return []
    files = []
    fig, ax = plt.subplots(figsize=(4.5, 4))
    ax.imshow(d["confusion"], cmap="Blues")
    ax.set_xticks(range(len(d["labels"])), d["labels"], rotation=45, ha="right")
    ax.set_yticks(range(len(d["labels"])), d["labels"])
    for i, row in enumerate(d["confusion"]):
        for j, v in enumerate(row):
            ax.text(j, i, str(v), ha="center", va="center", fontsize=8)
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    ax.set_title(f"{stem}: decision confusion")
    files.append(_save(fig, out / f"{stem}_confusion.png", plt))
    fig, ax = plt.subplots(figsize=(4, 4))
    bins = [b for b in d["reliability"] if b["count"]]
    ax.plot([0, 1], [0, 1], "--", color="grey")
    ax.bar([(b["lo"] + b["hi"]) / 2 for b in bins], [b["accuracy"] for b in bins],
           width=1 / len(d["reliability"]), edgecolor="black", alpha=0.7)  # fmt: skip
    ax.set_xlabel("confidence (top label)")
    ax.set_ylabel("accuracy")
    ax.set_title(f"{stem}: reliability (ECE {d['ece']:.3f})")
    files.append(_save(fig, out / f"{stem}_reliability.png", plt))
    fig, ax = plt.subplots(figsize=(4.5, 4))
    for who in ("model", "baseline"):
        rc = lookup(entry.get(who), "overall.decision.risk_coverage")
        if rc:
            ax.plot(rc["escalated_share"], rc["accuracy"], marker=".", label=who)
    ax.set_xlabel("share escalated (lowest confidence first)")
    ax.set_ylabel("accuracy of kept turns")
    ax.set_title(f"{stem}: risk–coverage")
    ax.legend()
    files.append(_save(fig, out / f"{stem}_risk_coverage.png", plt))
    return files


def _save(fig: Any, path: Path, plt: Any) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def write_report(results: dict[str, Any], out_dir: str | Path, *, plots: bool = True) -> Path:
    """Write ``report.md`` (and one set of PNGs per suite) into ``out_dir``; returns its path.

    Example:
        >>> write_report(run_eval(suites=["seeds"]), "reports/eval")  # doctest: +SKIP
        PosixPath('reports/eval/report.md')
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    md = [f"# Evaluation of `{results['model']}`\n"]
    if results.get("baseline"):
        gate = results["gate"]
        md.append(f"Baseline `{results['baseline']}`. Release gate: "
                  f"**{'PASSED' if gate['passed'] else 'FAILED'}**.\n")  # fmt: skip
        md.append(_table(["suite", "criterion", "baseline", "model", "passed", "why"],
                         [[c["suite"], c["name"], c["baseline"], c["model"],
                           verdict(c, no="**no**"), c["reason"]]
                          for c in gate["checks"]]))  # fmt: skip
    md.append("## Summary\n\n" + card_tables(results))
    for suite, entry in results["suites"].items():
        md.append(f"\n## {suite}\n\n`{entry['path']}`, {entry['n']} turns, "
                  f"{len(entry['read_errors'])} unreadable lines.\n")  # fmt: skip
        m = entry["model"]
        if m["by_source"]:
            md.append("\nPer source:\n\n" + _table(["source", *(n for _, n in SUMMARY_COLUMNS)],
                                                   _summary_rows("", m["by_source"])))  # fmt: skip
        d = m["overall"].get("decision")
        if d:
            md.append("\nDecision per class:\n\n" + _table(
                ["label", "precision", "recall", "F1", "support"],
                [[k, v["precision"], v["recall"], v["f1"], v["support"]]
                 for k, v in d["per_class"].items()]))  # fmt: skip
        if plots:
            for f in _plots(entry, out, _stem(suite)):
                md.append(f"\n![{f}]({f})\n")
        seeds = m["views"].get("seeds")
        if seeds and seeds["failures"]:
            md.append("\nFailing seed examples:\n\n" + _table(
                ["id", "message", "head", "gold", "predicted"],
                [[f["id"], f["message"], f["head"], f["gold"], f["predicted"]]
                 for f in seeds["failures"]]))  # fmt: skip
        comp = results.get("comparison", {}).get(suite)
        if comp:
            md.append(f"\nVersus baseline: {comp['n_fixed']} fixed, {comp['n_broken']} broken.\n\n")
            md.append(_table(["metric", "baseline", "model", "Δ"],
                             [[k, v["baseline"], v["model"], v["delta"]]
                              for k, v in comp["deltas"].items()]))  # fmt: skip
            if comp["broken"]:
                md.append("\nBroken turns (right → wrong):\n\n" + _table(
                    ["id", "message", "head", "gold", "model", "baseline"],
                    [[f["id"], f["message"], f["head"], f["gold"], f["model"], f["baseline"]]
                     for f in comp["broken"]]))  # fmt: skip
    path = out / "report.md"
    path.write_text("\n".join(md), encoding="utf-8")
    return path


def _stem(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in Path(name).name)
