"""Batch labeling: read inputs in chunks, label chunks in worker processes, commit in order.

The main process reads rows (constant memory: readers are generators), cuts them into
chunks of ``chunk_size`` input rows, and keeps at most two chunks per worker in flight;
each worker process loads its own :class:`~gatecli.gate.Gate` once (one onnxruntime
thread) and runs :func:`label_chunk`, which sorts by length into micro-batches and returns
the chunk's JSONL text in input order. Chunks are committed as parts in input order by
:mod:`.store`, which makes the run exactly-once and resumable. Left out: the Ray engine
(:mod:`.ray_engine`, same :func:`label_chunk`), the CLI (``gatecli.commands.label``).
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gatecli.labeling import review
from gatecli.labeling.store import PartStore, fingerprint

# One input item: (line, record or None, error row or None, file index or None).
Item = tuple[int, "dict[str, Any] | None", "dict[str, Any] | None", "int | None"]
ProgressFn = Callable[[int, int], None]


@dataclass
class LabelSummary:
    """What a labeling run did (also stored in the manifest, so a re-run returns it)."""

    output: str
    rows: int = 0
    errors: int = 0
    decisions: dict[str, int] = field(default_factory=dict)
    escalations: int = 0
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


def label_chunk(gate: Any, items: Sequence[Item], review_size: int) -> tuple[str, dict[str, Any]]:
    """Label one chunk: JSONL text in input order plus its stats (and review candidates).

    Example:
        >>> items = [(1, {"user_message": "hi"}, None, None)]
        >>> text, stats = label_chunk(gate, items, 10)  # doctest: +SKIP
        >>> stats["rows"]  # doctest: +SKIP
        1
    """
    from gatecli.evaluation.metrics import escalates

    margin = float(gate.config.escalation.get("ask_margin", 0.15))
    records = [it[1] for it in items if it[1] is not None]
    results = iter(gate.classify_batch(records)) if records else iter(())
    lines: list[str] = []
    decisions: Counter[str] = Counter()
    errors = escalations = 0
    cands: list[dict[str, Any]] = []
    for line, rec, err, src in items:
        if rec is None:
            row = dict(err or {})
        else:
            res = next(results)
            row = {"id": res.get("id"), "line": line, **res}
            if "error" not in res:
                decisions[res["decision"]] += 1
                escalations += escalates(res["probabilities"], res["decision"], margin)
                if review_size:
                    cands.append(review.candidate(rec, res, line, gate.catalog))
        if src is not None:
            row["input_file"] = src
        errors += "error" in row
        lines.append(json.dumps(row, ensure_ascii=False))
    stats = {
        "rows": len(items), "errors": errors, "decisions": dict(decisions),
        "escalations": escalations, "review": review.top_candidates(cands, review_size),
    }  # fmt: skip
    return "".join(s + "\n" for s in lines), stats


# --- worker processes ------------------------------------------------------------------

_GATE: Any = None
_REVIEW_SIZE = 0


def _init_worker(model: str | None, batch_size: int, review_size: int) -> None:
    global _GATE, _REVIEW_SIZE
    from gatecli.gate import Gate

    _GATE = Gate(model, intra_op_threads=1, batch_size=batch_size)
    _REVIEW_SIZE = review_size


def _work(items: list[Item]) -> tuple[str, dict[str, Any]]:
    return label_chunk(_GATE, items, _REVIEW_SIZE)


def _chunks(items: Iterator[Item], size: int) -> Iterator[list[Item]]:
    while chunk := list(itertools.islice(items, size)):
        yield chunk


def run_local(
    chunks: Iterator[list[Item]], model: str | None, workers: int, batch_size: int,
    review_size: int,
) -> Iterator[tuple[str, dict[str, Any]]]:  # fmt: skip
    """Label chunks in ``workers`` processes (in this process for 1); yield in input order."""
    if workers <= 1:
        _init_worker(model, batch_size, review_size)
        for chunk in chunks:
            yield _work(chunk)
        return
    method = "forkserver" if sys.platform.startswith("linux") else "spawn"
    ctx = multiprocessing.get_context(method)
    with ProcessPoolExecutor(
        workers, mp_context=ctx, initializer=_init_worker, initargs=(model, batch_size, review_size)
    ) as pool:
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
) -> LabelSummary:
    """Label every row of ``inputs`` into ``output`` (JSONL or ``.parquet``), exactly once.

    Resumes a killed run; returns the stored summary unchanged over a finished output.

    Example:
        >>> s = label(["turns.jsonl"], "out.jsonl", workers=2)  # doctest: +SKIP
        >>> s.rows == s.resumed_rows + s.labeled_rows  # doctest: +SKIP
        True
    """
    from gatecli import artifact
    from gatecli.labeling.writers import write_final

    t0 = time.perf_counter()
    paths = [inputs] if isinstance(inputs, (str, Path)) else list(inputs)
    if engine not in ("local", "ray"):
        raise ValueError(f"unknown --engine {engine!r}; use local or ray")
    folder = artifact.load_model_folder(model, verify_hash=False)
    model_arg = str(folder.path)
    options = {"format": fmt, "text_column": text_column, "context_column": context_column,
               "last": last}  # fmt: skip
    fp = fingerprint(paths, folder.config.model_sha256, options)
    output = Path(output)
    if output.suffix.lower() in (".parquet", ".pq"):
        _need_pyarrow()
    store = PartStore(output, fp).open(restart=restart)
    if store.complete:
        summary = LabelSummary(**{**store.summary, "unchanged": True, "labeled_rows": 0})
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

        results = run_ray(chunks, model_arg, workers, batch_size, review_size)
    else:
        results = run_local(chunks, model_arg, workers, batch_size, review_size)
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
        parts=len(store.parts), resumed_rows=done, labeled_rows=totals.rows - done,
        workers=workers, engine=engine,
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


def _need_pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise RuntimeError("Parquet output needs pyarrow: pip install 'gatecli[parquet]'") from None


def _part_review(store: PartStore, index: int) -> list[dict[str, Any]]:
    side = store.read_stats(index) or {}
    return list(side.get("review", []))


@dataclass
class _Totals:
    rows: int = 0
    errors: int = 0
    escalations: int = 0
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
        self.decisions.update(stats.get("decisions", {}))
