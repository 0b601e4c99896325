"""A small client for any OpenAI-compatible chat-completions endpoint, built to fail safely.

Ollama, vLLM, the llama.cpp server and OpenAI all speak ``POST {base}/chat/completions``.
The gate must never wait long or break because of the LLM, so every call has a timeout,
a few retries with exponential backoff (transport errors, 429 and 5xx only), a circuit
breaker that stops calling after N consecutive failed calls for a cooldown, a semaphore
that bounds concurrent requests, and an LRU cache of answers keyed by a hash of the
request. Failures are raised as :class:`LLMFailure` with a fallback status
(``error|timeout|invalid|circuit_open``) that the escalator copies into the record.
Left out: streaming, tool calls, and any judgement of the answer beyond a check function.
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
from typing import Any

import yaml

ENV_BASE_URL = "GATECLI_LLM_BASE_URL"
ENV_MODEL = "GATECLI_LLM_MODEL"
ENV_API_KEY = "GATECLI_LLM_API_KEY"
ENV_CONFIG = "GATECLI_LLM_CONFIG"


class LLMFailure(Exception):
    """A call that produced no usable answer; ``status`` is the record's fallback status."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(f"{status}: {reason}")
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class LLMConfig:
    """Where the LLM is and how patiently to call it.

    ``api_key`` is read from the environment variable named by ``api_key_env`` (never from
    a flag, so it does not show in process lists or shell history).
    """

    base_url: str
    model: str
    api_key_env: str = ENV_API_KEY
    timeout_s: float = 20.0
    retries: int = 2
    backoff_s: float = 0.5
    breaker_failures: int = 5
    breaker_cooldown_s: float = 30.0
    max_concurrency: int = 4
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
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
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
    """Open after ``limit`` consecutive failed calls; one trial call after the cooldown."""

    def __init__(self, limit: int, cooldown_s: float) -> None:
        self.limit, self.cooldown_s = max(1, limit), cooldown_s
        self.failures = 0
        self.open_until = 0.0
        self._lock = threading.Lock()

    def allow(self) -> bool:
        with self._lock:
            if self.failures < self.limit:
                return True
            if time.monotonic() >= self.open_until:
                self.open_until = time.monotonic() + self.cooldown_s  # half-open: one trial
                return True
            return False

    def record(self, ok: bool) -> None:
        with self._lock:
            if ok:
                self.failures = 0
            else:
                self.failures += 1
                if self.failures >= self.limit:
                    self.open_until = time.monotonic() + self.cooldown_s


class ChatClient:
    """Thread-safe JSON chat client; one per run, shared by the escalator's threads.

    Example:
        >>> client = ChatClient(LLMConfig("http://127.0.0.1:8080/v1", "smollm2"))  # doctest: +SKIP
        >>> client.complete_json([{"role": "user", "content": "{}"}], schema)  # doctest: +SKIP
        {'task_type': ...}
    """

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.breaker = _Breaker(config.breaker_failures, config.breaker_cooldown_s)
        self._sem = threading.BoundedSemaphore(max(1, config.max_concurrency))
        self._cache: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._stripes = [threading.Lock() for _ in range(64)]
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

    def request_body(self, messages: list[dict[str, str]], schema: Mapping[str, Any]) -> dict:
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
    ) -> dict[str, Any]:
        """One JSON answer that ``check`` accepts, or :class:`LLMFailure`. Cached by request."""
        body = self.request_body(messages, schema)
        key = hashlib.sha256(
            json.dumps([self.config.endpoint, body], sort_keys=True, ensure_ascii=False).encode()
        ).hexdigest()
        # Identical requests in flight at once wait for the first (a striped lock per key).
        with self._stripes[int(key[:8], 16) % len(self._stripes)]:
            return self._cached_or_call(key, body, check)

    def _cached_or_call(
        self, key: str, body: dict[str, Any], check: Callable[[Any], list[str]] | None
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
            content = self._post_with_retries(body)
        except LLMFailure:
            self.breaker.record(False)
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
        return answer

    def _post_with_retries(self, body: dict[str, Any]) -> str:
        import httpx

        cfg = self.config
        last = LLMFailure("error", "no attempt made")
        for attempt in range(max(0, cfg.retries) + 1):
            if attempt:
                time.sleep(cfg.backoff_s * 2 ** (attempt - 1))
            try:
                with self._sem:
                    self.calls += 1
                    resp = self._http.post(cfg.endpoint, json=body)
            except httpx.TimeoutException:
                last = LLMFailure("timeout", f"no answer from {cfg.endpoint} in {cfg.timeout_s:g}s")
                continue
            except httpx.HTTPError as exc:
                last = LLMFailure("error", f"{type(exc).__name__} calling {cfg.endpoint}: {exc}")
                continue
            if resp.status_code == 429 or resp.status_code >= 500:
                last = LLMFailure("error", f"HTTP {resp.status_code} from {cfg.endpoint}")
                continue
            if resp.status_code >= 400:  # a client error does not get better by retrying
                raise LLMFailure(
                    "error", f"HTTP {resp.status_code} from {cfg.endpoint}: {resp.text[:200]}"
                )
            return _content(resp)
        raise last


def _content(resp: Any) -> str:
    try:
        content = resp.json()["choices"][0]["message"]["content"]
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
