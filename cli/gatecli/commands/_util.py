"""What every command shares: option declarations, one way to fail, safe output files.

spaCy's ``cli/_util.py`` is the model. A flag that two commands take is declared once here
(``ModelOpt``, the ``--llm-*`` group, ...), so it reads and behaves the same everywhere;
a command that cannot go on calls :func:`fail` (one line on stderr, exit code 2). Also
here: :func:`atomic_output` (``-o`` never destroys a file, even on failure),
:class:`Progress` (a counter on stderr, only when stderr is a terminal) and
:func:`estimate_rows` for it. Left out: the work itself (each command calls a plain
function that returns data) and printing results (:mod:`gatecli.writers`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Annotated, Any, NoReturn

import typer

from gatecli.writers import terminal_safe

EXIT_FAILED = 1  # the work ran but its outcome is a failure (--strict errors, release gate)
EXIT_BAD_INPUT = 2  # the work could not run: bad input, model, options or environment

# Plain click help: no rich markup (a "[env X]" in a help text stays visible) and no
# "<bool>" type placeholder on flags.
APP_SETTINGS: dict[str, Any] = {
    "no_args_is_help": True,
    "add_completion": False,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,
}


def fail(message: str, *, hint: str | None = None) -> NoReturn:
    """Print ``gatecli: message[; hint]`` as one line on stderr and exit with code 2.

    Example:
        >>> fail("input file not found: x.jsonl")  # doctest: +SKIP
    """
    text = terminal_safe(message) + (f"; {terminal_safe(hint)}" if hint else "")
    typer.echo(f"gatecli: {text}", err=True)
    raise typer.Exit(EXIT_BAD_INPUT)


# --- options shared by several commands ---------------------------------------------------

ModelOpt = Annotated[
    Path | None,
    typer.Option(
        "--model", "-m", envvar="GATECLI_MODEL",
        help="Model folder (default: the shipped gate-small).",
    ),
]  # fmt: skip
FormatOpt = Annotated[
    str, typer.Option("--format", "-f", help="Input format: auto|gate|chat|text|csv|parquet.")
]
TextColumnOpt = Annotated[
    str | None, typer.Option("--text-column", help="CSV/Parquet column with the message.")
]
ContextColumnOpt = Annotated[
    str | None, typer.Option("--context-column", help="CSV/Parquet column with earlier turns.")
]
LastOpt = Annotated[bool, typer.Option("--last", help="Chat input: only the final user turn.")]
BatchSizeOpt = Annotated[int, typer.Option("--batch-size", min=1, help="Turns per forward pass.")]

# The LLM escalation group (docs/escalation.md); environment variables and the config file
# are read by gatecli.llm.client.load_config, so a flag only overrides them.
NoLLMOpt = Annotated[bool, typer.Option("--no-llm", help="Never call an LLM.")]
LLMBaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--llm-base-url",
        help="OpenAI-compatible endpoint for ask-band turns, e.g. http://127.0.0.1:8080/v1 "
        "(env GATECLI_LLM_BASE_URL). Without it no turn leaves the machine.",
    ),
]
LLMModelOpt = Annotated[
    str | None,
    typer.Option("--llm-model", help="Model name sent to that endpoint (env GATECLI_LLM_MODEL)."),
]
LLMTimeoutOpt = Annotated[
    float | None,
    typer.Option("--llm-timeout", min=0.1, help="Seconds one LLM request may take (20)."),
]
LLMBudgetOpt = Annotated[
    float | None,
    typer.Option(
        "--llm-budget", min=0.0, max=1.0, help="Most share of turns sent to the LLM (0.2)."
    ),
]
LLMAskMarginOpt = Annotated[
    float | None,
    typer.Option(
        "--llm-ask-margin", min=0.0, max=1.0,
        help="Ask band: p(ask) within this of the top label escalates (0.15).",
    ),
]  # fmt: skip
LLMConcurrencyOpt = Annotated[
    int | None,
    typer.Option("--llm-concurrency", min=1, help="LLM requests in flight (4)."),
]
LLMConfigOpt = Annotated[
    Path | None,
    typer.Option("--llm-config", help="LLM settings YAML (env GATECLI_LLM_CONFIG)."),
]


def llm_options(
    no_llm: bool = False,
    base_url: str | None = None,
    model: str | None = None,
    timeout_s: float | None = None,
    budget: float | None = None,
    ask_margin: float | None = None,
    concurrency: int | None = None,
    config_file: Path | None = None,
) -> dict[str, Any]:
    """The ``--llm-*`` flags as keyword arguments of ``gatecli.llm.escalate.make_escalator``.

    Example:
        >>> llm_options(no_llm=True)["no_llm"]
        True
    """
    return {
        "no_llm": no_llm, "base_url": base_url, "model": model, "timeout_s": timeout_s,
        "budget": budget, "ask_margin": ask_margin, "concurrency": concurrency,
        "config_file": str(config_file) if config_file else None,
    }  # fmt: skip


# --- output files ---------------------------------------------------------------------------


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name one file (also through links); False if either is missing."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


@contextlib.contextmanager
def atomic_output(path: Path, *, inputs: tuple[str | Path, ...] = ()) -> Iterator[IO[str]]:
    """A text file that replaces ``path`` only when the block finishes without an error.

    Written to a temporary file in the same folder and renamed over ``path`` (one atomic
    step on POSIX), so a failed or interrupted run leaves an existing file as it was.
    ``path`` may not be one of ``inputs`` (``-o`` over the input would read an empty file).
    The new file gets the old one's permissions, or the umask's default.

    Example:
        >>> with atomic_output(Path("out.jsonl")) as f:  # doctest: +SKIP
        ...     f.write("{}\\n")
    """
    for src in inputs:
        if str(src) != "-" and same_file(src, path):
            raise ValueError(f"--output {path} is the input file; write somewhere else")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ValueError(f"--output folder {folder} does not exist")
    if path.is_dir():
        raise ValueError(f"--output {path} is a directory; name a file")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        with open(fd, "w", encoding="utf-8") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


# --- progress on a terminal -------------------------------------------------------------------


def estimate_rows(paths: list[Path]) -> int | None:
    """Rows to expect (for a progress bar only): lines of text/JSONL/CSV, Parquet metadata.

    Example:
        >>> estimate_rows([Path("data/examples/gate-input.jsonl")])  # doctest: +SKIP
        5
    """
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


class Progress:
    """A transient progress line on stderr, shown only when stderr is a terminal.

    Nothing is drawn for the first ``delay_s`` seconds, so small inputs stay quiet; the
    line is removed when the work ends, so it never mixes with results.

    Example:
        >>> with Progress("classify", total=10_000) as bar:  # doctest: +SKIP
        ...     bar.update(rows=2_000, errors=3)
    """

    def __init__(
        self,
        label: str,
        total: int | None = None,
        *,
        delay_s: float = 0.5,
        transient: bool = True,
        enabled: bool = True,
    ) -> None:
        self.label, self.total, self.delay_s, self.transient = label, total, delay_s, transient
        self.enabled = enabled and sys.stderr.isatty()
        self._bar: Any = None
        self._task: Any = None
        self._t0 = time.perf_counter()
        self._base: tuple[float, int] | None = None  # (time, rows) of the first update

    def __enter__(self) -> Progress:
        self._t0 = time.perf_counter()
        return self

    def update(self, rows: int, errors: int = 0) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if self._base is None:  # a resumed run starts at its committed rows
            self._base = (self._t0, rows) if rows == 0 else (now, rows)
        if self._bar is None:
            if now - self._t0 < self.delay_s:
                return
            self._start()
        rate = (rows - self._base[1]) / max(now - self._base[0], 1e-9)
        self._bar.update(self._task, completed=rows, errors=errors, rate=f"{rate:,.0f}")

    def _start(self) -> None:
        from rich import progress as rp
        from rich.console import Console

        columns = [
            rp.TextColumn(f"[bold]{self.label}"), rp.BarColumn(), rp.MofNCompleteColumn(),
            rp.TextColumn("{task.fields[rate]} rows/s"),
            rp.TextColumn("[red]{task.fields[errors]} errors"),
            rp.TimeElapsedColumn(), rp.TimeRemainingColumn(),
        ]  # fmt: skip
        self._bar = rp.Progress(*columns, console=Console(stderr=True), transient=self.transient)
        self._task = self._bar.add_task(self.label, total=self.total, rate="-", errors=0)
        self._bar.start()

    def stop(self) -> None:
        """Remove the line (transient) or leave its last state; safe to call twice."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        self.enabled = False

    def __exit__(self, *exc: object) -> None:
        self.stop()
