"""``gatecli label``: label large inputs exactly once, resumably, with worker processes.

A thin wrapper: :func:`gatecli.labeling.pipeline.label` does the work and returns a
:class:`~gatecli.labeling.pipeline.LabelSummary`; this module parses options (the
``--llm-*`` group is the same as ``classify``'s, so ask-band turns escalate the same way),
draws the progress bar and prints the closing summary.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from gatecli.commands._util import (
    BatchSizeOpt,
    ContextColumnOpt,
    FormatOpt,
    LastOpt,
    LLMAskMarginOpt,
    LLMBaseUrlOpt,
    LLMBudgetOpt,
    LLMConcurrencyOpt,
    LLMConfigOpt,
    LLMModelOpt,
    LLMTimeoutOpt,
    ModelOpt,
    NoLLMOpt,
    Progress,
    TextColumnOpt,
    estimate_rows,
    fail,
    llm_options,
)
from gatecli.writers import terminal_safe

HELP = """Label many turns into OUTPUT (JSONL, or Parquet for .parquet), exactly once.

INPUT files are JSONL (gate-input, data records or chat), CSV or Parquet (--text-column), or
text; gzipped files (.jsonl.gz) are read as they are.
Output is committed in chunks under OUTPUT.parts/; a killed run resumes where it stopped
when started again with the same arguments; over a finished OUTPUT nothing changes.
Ask-band turns escalate to an LLM as in `gatecli classify` when one is configured.

Examples:

\b
  gatecli label data/examples/gate-input.jsonl -o labeled.jsonl --workers 2
  gatecli label logs.parquet --text-column message -o labeled.parquet \\
      --review-queue review.json --review-size 300
"""


def label_cli(
    inputs: Annotated[list[Path], typer.Argument(help="Input files (JSONL, CSV, Parquet, text).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="OUTPUT.jsonl or OUTPUT.parquet.")],
    model: ModelOpt = None,
    workers: Annotated[
        int, typer.Option("--workers", "-w", min=1, help="Processes, 1 thread each.")
    ] = 1,
    batch_size: BatchSizeOpt = 32,
    fmt: FormatOpt = "auto",
    text_column: TextColumnOpt = None,
    context_column: ContextColumnOpt = None,
    last: LastOpt = False,
    engine: Annotated[
        str, typer.Option("--engine", help="local (processes) or ray (Ray Data).")
    ] = "local",
    review_queue: Annotated[
        Path | None,
        typer.Option("--review-queue", help="Write Label Studio tasks for uncertain turns here."),
    ] = None,
    review_size: Annotated[
        int, typer.Option("--review-size", min=1, help="Tasks in the review queue.")
    ] = 200,
    chunk_size: Annotated[
        int, typer.Option("--chunk-size", min=1, help="Input rows per committed part.")
    ] = 2048,
    restart: Annotated[
        bool, typer.Option("--restart", help="Discard OUTPUT.parts and start over.")
    ] = False,
    json_summary: Annotated[
        bool, typer.Option("--json", help="Print the summary as JSON.")
    ] = False,
    no_llm: NoLLMOpt = False,
    llm_base_url: LLMBaseUrlOpt = None,
    llm_model: LLMModelOpt = None,
    llm_timeout: LLMTimeoutOpt = None,
    llm_budget: LLMBudgetOpt = None,
    llm_ask_margin: LLMAskMarginOpt = None,
    llm_concurrency: LLMConcurrencyOpt = None,
    llm_config: LLMConfigOpt = None,
) -> None:
    from rich.console import Console

    from gatecli.artifact import ArtifactError
    from gatecli.labeling.pipeline import label
    from gatecli.labeling.store import StoreError
    from gatecli.readers import InputError

    for path in inputs:  # before OUTPUT.parts is created for inputs that cannot be read
        if path.is_dir():
            fail(f"input {path} is a directory; pass files")
        if not path.is_file():
            fail(f"input file not found: {path}")
    llm = llm_options(no_llm, llm_base_url, llm_model, llm_timeout, llm_budget,
                      llm_ask_margin, llm_concurrency, llm_config)  # fmt: skip
    try:
        with Progress("label", estimate_rows(list(inputs)), delay_s=0, transient=False) as bar:
            summary = label(
                [str(p) for p in inputs], output, model=model, workers=workers,
                batch_size=batch_size, fmt=fmt, text_column=text_column,
                context_column=context_column, last=last, engine=engine,
                review_queue=review_queue, review_size=review_size, chunk_size=chunk_size,
                restart=restart, progress=bar.update, llm=llm,
            )  # fmt: skip
    except (ArtifactError, InputError, StoreError, OSError, RuntimeError, ValueError) as exc:
        fail(str(exc))
    if json_summary:
        typer.echo(json.dumps(summary.to_json(), ensure_ascii=False))
        return
    s = summary
    err = Console(stderr=True, highlight=False)
    out = terminal_safe(s.output)
    decisions = ", ".join(f"{k} {v}" for k, v in s.decisions.items()) or "-"
    llm_part = f", {s.escalated} answered by the LLM" if s.escalated else ""
    err.print(f"{s.rows} rows ({s.errors} errors, {s.escalations} in the ask band{llm_part}) "
              f"-> {out}\ndecisions: {decisions}", markup=False)  # fmt: skip
    if s.unchanged:  # nothing ran: the stored run's workers and timings are not this run's
        err.print(f"{out} is already complete; nothing changed", markup=False)
    else:
        err.print(f"this run: {s.labeled_rows} rows in {s.seconds:.1f}s ({s.rows_per_s:,.0f}/s), "
                  f"resumed after {s.resumed_rows}, {s.workers} worker(s), engine {s.engine}",
                  markup=False)  # fmt: skip
    if s.review_queue:
        queue = terminal_safe(s.review_queue)
        err.print(f"review queue: {s.review_tasks} tasks -> {queue} "
                  f"(+ {queue}.label_config.xml)", markup=False)  # fmt: skip


def register(app: typer.Typer) -> None:
    app.command("label", help=HELP)(label_cli)
