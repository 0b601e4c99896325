"""The Starlette app: routes, bearer auth, body and record caps, JSON errors, request logs.

Every error is a JSON body in the OpenAI error shape (``{"error": {"message", "type",
"code"}}``) so SDK clients surface the message; no path returns a stack trace (an
unexpected exception is logged with its request id and answered 500). The log line of a
request carries its id, record ids, decisions and timings, and the user's text only with
``--log-text``. ``/healthz`` is open so that container and load-balancer probes need no
key; every other route needs ``Authorization: Bearer KEY`` when a key is set.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import re
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from gatecli import __version__
from gatecli.serve.batcher import Closed, DeadlineExceeded, QueueFull
from gatecli.serve.inputs import BodyError, classify_rows, valid_records
from gatecli.serve.moderation import moderation_inputs, moderation_response
from gatecli.serve.service import GateService

log = logging.getLogger("gatecli.serve")
NDJSON = ("application/x-ndjson", "application/jsonl")
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
MAX_LOGGED_IDS = 32
HTTP_ERRORS = {
    404: ("no such route", "not_found"),
    405: ("method not allowed", "method_not_allowed"),
}
Handler = Callable[[Request, "RequestLog"], Awaitable[Response]]
T = TypeVar("T")


class HttpError(Exception):
    """A request-level failure answered with ``status`` and the OpenAI error shape."""

    def __init__(
        self, status: int, message: str, code: str, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.headers = status, code, dict(headers or {})


def _json(obj: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    body = json.dumps(obj, ensure_ascii=False).encode("utf-8")  # what classify writes
    return Response(body, status, headers=dict(headers or {}), media_type="application/json")


def error_response(
    status: int, message: str, code: str, headers: Mapping[str, str] | None = None
) -> Response:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    body = {"error": {"message": message, "type": kind, "code": code, "param": None}}
    return _json(body, status, headers)


class RequestLog:
    """What one request's log line will say (filled as the request goes)."""

    def __init__(self, request: Request, endpoint: str) -> None:
        rid = request.headers.get("x-request-id", "")
        self.id = rid if _REQUEST_ID.fullmatch(rid) else uuid.uuid4().hex
        self.endpoint, self.t0 = endpoint, time.perf_counter()
        self.fields: dict[str, Any] = {}

    def rows(self, rows: Sequence[Mapping[str, Any]], texts: Sequence[str] | None) -> None:
        ids = [r.get("id") for r in rows if r.get("id") is not None]
        self.fields.update(
            turns=len(rows),
            errors=sum("error" in r for r in rows),
            decisions=dict(Counter(str(r["decision"]) for r in rows if "decision" in r)),
            ids=ids[:MAX_LOGGED_IDS],
        )
        if texts is not None:
            self.fields["text"] = list(texts)

    def job(self, job: Any) -> None:
        if job is not None:
            self.fields.update(queue_ms=round(job.queue_ms, 3), gate_ms=round(job.gate_ms, 3))


async def read_body(request: Request, limit: int, timeout_s: float | None = None) -> bytes:
    """The body, refused with 413 as soon as it is known to exceed ``limit`` bytes, and with
    408 when it has not all arrived within ``timeout_s`` (a client that sends its headers
    and then stalls or trickles would otherwise hold a connection and a slot forever)."""
    try:
        async with asyncio.timeout(timeout_s):
            return await _read_body(request, limit)
    except TimeoutError:
        raise HttpError(
            408, f"request body not received within {timeout_s:g} s (--body-timeout)", "timeout"
        ) from None


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    too_large = f"request body over {limit} bytes (--max-body-bytes): split the request"
    if declared is not None:
        if not declared.isdigit():
            raise HttpError(400, "Content-Length is not a number", "bad_request")
        if int(declared) > limit:
            raise HttpError(413, too_large, "body_too_large")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HttpError(413, too_large, "body_too_large")
        chunks.append(chunk)
    return b"".join(chunks)


def parse_json(body: bytes) -> Any:
    if not body.strip():
        raise HttpError(400, "empty body: send a JSON object", "bad_json")
    try:
        return json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise HttpError(400, f"body is not UTF-8 (byte {exc.start})", "bad_json") from None
    except json.JSONDecodeError as exc:
        msg = f"malformed JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        raise HttpError(400, msg, "bad_json") from None
    except RecursionError:
        raise HttpError(400, "JSON nested too deeply", "bad_json") from None
    except ValueError as exc:  # e.g. an integer over Python's 4,300-digit limit
        raise HttpError(400, f"unreadable JSON ({exc})", "bad_json") from None


def create_app(service: GateService) -> Starlette:
    """The ASGI app over a :class:`GateService` (started and stopped by its lifespan)."""
    cfg = service.config
    key = cfg.api_key.encode("utf-8") if cfg.api_key else None

    def authorize(request: Request) -> None:
        if key is None:
            return
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), key):
            raise HttpError(
                401,
                "missing or wrong API key: send Authorization: Bearer KEY",
                "invalid_api_key",
                {"WWW-Authenticate": "Bearer"},
            )

    def endpoint(name: str, handler: Handler, *, auth: bool = True) -> Callable[..., Any]:
        async def run(request: Request) -> Response:
            rl = RequestLog(request, name)
            service.in_flight += 1
            try:
                if auth:
                    authorize(request)
                response = await handler(request, rl)
            except HttpError as exc:
                response = error_response(exc.status, str(exc), exc.code, exc.headers)
                rl.fields["error"] = exc.code
                service.metrics.rejected.inc(exc.code)
            except ClientDisconnect:  # the client left mid-body: nobody reads an answer
                response = error_response(400, "client disconnected", "client_disconnected")
                rl.fields["error"] = "client_disconnected"
            except Exception:  # noqa: BLE001 - logged with its id; the client gets no trace
                log.exception("unhandled error", extra={"fields": {"request_id": rl.id}})
                response = error_response(500, f"internal error (request {rl.id})", "internal")
            finally:
                service.in_flight -= 1
            elapsed = time.perf_counter() - rl.t0
            response.headers["x-request-id"] = rl.id
            service.metrics.requests.inc(name, str(response.status_code))
            service.metrics.latency.observe(elapsed, name)
            fields = {
                "request_id": rl.id,
                "endpoint": name,
                "status": response.status_code,
                **rl.fields,
                "total_ms": round(elapsed * 1000.0, 3),
            }
            log.info("request", extra={"fields": fields})
            return response

        return run

    async def gated(work: Awaitable[T]) -> T:
        """Await the gate; the batcher's refusals become 503/504 with a JSON error."""
        try:
            return await work
        except QueueFull as exc:
            retry = {"Retry-After": str(exc.retry_after_s)}
            raise HttpError(503, f"{exc}: retry later", "queue_full", retry) from None
        except DeadlineExceeded as exc:
            raise HttpError(504, f"{exc} (--deadline-ms {cfg.deadline_ms:g})", "deadline") from None
        except Closed as exc:
            raise HttpError(503, str(exc), "shutting_down", {"Retry-After": "1"}) from None

    async def read_json(request: Request) -> Any:
        return parse_json(await read_body(request, cfg.max_body_bytes, cfg.body_timeout_s))

    async def classify(request: Request, rl: RequestLog) -> Response:
        last = request.query_params.get("last", "").lower() in ("1", "true", "yes")
        arrival = service.batcher.arrive()  # counted from here: gathering workers wait for it
        try:
            body = await read_json(request)
            rows, single = classify_rows(body, last=last, max_records=cfg.max_records)
            out, job = await gated(service.classify(rows, arrival))
        except BodyError as exc:
            raise HttpError(exc.status, str(exc), exc.code) from None
        finally:
            arrival.leave()
        rl.job(job)
        rl.rows(out, [r["user_message"] for r in valid_records(rows)] if cfg.log_text else None)
        if any(t in request.headers.get("accept", "") for t in NDJSON):
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out)
            return Response(text.encode("utf-8"), media_type="application/x-ndjson")
        if single:
            return _json(out[0], 422 if "error" in out[0] else 200)
        return _json({"model": service.model_id, "records": out})

    async def moderations(request: Request, rl: RequestLog) -> Response:
        arrival = service.batcher.arrive()
        try:
            texts = moderation_inputs(await read_json(request), max_records=cfg.max_records)
            records = [{"user_message": t} for t in texts]
            results, job = await gated(service.results(records, arrival, escalate=False))
            service.metrics.rows(results)
            rl.job(job)
            rl.rows(results, texts if cfg.log_text else None)
            return _json(moderation_response(service.model_id, results))
        except BodyError as exc:
            raise HttpError(exc.status, str(exc), exc.code) from None
        finally:
            arrival.leave()

    async def healthz(request: Request, rl: RequestLog) -> Response:
        b = service.batcher
        return _json(
            {
                "status": "ok",
                "model": service.model_id,
                "gatecli": __version__,
                "workers": b.workers,
                "queue_depth": b.depth,
                "queue_capacity": b.queue_size,
            }
        )

    async def metrics(request: Request, rl: RequestLog) -> Response:
        text = service.metrics.registry.render()
        return Response(text, media_type="text/plain; version=0.0.4; charset=utf-8")

    async def http_error(request: Request, exc: Exception) -> Response:
        status: int = exc.status_code if isinstance(exc, HTTPException) else 500
        what, code = HTTP_ERRORS.get(status, ("error", "http"))
        return error_response(status, f"{what}: {request.method} {request.url.path}", code)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        service.start()
        try:
            yield
        finally:
            service.close()  # after uvicorn drained the connections: the queue is empty

    routes = [
        Route("/v1/classify", endpoint("classify", classify), methods=["POST"]),
        Route("/v1/moderations", endpoint("moderations", moderations), methods=["POST"]),
        Route("/healthz", endpoint("healthz", healthz, auth=False), methods=["GET"]),
        Route("/metrics", endpoint("metrics", metrics), methods=["GET"]),
    ]
    return Starlette(
        routes=routes, exception_handlers={HTTPException: http_error}, lifespan=lifespan
    )
