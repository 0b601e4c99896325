"""Batch labeling: read inputs in chunks, label chunks in worker processes, commit in order.

The main process reads rows (constant memory: readers are generators), cuts them into
chunks of ``chunk_size`` input rows, and keeps at most two chunks per worker in flight;
each worker process loads its own :class:`~gatecli.gate.Gate` once (one onnxruntime
thread) and runs :func:`~.chunk.label_chunk`, which sorts by length into micro-batches and returns
the chunk's JSONL text in input order. Chunks are committed as parts in input order by
:mod:`.store`, which makes the run exactly-once and resumable. Left out: the Ray engine
(:mod:`.ray_engine`, same label_chunk), the CLI (``gatecli.commands.label``).
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gatecli.extras import install_hint
from gatecli.labeling import review
from gatecli.labeling.chunk import Item, label_chunk
from gatecli.labeling.store import PartStore, fingerprint, output_lock

ProgressFn = Callable[[int, int], None]


@dataclass
class LabelSummary:
    """What a labeling run did (also stored in the manifest, so a re-run returns it)."""

    output: str
    rows: int = 0
    errors: int = 0
    decisions: dict[str, int] = field(default_factory=dict)
    escalations: int = 0  # turns in the ask band (the escalator's rule)
    escalated: int = 0  # of those, answered by the LLM (0 without one)
    parts: int = 0
    resumed_rows: int = 0
    labeled_rows: int = 0
    seconds: float = 0.0
    rows_per_s: float = 0.0
    workers: int = 1
    engine: str = "local"
    review_queue: str | None = None
    review_tasks: int = 0
    unchanged: bool = False
    notes: list[str] = field(default_factory=list)  # e.g. why a finished output was relabeled

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def iter_items(
    inputs: Sequence[str | Path], fmt: str, text_column: str | None,
    context_column: str | None, last: bool,
) -> Iterator[Item]:  # fmt: skip
    """Every input row of every input, in order, as an :data:`Item`."""
    from gatecli.readers import RowError, read_rows

    many = len(inputs) > 1
    for k, path in enumerate(inputs):
        rows = read_rows(
            path, fmt, text_column=text_column, context_column=context_column, last=last
        )
        for line, rec in rows:
            if isinstance(rec, RowError):
                yield line, None, rec.to_json(line), k if many else None
            else:
                yield line, rec, None, k if many else None


# --- worker processes ------------------------------------------------------------------

_GATE: Any = None
_REVIEW_SIZE = 0
_ESCALATOR: Any = None  # the worker's own escalator (LLM client, budget) or None


def _watch_parent(lifeline: Any) -> None:
    """End this worker as soon as the labeling process is gone, however it went.

    ``lifeline`` is the read end of a pipe whose only write end the parent holds; the
    kernel closes it when the parent dies (``kill -9`` included), the read returns EOF
    and the worker exits. Its exit also lets the forkserver and the resource tracker end.
    """

    def watch() -> None:
        with contextlib.suppress(EOFError, OSError):
            lifeline.recv_bytes()  # the parent never sends: this returns only at EOF
        os._exit(3)

    threading.Thread(target=watch, name="gatecli-parent-watch", daemon=True).start()


def _init_worker(
    model: str | None,
    batch_size: int,
    review_size: int,
    lifeline: Any = None,
    llm: dict[str, Any] | None = None,
) -> None:
    global _GATE, _REVIEW_SIZE, _ESCALATOR
    from gatecli.gate import Gate

    if lifeline is not None:
        _watch_parent(lifeline)

    _GATE = Gate(model, intra_op_threads=1, batch_size=batch_size)
    _REVIEW_SIZE = review_size
    if llm is not None:  # same flags as classify; each worker holds its own budget
        from gatecli.llm.escalate import make_escalator

        _ESCALATOR = make_escalator(_GATE, **llm)


def _work(items: list[Item]) -> tuple[str, dict[str, Any]]:
    return label_chunk(_GATE, items, _REVIEW_SIZE, _ESCALATOR)


def _chunks(items: Iterator[Item], size: int) -> Iterator[list[Item]]:
    while chunk := list(itertools.islice(items, size)):
        yield chunk


def run_local(
    chunks: Iterator[list[Item]], model: str | None, workers: int, batch_size: int,
    review_size: int, llm: dict[str, Any] | None = None,
) -> Iterator[tuple[str, dict[str, Any]]]:  # fmt: skip
    """Label chunks in ``workers`` processes (in this process for 1); yield in input order.

    ``llm`` (``make_escalator`` keyword arguments) makes each worker escalate ask-band
    turns as ``classify`` does; ``None`` classifies only (fallback ``not_needed``).
    """
    if workers <= 1:
        _init_worker(model, batch_size, review_size, None, llm)
        try:
            for chunk in chunks:
                yield _work(chunk)
        finally:
            if _ESCALATOR is not None:
                _ESCALATOR.close()
        return
    method = "forkserver" if sys.platform.startswith("linux") else "spawn"
    ctx = multiprocessing.get_context(method)
    # Workers watch the read end; only this process holds the write end (see _watch_parent).
    lifeline, keep_alive = ctx.Pipe(duplex=False)
    initargs = (model, batch_size, review_size, lifeline, llm)
    with (
        keep_alive,
        ProcessPoolExecutor(
            workers, mp_context=ctx, initializer=_init_worker, initargs=initargs
        ) as pool,
    ):
        pending: deque[Future[tuple[str, dict[str, Any]]]] = deque()
        for chunk in chunks:
            pending.append(pool.submit(_work, chunk))
            while len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def label(
    inputs: Sequence[str | Path] | str | Path,
    output: str | Path,
    *,
    model: str | Path | None = None,
    workers: int = 1,
    batch_size: int = 32,
    fmt: str = "auto",
    text_column: str | None = None,
    context_column: str | None = None,
    last: bool = False,
    engine: str = "local",
    review_queue: str | Path | None = None,
    review_size: int = 200,
    chunk_size: int = 2048,
    restart: bool = False,
    progress: ProgressFn | None = None,
    llm: dict[str, Any] | None = None,
) -> LabelSummary:
    """Label every row of ``inputs`` into ``output`` (JSONL or ``.parquet``), exactly once.

    Resumes a killed run; returns the stored summary unchanged over a finished output.
    ``llm`` holds the ``--llm-*`` flags (``make_escalator`` keyword arguments); ask-band
    turns escalate exactly as in ``classify`` (``None``: no flags, so the environment and
    config file decide; ``{"no_llm": True}`` keeps every turn local).

    Example:
        >>> s = label(["turns.jsonl"], "out.jsonl", workers=2)  # doctest: +SKIP
        >>> s.rows == s.resumed_rows + s.labeled_rows  # doctest: +SKIP
        True
    """
    from gatecli import artifact

    t0 = time.perf_counter()
    llm = dict(llm or {})
    paths = [inputs] if isinstance(inputs, (str, Path)) else list(inputs)
    if engine not in ("local", "ray"):
        raise ValueError(f"unknown --engine {engine!r}; use local or ray")
    folder = artifact.load_model_folder(model, verify_hash=False)
    options: dict[str, Any] = {"format": fmt, "text_column": text_column,
                               "context_column": context_column, "last": last}  # fmt: skip
    endpoint = _llm_endpoint(llm)
    if endpoint is not None:  # parts labeled with and without an LLM must not mix
        options["llm"] = endpoint
    fp = fingerprint(paths, folder.digest or folder.config.model_sha256, options)
    output = Path(output)
    if output.suffix.lower() in (".parquet", ".pq"):
        _need_pyarrow()
    with output_lock(output):  # one run per output; a second one stops here, untouched
        return _label_locked(
            PartStore(output, fp), paths, folder, t0, restart=restart, fmt=fmt,
            text_column=text_column, context_column=context_column, last=last, engine=engine,
            workers=workers, batch_size=batch_size, review_queue=review_queue,
            review_size=review_size, chunk_size=chunk_size, progress=progress, llm=llm,
        )  # fmt: skip


def _label_locked(
    store: PartStore, paths: list[str | Path], folder: Any, t0: float, *, restart: bool,
    fmt: str, text_column: str | None, context_column: str | None, last: bool, engine: str,
    workers: int, batch_size: int, review_queue: str | Path | None, review_size: int,
    chunk_size: int, progress: ProgressFn | None, llm: dict[str, Any] | None,
) -> LabelSummary:  # fmt: skip
    """The body of :func:`label`, run while this process holds the output's lock."""
    from gatecli.labeling.writers import write_final

    output, model_arg = store.output, str(folder.path)
    store.open(restart=restart)
    for note in store.notes:
        print(f"gatecli: {note}", file=sys.stderr)
    if store.complete:
        summary = LabelSummary(
            **{**store.summary, "unchanged": True, "labeled_rows": 0, "notes": []}
        )
        summary.seconds = round(time.perf_counter() - t0, 3)
        if progress:
            progress(summary.rows, summary.errors)
        return summary
    done = store.done_rows
    items = iter_items(paths, fmt, text_column, context_column, last)
    for _ in itertools.islice(items, done):  # count-based skip of committed rows
        pass
    chunks = _chunks(items, max(1, chunk_size))
    if engine == "ray":
        from gatecli.labeling.ray_engine import run_ray

        results = run_ray(chunks, model_arg, workers, batch_size, review_size, llm)
    else:
        results = run_local(chunks, model_arg, workers, batch_size, review_size, llm)
    totals = _Totals.of(store)
    if progress:
        progress(totals.rows, totals.errors)
    for text, stats in results:
        store.commit(text, stats["rows"], stats)
        totals.add(stats)
        if progress:
            progress(totals.rows, totals.errors)
    summary = LabelSummary(
        output=str(output), rows=totals.rows, errors=totals.errors,
        decisions=dict(sorted(totals.decisions.items())), escalations=totals.escalations,
        escalated=totals.escalated,
        parts=len(store.parts), resumed_rows=done, labeled_rows=totals.rows - done,
        workers=workers, engine=engine, notes=list(store.notes),
    )  # fmt: skip
    if review_queue is not None:
        labels = {h: list(s.labels) for h, s in folder.config.heads.items()}
        pools = (_part_review(store, p.index) for p in store.parts)
        chosen = review.select(pools, review_size, labels["decision"])
        review.write_queue(review_queue, chosen, labels)
        summary.review_queue, summary.review_tasks = str(review_queue), len(chosen)
    summary.seconds = round(time.perf_counter() - t0, 3)
    summary.rows_per_s = round(summary.labeled_rows / max(summary.seconds, 1e-9), 1)
    stored = {k: v for k, v in summary.to_json().items() if k != "unchanged"}
    store.finish(stored, lambda tmp: write_final(store, tmp, output.suffix))
    return summary


def _llm_endpoint(llm: dict[str, Any] | None) -> dict[str, str] | None:
    """The LLM a run escalates to (for the fingerprint), or None when none is configured.

    Raises ValueError for a bad ``--llm-config`` file before any work starts.
    """
    if llm is None or llm.get("no_llm"):
        return None
    from gatecli.llm.client import load_config

    cfg, _ = load_config(
        config_file=llm.get("config_file"), base_url=llm.get("base_url"),
        model=llm.get("model"), timeout_s=llm.get("timeout_s"),
        max_concurrency=llm.get("concurrency"),
    )  # fmt: skip
    return None if cfg is None else {"base_url": cfg.base_url, "model": cfg.model}


def _need_pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise RuntimeError(
            f"Parquet output needs pyarrow: {install_hint('parquet', 'pyarrow')}"
        ) from None


def _part_review(store: PartStore, index: int) -> list[dict[str, Any]]:
    side = store.read_stats(index) or {}
    return list(side.get("review", []))


@dataclass
class _Totals:
    rows: int = 0
    errors: int = 0
    escalations: int = 0
    escalated: int = 0
    decisions: Counter[str] = field(default_factory=Counter)

    @classmethod
    def of(cls, store: PartStore) -> _Totals:
        t = cls()
        for p in store.parts:
            t.add({"rows": p.rows, **p.stats})
        return t

    def add(self, stats: dict[str, Any]) -> None:
        self.rows += int(stats.get("rows", 0))
        self.errors += int(stats.get("errors", 0))
        self.escalations += int(stats.get("escalations", 0))
        self.escalated += int(stats.get("escalated", 0))
        self.decisions.update(stats.get("decisions", {}))
