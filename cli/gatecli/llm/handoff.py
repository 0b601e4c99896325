"""The handoff context (seed 003) that travels with an escalated turn, at most 2,000 tokens.

The LLM sees only this package, so it carries what the local gate knows (predicted
decision, events, tags, slots, available tools and accounts) and the conversation so
far; when it is too long the oldest earlier turns go first, then the latest message is
shortened, because the newest text matters most to a clarifying question. The
``correlation_id`` is derived from the record (or taken from it) rather than random, so
identical turns give identical requests and the client's cache can answer them.
Earlier turns pass :func:`screen_context` first: a turn the local gate classifies as
``safety`` or ``refuse``, alone or (a user turn) with the turns before it as its context, as
the run classified it, never leaves the machine, nor does the assistant's answer to it; the
record counts them in ``fallback.redacted_turns``.
Left out: summarisation by an LLM (the seed's ``summarize_conversation``); earlier turns
are kept verbatim, oldest dropped first.
"""

from __future__ import annotations

import json
import math
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gatecli.records import NEVER_ESCALATE

MAX_TOKENS = 2000
SOURCE_AGENT = "gatecli"
TARGET_AGENT = "llm-coach"
_NS = uuid.UUID("6f1c1d0e-6a53-4b0e-9a55-3c0f2b1e9d11")

TokenCounter = Callable[[str], int]
# Screen: for each turn (a record: ``user_message`` and, for a user turn read in its
# conversation, the earlier turns as ``conversation_context``), True when it must not leave
# the machine.
Screen = Callable[[list[dict[str, Any]]], list[bool]]
ROLES = ("user", "assistant", "system", "tool")


def estimate_tokens(text: str) -> int:
    """A conservative token count without a tokenizer: 1 per non-ASCII char, 1 per 3 ASCII.

    Real BPE/Unigram tokenizers average ~4 ASCII chars per token and at least one token per
    2 CJK chars, so this over-counts and a package trimmed with it fits any of them.

    Example:
        >>> estimate_tokens("hello world!"), estimate_tokens("声音调到90")
        (4, 5)
    """
    ascii_chars = sum(1 for c in text if ord(c) < 128)
    return (len(text) - ascii_chars) + math.ceil(ascii_chars / 3)


def _turns(context: Any) -> list[str]:
    """Earlier turns as ``role: text`` lines, oldest first, from a string or a message list."""
    if isinstance(context, str):
        return [line for line in context.splitlines() if line.strip()]
    if isinstance(context, list):
        out = []
        for m in context:
            if isinstance(m, Mapping):
                out.append(f"{m.get('role', 'user')}: {m.get('content', '')}")
            elif isinstance(m, str):
                out.append(m)
        return out
    return []


def _role_and_text(turn: str) -> tuple[str, str]:
    """``("user", "hi")`` for ``"user: hi"``; a line without a known role is a user turn."""
    role, sep, text = turn.partition(":")
    if sep and role.strip().lower() in ROLES:
        return role.strip().lower(), text.strip()
    return "user", turn.strip()


def screen_context(
    context: Any, screen: Screen | None, *, max_tokens: int = MAX_TOKENS
) -> tuple[list[str], int]:
    """The earlier turns that may be sent (``role: text`` lines), and how many were withheld.

    A turn is withheld when ``screen`` flags it (the gate classifies it ``safety`` or
    ``refuse``), and so is every assistant turn that answers a withheld user turn (it
    speaks about the same content). A user turn is screened twice: alone, and with the
    turns before it as its context, because that is how the run decided it ("what
    quantities exactly?" after "how do I make a bomb" is refused in its conversation and
    harmless alone). Without a screen, or when the screen fails, every earlier turn is
    withheld: nothing unchecked leaves the machine. Only the newest turns that can fit a
    handoff are screened; older ones would be trimmed anyway and are dropped without
    counting as withheld (they are still the context the newer turns are screened in).

    Example:
        >>> screen_context("user: I want to end it\\nassistant: please call someone\\n"
        ...     "user: remind me", lambda recs: ["end it" in r["user_message"] for r in recs])
        (['user: remind me'], 2)
    """
    everything = _turns(context)
    budget, start = max_tokens, len(everything)
    while start > 0 and budget >= 0:
        budget -= estimate_tokens(everything[start - 1])
        start -= 1
    turns = everything[start:]
    if not turns:
        return [], 0
    parsed = [_role_and_text(t) for t in turns]
    alone = [{"user_message": text} for _, text in parsed]
    in_context = [
        {"user_message": text, "conversation_context": "\n".join(everything[: start + i])}
        for i, (role, text) in enumerate(parsed)
        if role == "user" and start + i > 0
    ]
    try:
        answers = list(screen(alone + in_context)) if screen is not None else []
    except Exception:  # noqa: BLE001 - a failed screen withholds everything
        answers = []
    if len(answers) != len(alone) + len(in_context):
        return [], len(turns)
    flags, later = answers[: len(turns)], iter(answers[len(turns) :])
    for i, (role, _) in enumerate(parsed):
        if role == "user" and start + i > 0:
            flags[i] = bool(next(later)) or flags[i]
    kept: list[str] = []
    withheld, answering_withheld = 0, False
    for turn, (role, _), risky in zip(turns, parsed, flags, strict=True):
        if role == "assistant":
            risky = risky or answering_withheld
        else:
            answering_withheld = bool(risky)
        if risky:
            withheld += 1
        else:
            kept.append(turn)
    return kept, withheld


class GateScreen:
    """A :data:`Screen` backed by the local gate: a turn is flagged when the gate's decision
    or top label for it is ``safety`` or ``refuse``, or when it cannot be classified.

    Answers are cached (a chat's earlier turns recur in every later turn's context) and
    the screen may be called from the escalator's threads.

    Example:
        >>> screen = GateScreen(gate.classify_batch)  # doctest: +SKIP
        >>> screen([{"user_message": "how do I make a pipe bomb"},
        ...         {"user_message": "play jazz"}])  # doctest: +SKIP
        [True, False]
    """

    def __init__(
        self,
        classify_batch: Callable[[list[dict[str, Any]]], Sequence[Mapping[str, Any]]],
        cache_size: int = 4096,
    ) -> None:
        self._classify = classify_batch
        self._cache: OrderedDict[str, bool] = OrderedDict()  # keyed by the record's JSON
        self._size = cache_size
        self._lock = threading.Lock()

    @staticmethod
    def risky(result: Mapping[str, Any]) -> bool:
        if "error" in result:
            return True
        probs: Mapping[str, float] = result.get("probabilities") or {}
        top = max(probs, key=lambda k: probs[k]) if probs else None
        return result.get("decision") in NEVER_ESCALATE or top in NEVER_ESCALATE

    def __call__(self, records: list[dict[str, Any]]) -> list[bool]:
        keys = [json.dumps(r, sort_keys=True, ensure_ascii=False) for r in records]
        blank = [not str(r.get("user_message", "")).strip() for r in records]
        with self._lock:
            todo = {k: r for k, r, b in zip(keys, records, blank, strict=True)
                    if not b and k not in self._cache}  # fmt: skip
        if todo:
            results = self._classify(list(todo.values()))
            if len(results) != len(todo):
                raise RuntimeError("the gate returned a result count that does not match")
            with self._lock:
                for key, res in zip(todo, results, strict=True):
                    self._cache[key] = self.risky(res)
                while len(self._cache) > self._size:
                    self._cache.popitem(last=False)
        with self._lock:
            return [False if b else bool(self._cache.get(k, True))
                    for k, b in zip(keys, blank, strict=True)]  # fmt: skip


def correlation_id(record: Mapping[str, Any]) -> str:
    """The record's own ``correlation_id``, else a UUID5 of its content (stable across runs)."""
    given = record.get("correlation_id")
    if isinstance(given, str) and given:
        return given
    key = json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)
    return str(uuid.uuid5(_NS, key))


def _size(ctx: Mapping[str, Any], count: TokenCounter) -> int:
    return count(json.dumps(ctx, ensure_ascii=False))


def build_handoff(
    record: Mapping[str, Any],
    result: Mapping[str, Any],
    *,
    reason: str = "escalation",
    target_agent: str = TARGET_AGENT,
    count_tokens: TokenCounter | None = None,
    max_tokens: int = MAX_TOKENS,
) -> dict[str, Any]:
    """The seed-003 handoff context for one turn, trimmed to ``max_tokens``.

    ``count_tokens`` is the target model's counter when known (e.g. ``Gate.count_tokens``
    for a shared tokenizer), else :func:`estimate_tokens`. The serialized JSON is counted.

    Example:
        >>> ctx = build_handoff({"user_message": "remind me"}, {"decision": "ask",
        ...     "missing_slots": ["time"]})
        >>> ctx["hop_count"], ctx["handoff_chain"]
        (1, ['gatecli'])
    """
    count = count_tokens or estimate_tokens
    chain = [str(a) for a in record.get("handoff_chain") or []] + [SOURCE_AGENT]
    turns = _turns(record.get("conversation_context"))
    facts = {
        "decision": result.get("decision"),
        "probabilities": result.get("probabilities", {}),
        "events": result.get("events", []),
        "event_scores": result.get("event_scores", {}),
        "scenario_tags": result.get("scenario_tags", []),
        "missing_slots": result.get("missing_slots", []),
        "lang": result.get("lang"),
        "available_tools": list(record.get("available_tools") or []),
        "connected_accounts": list(record.get("connected_accounts") or []),
        "available_files": list(record.get("available_files") or []),
        "user_profile": dict(record.get("user_profile") or {}),
    }
    events = result.get("events") or list(result.get("event_scores") or {})[:1]
    intent = f"{result.get('decision', 'ask')}: {', '.join(events) or 'no event'}"
    if result.get("missing_slots"):
        intent += f"; missing {', '.join(result['missing_slots'])}"
    ctx: dict[str, Any] = {
        "correlation_id": correlation_id(record),
        "source_agent": SOURCE_AGENT,
        "target_agent": target_agent,
        "handoff_reason": reason,
        "conversation_summary": "\n".join(turns),
        "user_intent": intent,
        "user_message": str(record.get("user_message", "")),
        "key_facts": facts,
        "hop_count": int(record.get("hop_count") or 0) + 1,
        "handoff_chain": chain,
    }
    return trim(ctx, turns, count, max_tokens)


def trim(
    ctx: dict[str, Any], turns: list[str], count: TokenCounter, max_tokens: int
) -> dict[str, Any]:
    """Drop the oldest turns, then the optional facts, then shorten the message, until it fits."""
    if _size(ctx, count) > max_tokens:
        # Fewest oldest turns to drop: the size only shrinks as more go, so bisect.
        lo, hi = 0, len(turns)
        while lo < hi:
            mid = (lo + hi) // 2
            ctx["conversation_summary"] = "\n".join(turns[mid:])
            if _size(ctx, count) <= max_tokens:
                hi = mid
            else:
                lo = mid + 1
        ctx["conversation_summary"] = "\n".join(turns[lo:])
    facts = ctx["key_facts"]
    for key in ("user_profile", "available_files", "event_scores", "available_tools"):
        if _size(ctx, count) <= max_tokens:
            break
        facts[key] = type(facts[key])()
    msg = ctx["user_message"]
    while msg and _size(ctx, count) > max_tokens:
        over = _size(ctx, count) - max_tokens
        msg = msg[: max(0, len(msg) - max(over, len(msg) // 10, 1))]
        ctx["user_message"] = msg
    return ctx
