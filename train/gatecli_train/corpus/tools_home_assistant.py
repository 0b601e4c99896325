"""The ``tools_home_assistant`` eval suite: Home Assistant turns under Home Assistant's tool list.

Why (issue 14): the most widely deployed local voice agent names its tools after its intents.
Home Assistant's Assist LLM API (``homeassistant/helpers/llm.py``) hands the model one tool per
registered intent (``HassTurnOn``, ``HassLightSet``, ``HassStartTimer``, ...) except the ones it
ignores (``HassNevermind``, ``HassGetState``, ``HassGetWeather``, ``HassClimateGetTemperature``),
plus ``GetLiveContext`` for state questions. Few of these names share a word with the
request they serve ("pause the TV" / ``HassMediaPause`` does; "make it brighter in here" /
``HassLightSet`` does not), and no suite held such a list, so nobody measured whether the gate
reads one. The catalog declares these names as ``tools`` of the events they serve
(``cli/gatecli/assets/catalog.yaml``), as it declares ``web_search`` for search.

Bases are the ``home_assistant`` suite's held-out test turns (evaluation only, never trained
on): up to :data:`PER_LANG` requests a language with a catalog event that an exposed intent
serves, round-robin over event sets, and up to :data:`PLAIN_PER_LANG` turns with no event
(state, time and temperature questions). Each request gives two turns, each plain turn one:

- ``offered``: the whole exposed list -> the base's labels;
- ``lacking``: the list without every intent that serves the base's events (``HassTurnOn``
  and ``HassTurnOff`` serve lights and switches alike) -> ``connect``, events, tags and slots
  unchanged (the corpus's ``tools.missing`` rule);
- ``plain``: the whole list on a turn that needs no tool -> the base's labels.

Which intent serves which event is :data:`home_assistant.INTENT_EVENTS`, the table the corpus
labels Home Assistant's templates with, not the catalog (a test checks that the catalog
declares the same). Weather turns are left out: Home Assistant's LLM API does not expose
``HassGetWeather`` (it answers weather from ``GetLiveContext``), so no rule says what such a
list offers. Ids are ``tools_home_assistant:<pair>:<kind>``; ``source`` is the suite's name.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Any

from gatecli_train.corpus.draws import interleave
from gatecli_train.corpus.home_assistant import INTENT_EVENTS
from gatecli_train.corpus.tools_catalog import suite_turn

Record = dict[str, Any]
SUITE = "tools_home_assistant"
PER_LANG = 100
PLAIN_PER_LANG = 40
LANGS = ("en", "zh", "fr")
# HassTurnOn/HassTurnOff act on any entity; the corpus labels them by domain.
TURN_ON_OFF = ("device.light.adjust", "device.power.toggle")
# Ignored by Home Assistant's Assist LLM API (IGNORE_INTENTS), so never in its tool list.
IGNORED = ("HassNevermind", "HassGetState", "HassGetWeather", "HassClimateGetTemperature")
# What an agent built on that API lists (Home Assistant 2025.x with lights, media players, a
# vacuum, a thermostat, to-do lists and a voice satellite with timers exposed).
EXPOSED: tuple[str, ...] = (
    "HassTurnOn", "HassTurnOff", "HassSetPosition", "HassBroadcast", "GetLiveContext",
    *(k for k in INTENT_EVENTS if k not in IGNORED),
)  # fmt: skip


def serving(intent: str) -> set[str]:
    """The catalog events an exposed intent serves (none for a state or time question).

    Example:
        >>> sorted(serving("HassTurnOn")), serving("HassStartTimer"), serving("HassBroadcast")
        (['device.light.adjust', 'device.power.toggle'], {'alarm.set'}, set())
    """
    if intent in ("HassTurnOn", "HassTurnOff"):
        return set(TURN_ON_OFF)
    return set(INTENT_EVENTS.get(intent, []))


def _h(key: str) -> str:
    return hashlib.sha256(f"{SUITE}:{key}".encode()).hexdigest()


def _served(events: list[str]) -> bool:
    return all(any(e in serving(t) for t in EXPOSED) for e in events)


def _bases(records: list[Record], lang: str, with_events: bool, n: int) -> list[Record]:
    groups: dict[tuple[str, ...], list[Record]] = defaultdict(list)
    for r in records:
        lab = r["labels"]
        if r["lang"] != lang or lab["decision"] != "execute" or lab["events"] is None:
            continue
        if bool(lab["events"]) == with_events and (not with_events or _served(lab["events"])):
            groups[tuple(lab["events"])].append(r)
    queues = [sorted(v, key=lambda r: _h(r["id"]), reverse=True) for _, v in sorted(groups.items())]
    return interleave(queues, n)


def _turn(rec: Record, pair: str, kind: str, tools: list[str]) -> Record:
    shuffled = sorted(tools, key=lambda t: _h(pair + t))
    return suite_turn(SUITE, rec, pair, kind, shuffled,
                      "same labels: the list serves or is not needed")  # fmt: skip


def suite(home_assistant: list[Record]) -> list[Record]:
    """Offered, lacking and plain turns (module doc) from the ``home_assistant`` suite.

    Example:
        >>> rec = {"id": "ha:1", "lang": "en", "source": "ha", "group": "ha:1",
        ...        "input": {"user_message": "pause the TV"},
        ...        "labels": {"decision": "execute", "events": ["media.control"],
        ...                   "scenario_tags": [], "missing_slots": []}}
        >>> out = suite([rec])
        >>> [(r["id"].split(":")[2], r["labels"]["decision"], "HassMediaPause" in
        ...   r["input"]["available_tools"]) for r in out]
        [('lacking', 'connect', False), ('offered', 'execute', True)]
    """
    out: list[Record] = []
    for lang in LANGS:
        for rec in _bases(home_assistant, lang, True, PER_LANG):
            pair = _h(rec["id"])[:12]
            events = set(rec["labels"]["events"])
            lacking = [t for t in EXPOSED if not serving(t) & events]
            out.append(_turn(rec, pair, "offered", list(EXPOSED)))
            out.append(_turn(rec, pair, "lacking", lacking))
        for rec in _bases(home_assistant, lang, False, PLAIN_PER_LANG):
            out.append(_turn(rec, _h(rec["id"])[:12], "plain", list(EXPOSED)))
    return sorted(out, key=lambda r: r["id"])
