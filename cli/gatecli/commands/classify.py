"""``gatecli classify``: classify every user turn of a transcript with the local model.

The command is a thin wrapper: :func:`open_classifier` loads the gate and the run's
escalator once, :func:`classify_pairs` does the work (read rows, classify valid ones in
chunks, escalate ask-band turns, keep error rows in place) and :func:`classify` returns a
list for tests and scripts; ``classify_cli`` only chooses where rows go. Output is JSONL
(one spec §5 record or ``{"id", "line", "error"}`` per turn, in input order, each with the
input ``line``), or a table when stdout is a terminal. ``-o`` never destroys a file: the
input is read before the output is touched, and the output is replaced in one rename.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gatecli.commands._util import (
    EXIT_FAILED,
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
    atomic_output,
    estimate_rows,
    fail,
    llm_options,
    same_file,
)

if TYPE_CHECKING:
    from gatecli.gate import Gate
    from gatecli.llm.escalate import Escalator

HELP = """Classify user turns: decision, events, scenario tags, missing slots.

INPUT is a file or - for stdin: gate-input JSONL (or labelled data records, read by their
input), chat JSONL/JSON in the OpenAI messages shape (every user turn is classified, earlier
turns as context), plain text (one message a line), CSV or Parquet (--text-column); a file
may be gzipped (.jsonl.gz). The format is detected; --format overrides.

Examples:

\b
  echo "声音调到90" | gatecli classify -
  gatecli classify data/examples/transcript.jsonl --last --pretty
  gatecli classify data/examples/turns.csv --text-column message -o out.jsonl --strict
"""

Pair = tuple["Mapping[str, Any] | None", dict[str, Any]]


@contextlib.contextmanager
def open_classifier(
    model: str | Path | None = None,
    *,
    threads: int = 1,
    batch_size: int = 32,
    llm: Mapping[str, Any] | None = None,
) -> Iterator[tuple[Gate, Escalator]]:
    """The gate and this run's escalator, closed at the end (one of each per run).

    ``llm`` holds :func:`gatecli.llm.escalate.make_escalator`'s keyword arguments (the
    ``--llm-*`` flags); ``None`` means none given, so the environment and config file
    decide, as for the command. Raises ArtifactError for a bad model folder and
    ValueError for a bad LLM config file.

    Example:
        >>> with open_classifier(llm={"no_llm": True}) as (gate, esc):  # doctest: +SKIP
        ...     rows = list(classify_stream("turns.txt", gate, escalator=esc))
    """
    from gatecli.gate import Gate
    from gatecli.llm.escalate import make_escalator

    gate = Gate(model, intra_op_threads=threads, batch_size=batch_size)
    escalator = make_escalator(gate, **dict(llm or {}))
    try:
        yield gate, escalator
    finally:
        escalator.close()


def classify_pairs(
    source: str | Path,
    gate: Gate,
    *,
    fmt: str = "auto",
    text_column: str | None = None,
    context_column: str | None = None,
    last: bool = False,
    chunk_size: int = 256,
    escalator: Escalator | None = None,
) -> Iterator[Pair]:
    """``(input record, output row)`` per input row, in order (the record is None for an
    error row); classification runs in chunks of ``chunk_size`` rows.

    Raises InputError (missing file, unknown format, missing column) at the first row.
    """
    from gatecli.llm.escalate import attach_escalation
    from gatecli.readers import RowError, read_rows

    rows = read_rows(source, fmt, text_column=text_column, context_column=context_column, last=last)
    while chunk := list(itertools.islice(rows, chunk_size)):
        records = [r for _, r in chunk if not isinstance(r, RowError)]
        batch = gate.classify_batch(records) if records else []
        results = iter(attach_escalation(records, batch, escalator))
        for line, r in chunk:
            if isinstance(r, RowError):
                yield None, r.to_json(line)
            else:
                res = next(results)
                yield r, {"id": res.get("id"), "line": line, **res}


def classify_stream(source: str | Path, gate: Gate, **options: Any) -> Iterator[dict[str, Any]]:
    """One output row per input row (turn), in order; ``options`` as for
    :func:`classify_pairs`.

    Example:
        >>> rows = list(classify_stream("data/examples/gate-input.jsonl", Gate()))  # doctest: +SKIP
    """
    for _, row in classify_pairs(source, gate, **options):
        yield row


def classify(
    source: str | Path,
    *,
    model: str | Path | None = None,
    fmt: str = "auto",
    text_column: str | None = None,
    context_column: str | None = None,
    last: bool = False,
    threads: int = 1,
    batch_size: int = 32,
    llm: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Classify a whole input and return its rows, exactly as ``gatecli classify`` does.

    Raises ArtifactError (model folder) or InputError (input as a whole).

    Example:
        >>> rows = classify("data/examples/transcript.jsonl", last=True)  # doctest: +SKIP
        >>> rows[0]["decision"]  # doctest: +SKIP
        'execute'
    """
    with open_classifier(model, threads=threads, batch_size=batch_size, llm=llm) as (gate, esc):
        return list(
            classify_stream(
                source,
                gate,
                fmt=fmt,
                text_column=text_column,
                context_column=context_column,
                last=last,
                escalator=esc,
            )
        )


def classify_cli(
    input: Annotated[str, typer.Argument(help="Input file, or - for stdin.")] = "-",
    model: ModelOpt = None,
    fmt: FormatOpt = "auto",
    text_column: TextColumnOpt = None,
    context_column: ContextColumnOpt = None,
    last: LastOpt = False,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write JSONL to this file.")
    ] = None,
    pretty: Annotated[
        bool | None,
        typer.Option("--pretty/--no-pretty", help="A table, not JSONL (default: on a terminal)."),
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 if any row is an error.")
    ] = False,
    threads: Annotated[int, typer.Option("--threads", min=1, help="onnxruntime threads.")] = 1,
    batch_size: BatchSizeOpt = 32,
    no_llm: NoLLMOpt = False,
    llm_base_url: LLMBaseUrlOpt = None,
    llm_model: LLMModelOpt = None,
    llm_timeout: LLMTimeoutOpt = None,
    llm_budget: LLMBudgetOpt = None,
    llm_ask_margin: LLMAskMarginOpt = None,
    llm_concurrency: LLMConcurrencyOpt = None,
    llm_config: LLMConfigOpt = None,
) -> None:
    from gatecli.artifact import ArtifactError
    from gatecli.readers import InputError

    if input == "-" and sys.stdin.isatty():
        fail("no input: pass a file, or pipe text into `gatecli classify -`")
    if output is not None and input != "-" and same_file(input, output):
        fail(f"--output {output} is the input file; write somewhere else")
    table = pretty if pretty is not None else (output is None and sys.stdout.isatty())
    llm = llm_options(no_llm, llm_base_url, llm_model, llm_timeout, llm_budget,
                      llm_ask_margin, llm_concurrency, llm_config)  # fmt: skip
    try:
        with open_classifier(model, threads=threads, batch_size=batch_size, llm=llm) as (g, esc):
            pairs = classify_pairs(
                input, g, fmt=fmt, text_column=text_column, context_column=context_column,
                last=last, escalator=esc,
            )  # fmt: skip
            rows, errors = emit(pairs, input, output, table)
    except BrokenPipeError:  # `gatecli classify ... | head`: the reader left, not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(0) from None
    except (ArtifactError, InputError, OSError, ValueError) as exc:  # ValueError: --llm-config
        fail(str(exc))
    if output is not None:
        typer.echo(f"{rows} rows ({errors} errors) -> {output}", err=True)
    if strict and errors:
        typer.echo(f"--strict: {errors} row(s) could not be classified", err=True)
        raise typer.Exit(EXIT_FAILED)


def emit(pairs: Iterator[Pair], source: str, output: Path | None, table: bool) -> tuple[int, int]:
    """Send rows to ``output`` (JSONL, replaced atomically), a table or stdout (JSONL);
    returns ``(rows, error rows)``.

    The first row is read before anything is opened, so a missing or unreadable input
    fails with the output file untouched. A progress line shows on a terminal's stderr
    only when the rows do not go to that terminal as they come.
    """
    from gatecli.writers import render_table, write_jsonl

    head = next(pairs, None)
    rows = itertools.chain([head] if head else [], pairs)
    errors = 0
    show = output is not None or table or not sys.stdout.isatty()
    total = estimate_rows([Path(source)]) if source != "-" else None
    with Progress("classify", total, enabled=show) as bar:

        def counted() -> Iterator[Pair]:
            nonlocal errors
            for n, (rec, row) in enumerate(rows, 1):
                errors += "error" in row
                if n % 64 == 0:
                    bar.update(int(row.get("line") or n), errors)
                yield rec, row

        if output is not None:
            with atomic_output(output, inputs=(source,)) as f:
                return write_jsonl((row for _, row in counted()), f), errors
        if table:
            done = list(counted())
            bar.stop()
            messages = [None if rec is None else str(rec["user_message"]) for rec, _ in done]
            render_table([row for _, row in done], messages=messages)
            return len(done), errors
        tty = sys.stdout.isatty()
        return write_jsonl((row for _, row in counted()), sys.stdout, tty=tty), errors


def register(app: typer.Typer) -> None:
    app.command("classify", help=HELP)(classify_cli)
