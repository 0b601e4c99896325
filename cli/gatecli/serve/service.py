"""The service without HTTP: gate, escalator, batcher and metrics, and one classify path.

:meth:`GateService.classify` is ``classify_stream``'s ``flush`` over one request: the
readable rows' records go through one (micro-batched) ``gate.classify_batch``, then the
same ``attach_escalation`` with the same escalator ``classify`` builds from the same flags,
then the same merge (one escalator per request, see :meth:`GateService.request_escalator`).
Escalation runs off the gate workers (on its own threads when an LLM
is configured), so a slow LLM never holds a batch of other clients' turns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gatecli import __version__
from gatecli.llm.escalate import Escalator, attach_escalation
from gatecli.serve.batcher import Arrival, Job, MicroBatcher
from gatecli.serve.config import ServeConfig
from gatecli.serve.inputs import Row, assemble, valid_records
from gatecli.serve.metrics import BATCH_BUCKETS, LATENCY_BUCKETS, Registry

LLM_STATUSES = ("ok", "error", "timeout", "invalid")  # fallback statuses of an LLM call


class ServeMetrics:
    """The families ``GET /metrics`` exposes (names are part of the service's contract)."""

    def __init__(self, service: GateService) -> None:
        reg = self.registry = Registry()
        b = service.batcher
        reg.gauge(
            "gatecli_model_info",
            "The model served (value 1).",
            lambda: 1.0,
            {"model": service.model_id, "gatecli": __version__},
        )
        self.requests = reg.counter(
            "gatecli_requests_total",
            "HTTP requests by endpoint and status code.",
            ["endpoint", "code"],
        )
        self.latency = reg.histogram(
            "gatecli_request_duration_seconds",
            "Request latency, body read to response.",
            ["endpoint"],
            LATENCY_BUCKETS,
        )
        self.decisions = reg.counter(
            "gatecli_decisions_total", "Classified turns by decision.", ["decision"]
        )
        self.row_errors = reg.counter(
            "gatecli_row_errors_total", "Turns answered with an error record (unreadable row)."
        )
        self.rejected = reg.counter(
            "gatecli_rejected_total",
            "Requests refused before or instead of classification, by reason.",
            ["reason"],
        )
        self.fallback = reg.counter(
            "gatecli_fallback_total", "Classified turns by fallback.status.", ["status"]
        )
        self.escalations = reg.counter(
            "gatecli_escalations_total", "Turns sent to the LLM coach, by outcome.", ["status"]
        )
        self.queue_wait = reg.histogram(
            "gatecli_queue_wait_seconds",
            "Time a request's turns waited for a worker.",
            [],
            LATENCY_BUCKETS,
        )
        self.batch_turns = reg.histogram(
            "gatecli_batch_turns",
            "Turns per gathered batch (one classify_batch).",
            [],
            BATCH_BUCKETS,
        )
        self.batch_seconds = reg.histogram(
            "gatecli_batch_seconds", "Time of one gathered batch on a worker.", [], LATENCY_BUCKETS
        )
        reg.gauge("gatecli_queue_depth", "Turns waiting for a worker.", lambda: b.depth)
        reg.gauge(
            "gatecli_queue_capacity",
            "Most turns that may wait (--queue-size).",
            lambda: b.queue_size,
        )
        reg.gauge("gatecli_workers_busy", "Gate workers running a batch.", lambda: b.busy)
        reg.gauge("gatecli_workers", "Gate worker threads (--workers).", lambda: b.workers)
        reg.gauge(
            "gatecli_requests_in_flight", "Requests being handled.", lambda: service.in_flight
        )

    def batch(self, turns: int, seconds: float) -> None:
        self.batch_turns.observe(turns)
        self.batch_seconds.observe(seconds)

    def rows(self, rows: Sequence[Mapping[str, Any]]) -> None:
        for row in rows:
            if "error" in row:
                self.row_errors.inc()
                continue
            self.decisions.inc(str(row.get("decision")))
            status = str((row.get("fallback") or {}).get("status"))
            self.fallback.inc(status)
            if status in LLM_STATUSES:
                self.escalations.inc(status)


class GateService:
    """One loaded gate behind a micro-batcher, with the escalator ``classify`` would use."""

    def __init__(self, gate: Any, config: ServeConfig, escalator: Escalator | None = None):
        self.gate, self.config, self.escalator = gate, config, escalator
        self.model_id: str = str(gate.model_id)
        self.in_flight = 0
        self.batcher = MicroBatcher(
            lambda recs: gate.classify_batch(list(recs)),
            workers=config.workers,
            max_batch=config.max_batch,
            wait_s=config.batch_wait_ms / 1000.0,
            queue_size=config.queue_size,
        )
        self.metrics = ServeMetrics(self)
        self.batcher.on_batch = self.metrics.batch
        self._llm_pool: ThreadPoolExecutor | None = None
        if escalator is not None and escalator.client is not None:
            self._llm_pool = ThreadPoolExecutor(escalator.concurrency, "gate-llm")

    def start(self) -> None:
        self.batcher.start()

    def close(self) -> None:
        """Finish queued work and stop the workers (the escalator's owner closes it)."""
        self.batcher.close()
        if self._llm_pool is not None:
            self._llm_pool.shutdown(wait=True)

    def request_escalator(self) -> Escalator | None:
        """A fresh escalator for one request, sharing the run's LLM client.

        A request is what one ``classify`` run is: its budget (``--llm-budget`` share of
        its turns) and its escalation-stage deadline start with it, so a served request
        escalates exactly the turns ``classify`` would for the same records, and a server
        that has run for hours still escalates. The client (connections, concurrency cap,
        circuit breaker, cache) is shared by all requests.
        """
        base = self.escalator
        if base is None:
            return None
        return Escalator(
            base.client,
            ask_margin=base.ask_margin,
            max_share=base.max_share,
            concurrency=base.concurrency,
            count_tokens=base.count_tokens,
            unconfigured_reason=base.unconfigured_reason,
            screen=base.screen,
        )

    async def results(
        self, records: list[dict[str, Any]], arrival: Arrival | None, *, escalate: bool = True
    ) -> tuple[list[dict[str, Any]], Job | None]:
        """Gate results for readable records, in order (raises QueueFull/DeadlineExceeded)."""
        if not records:
            if arrival is not None:
                arrival.leave()
            return [], None
        job = self.batcher.submit(
            records, timeout_s=self.config.deadline_ms / 1000.0, arrival=arrival
        )
        batch = await self.batcher.result(job)
        self.metrics.queue_wait.observe(job.queue_ms / 1000.0)
        esc = self.request_escalator() if escalate else None
        if esc is None or esc.client is None or self._llm_pool is None:
            return attach_escalation(records, batch, esc), job  # no LLM call: cheap, inline
        loop = asyncio.get_running_loop()
        out = await loop.run_in_executor(self._llm_pool, attach_escalation, records, batch, esc)
        return out, job

    async def classify(
        self, rows: Sequence[Row], arrival: Arrival | None = None
    ) -> tuple[list[dict[str, Any]], Job | None]:
        """The rows ``classify`` writes for these input rows (error records in place)."""
        records = valid_records(rows)
        results, job = await self.results(records, arrival)
        out = assemble(rows, results)
        self.metrics.rows(out)
        return out, job
