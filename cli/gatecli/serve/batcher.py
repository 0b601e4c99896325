"""Dynamic micro-batching: concurrent requests share one ``classify_batch`` on a worker thread.

Requests are queued whole (a request's turns are never split across batches) in a queue
bounded in *turns*; a request that would overflow it is refused at once (the caller answers
503 with ``Retry-After``) instead of the queue, and every client's latency, growing without
limit. A worker that finds work waits at most ``wait_s`` for more, and only while requests
that have already reached the server are still being read or parsed (``arriving``): one
client calling in sequence never waits, a crowd fills the batch. Every job carries a
deadline; a job whose deadline passed before a worker took it is never computed.

Workers are threads over one shared :class:`gatecli.gate.Gate`: onnxruntime releases the
GIL for ``session.run`` (most of a turn's time) and the gate keeps its input buffers per
thread, so N threads share one copy of the weights, one queue and one set of metrics.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("gatecli.serve")
RunBatch = Callable[[list[Mapping[str, Any]]], list[dict[str, Any]]]
OnBatch = Callable[[int, float], None]


class QueueFull(Exception):
    """The queue cannot take this request now; retry after ``retry_after_s`` seconds."""

    def __init__(self, waiting: int, capacity: int, retry_after_s: int) -> None:
        super().__init__(f"queue full ({waiting} of {capacity} turns waiting)")
        self.retry_after_s = retry_after_s


class DeadlineExceeded(Exception):
    """The request's deadline passed before its batch finished."""


class Closed(Exception):
    """The batcher has stopped taking work (the server is shutting down)."""


@dataclass(eq=False)
class Job:
    """One request's turns on their way through the queue, and when each step happened."""

    records: Sequence[Mapping[str, Any]]
    future: asyncio.Future[list[dict[str, Any]]]
    loop: asyncio.AbstractEventLoop
    deadline: float
    enqueued: float = field(default_factory=time.perf_counter)
    started: float = 0.0
    finished: float = 0.0
    abandoned: bool = False

    @property
    def queue_ms(self) -> float:
        return max(0.0, (self.started or self.enqueued) - self.enqueued) * 1000.0

    @property
    def gate_ms(self) -> float:
        return max(0.0, self.finished - self.started) * 1000.0 if self.started else 0.0


class Arrival:
    """A request that has reached the server and may soon be submitted (see ``arriving``)."""

    def __init__(self, batcher: MicroBatcher) -> None:
        self._owner = batcher
        self._open = True

    def leave(self) -> None:
        """Idempotent: the request will not be submitted (it failed before)."""
        if self._detach():
            self._owner._departed()

    def _detach(self) -> bool:
        """True once: the first of ``leave`` and ``submit`` uncounts the arrival."""
        was, self._open = self._open, False
        return was


def _settle(
    fut: asyncio.Future[list[dict[str, Any]]], value: Any, exc: BaseException | None
) -> None:
    if fut.done():
        return
    if exc is not None:
        fut.set_exception(exc)
    else:
        fut.set_result(value)


class MicroBatcher:
    """The bounded queue and its worker threads.

    Example:
        >>> b = MicroBatcher(lambda recs: [{"n": len(r)} for r in recs], workers=1)
        >>> b.start()
        >>> async def one():
        ...     return await b.result(b.submit([{"user_message": "hi"}], timeout_s=5))
        >>> asyncio.run(one())
        [{'n': 1}]
        >>> b.close()
    """

    def __init__(
        self,
        run_batch: RunBatch,
        *,
        workers: int = 1,
        max_batch: int = 32,
        wait_s: float = 0.002,
        queue_size: int = 1024,
        on_batch: OnBatch | None = None,
    ) -> None:
        self.run_batch, self.on_batch = run_batch, on_batch
        self.workers, self.max_batch = max(1, workers), max(1, max_batch)
        self.wait_s, self.queue_size = max(0.0, wait_s), max(1, queue_size)
        self._cond = threading.Condition()
        self._queue: deque[Job] = deque()
        self._waiting = 0  # turns queued, not yet taken by a worker
        self._arriving = 0
        self._busy = 0
        self._stopping = False
        self._turn_s = 0.01  # running estimate of seconds per turn, for Retry-After
        self._threads: list[threading.Thread] = []

    # --- state read by /metrics and /healthz ------------------------------------------

    @property
    def depth(self) -> int:
        """Turns waiting for a worker."""
        return self._waiting

    @property
    def busy(self) -> int:
        """Workers running a batch now."""
        return self._busy

    # --- event-loop side ----------------------------------------------------------------

    def start(self) -> None:
        for i in range(self.workers):
            t = threading.Thread(target=self._work, name=f"gate-worker-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def arrive(self) -> Arrival:
        """Count a request that is being read; the gathering workers wait for it a little."""
        with self._cond:
            self._arriving += 1
        return Arrival(self)

    def _departed(self) -> None:
        with self._cond:
            self._arriving -= 1
            self._cond.notify_all()

    def submit(
        self,
        records: Sequence[Mapping[str, Any]],
        *,
        timeout_s: float,
        arrival: Arrival | None = None,
    ) -> Job:
        """Queue one request's turns (call from the event loop); raises QueueFull or Closed."""
        loop = asyncio.get_running_loop()
        job = Job(records, loop.create_future(), loop, time.perf_counter() + timeout_s)
        with self._cond:
            if arrival is not None and arrival._detach():
                self._arriving -= 1
            if self._stopping:
                self._cond.notify_all()
                raise Closed("the server is shutting down")
            if self._waiting + len(records) > self.queue_size:
                self._cond.notify_all()
                per_worker = (self._waiting + len(records)) * self._turn_s / self.workers
                raise QueueFull(self._waiting, self.queue_size, max(1, math.ceil(per_worker)))
            self._queue.append(job)
            self._waiting += len(records)
            self._cond.notify_all()
        return job

    async def result(self, job: Job) -> list[dict[str, Any]]:
        """The job's results, in order; raises DeadlineExceeded at the job's deadline."""
        remaining = job.deadline - time.perf_counter()
        try:
            return await asyncio.wait_for(asyncio.shield(job.future), max(0.0, remaining))
        except TimeoutError:
            job.abandoned = True  # a worker that has not taken it yet skips it
            queued = f"{job.queue_ms:.0f} ms queued"
            raise DeadlineExceeded(f"deadline of the request passed ({queued})") from None

    def close(self, timeout_s: float | None = None) -> None:
        """Stop taking work; workers finish what is queued, then exit."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        for t in self._threads:
            t.join(timeout_s)

    # --- worker side --------------------------------------------------------------------

    def _take(self) -> tuple[list[Job], list[Job]] | None:
        """Block for work, gather a little, pop up to ``max_batch`` turns (whole jobs)."""
        with self._cond:
            while not self._queue:
                if self._stopping:
                    return None
                self._cond.wait()
            until = self._queue[0].enqueued + self.wait_s
            while self._arriving > 0 and self._waiting < self.max_batch and not self._stopping:
                remaining = until - time.perf_counter()
                if remaining <= 0 or not self._queue:
                    break
                self._cond.wait(remaining)
            batch: list[Job] = []
            expired: list[Job] = []
            turns, now = 0, time.perf_counter()
            while self._queue and (
                not batch or turns + len(self._queue[0].records) <= self.max_batch
            ):
                job = self._queue.popleft()
                self._waiting -= len(job.records)
                if job.abandoned or now >= job.deadline:
                    expired.append(job)
                    continue
                job.started = now
                batch.append(job)
                turns += len(job.records)
            self._busy += bool(batch)
            return batch, expired

    def _work(self) -> None:
        while (taken := self._take()) is not None:
            batch, expired = taken
            for job in expired:
                self._resolve(job, None, DeadlineExceeded("deadline passed while queued"))
            if not batch:
                continue
            try:
                self._run(batch)
            finally:
                with self._cond:
                    self._busy -= 1

    def _run(self, batch: list[Job]) -> None:
        records = [r for job in batch for r in job.records]
        t0 = time.perf_counter()
        try:
            results = self.run_batch(records)
        except Exception as exc:  # noqa: BLE001 - the requests fail, the worker lives on
            log.exception("gate batch of %d turns failed", len(records))
            for job in batch:
                job.finished = time.perf_counter()
                self._resolve(job, None, exc)
            return
        elapsed = time.perf_counter() - t0
        self._turn_s = 0.8 * self._turn_s + 0.2 * elapsed / max(1, len(records))
        if self.on_batch is not None:
            self.on_batch(len(records), elapsed)
        at = 0
        for job in batch:
            job.finished = t0 + elapsed
            self._resolve(job, results[at : at + len(job.records)], None)
            at += len(job.records)

    @staticmethod
    def _resolve(job: Job, value: Any, exc: BaseException | None) -> None:
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            job.loop.call_soon_threadsafe(_settle, job.future, value, exc)
