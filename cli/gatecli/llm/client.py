"""A small client for any OpenAI-compatible chat-completions endpoint, built to fail safely.

Ollama, vLLM, the llama.cpp server and OpenAI all speak ``POST {base}/chat/completions``.
The gate must never wait long or break because of the LLM, so every call has a total
deadline (``timeout_s`` covers connecting, sending, every byte of the answer and the
retries; a server that drips one byte at a time cannot stretch it), a few retries with
exponential backoff on fast transient failures only (a dropped connection, 429, 5xx; never
after a timeout, which has spent the deadline, nor on a refused connection), a circuit
breaker that stops calling after N consecutive failed calls or two consecutive timeouts
for a cooldown, a semaphore that bounds concurrent requests, a cap on the answer's size,
and an LRU cache of answers keyed by a hash of the request. Failures are raised as
:class:`LLMFailure` with a fallback status (``error|timeout|invalid|circuit_open``) that
the escalator copies into the record.
Left out: streaming answers to the caller, tool calls, and any judgement of the answer
beyond a check function.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, cast

from gatecli import yamlfile

ENV_BASE_URL = "GATECLI_LLM_BASE_URL"
ENV_MODEL = "GATECLI_LLM_MODEL"
ENV_API_KEY = "GATECLI_LLM_API_KEY"
ENV_CONFIG = "GATECLI_LLM_CONFIG"


class LLMFailure(Exception):
    """A call that produced no usable answer; ``status`` is the record's fallback status.

    ``retry`` marks a fast transient failure (dropped connection, 429, 5xx) that another
    attempt within the deadline may cure.
    """

    def __init__(self, status: str, reason: str, *, retry: bool = False) -> None:
        super().__init__(f"{status}: {reason}")
        self.status = status
        self.reason = reason
        self.retry = retry


@dataclass(frozen=True)
class LLMConfig:
    """Where the LLM is and how patiently to call it.

    ``api_key`` is read from the environment variable named by ``api_key_env`` (never from
    a flag, so it does not show in process lists or shell history). ``timeout_s`` is the
    whole of one call, retries included; ``stage_timeout_s`` is the whole escalation stage
    of one run (the escalator stops calling when it has passed).
    """

    base_url: str
    model: str
    api_key_env: str = ENV_API_KEY
    timeout_s: float = 20.0
    retries: int = 2
    backoff_s: float = 0.5
    breaker_failures: int = 3
    breaker_timeouts: int = 2
    breaker_cooldown_s: float = 30.0
    stage_timeout_s: float = 300.0
    max_concurrency: int = 4
    max_response_bytes: int = 1_000_000
    cache_size: int = 512
    max_tokens: int = 800
    temperature: float = 0.0

    @property
    def endpoint(self) -> str:
        base = self.base_url.rstrip("/")
        return base if base.endswith("/chat/completions") else f"{base}/chat/completions"

    @property
    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) or None


def load_config(
    *, config_file: str | Path | None = None, env: Mapping[str, str] | None = None, **overrides: Any
) -> tuple[LLMConfig | None, str]:
    """Merge a YAML config file, env vars and flag overrides (in rising priority).

    Returns ``(config, "")`` or ``(None, why)`` when no base URL or model is known, which
    the escalator reports as ``not_configured``. The file is flat or under an ``llm:`` key.

    Example:
        >>> cfg, why = load_config(base_url="http://127.0.0.1:8080/v1", model="smollm2")
        >>> cfg.endpoint
        'http://127.0.0.1:8080/v1/chat/completions'
    """
    env = os.environ if env is None else env
    merged: dict[str, Any] = {}
    path = config_file or env.get(ENV_CONFIG)
    if path:
        data = yamlfile.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        data = data.get("llm", data) if isinstance(data, dict) else {}
        merged.update(data)
    for key, var in (("base_url", ENV_BASE_URL), ("model", ENV_MODEL)):
        if env.get(var):
            merged[key] = env[var]
    merged.update({k: v for k, v in overrides.items() if v is not None})
    missing = [k for k in ("base_url", "model") if not merged.get(k)]
    if missing:
        return None, (
            "no LLM configured (set --llm-base-url and --llm-model, or "
            f"{ENV_BASE_URL} and {ENV_MODEL})"
        )
    known = {f.name for f in fields(LLMConfig)}
    unknown = sorted(set(merged) - known)
    if unknown:
        raise ValueError(f"unknown LLM config keys {unknown}; known: {sorted(known)}")
    return LLMConfig(**merged), ""


class _Breaker:
    """Open after ``limit`` consecutive failed calls, or ``timeout_limit`` consecutive
    timeouts (a hung endpoint costs a whole deadline per call, so it must trip sooner);
    one trial call after the cooldown."""

    def __init__(self, limit: int, cooldown_s: float, timeout_limit: int | None = None) -> None:
        self.limit, self.cooldown_s = max(1, limit), cooldown_s
        self.timeout_limit = max(1, timeout_limit if timeout_limit is not None else limit)
        self.failures = 0
        self.timeouts = 0
        self.open_until = 0.0
        self._lock = threading.Lock()

    @property
    def tripped(self) -> bool:
        return self.failures >= self.limit or self.timeouts >= self.timeout_limit

    def allow(self) -> bool:
        with self._lock:
            if not self.tripped:
                return True
            if time.monotonic() >= self.open_until:
                self.open_until = time.monotonic() + self.cooldown_s  # half-open: one trial
                return True
            return False

    def record(self, ok: bool, *, timeout: bool = False) -> None:
        with self._lock:
            if ok:
                self.failures = self.timeouts = 0
                return
            self.failures += 1
            self.timeouts = self.timeouts + 1 if timeout else 0
            if self.tripped:
                self.open_until = time.monotonic() + self.cooldown_s


class ChatClient:
    """Thread-safe JSON chat client; one per run, shared by the escalator's threads.

    Every HTTP exchange runs on its own daemon thread while the caller waits for it at
    most until the call's deadline: neither a server that never answers nor one that
    drips its answer can hold the caller longer. An abandoned exchange keeps its
    concurrency slot until its own socket timeout (the deadline it started with) ends it.

    Example:
        >>> client = ChatClient(LLMConfig("http://127.0.0.1:8080/v1", "smollm2"))  # doctest: +SKIP
        >>> client.complete_json([{"role": "user", "content": "{}"}], schema)  # doctest: +SKIP
        {'task_type': ...}
    """

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.breaker = _Breaker(
            config.breaker_failures, config.breaker_cooldown_s, config.breaker_timeouts
        )
        self._sem = threading.BoundedSemaphore(max(1, config.max_concurrency))
        self._cache: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._stripes = [threading.Lock() for _ in range(64)]
        self._calls_lock = threading.Lock()
        self.calls = 0  # HTTP requests sent (retries included); for tests and stats
        import httpx  # here, not at module level: a run without an LLM never pays for it

        headers = {"Content-Type": "application/json"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        self._http = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(config.timeout_s),
            limits=httpx.Limits(max_connections=max(1, config.max_concurrency)),
        )

    def close(self) -> None:
        self._http.close()

    def request_body(
        self, messages: list[dict[str, str]], schema: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The chat-completions body; ``json_object`` + ``schema`` is what llama.cpp enforces."""
        return {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "response_format": {"type": "json_object", "schema": dict(schema)},
        }

    def complete_json(
        self,
        messages: list[dict[str, str]],
        schema: Mapping[str, Any],
        check: Callable[[Any], list[str]] | None = None,
        *,
        deadline: float | None = None,
    ) -> dict[str, Any]:
        """One JSON answer that ``check`` accepts, or :class:`LLMFailure`. Cached by request.

        Returns or raises within ``timeout_s`` of the call, and by ``deadline`` (a
        ``time.monotonic()`` value, e.g. the end of the escalation stage) when given.
        """
        start = time.monotonic()
        end = start + max(0.0, self.config.timeout_s)
        if deadline is not None:
            end = min(end, deadline)
        body = self.request_body(messages, schema)
        key = hashlib.sha256(
            json.dumps([self.config.endpoint, body], sort_keys=True, ensure_ascii=False).encode()
        ).hexdigest()
        # Identical requests in flight at once wait for the first (a striped lock per key),
        # but never past their own deadline.
        stripe = self._stripes[int(key[:8], 16) % len(self._stripes)]
        if not stripe.acquire(timeout=max(0.0, end - time.monotonic())):
            raise LLMFailure("timeout", self._no_answer(start, end))
        try:
            return self._cached_or_call(key, body, check, start, end)
        finally:
            stripe.release()

    def _no_answer(self, start: float, end: float) -> str:
        return f"no answer from {self.config.endpoint} in {max(0.0, end - start):.3g}s"

    def _cached_or_call(
        self,
        key: str,
        body: dict[str, Any],
        check: Callable[[Any], list[str]] | None,
        start: float,
        end: float,
    ) -> dict[str, Any]:
        with self._cache_lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return copy.deepcopy(self._cache[key])
        if not self.breaker.allow():
            raise LLMFailure(
                "circuit_open",
                f"{self.breaker.failures} consecutive failures; not calling "
                f"{self.config.endpoint} for {self.config.breaker_cooldown_s:g}s",
            )
        try:
            content = self._post_with_retries(body, start, end)
        except LLMFailure as exc:
            self.breaker.record(False, timeout=exc.status == "timeout")
            raise
        self.breaker.record(True)  # the server answered; what it said is judged below
        answer = parse_json(content)
        errors = check(answer) if check else []
        if errors:
            raise LLMFailure("invalid", "; ".join(errors[:3]))
        with self._cache_lock:
            self._cache[key] = copy.deepcopy(answer)
            while len(self._cache) > self.config.cache_size:
                self._cache.popitem(last=False)
        return cast(dict[str, Any], answer)  # check() passed: a coach object

    def _post_with_retries(self, body: dict[str, Any], start: float, end: float) -> str:
        """Retry only fast transient failures, and only while the deadline leaves room."""
        cfg = self.config
        last = LLMFailure("timeout", self._no_answer(start, end))
        for attempt in range(max(0, cfg.retries) + 1):
            if attempt:
                pause = cfg.backoff_s * 2 ** (attempt - 1)
                if time.monotonic() + pause >= end:
                    break  # no room for another attempt: report the last failure
                time.sleep(pause)
            try:
                status, data = self._exchange(body, start, end)
            except LLMFailure as exc:
                if not exc.retry:
                    raise
                last = exc
                continue
            if status == 429 or status >= 500:
                last = LLMFailure("error", f"HTTP {status} from {cfg.endpoint}", retry=True)
                continue
            if status >= 400:  # a client error does not get better by retrying
                text = data[:200].decode("utf-8", "replace")
                raise LLMFailure("error", f"HTTP {status} from {cfg.endpoint}: {text}")
            return _content(data)
        raise last

    def _exchange(self, body: dict[str, Any], start: float, end: float) -> tuple[int, bytes]:
        """One POST and its whole answer by ``end``, else ``LLMFailure("timeout")``."""
        if not self._sem.acquire(timeout=max(0.0, end - time.monotonic())):
            raise LLMFailure("timeout", self._no_answer(start, end) + " (no free connection)")
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                box["answer"] = self._send(body, end)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
                box["error"] = exc
            finally:
                self._sem.release()
                done.set()

        with self._calls_lock:
            self.calls += 1
        threading.Thread(target=work, name="gatecli-llm-call", daemon=True).start()
        if not done.wait(max(0.0, end - time.monotonic())):
            raise LLMFailure("timeout", self._no_answer(start, end))
        if "error" in box:
            raise self._failure(box["error"], start, end)
        return cast(tuple[int, bytes], box["answer"])

    def _send(self, body: dict[str, Any], end: float) -> tuple[int, bytes]:
        """The HTTP exchange itself (on the exchange thread): status and the capped body."""
        import httpx

        cfg = self.config
        left = max(0.001, end - time.monotonic())
        with self._http.stream("POST", cfg.endpoint, json=body, timeout=left) as resp:
            data = bytearray()
            for chunk in resp.iter_bytes():
                data += chunk
                if len(data) > cfg.max_response_bytes:
                    raise LLMFailure(
                        "invalid", f"answer from {cfg.endpoint} over {cfg.max_response_bytes} bytes"
                    )
                if time.monotonic() >= end:
                    raise httpx.ReadTimeout("deadline passed while reading the answer")
            return resp.status_code, bytes(data)

    def _failure(self, exc: BaseException, start: float, end: float) -> LLMFailure:
        """The fallback status for what went wrong on the exchange thread."""
        import httpx

        endpoint = self.config.endpoint
        if isinstance(exc, LLMFailure):
            return exc
        if isinstance(exc, httpx.TimeoutException):
            return LLMFailure("timeout", self._no_answer(start, end))
        if isinstance(exc, httpx.ConnectError):  # nothing listening: retrying will not help
            return LLMFailure("error", f"ConnectError calling {endpoint}: {exc}")
        why = f"{type(exc).__name__} calling {endpoint}: {exc}"
        # a dropped or broken connection is worth another attempt; anything else is not
        return LLMFailure("error", why, retry=isinstance(exc, httpx.TransportError))


def _content(data: bytes) -> str:
    try:
        content = json.loads(data)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise LLMFailure("invalid", f"not a chat-completions response ({exc!r})") from exc
    if not isinstance(content, str):
        raise LLMFailure("invalid", "message content is not a string")
    return content


def parse_json(content: str) -> Any:
    """Parse a model's JSON leniently: raw newlines in strings, a fenced block, prose around.

    Example:
        >>> parse_json('```json\\n{"a": "line1\\nline2"}\\n```')
        {'a': 'line1\\nline2'}
    """
    text = content.strip()
    if text.startswith("```"):
        text = text.strip("`")
        text = text[text.find("\n") + 1 :] if "\n" in text else text
    try:
        return json.loads(text, strict=False)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            try:
                return json.loads(text[start : end + 1], strict=False)
            except json.JSONDecodeError:
                pass
    raise LLMFailure("invalid", f"answer is not JSON: {content[:80]!r}")


def with_overrides(config: LLMConfig, **changes: Any) -> LLMConfig:
    """A copy of ``config`` with some fields changed (``None`` values ignored)."""
    return replace(config, **{k: v for k, v in changes.items() if v is not None})
