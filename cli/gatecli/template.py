"""Serialise one turn (message + context) into the model's input text.

Training and the runtime call the same function with the template stored in the
artifact, so the model never sees one layout in training and another in production.
The layout puts the user message first (e5 was trained with a ``query: `` prefix), then
the short context fields (accounts, tools, files, skill level) that decide ``connect``,
then earlier turns newest-first-kept: when the text does not fit ``max_length`` tokens,
the oldest earlier turns go first, then the tail of the message itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

DEFAULT_TEMPLATE: dict[str, Any] = {
    "version": 1,
    "prefix": "query: ",
    "separator": " | ",
    "empty": "none",
    "fields": [
        {"key": "connected_accounts", "label": "accounts"},
        {"key": "available_tools", "label": "tools"},
        {"key": "available_files", "label": "files"},
        {"key": "user_profile.skill_level", "label": "skill"},
    ],
    "history_label": "earlier",
    "turn_format": "{role}: {content}",
    "max_history_turns": 6,
    "max_turn_chars": 400,
}

# Characters per token is at least ~1 for every script we serve, so a message cut to this
# many characters per token of budget never loses text that could have fitted.
_CHARS_PER_TOKEN_BOUND = 8


def _get(record: Mapping[str, Any], dotted: str) -> Any:
    value: Any = record
    for part in dotted.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def _render_value(value: Any, empty: str) -> str:
    if value is None or value == "" or value == []:
        return empty
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def history_turns(context: Any) -> list[tuple[str, str]]:
    """Normalise ``conversation_context`` (text or ``[{role, content}]``) to (role, text) pairs.

    A plain string is one earlier turn of unknown role, kept as ``context``.
    """
    if context is None or context == "":
        return []
    if isinstance(context, str):
        return [("context", context)]
    turns: list[tuple[str, str]] = []
    for item in context:
        if isinstance(item, Mapping):
            content = item.get("content")
            if isinstance(content, list):  # OpenAI content parts
                content = " ".join(
                    str(p.get("text", "")) for p in content if isinstance(p, Mapping)
                )
            if content:
                turns.append((str(item.get("role", "context")), str(content)))
        elif item:
            turns.append(("context", str(item)))
    return turns


def serialize(
    record: Mapping[str, Any],
    template: Mapping[str, Any] | None = None,
    *,
    count_tokens: Callable[[str], int] | None = None,
    max_length: int | None = None,
) -> str:
    """Return the model input text for one gate-input record.

    ``count_tokens`` (number of tokens a text encodes to, special tokens included) and
    ``max_length`` enable trimming; without them every kept history turn is included.

    Example:
        >>> serialize({"user_message": "声音调到90", "connected_accounts": ["google_calendar"]})
        'query: 声音调到90 | accounts: google_calendar | tools: none | files: none | skill: none'
    """
    t = DEFAULT_TEMPLATE if template is None else template
    sep, empty = t["separator"], t["empty"]
    message = " ".join(str(record.get("user_message", "")).split())
    context = [f"{f['label']}: {_render_value(_get(record, f['key']), empty)}" for f in t["fields"]]
    limit = int(t.get("max_turn_chars", 400))
    turns = [
        t["turn_format"].format(role=role, content=" ".join(text.split())[-limit:])
        for role, text in history_turns(record.get("conversation_context"))
    ][-int(t.get("max_history_turns", 6)) :]

    def build(msg: str, kept: list[str]) -> str:
        parts = [t["prefix"] + msg, *context]
        if kept:
            parts.append(f"{t['history_label']}: " + sep.join(kept))
        return sep.join(parts)

    if count_tokens is None or max_length is None:
        return build(message, turns)

    message = message[: max_length * _CHARS_PER_TOKEN_BOUND]
    # Drop the oldest earlier turns until the text fits.
    while turns and count_tokens(build(message, turns)) > max_length:
        turns = turns[1:]
    text = build(message, turns)
    if count_tokens(text) <= max_length:
        return text
    # Still too long: the message itself is cut from its end, keeping the context fields.
    lo, hi = 0, len(message)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(build(message[:mid], [])) <= max_length:
            lo = mid
        else:
            hi = mid - 1
    return build(message[:lo], [])
