"""Vary ``available_tools`` so the model learns to read it (spec §1, §2.1 ``connect``).

Why: almost every corpus record has no tool list, so the model ignored the field, while
When2Call-style inputs hinge on it: a fitting tool -> execute, no fitting tool -> connect. For a
seeded, event-balanced sample of real requests (mapped/authored execute records with known,
non-empty events) two variants are made in the original's group (so they share its split):

- ``tools.offered``: 2-6 developer-style function names, one serving each event -> same labels;
- ``tools.missing``: 2-6 names of unrelated tools -> ``connect``, events and tags unchanged;

a fifth of the lists hold 7-30 names instead (:data:`LONG_SHARE`).

Plain answers (every execute turn with no event: questions, chit-chat, statements) get
``tools.plain``: unrelated tools -> still execute, since no tool is needed. ``ask`` turns
whose missing slots name catalog events (:data:`ASK_SLOT_EVENTS`) get ``tools.ask``: a tool
for each such event among unrelated ones -> still ask, since a tool does not supply the
missing detail. Every name is spelled in one of several developer styles (:func:`styled`).
Names come from :mod:`tool_names`; a hashed quarter of each list is used only for dev/test
records, the rest only for train records.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from gatecli.template import shares_word, tool_words
from gatecli_train.corpus.draws import own_rng, round_robin
from gatecli_train.corpus.tool_names import FAMILY, OTHER, SERVES

# One share per event set in the round robin below. Three shares for search (corpus 1.2.42)
# did not teach gate-small to read a search tool (offered search turns right on 26% of train
# before, 24% after) and nearly doubled false search events on no-event test turns (44 -> 79):
# README "Training", 1.2.42 and 1.2.43.
EVENTS_N = {"en": 2500, "zh": 600, "fr": 500}
PLAIN_N = {"en": 1500, "zh": 900, "fr": 700}
# About a fifth of the train ask turns of each language whose slots map to an event.
ASK_N = {"en": 550, "zh": 200, "fr": 120}
# Corpus 1.2.50: about a fifth of the lists hold 7-30 names. Agents list that many (Home Assistant's
# Assist API 32, When2Call up to 20), and the template cuts a list over its budget to the names
# most likely to serve the request (``tool_overflow: drop_tools``: events, then names sharing a
# word with the message, at most a third of the budget): the model had only seen 2-6 names,
# never such a cut list. A list keeps its serving names in view only when they share a word
# with the message, so an offered or ask list is long only then (``_long``), and an offered
# request's missing twin with it (else long lists would mean connect); a plain list (no tool
# needed) is right whatever the cut keeps.
LONG_SHARE = 0.2
# Drawn this often, a serving name shares a word with the message about two times in five
# (English), so about a fifth of the English pairs get a long list.
PAIR_LONG_SHARE = 0.5
LONG_K = (7, 30)
# Spec §2.4 kinds of missing information -> the catalog events a request missing it may be
# for (catalog required_slots, plus the search a "where?" serves); amount has none.
ASK_SLOT_EVENTS: dict[str, tuple[str, ...]] = {
    "time": ("alarm.set", "calendar.schedule.create"),
    "person": ("message.email.send",),
    "content": ("message.email.send", "social.post"),
    "place": ("transport.book", "knowledge.web.search"),
    "item": ("order.food.place", "list.update"),
    "target": ("calendar.schedule.delete",),
}


def _held(names: list[str]) -> set[str]:
    """The dev/test-only quarter of a list: the ceil(k/4) of its k spelling-keys with the
    lowest hash. Keyed by :func:`base_key`, not by name, because the lists hold
    ``set_volume`` beside ``setVolume`` and :func:`styled` turns one into the other: a name
    held out for dev/test must not be a train name's spelling."""
    keys = sorted({base_key(n) for n in names}, key=lambda k: hashlib.sha256(k.encode()).digest())
    return set(keys[: -(-len(keys) // 4)])


# Issue 14: agents register tools in many spellings (OpenAI functions in snake or camel case,
# namespaced methods of generated API clients, Schema-Guided-Dialogue service intents, MCP
# ``server__tool`` names). With one spelling per name the model read any unfamiliar spelling
# as a risk signal: 1.2.17 refused 12% of When2Call's benign requests and, with When2Call's
# tool lists added, 29 of 300 ordinary English questions it answers without them.
_NAMESPACES = ("api", "tools", "functions", "plugins", "svc", "core", "app", "v1", "client")
_DOMAINS = ("Home", "Media", "Travel", "Finance", "Utils", "Office", "Social", "Devices", "Data")
_SERVERS = ("assistant", "workspace", "hub", "local", "cloud", "agent")
STYLES = ("snake", "camel", "pascal", "kebab", "dotted", "client", "sgd", "mcp")


def _words(name: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)]


def styled(name: str, rng: random.Random) -> str:
    """``name`` in a spelling drawn from :data:`STYLES` (half the time unchanged): the same
    words, so a tool that serves an event still reads as serving it.

    Example:
        >>> styled("set_volume", random.Random(3)) in {"set_volume", "setVolume", "SetVolume",
        ...     "set-volume"} or "volume" in styled("set_volume", random.Random(3)).lower()
        True
    """
    if rng.random() < 0.5:
        return name
    words = _words(name) or [name]
    pascal = "".join(w.capitalize() for w in words)
    snake = "_".join(words)
    style = rng.choice(STYLES[1:])
    if style == "camel":
        return words[0] + "".join(w.capitalize() for w in words[1:])
    if style == "pascal":
        return pascal
    if style == "kebab":
        return "-".join(words)
    if style == "dotted":
        return f"{rng.choice(_NAMESPACES)}.{snake}"
    if style == "client":
        obj = words[-1]
        return f"{obj}_api.{obj.capitalize()}Api.{snake}"
    if style == "sgd":
        return f"{rng.choice(_DOMAINS)}_{rng.randint(1, 4)}_{pascal}"
    return f"{rng.choice(_SERVERS)}__{snake}"


def base_key(name: str) -> str:
    """Lower-case letters and digits: a name's styled forms all end with its base's key."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _lists() -> list[list[str]]:
    return [names for pats in SERVES.values() for _, names in pats] + [OTHER]


_HELD_KEYS: set[str] = set().union(*(_held(n) for n in _lists()))
HELD: set[str] = {n for lst in _lists() for n in lst if base_key(n) in _HELD_KEYS}
# Every listed name's spelling key: a name whose key ends with one of these is a corpus name
# in some spelling (tools_unseen leaves such names out).
KEYS: set[str] = {base_key(n) for lst in _lists() for n in lst}


def _for_split(names: list[str], split: str) -> list[str]:
    held = split != "train"
    return sorted(n for n in set(names) if (n in HELD) == held)


def serving(event: str, message: str, split: str) -> list[str]:
    """Names that serve ``event`` for this message (generic ones, plus topic-specific ones).

    Example:
        >>> "get_stock_quote" in serving("knowledge.web.search", "apple stock price?", "train")
        True
        >>> "get_stock_price" in serving("knowledge.web.search", "apple stock price?", "test")
        True
    """
    names = [
        n for pat, lst in SERVES[event] if pat is None or re.search(pat, message, re.I) for n in lst
    ]
    return _for_split(names, split)


def unrelated(events: list[str], split: str) -> list[str]:
    """Names from no family of ``events`` (a power switch could serve a light request);
    an event with no tool family (session.terminate) bans nothing."""
    banned = {FAMILY.get(e) for e in events}
    names = [
        n for e, pats in SERVES.items() if FAMILY[e] not in banned for _, lst in pats for n in lst
    ]
    return _for_split(names + OTHER, split)


def _pool(
    records: list[dict[str, Any]],
    langs: dict[str, int],
    want: Callable[[dict[str, Any]], bool],
    decision: str = "execute",
) -> dict[str, list[dict[str, Any]]]:
    """Untouched records of ``decision`` (mapped or authored, no tool list yet) per language,
    where ``want`` holds."""
    by_lang: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if (
            r["provenance"] in ("mapped", "authored")
            and r["labels"]["decision"] == decision
            and "available_tools" not in r["input"]
            and r["lang"] in langs
            and want(r)
        ):
            by_lang[r["lang"]].append(r)
    return by_lang


def _event_pool(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    def serves(r: dict[str, Any]) -> bool:
        ev = r["labels"]["events"]
        return bool(ev) and all(e in SERVES for e in ev)  # not session.terminate: no tool

    return _pool(records, EVENTS_N, serves)


def _plain_pool(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Execute turns with no event: answered from knowledge, whatever tools are offered.

    Until 1.2.17 only chit-chat and a few intent families (definitions, maths, recipes) were
    eligible, 685 turns against 3,095 ``tools.missing`` -> connect ones, so a question with a
    tool list read as "needs a tool it was not given" (connect) or, beside the risky turns of
    ``inv.tools_added``, as refuse. Now every no-event execute turn is, drawn round-robin over
    sources so that one intent set does not stand for all questions.
    """

    def plain(r: dict[str, Any]) -> bool:
        return r["labels"]["events"] == []

    return _pool(records, PLAIN_N, plain)


def ask_events(slots: list[str] | None) -> list[str]:
    """The catalog events an ask turn missing ``slots`` may be for (:data:`ASK_SLOT_EVENTS`).

    Example:
        >>> ask_events(["time"])
        ['alarm.set', 'calendar.schedule.create']
    """
    return sorted({e for s in slots or [] for e in ASK_SLOT_EVENTS.get(s, ())})


def _ask_pool(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Untouched ask records (mapped or authored, no tool list) per language whose missing
    slots name an event.

    Why (2026-12-05): no train ask turn had a tool list (the variants above start from
    execute turns), so a tool list meant "not ask": gate-small 1.2.28 asked on 264 of dev's
    310 ask turns alone and on 14 of them with eight serving tools added (182 -> connect),
    while an agent calling the gate as a service always sends its tools.
    """

    def slots_name_event(r: dict[str, Any]) -> bool:
        return bool(ask_events(r["labels"].get("missing_slots")))

    return _pool(records, ASK_N, slots_name_event, "ask")


def serving_picks(events: list[str], message: str, split: str, rng: random.Random) -> list[str]:
    """One serving name drawn for each of ``events`` that has any for this message, sorted
    (an ask turn's tool list here and the ``invariance`` suite's ``ask_tools``)."""
    cands = [c for c in (serving(e, message, split) for e in events) if c]
    return sorted({rng.choice(c) for c in cands})


def _variant(r: dict[str, Any], kind: str, tools: list[str], note: str) -> dict[str, Any]:
    v = {**r, "id": f"augmented:tools.{kind}:{r['id']}", "provenance": "augmented"}
    v["input"] = {**r["input"], "available_tools": tools}
    v["labels"] = dict(r["labels"])
    v["note"] = f"{note} (rule tools.{kind}) on {r['id']}"
    return v


def _pick(rng: random.Random, must: list[str], others: list[str], long: bool = False) -> list[str]:
    """``must`` (already styled) among 2-6 names drawn from ``others``, or :data:`LONG_K`
    with ``long``. ``others`` never holds a ``must`` name: callers pass :func:`unrelated`
    names, outside the families of the events ``must`` serves."""
    k = max(rng.randint(*(LONG_K if long else (2, 6))), len(must))
    drawn = rng.sample(others, min(k - len(must), len(others)))
    tools = must + [styled(t, rng) for t in drawn]
    rng.shuffle(tools)
    return tools


def _long(rng: random.Random, must: list[str], message: str) -> bool:
    """A :data:`PAIR_LONG_SHARE` draw, held only when every serving name (styled) shares a
    word with the message, so that the template's cut keeps it in view (see
    :data:`LONG_SHARE`)."""
    draw = rng.random() < PAIR_LONG_SHARE
    return draw and all(shares_word(tool_words(t), message.lower()) for t in must)


def vary(records: list[dict[str, Any]], seed: int = 11) -> list[dict[str, Any]]:
    """Tool-list variants of split-assigned records (see module doc); deterministic.

    Which records are varied is a hash-ranked round-robin and each record's tool names come
    from its own generator (:mod:`~gatecli_train.corpus.draws`), so a record added to a pool
    changes at most the record it displaces, not every later tool list (corpus 1.2.66).
    """
    out: list[dict[str, Any]] = []
    pools = _event_pool(records)
    for lang, n in sorted(EVENTS_N.items()):
        for r in round_robin(pools.get(lang, []), n, f"{seed}:tools:{lang}", _events):
            rng = own_rng(f"{seed}:tools", r["id"])
            ev, msg, split = r["labels"]["events"], r["input"]["user_message"], r["split"]
            cands = [serving(e, msg, split) for e in ev]
            if not all(cands):
                continue
            must = sorted({rng.choice(c) for c in cands})
            spelled = [styled(t, rng) for t in must]
            long = _long(rng, spelled, msg)  # both variants, so length tells nothing
            offered = _pick(rng, spelled, unrelated(ev, split), long)
            out.append(_variant(r, "offered", offered, f"tool offered: {', '.join(must)}"))
            tools = _pick(rng, [], unrelated(ev, split), long)
            missing = _variant(r, "missing", tools, "needed tool not offered")
            missing["labels"]["decision"] = "connect"
            out.append(missing)
    plain = _plain_pool(records)
    for lang, n in sorted(PLAIN_N.items()):
        for r in round_robin(plain.get(lang, []), n, f"{seed}:plain:{lang}", _source):
            rng = own_rng(f"{seed}:plain", r["id"])
            tools = _pick(rng, [], unrelated([], r["split"]), rng.random() < LONG_SHARE)
            out.append(_variant(r, "plain", tools, "no tool needed, unrelated tools offered"))
    asks = _ask_pool(records)
    for lang, n in sorted(ASK_N.items()):
        for r in round_robin(asks.get(lang, []), n, f"{seed}:ask:{lang}", _source):
            rng = own_rng(f"{seed}:ask", r["id"])
            msg, split = r["input"]["user_message"], r["split"]
            events = ask_events(r["labels"]["missing_slots"])
            must = serving_picks(events, msg, split, rng)
            if not must:
                continue
            spelled = [styled(t, rng) for t in must]
            tools = _pick(rng, spelled, unrelated(events, split), _long(rng, spelled, msg))
            note = f"a tool does not supply the missing detail; offered: {', '.join(must)}"
            out.append(_variant(r, "ask", tools, note))
    return out


def _events(r: dict[str, Any]) -> tuple[str, ...]:
    return tuple(r["labels"]["events"])


def _source(r: dict[str, Any]) -> str:
    return str(r["source"])
