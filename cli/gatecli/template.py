"""Serialise one turn (message + context) into the model's input text.

Training and the runtime call the same function with the template stored in the
artifact, so the model never sees one layout in training and another in production.

Template version 2 (gate-small 1.2.0) serialises the *situation*, not the integrator's
spelling of it:

- the user message comes first (e5 was trained with a ``query: `` prefix), lower-cased and
  NFKC-normalised, so letter case and full-width forms cannot change a decision;
- connected accounts are mapped through the catalog's aliases to catalog system names
  (``"Google Calendar"``, ``"outlook_calendar"`` and ``"calendar"`` all read ``calendar``);
  unknown accounts are kept in their normalised form; sorted, deduplicated;
- a tool whose name is a catalog event (any case, ``_``/``-``/``.`` separators) is written as
  that event; other tool names are kept as given; sorted, deduplicated;
- **empty fields are omitted**: a bare turn serialises to prefix + message (13 tokens for a
  short turn instead of 39 with version 1's ``tools: none | files: none ...``);
- earlier turns follow newest first with their roles, so the token budget (``max_length``)
  drops the oldest ones first and the turn the user answers is always kept.

The alias and event tables travel inside the template (``systems``, ``events``), filled from
the catalog by :func:`build_template` at export time: ``gatecli.json`` alone defines the
layout. Version 1 templates (gate-small 1.0/1.1) still serialise exactly as they did.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

DEFAULT_TEMPLATE_V1: dict[str, Any] = {
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

DEFAULT_TEMPLATE: dict[str, Any] = {
    "version": 2,
    "prefix": "query: ",
    "separator": " | ",
    "lowercase": True,
    "fields": [
        {"key": "connected_accounts", "label": "accounts", "canonical": "systems"},
        {"key": "available_tools", "label": "tools", "canonical": "events"},
        {"key": "available_files", "label": "files"},
        {"key": "user_profile.skill_level", "label": "skill", "omit": ["unknown", "none"]},
    ],
    # Tool names outside the catalog as lower-case words ("Weather_1_GetWeather" -> "weather 1
    # get weather"): the message is lower-cased, so capitals in a tool name were pieces the
    # trimmed vocabulary lacks (unknown tokens: 5.5% of When2Call's, 55% of its turns). A
    # folder without this key (gate-small <= 1.2.6) writes them as given.
    "tool_names": "words",
    # A message longer than the budget keeps its beginning and its end (the request after
    # pasted text comes last). Cut from the end only, as a folder without this key does
    # (gate-small <= 1.2.19), the two halves of a training pair "<passage> + summarise it" /
    # "<passage> + how do I make it at home" serialised to the same text: the model learned
    # the passage's topic, and refused 58 of 72 benign held-out passage requests.
    "long_message": "head_tail",
    # A turn over the budget cuts its tool list (to a third of the budget, the names sharing
    # a word with the message first) before its earlier turns or its message. A folder
    # without this key (gate-small <= 1.2.48) cut the message to keep the whole list: under
    # Home Assistant's ~30 intent tools no word of the request reached the model.
    "tool_overflow": "drop_tools",
    "history_label": "earlier",
    "history_order": "newest_first",
    "turn_format": "{role}: {content}",
    "max_history_turns": 6,
    "max_turn_chars": 400,
    # Filled from the catalog by build_template(): normalised alias -> [system, ...], and the
    # catalog's event names.
    "systems": {},
    "events": [],
}

# Characters per token is at least ~1 for every script we serve, so a message cut to this
# many characters per token of budget never loses text that could have fitted.
_CHARS_PER_TOKEN_BOUND = 8
# ``long_message: head_tail``: a message over the budget keeps this share of what fits from
# its beginning and the rest from its end, joined by the elision mark.
HEAD_SHARE = 0.3
ELISION = " ... "
_SEPARATORS = re.compile(r"[\s\-.]+")
# A word boundary inside camelCase, PascalCase and acronyms ("getHTTPResponse").
_CASE_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[\W_]+")
# Words a request and a tool name share without the tool serving it ("set a timer" /
# "hass light set"); tool_ranking ignores them.
_GENERIC_WORDS = frozenset((
    "a", "an", "the", "to", "of", "for", "on", "in", "at", "and", "or", "my", "me", "it", "is",
    "be", "get", "set", "add", "make", "do", "please", "can", "you", "with", "from",
))  # fmt: skip


def normalize_name(name: str) -> str:
    """The one spelling of an account or tool name: NFKC, lower case, ``_`` for separators.

    Example:
        >>> normalize_name(" Google-Calendar ")
        'google_calendar'
    """
    return _SEPARATORS.sub("_", unicodedata.normalize("NFKC", name).strip().lower())


def build_template(
    systems: Mapping[str, Iterable[str]],
    events: Iterable[str],
    base: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A version-2 template with the catalog's alias and event tables filled in.

    ``systems`` maps a system name to its aliases (the catalog's ``systems`` section).

    Example:
        >>> t = build_template({"calendar": ["Google Calendar"]}, ["alarm.set"])
        >>> t["systems"]["google_calendar"], t["events"]
        (['calendar'], ['alarm.set'])
    """
    out = dict(DEFAULT_TEMPLATE if base is None else base)
    table: dict[str, list[str]] = {}
    for system, aliases in systems.items():
        for alias in (system, *aliases):
            names = table.setdefault(normalize_name(str(alias)), [])
            if system not in names:
                names.append(str(system))
    out["systems"] = {k: sorted(v) for k, v in sorted(table.items())}
    out["events"] = sorted(str(e) for e in events)
    return out


def template_from_catalog(data: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`build_template` from a parsed ``catalog.yaml`` (its ``systems`` and ``events``).

    Example:
        >>> template_from_catalog({"systems": {"email": {"aliases": ["Gmail"]}}})["systems"]
        {'email': ['email'], 'gmail': ['email']}
    """
    from gatecli.catalog import Catalog  # catalog.py imports normalize_name from here

    cat = Catalog.from_mapping(data)  # the one parser (and checker) of catalog.yaml
    return build_template(cat.systems, cat.event_names)


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


def _items(value: Any) -> list[str]:
    """A field's values as non-empty strings (a lone string is one value)."""
    if value is None:
        return []
    if isinstance(value, (str, int, float)):
        value = [value]
    if not isinstance(value, (list, tuple)):
        return [str(value)] if str(value).strip() else []
    return [str(v).strip() for v in value if v is not None and str(v).strip()]


def canonical_accounts(value: Any, systems: Mapping[str, list[str]]) -> list[str]:
    """Connected accounts as catalog system names; unknown accounts keep a normalised name.

    Example:
        >>> canonical_accounts(["Outlook", "Spotify"], {"outlook": ["calendar", "email"]})
        ['calendar', 'email', 'spotify']
    """
    out: set[str] = set()
    for acc in _items(value):
        key = normalize_name(acc)
        out.update(systems.get(key, [key]))
    return sorted(out)


@lru_cache(maxsize=8192)  # an agent sends the same list every turn: its names repeat
def tool_words(name: str) -> str:
    """A tool name as the lower-case words it is made of, whatever its casing convention.

    Example:
        >>> tool_words("Weather_1_GetWeather"), tool_words("getHTTPResponse")
        ('weather 1 get weather', 'get http response')
    """
    text = _CASE_BOUNDARY.sub(" ", unicodedata.normalize("NFKC", name).strip())
    return " ".join(_NON_WORD.sub(" ", text).lower().split())


@lru_cache(maxsize=16)
def _event_keys(events: tuple[str, ...], words: bool) -> dict[str, str]:
    """Catalog events by their normalised key, built once per catalog instead of once per
    turn (the catalog's ~20 names through two regexes were a tenth of a turn's overhead)."""
    key = tool_words if words else normalize_name
    return {key(e): e for e in events}


def canonical_tools(value: Any, events: Iterable[str], *, words: bool = False) -> list[str]:
    """Tools that name a catalog event are written as the event; others as given, or with
    ``words`` as :func:`tool_words` (which also matches ``DeviceVolumeAdjust`` to its event).

    Example:
        >>> canonical_tools(["Device_Volume_Adjust", "get_weather"], ["device.volume.adjust"])
        ['device.volume.adjust', 'get_weather']
        >>> canonical_tools(["DeviceVolumeAdjust", "Get_Weather"], ["device.volume.adjust"],
        ...                 words=True)
        ['device.volume.adjust', 'get weather']
    """
    key = tool_words if words else normalize_name
    by_key = _event_keys(tuple(events), words)
    names = {by_key.get(k, k if words else t) for t in _items(value) for k in (key(t),)}
    return sorted(n for n in names if n)  # a name of symbols only has no words


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


def _context_fields(record: Mapping[str, Any], t: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """Each non-empty context field of a version-2 template as (label, items)."""
    parts = []
    for f in t["fields"]:
        value = _get(record, f["key"])
        canon = f.get("canonical")
        if canon == "systems":
            items = canonical_accounts(value, t.get("systems") or {})
        elif canon == "events":
            items = canonical_tools(
                value, t.get("events") or (), words=t.get("tool_names") == "words"
            )
        else:
            omit = {str(o) for o in f.get("omit", ())}
            items = [i for i in _items(value) if i.lower() not in omit]
        if items:
            parts.append((str(f["label"]), items))
    return parts


def _render(fields: list[tuple[str, list[str]]]) -> list[str]:
    return [f"{label}: {', '.join(items)}" for label, items in fields]


def tool_ranking(tools: list[str], message: str, events: Iterable[str]) -> list[str]:
    """``tools`` in the order a budget keeps them: catalog events, then tools sharing a word
    with the message, then the rest (each group in its given order).

    Why: with ``tool_overflow: drop_tools`` a list too long for the budget loses tools, not
    the message; the tools most likely to serve the request are the ones to keep in view.

    Example:
        >>> tool_ranking(["hass broadcast", "hass light set", "alarm.set"], "dim the light",
        ...              ["alarm.set"])
        ['alarm.set', 'hass light set', 'hass broadcast']
    """
    catalog = set(events)
    words = _words(message)

    def rank(tool: str) -> int:
        if tool in catalog:
            return 0
        return 1 if words & _words(tool) else 2

    return sorted(tools, key=rank)


@lru_cache(maxsize=8192)
def _words(text: str) -> frozenset[str]:
    return frozenset(_NON_WORD.sub(" ", text).split()) - _GENERIC_WORDS


def shares_word(tool: str, message: str) -> bool:
    """Whether ``tool`` (as :func:`tool_words`) shares a non-generic word with ``message``
    (lower-cased, as the template reads it): the tools :func:`tool_ranking` keeps first.

    Example:
        >>> shares_word("hass light set", "dim the light"), shares_word("set timer", "set it")
        (True, False)
    """
    return bool(_words(message) & _words(tool))


def _clean(text: str, lowercase: bool) -> str:
    text = " ".join(unicodedata.normalize("NFKC", text).split())
    return text.lower() if lowercase else text


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
        >>> serialize({"user_message": "声音调到90", "available_tools": []})
        'query: 声音调到90'
        >>> t = build_template({"calendar": ["google_calendar"]}, [])
        >>> serialize({"user_message": "Hi", "connected_accounts": ["Google Calendar"]}, t)
        'query: hi | accounts: calendar'
    """
    t = DEFAULT_TEMPLATE if template is None else template
    v2 = int(t.get("version", 1)) >= 2
    sep = t["separator"]
    lower = bool(t.get("lowercase")) if v2 else False
    message = (
        _clean(str(record.get("user_message", "")), lower)
        if v2
        else " ".join(str(record.get("user_message", "")).split())
    )
    fields: list[tuple[str, list[str]]] = _context_fields(record, t) if v2 else []
    if v2:
        context = _render(fields)
    else:
        empty = t["empty"]
        context = [
            f"{f['label']}: {_render_value(_get(record, f['key']), empty)}" for f in t["fields"]
        ]
    limit = int(t.get("max_turn_chars", 400))
    turns = [
        t["turn_format"].format(
            role=role, content=(_clean(text, lower) if v2 else " ".join(text.split()))[-limit:]
        )
        for role, text in history_turns(record.get("conversation_context"))
    ][-int(t.get("max_history_turns", 6)) :]
    newest_first = t.get("history_order") == "newest_first"

    def build(msg: str, kept: list[str], ctx: list[str] | None = None) -> str:
        parts = [t["prefix"] + msg, *(context if ctx is None else ctx)]
        if kept:
            shown = kept[::-1] if newest_first else kept
            parts.append(f"{t['history_label']}: " + sep.join(shown))
        return str(sep.join(parts))

    if count_tokens is None or max_length is None:
        return build(message, turns)

    head_tail = t.get("long_message") == "head_tail"
    cap = max_length * _CHARS_PER_TOKEN_BOUND
    if len(message) > cap:
        keep = int(cap * HEAD_SHARE) if head_tail else cap
        message = message[:keep] + (message[keep - cap :] if head_tail else "")
    if t.get("tool_overflow") == "drop_tools" and count_tokens(build(message, turns)) > max_length:
        # Tool names get at most a third of the budget, the ones most likely to serve the
        # request first (tool_ranking), before earlier turns or the message give anything
        # up: lists that long are what the model was trained on (2-6 names). Letting the
        # list fill what the rest leaves read Home Assistant's worse (gate-small 1.2.47 on
        # tools_home_assistant: decision accuracy 0.828 against 0.851, events micro-F1 0.906
        # against 0.940) and costs tokens.
        label = next((f["label"] for f in t["fields"] if f["key"] == "available_tools"), "")

        share = max_length // 3

        def fits(fs: list[tuple[str, list[str]]]) -> bool:
            tools = _render([f for f in fs if f[0] == label])
            return not tools or count_tokens(tools[0]) <= share

        # A name is at least one token: no more than `share` names can fit, so a list of
        # hundreds (an MCP agent's) is searched over that many, not all of it.
        context = _render(
            fit_tools(fields, label, message, t.get("events") or (), fits, most=share)
        )
    # Drop the oldest earlier turns until the text fits.
    while turns and count_tokens(build(message, turns)) > max_length:
        turns = turns[1:]
    text = build(message, turns)
    if count_tokens(text) <= max_length:
        return text

    # Still too long: the message itself is cut, keeping the context fields: from its end, or
    # (``long_message: head_tail``) from its middle, so that a request after pasted text
    # stays in view.
    def cut(n: int) -> str:
        if not head_tail:
            return message[:n]
        head = int(n * HEAD_SHARE)
        return message[:head].rstrip() + ELISION + message[len(message) - (n - head) :].lstrip()

    n = longest(lambda k: count_tokens(build(cut(k), [])) <= max_length, len(message))
    return build(cut(n), [])


def longest(fits: Callable[[int], bool], hi: int) -> int:
    """The largest ``k`` in ``0..hi`` with ``fits(k)`` (``fits`` true up to some k, then false)."""
    lo = 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return lo


def fit_tools(
    fields: list[tuple[str, list[str]]],
    label: str,
    message: str,
    events: Iterable[str],
    fits: Callable[[list[tuple[str, list[str]]]], bool],
    *,
    most: int | None = None,
) -> list[tuple[str, list[str]]]:
    """``fields`` with the tool list (the field labelled ``label``) cut to the most names, by
    :func:`tool_ranking`, that ``fits`` accepts (kept names in their usual order; other fields
    as they are); with ``most``, at most that many (the search stays short on long lists).

    Example:
        >>> fields = [("tools", ["hass broadcast", "hass light set", "hass timer status"])]
        >>> fit_tools(fields, "tools", "dim the light", [],
        ...           lambda fs: sum(len(v) for _, v in fs) <= 2)
        [('tools', ['hass broadcast', 'hass light set'])]
    """
    at = next((i for i, (name, _) in enumerate(fields) if name == label), None)
    if at is None:
        return fields
    ranked = tool_ranking(fields[at][1], message, events)

    def keep(k: int) -> list[tuple[str, list[str]]]:
        kept = sorted(ranked[:k])
        return [(name, kept if i == at else items) for i, (name, items) in enumerate(fields)
                if i != at or kept]  # fmt: skip

    hi = len(ranked) if most is None else min(most, len(ranked))
    return keep(longest(lambda k: fits(keep(k)), hi))
