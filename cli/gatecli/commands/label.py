"""``gatecli label``: label large inputs exactly once, resumably, with worker processes.

A thin wrapper: :func:`gatecli.labeling.pipeline.label` does the work and returns a
:class:`~gatecli.labeling.pipeline.LabelSummary`; this module parses options, draws the
progress bar and prints the closing summary.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

HELP = """Label many turns into OUTPUT (JSONL, or Parquet for .parquet), exactly once.

INPUT files are JSONL (gate-input or chat), CSV or Parquet (--text-column), or text.
Output is committed in chunks under OUTPUT.parts/; a killed run resumes where it stopped
when started again with the same arguments; over a finished OUTPUT nothing changes.

Examples:

  gatecli label turns.jsonl -o labeled.jsonl --workers 2

  gatecli label logs.parquet --text-column message -o labeled.parquet \\
      --review-queue review.json --review-size 300
"""


def estimate_rows(paths: list[Path]) -> int | None:
    """Rows to expect (for the ETA only): lines of text/JSONL/CSV, Parquet metadata."""
    total = 0
    for p in paths:
        if p.suffix.lower() in (".parquet", ".pq"):
            try:
                import pyarrow.parquet as pq

                total += pq.ParquetFile(str(p)).metadata.num_rows
            except Exception:  # noqa: BLE001 - an estimate only; the reader reports errors
                return None
            continue
        if p.suffix.lower() == ".json" or not p.is_file():
            return None
        n, last = 0, b"\n"
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                n += block.count(b"\n")
                last = block[-1:]
        total += n + (last != b"\n") - (p.suffix.lower() == ".csv")
    return total


def label_cli(
    inputs: list[Path] = typer.Argument(..., help="Input files (JSONL, CSV, Parquet, text)."),  # noqa: B008 - typer's declaration style
    output: Path = typer.Option(..., "--output", "-o", help="OUTPUT.jsonl or OUTPUT.parquet."),  # noqa: B008 - typer's declaration style
    model: Path | None = typer.Option(  # noqa: B008 - typer's declaration style
        None,
        "--model",
        "-m",
        envvar="GATECLI_MODEL",
        help="Model folder (default: models/gatecli_models/gate-small).",
    ),
    workers: int = typer.Option(1, "--workers", "-w", min=1, help="Processes, 1 thread each."),
    batch_size: int = typer.Option(32, "--batch-size", min=1, help="Turns per forward pass."),
    fmt: str = typer.Option("auto", "--format", "-f", help="auto|gate|chat|text|csv|parquet"),
    text_column: str | None = typer.Option(
        None, "--text-column", help="CSV/Parquet message column."
    ),
    context_column: str | None = typer.Option(
        None, "--context-column", help="CSV/Parquet column with earlier turns."
    ),
    last: bool = typer.Option(False, "--last", help="Chat input: only the final user turn."),
    engine: str = typer.Option("local", "--engine", help="local (processes) or ray (Ray Data)."),
    review_queue: Path | None = typer.Option(  # noqa: B008 - typer's declaration style
        None, "--review-queue", help="Write Label Studio tasks for the most uncertain turns here."
    ),
    review_size: int = typer.Option(200, "--review-size", min=1, help="Tasks in the review queue."),
    chunk_size: int = typer.Option(
        2048, "--chunk-size", min=1, help="Input rows per committed part."
    ),
    restart: bool = typer.Option(False, "--restart", help="Discard OUTPUT.parts and start over."),
    json_summary: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )  # fmt: skip

    from gatecli.artifact import ArtifactError
    from gatecli.labeling.pipeline import label
    from gatecli.labeling.store import StoreError
    from gatecli.readers import InputError

    err = Console(stderr=True)
    total = estimate_rows(list(inputs))
    columns = [
        TextColumn("[bold]label"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[rate]} rows/s"), TextColumn("[red]{task.fields[errors]} errors"),
        TimeElapsedColumn(), TimeRemainingColumn(),
    ]  # fmt: skip
    try:
        with Progress(*columns, console=err, transient=False) as bar:
            task = bar.add_task("label", total=total, rate="-", errors=0)
            start: list[float] = []

            def progress(rows: int, errors: int) -> None:
                import time

                now = time.perf_counter()
                if not start:
                    start.extend([now, rows])
                rate = (rows - start[1]) / max(now - start[0], 1e-9)
                bar.update(task, completed=rows, errors=errors, rate=f"{rate:,.0f}")

            summary = label(
                [str(p) for p in inputs], output, model=model, workers=workers,
                batch_size=batch_size, fmt=fmt, text_column=text_column,
                context_column=context_column, last=last, engine=engine,
                review_queue=review_queue, review_size=review_size, chunk_size=chunk_size,
                restart=restart, progress=progress,
            )  # fmt: skip
    except (ArtifactError, InputError, StoreError, OSError, RuntimeError, ValueError) as exc:
        typer.echo(f"gatecli: {exc}", err=True)
        raise typer.Exit(2) from None
    if json_summary:
        typer.echo(json.dumps(summary.to_json(), ensure_ascii=False))
        return
    s = summary
    if s.unchanged:
        err.print(f"{output} is already complete ({s.rows} rows); nothing changed")
    decisions = ", ".join(f"{k} {v}" for k, v in s.decisions.items()) or "-"
    err.print(
        f"{s.rows} rows ({s.errors} errors, {s.escalations} would escalate) -> {s.output}\n"
        f"decisions: {decisions}\n"
        f"this run: {s.labeled_rows} rows in {s.seconds:.1f}s ({s.rows_per_s:,.0f}/s), "
        f"resumed after {s.resumed_rows}, {s.workers} worker(s), engine {s.engine}"
    )
    if s.review_queue:
        err.print(f"review queue: {s.review_tasks} tasks -> {s.review_queue} "
                  f"(+ {s.review_queue}.label_config.xml)")  # fmt: skip


def register(app: typer.Typer) -> None:
    app.command("label", help=HELP)(label_cli)
