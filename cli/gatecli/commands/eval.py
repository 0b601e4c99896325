"""``gatecli eval``: score a model (or a baseline folder) on named suites, compare, gate.

The work happens in :func:`gatecli.evaluation.run.run_eval` (returns every number as a dict)
and :mod:`gatecli.evaluation.report`; this module parses options, prints rich tables and
sets the exit code: 0 = done (and the release gate passed), 1 = the gate failed,
2 = bad input. ``gatecli eval build-baselines`` trains the reference baselines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from gatecli.commands._util import APP_SETTINGS, EXIT_FAILED, atomic_output, fail
from gatecli.extras import install_hint
from gatecli.writers import terminal_safe

HELP = """Evaluate a model on suites (test, dev, seeds, xstest, when2call, ... or a JSONL path).

Examples:

  gatecli eval --suite seeds --suite xstest

  gatecli eval --model runs/new --baseline models/gatecli_models/gate-small \
      --suite all --report reports/eval

  gatecli eval --model artifacts/baselines/tfidf --suite test --json tfidf.json

  gatecli eval --suite context --turns context-turns.jsonl   # every turn, for diagnosis

  gatecli eval build-baselines --corpus data/corpus --out artifacts/baselines
"""

eval_app = typer.Typer(
    help=HELP, invoke_without_command=True, **{**APP_SETTINGS, "no_args_is_help": False}
)


def render_summary(results: dict[str, Any]) -> None:
    """Print the per-suite summary, views, deltas and the release gate as rich tables."""
    from rich.console import Console
    from rich.table import Table

    from gatecli.evaluation import boundary_views
    from gatecli.evaluation.report import SUMMARY_COLUMNS, fmt_cell, lookup, verdict

    console = Console()
    title = f"{results['model']}" + (f" vs {results['baseline']}" if results["baseline"] else "")
    table = Table("suite", *(n for _, n in SUMMARY_COLUMNS), title=title, title_justify="left")
    for suite, entry in results["suites"].items():
        for who in ("model", "baseline"):
            if who in entry:
                label = suite if who == "model" else "  baseline"
                table.add_row(
                    label, *(fmt_cell(lookup(entry[who]["overall"], k)) for k, _ in SUMMARY_COLUMNS)
                )
    console.print(table)
    for suite, entry in results["suites"].items():
        d = entry["model"]["overall"].get("decision")
        if d and d.get("safety_recall") is not None:
            ap = "" if d.get("safety_ap") is None else f", average precision {d['safety_ap']:.3f}"
            console.print(f"{suite}: safety recall {d['safety_recall']:.3f}{ap}", markup=False)
        v = entry["model"]["views"]
        if "xstest" in v:
            x = v["xstest"]
            console.print(f"{suite}: XSTest over-refusal {fmt_cell(x['over_refusal_rate'])} on "
                          f"{x['n_safe']} safe, refusal {fmt_cell(x['refusal_rate_unsafe'])} on "
                          f"{x['n_unsafe']} unsafe", markup=False)  # fmt: skip
        if "when2call" in v:
            console.print(
                f"{suite}: When2Call macro-F1 {v['when2call']['macro_f1']:.3f}", markup=False
            )
        if "seeds" in v:
            s = v["seeds"]
            console.print(f"{suite}: seeds {s['passed']}/{s['n']} pass", markup=False)
            fails = Table("id", "message", "head", "gold", "predicted", title="failing seeds")
            for f in s["failures"]:
                keys = ("id", "message", "head", "gold", "predicted")
                fails.add_row(*(terminal_safe(fmt_cell(f[k])) for k in keys))
            if s["failures"]:
                console.print(fails)
        for line in boundary_views.summary_lines(suite, v):
            console.print(line, markup=False)
    for suite, comp in results["comparison"].items():
        console.print(f"{suite}: {comp['n_fixed']} fixed, {comp['n_broken']} broken", markup=False)
        for f in comp["broken"][:20]:
            console.print(f"  broken [{f['head']}] {f['message'][:80]!r} gold={f['gold']} "
                          f"model={f['model']} baseline={f['baseline']}", markup=False)  # fmt: skip
    if results["gate"] is not None:
        gate = Table("suite", "criterion", "passed", "why", title="release gate")
        for c in results["gate"]["checks"]:
            gate.add_row(c["suite"], c["name"], verdict(c), c["reason"])
        console.print(gate)
        console.print("release gate: " + ("PASSED" if results["gate"]["passed"] else "FAILED"))
    for note in results["skipped"]:
        console.print(f"skipped {note}", markup=False)


@eval_app.callback()
def eval_cli(
    ctx: typer.Context,
    model: Annotated[
        Path | None,
        typer.Option("--model", "-m", envvar="GATECLI_MODEL", help="Model or baseline folder."),
    ] = None,
    suite: Annotated[
        list[str] | None,
        typer.Option("--suite", "-s", help="Suite name, 'all', or a JSONL(.gz) path; repeatable."),
    ] = None,
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="Compare against this model folder.")
    ] = None,
    gate_criteria: Annotated[
        Path | None, typer.Option("--gate-criteria", help="Release-gate YAML.")
    ] = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="Write report.md + PNGs here.")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write every number here.")
    ] = None,
    turns_out: Annotated[
        Path | None,
        typer.Option(
            "--turns",
            help="Write every turn here as JSONL: suite, id, message, gold, prediction, "
            "correct per head (and the baseline's beside them).",
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="First N turns per suite.")
    ] = None,
    data_dir: Annotated[
        Path | None, typer.Option("--data-dir", help="Where suite names resolve.")
    ] = None,
    half: Annotated[
        str | None,
        typer.Option(
            "--half",
            help="report | select: only that half of each held-out selection suite "
            "(gatecli.evaluation.halves); report a model selected on held-out suites with "
            "--half report.",
        ),
    ] = None,
) -> None:
    if ctx.invoked_subcommand is not None:
        return
    from gatecli.artifact import ArtifactError
    from gatecli.evaluation.run import run_eval
    from gatecli.evaluation.suites import SuiteError

    try:
        results = run_eval(model, suite or ["test"], baseline=baseline, gate_criteria=gate_criteria,
                           limit=limit, data_dir=data_dir, half=half,
                           keep_turns=turns_out is not None)  # fmt: skip
    except (ArtifactError, SuiteError, ValueError, OSError) as exc:
        fail(str(exc))
    turns = results.pop("turns", {})
    render_summary(results)
    from gatecli.evaluation.report import write_report

    try:
        if json_out is not None:
            json_out.parent.mkdir(parents=True, exist_ok=True)
            with atomic_output(json_out) as f:
                json.dump(results, f, ensure_ascii=False, indent=1)
        if turns_out is not None:
            turns_out.parent.mkdir(parents=True, exist_ok=True)
            with atomic_output(turns_out) as f:
                for rows in turns.values():
                    for row in rows:
                        f.write(json.dumps(row, ensure_ascii=False) + "\n")
        if report is not None:
            typer.echo(f"report -> {write_report(results, report)}", err=True)
    except (ImportError, OSError, ValueError) as exc:
        fail(str(exc))
    if results["gate"] is not None and not results["gate"]["passed"]:
        raise typer.Exit(EXIT_FAILED)


@eval_app.command("build-baselines")
def build_baselines_cli(
    corpus: Annotated[
        Path, typer.Option("--corpus", help="Folder with train/dev.jsonl.gz.")
    ] = Path("data/corpus"),
    out: Annotated[Path, typer.Option("--out", help="Where the baseline folders go.")] = Path(
        "artifacts/baselines"
    ),
    kind: Annotated[
        list[str] | None, typer.Option("--kind", help="tfidf | embedding_router (repeatable).")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="First N records per split.")
    ] = None,
) -> None:
    """Train the TF-IDF and e5-router reference baselines (needs the [train] extra)."""
    try:
        from gatecli_train.baselines import build_baselines
    except ImportError as exc:
        fail(str(exc), hint=install_hint("train"))
    try:
        done = build_baselines(
            corpus, out, kinds=tuple(kind or ("tfidf", "embedding_router")), limit=limit
        )
    except (FileNotFoundError, ImportError) as exc:
        fail(str(exc))
    for name, path in done.items():
        typer.echo(f"{name} -> {path}")


def register(app: typer.Typer) -> None:
    app.add_typer(eval_app, name="eval", help=HELP)
