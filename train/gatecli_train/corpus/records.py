"""The labeled-turn record of spec §6, text normalisation and the catalog's label sets.

Every mapper builds records through :func:`make_record` so that the shape (and the rule that an
unknown head is ``None``, never ``[]``) lives in one place.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

import yaml

from gatecli.artifact import DEFAULT_CATALOG

CATALOG_PATH = DEFAULT_CATALOG
PROVENANCES = ("mapped", "augmented", "authored")
SPLITS = ("train", "dev", "test", "eval_only")
# Accounts put into connected_accounts so that an account-bound event is executable.
ACCOUNT_FOR_SYSTEM = {"calendar": "google_calendar", "email": "gmail", "social": "twitter"}


@lru_cache(maxsize=1)
def catalog() -> dict[str, Any]:
    """Load the default catalog once; labels are checked against it.

    Example:
        >>> "alarm.set" in {e["name"] for e in catalog()["events"]}
        True
    """
    return yaml.safe_load(CATALOG_PATH.read_text(encoding="utf-8"))


def event_names() -> set[str]:
    return {e["name"] for e in catalog()["events"]}


def event_requires(event: str) -> list[str]:
    """Systems an event needs connected (calendar, email, social)."""
    for e in catalog()["events"]:
        if e["name"] == event:
            return list(e.get("requires", []))
    raise KeyError(event)


_DROP = {"P", "Z", "S", "C"}


def normalise(text: str) -> str:
    """Key used for dedup and leakage: NFKC, casefold, no punctuation, symbols or spaces.

    Example:
        >>> normalise("Set an  alarm, please!") == normalise("set an alarm please")
        True
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in text if unicodedata.category(ch)[0] not in _DROP)


def clean_text(text: str) -> str:
    """Collapse whitespace: sources carry tabs, double spaces and trailing blanks."""
    return re.sub(r"\s+", " ", text).strip()


def make_record(
    *,
    rid: str,
    source: str,
    lang: str,
    message: str,
    decision: str | None,
    events: list[str] | None,
    tags: list[str] | None,
    slots: list[str] | None,
    note: str,
    group: str,
    provenance: str = "mapped",
    split: str | None = None,
    context: Any = None,
    accounts: list[str] | None = None,
    tools: list[Any] | None = None,
) -> dict[str, Any]:
    """Build one spec §6 record; ``None`` for a head means "unknown" (the loss is masked).

    Example:
        >>> r = make_record(rid="x:train:1", source="x", lang="en", message="hi",
        ...     decision="execute", events=[], tags=["chitchat"], slots=[], note="n", group="g")
        >>> r["labels"]["events"]
        []
    """
    inp: dict[str, Any] = {"user_message": clean_text(message)}
    if context:
        inp["conversation_context"] = context
    if accounts:
        inp["connected_accounts"] = sorted(accounts)
    if tools:
        inp["available_tools"] = tools
    return {
        "id": rid,
        "source": source,
        "split": split,
        "lang": lang,
        "input": inp,
        "labels": {
            "decision": decision,
            "events": None if events is None else sorted(set(events)),
            "scenario_tags": None if tags is None else sorted(set(tags)),
            "missing_slots": None if slots is None else sorted(set(slots)),
        },
        "provenance": provenance,
        "note": note,
        "group": group,
    }


def validate(rec: dict[str, Any]) -> list[str]:
    """Problems with a record against spec §6 and the catalog (empty list when valid).

    Example:
        >>> validate({"id": "x"})[:1]
        ['missing field source']
    """
    cat = catalog()
    errs = [
        f"missing field {k}"
        for k in ("source", "split", "lang", "input", "labels", "provenance", "note", "group")
        if k not in rec
    ]
    if errs:
        return errs
    if rec["split"] not in SPLITS:
        errs.append(f"bad split {rec['split']}")
    if rec["provenance"] not in PROVENANCES:
        errs.append(f"bad provenance {rec['provenance']}")
    msg = rec["input"].get("user_message")
    if not isinstance(msg, str) or not msg.strip():
        errs.append("empty user_message")
    lab = rec["labels"]
    if lab.get("decision") not in (*cat["decisions"], None):
        errs.append(f"bad decision {lab.get('decision')}")
    allowed = {
        "events": event_names(),
        "scenario_tags": set(cat["scenario_tags"]),
        "missing_slots": set(cat["missing_slots"]),
    }
    for head, names in allowed.items():
        val = lab.get(head, "absent")
        if val is None:
            continue
        if not isinstance(val, list) or any(v not in names for v in val):
            errs.append(f"bad {head} {val}")
    if lab.get("decision") in ("ask", "refuse", "safety") and lab.get("events"):
        errs.append("events on a non-execute decision")
    return errs
