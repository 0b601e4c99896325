"""The ``tools_catalog`` eval suite: tool lists written in the catalog's own event names.

Why (issue 14): the spec's input example lists its tools as catalog events
(``"available_tools": ["device.volume.adjust", "knowledge.web.search"]``), the form an agent
writes when it builds its tool list from the catalog that ships with the model. Such a list
is closed: a request whose event it does not name has no tool, whatever the model thinks of
the request. The corpus's tool lists are developer-style names (``tools_variation``), and no
suite held a catalog-name list, so nobody measured whether the gate reads one. gate-small
1.2.26 read 83% of English and 61% of Chinese and French requests as ``connect`` when the
catalog-name list lacked their event (150 test turns a language, a probe of 2026-12-05).

Pairs from the corpus test split (requests the catalog's tools serve: ``execute`` with known
events that :data:`tool_names.FAMILY` places in a tool family, no tool list and no earlier
turns), up to :data:`PER_LANG` a language, drawn round-robin over event sets so web search
does not crowd out the rest. Each base gives two turns:

- ``offered``: the base's events plus two catalog events of other families -> the base's
  labels (a list that offers the request changes nothing);
- ``lacking``: three catalog events of families other than the base's -> ``connect``, events,
  tags and slots unchanged (the corpus's ``tools.missing`` rule).

Ids are ``tools_catalog:<pair>:<kind>``; ``source`` is ``tools_catalog``; gold labels come from
the rule above, not from a person (``label_rule`` in the note says which).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Any

from gatecli_train.corpus.draws import interleave
from gatecli_train.corpus.tool_names import FAMILY

Record = dict[str, Any]
PER_LANG = 120
TRAIN_PER_LANG = 150
LANGS = ("en", "zh", "fr")
SUITE = "tools_catalog"


def _h(key: str) -> str:
    return hashlib.sha256(f"{SUITE}:{key}".encode()).hexdigest()


def _bases(records: list[Record], lang: str, split: str, n: int) -> list[Record]:
    """Round-robin over event sets, each set's turns in hashed order (deterministic)."""
    groups: dict[tuple[str, ...], list[Record]] = defaultdict(list)
    for r in records:
        lab, inp = r["labels"], r["input"]
        if (
            r["split"] == split and r["lang"] == lang
            and r["provenance"] in ("mapped", "authored")
            and lab["decision"] == "execute" and lab["events"]
            and all(e in FAMILY for e in lab["events"])
            and not inp.get("available_tools") and not inp.get("conversation_context")
        ):  # fmt: skip
            groups[tuple(lab["events"])].append(r)
    # each queue in hashed order, read from its end by interleave
    queues = [sorted(v, key=lambda r: _h(r["id"]), reverse=True) for _, v in sorted(groups.items())]
    return interleave(queues, n)


def _others(events: list[str], catalog_events: list[str], key: str, n: int) -> list[str]:
    """``n`` catalog events of no family of ``events``, chosen by a hash of ``key``."""
    banned = {FAMILY[e] for e in events}
    pool = [e for e in catalog_events if e in FAMILY and FAMILY[e] not in banned]
    return sorted(pool, key=lambda e: _h(f"{key}:{e}"))[:n]


def _lists(
    events: list[str], catalog_events: list[str], key: str, n_offered: int, n_lacking: int
) -> tuple[list[str], list[str]]:
    """An offering list (``events`` and ``n_offered`` others, in hashed order) and a lacking
    one (``n_lacking`` others), both of catalog events of no family of ``events``."""
    offered = sorted(events + _others(events, catalog_events, f"{key}:o", n_offered),
                     key=lambda e: _h(f"{key}:{e}"))  # fmt: skip
    return offered, _others(events, catalog_events, f"{key}:l", n_lacking)


def suite_turn(
    suite: str, rec: Record, pair: str, kind: str, tools: list[str], same: str
) -> Record:
    """One turn of a tool-list eval suite (``<suite>:<pair>:<kind>``): ``rec`` under ``tools``;
    a ``lacking`` turn is ``connect`` (rule ``tools.missing``), any other keeps its labels
    (rule ``same``, said in the note)."""
    labels = dict(rec["labels"])
    rule = "tools.missing" if kind == "lacking" else same
    if kind == "lacking":
        labels["decision"] = "connect"
    return {
        **rec, "id": f"{suite}:{pair}:{kind}", "source": suite, "split": "eval_only",
        "provenance": "augmented", "group": f"{suite}:{pair}", "labels": labels,
        "input": {**rec["input"], "available_tools": tools},
        "note": f"{suite} {kind} of {rec['id']} ({rec['source']}); label_rule: {rule}",
    }  # fmt: skip


def _turn(rec: Record, pair: str, kind: str, tools: list[str]) -> Record:
    return suite_turn(SUITE, rec, pair, kind, tools, "same labels: the list offers the request")


def suite(records: list[Record], catalog_events: list[str]) -> list[Record]:
    """Offered and lacking turns (see module doc) from ``records``' test split.

    Example:
        >>> rec = {"id": "a:1", "split": "test", "lang": "en", "provenance": "mapped",
        ...        "source": "a", "group": "a:1", "input": {"user_message": "louder"},
        ...        "labels": {"decision": "execute", "events": ["device.volume.adjust"],
        ...                   "scenario_tags": [], "missing_slots": []}}
        >>> out = suite([rec], ["device.volume.adjust", "media.play", "alarm.set", "alarm.manage"])
        >>> [(r["id"].split(":")[2], r["labels"]["decision"], len(r["input"]["available_tools"]))
        ...  for r in out]
        [('lacking', 'connect', 3), ('offered', 'execute', 3)]
    """
    out: list[Record] = []
    for lang in LANGS:
        for rec in _bases(records, lang, "test", PER_LANG):
            pair = _h(rec["id"])[:12]
            offered, lacking = _lists(list(rec["labels"]["events"]), catalog_events, pair, 2, 3)
            out.append(_turn(rec, pair, "offered", offered))
            out.append(_turn(rec, pair, "lacking", lacking))
    return sorted(out, key=lambda r: r["id"])


def vary(records: list[Record], catalog_events: list[str]) -> list[Record]:
    """Training turns of the same two kinds, from train-split requests only.

    Until corpus 1.2.28 the 364 train turns with a catalog-name list all offered the request
    (authored connect/events files, account-alias variants), so a list in the catalog's
    names read as "the tool is there". Up to :data:`TRAIN_PER_LANG` requests a language,
    each once with an offering list (its events and one to three catalog events of other
    families) and once with a lacking one (two to four catalog events of other families;
    rule ``catalog_list.missing`` -> ``connect``). Dev and test get
    none: the ``tools_catalog`` suite measures the same thing on test requests, and leaving
    those splits alone keeps every earlier dev/test number comparable.
    """
    out: list[Record] = []
    for lang in LANGS:
        for rec in _bases(records, lang, "train", TRAIN_PER_LANG):
            key = _h(f"train:{rec['id']}")
            n_other = 1 + int(key[:2], 16) % 3  # 1-3 other events, 2-4 names in all
            events = list(rec["labels"]["events"])
            offered, lacking = _lists(events, catalog_events, key, n_other, 1 + n_other)
            for kind, tools in (("offered", offered), ("missing", lacking)):
                labels = dict(rec["labels"])
                if kind == "missing":
                    labels["decision"] = "connect"
                out.append({
                    **rec, "id": f"augmented:catalog_list.{kind}:{rec['id']}",
                    "provenance": "augmented", "labels": labels,
                    "input": {**rec["input"], "available_tools": tools},
                    "note": f"catalog-name tool list, rule catalog_list.{kind}, on {rec['id']}",
                })  # fmt: skip
    return out
