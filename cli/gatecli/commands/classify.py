"""``gatecli classify``: classify every user turn of a transcript with the local model.

The command is a thin wrapper: :func:`classify_stream` does the work (read rows, classify
valid ones in chunks, keep error rows in place) and :func:`classify` returns a list for
tests and scripts. Output is JSONL (one spec §5 record or ``{"id", "line", "error"}`` per
turn, in input order, each with the input ``line``), or a table when stdout is a terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

HELP = """Classify user turns: decision, events, scenario tags, missing slots.

INPUT is a file or - for stdin: gate-input JSONL, chat JSONL/JSON in the OpenAI messages
shape (every user turn is classified, earlier turns as context), plain text (one message a
line), CSV or Parquet (--text-column). The format is detected; --format overrides.

Examples:

  echo "声音调到90" | gatecli classify -

  gatecli classify data/examples/transcript.jsonl --last

  gatecli classify turns.csv --text-column message --output out.jsonl --strict
"""


def classify_stream(
    source: str | Path,
    gate: Any,
    *,
    fmt: str = "auto",
    text_column: str | None = None,
    context_column: str | None = None,
    last: bool = False,
    chunk_size: int = 256,
    escalator: Any = None,
) -> Iterator[dict[str, Any]]:
    """Yield one output row per input row (turn), in order, classifying in chunks.

    Example:
        >>> rows = list(classify_stream("data/examples/gate-input.jsonl", Gate()))  # doctest: +SKIP
    """
    from gatecli.readers import RowError, read_rows

    rows = read_rows(source, fmt, text_column=text_column, context_column=context_column, last=last)
    chunk: list[tuple[int, Any]] = []

    def flush() -> Iterator[dict[str, Any]]:
        records = [r for _, r in chunk if not isinstance(r, RowError)]
        batch = gate.classify_batch(records) if records else []
        if escalator is not None:  # gatecli.llm: LLM coach for ask-band turns; never drops rows
            from gatecli.llm.escalate import attach_escalation

            batch = attach_escalation(records, batch, escalator)
        results = iter(batch)
        for line, r in chunk:
            if isinstance(r, RowError):
                yield r.to_json(line)
            else:
                res = next(results)
                yield {"id": res.get("id"), "line": line, **res}
        chunk.clear()

    for item in rows:
        chunk.append(item)
        if len(chunk) >= chunk_size:
            yield from flush()
    yield from flush()


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
    escalator: Any = None,
) -> list[dict[str, Any]]:
    """Classify a whole input and return its rows (raises ArtifactError / InputError).

    Example:
        >>> rows = classify("data/examples/transcript.jsonl", last=True)  # doctest: +SKIP
        >>> rows[0]["decision"]  # doctest: +SKIP
        'execute'
    """
    from gatecli.gate import Gate

    gate = Gate(model, intra_op_threads=threads, batch_size=batch_size)
    return list(
        classify_stream(
            source,
            gate,
            fmt=fmt,
            text_column=text_column,
            context_column=context_column,
            last=last,
            escalator=escalator,
        )
    )


def classify_cli(
    input: Annotated[str, typer.Argument(help="Input file, or - for stdin.")] = "-",
    model: Annotated[
        Path | None,
        typer.Option("--model", "-m", envvar="GATECLI_MODEL", help="Model folder."),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="auto|gate|chat|text|csv|parquet")
    ] = "auto",
    text_column: Annotated[
        str | None, typer.Option("--text-column", help="CSV/Parquet message column.")
    ] = None,
    context_column: Annotated[
        str | None, typer.Option("--context-column", help="CSV/Parquet earlier-turns column.")
    ] = None,
    last: Annotated[bool, typer.Option("--last", help="Chat: only the final user turn.")] = False,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write JSONL here.")] = None,
    pretty: Annotated[
        bool | None,
        typer.Option("--pretty/--no-pretty", help="Table, not JSONL (default: on a terminal)."),
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 if any row is an error.")
    ] = False,
    threads: Annotated[int, typer.Option("--threads", min=1, help="onnxruntime threads.")] = 1,
    batch_size: Annotated[
        int, typer.Option("--batch-size", min=1, help="Turns per forward pass.")
    ] = 32,
    # --- LLM escalation (gatecli.llm, docs/escalation.md); env vars are read there ---
    no_llm: Annotated[bool, typer.Option("--no-llm", help="Never call an LLM.")] = False,
    llm_base_url: Annotated[
        str | None, typer.Option("--llm-base-url", help="[env GATECLI_LLM_BASE_URL]")
    ] = None,
    llm_model: Annotated[
        str | None, typer.Option("--llm-model", help="[env GATECLI_LLM_MODEL]")
    ] = None,
    llm_timeout: Annotated[
        float | None, typer.Option("--llm-timeout", min=0.1, help="Seconds a request (20).")
    ] = None,
    llm_budget: Annotated[
        float | None,
        typer.Option("--llm-budget", min=0.0, max=1.0, help="Max share of turns escalated."),
    ] = None,
    llm_ask_margin: Annotated[
        float | None, typer.Option("--llm-ask-margin", min=0.0, max=1.0, help="Ask band width.")
    ] = None,
    llm_concurrency: Annotated[
        int | None, typer.Option("--llm-concurrency", min=1, help="Requests in flight (4).")
    ] = None,
    llm_config: Annotated[
        Path | None, typer.Option("--llm-config", help="YAML [env GATECLI_LLM_CONFIG]")
    ] = None,
) -> None:
    from gatecli.artifact import ArtifactError
    from gatecli.readers import InputError
    from gatecli.writers import render_table, write_jsonl

    if input == "-" and sys.stdin.isatty():
        _fail("no input: pass a file, or pipe text into `gatecli classify -`")
    try:
        from gatecli.gate import Gate
        from gatecli.llm.escalate import make_escalator

        gate = Gate(model, intra_op_threads=threads, batch_size=batch_size)
        escalator = make_escalator(
            gate,
            no_llm=no_llm,
            base_url=llm_base_url,
            model=llm_model,
            timeout_s=llm_timeout,
            budget=llm_budget,
            ask_margin=llm_ask_margin,
            concurrency=llm_concurrency,
            config_file=str(llm_config) if llm_config else None,
        )
        rows = classify_stream(
            input,
            gate,
            fmt=fmt,
            text_column=text_column,
            context_column=context_column,
            last=last,
            escalator=escalator,
        )
        errors = 0

        def counted() -> Iterator[dict[str, Any]]:
            nonlocal errors
            for row in rows:
                errors += "error" in row
                yield row

        if output is not None:
            with open(output, "w", encoding="utf-8") as f:
                n = write_jsonl(counted(), f)
            typer.echo(f"{n} rows ({errors} errors) -> {output}", err=True)
        elif pretty if pretty is not None else sys.stdout.isatty():
            render_table(list(counted()))
        else:
            write_jsonl(counted(), sys.stdout)
    except BrokenPipeError:  # `gatecli classify ... | head`: the reader left, not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(0) from None
    except (ArtifactError, InputError, OSError, ValueError) as exc:  # ValueError: --llm-config
        _fail(str(exc))
    if strict and errors:
        typer.echo(f"--strict: {errors} row(s) could not be classified", err=True)
        raise typer.Exit(1)


def _fail(message: str) -> None:
    typer.echo(f"gatecli: {message}", err=True)
    raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    app.command("classify", help=HELP)(classify_cli)
