"""The local coach: seed-000 fields for an ``ask`` turn from templates, without an LLM.

``ask`` is only useful with a question, and most deployments will run without an LLM,
so the question is built here deterministically from what the model predicted (the
missing slots, the top event score) and the language of the user's message. All texts
live in ``assets/coach_templates.yaml``; this module only chooses among them. Left out: any
generation; a template that does not fit is replaced by the generic one, never invented.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from typing import Any

from gatecli import yamlfile

TEMPLATES_FILE = "coach_templates.yaml"


@lru_cache(maxsize=1)
def templates() -> dict[str, Any]:
    """The parsed template file shipped as package data."""
    text = (resources.files("gatecli") / "assets" / TEMPLATES_FILE).read_text(encoding="utf-8")
    data: dict[str, Any] = yamlfile.safe_load(text)
    return data


def _language(lang: str | None, tpl: Mapping[str, Any]) -> str:
    return str(lang) if lang in tpl["languages"] else str(tpl["default_language"])


def _hint_event(result: Mapping[str, Any], tpl: Mapping[str, Any]) -> str | None:
    """The task the turn is about: an emitted event, else a strong enough event score."""
    for event in result.get("events") or []:
        if event in tpl["events"]:
            return str(event)
    floor = float(tpl.get("event_hint_min_score", 0.2))
    scores = result.get("event_scores") or {}
    for event, score in sorted(scores.items(), key=lambda kv: -kv[1]):
        if score >= floor and event in tpl["events"]:
            return str(event)
    return None


def order_slots(slots: list[str], tpl: Mapping[str, Any] | None = None) -> list[str]:
    """Known missing slots in asking order (``slot_priority``); unknown ones are dropped.

    Example:
        >>> order_slots(["content", "time", "nonsense"])
        ['time', 'content']
    """
    tpl = tpl or templates()
    prio = {s: i for i, s in enumerate(tpl["slot_priority"])}
    known = [s for s in dict.fromkeys(slots) if s in tpl["slots"]]
    return sorted(known, key=lambda s: prio.get(s, len(prio)))


def build_coach(
    lang: str | None, missing_slots: list[str], event: str | None = None
) -> dict[str, Any]:
    """The seed-000 coach fields for one language, missing-slot list and (optional) event.

    Example:
        >>> build_coach("fr", ["time"], "calendar.schedule.create")["highest_value_question"][
        ...     "question"]
        'À quelle heure dois-je le programmer ?'
    """
    tpl = templates()
    lang = _language(lang, tpl)
    slots = order_slots(missing_slots, tpl)
    generic = tpl["generic"][lang]
    ev = tpl["events"].get(event, {}).get(lang) if event else None
    task = ev or generic
    missing = [
        {
            "name": tpl["slots"][s][lang]["name"],
            "why_it_matters": tpl["slots"][s][lang]["why_it_matters"],
            "impact": tpl["slots"][s]["impact"],
            "ease_to_answer": tpl["slots"][s]["ease_to_answer"],
        }
        for s in slots
    ]
    if slots:
        top = tpl["slots"][slots[0]][lang]
        asked = (ev or {}).get("questions", {}).get(slots[0], {})
        question = {
            "question": asked.get("question", top["question"]),
            "options": list(asked.get("options", top["options"])),
            "optional_context": [tpl["slots"][s][lang]["name"] for s in slots[1:3]],
        }
        default_path = asked.get("default_path", top["default_path"])
    else:
        question = {
            "question": generic["question"],
            "options": list(generic["options"]),
            "optional_context": [],
        }
        default_path = generic["default_path"]
    return {
        "task_type": task["task_type"],
        "intended_deliverable": task["intended_deliverable"],
        "success_criteria": list(task["success_criteria"]),
        "missing_context": missing[:3],
        "highest_value_question": question,
        "default_path": default_path,
        "execution_brief": None,
    }


def local_coach(record: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any] | None:
    """``Gate(coach_fn=local_coach)``: template coach fields for ``ask``, else ``None``.

    Example:
        >>> local_coach({}, {"decision": "ask", "lang": "zh", "missing_slots": ["time"],
        ...     "event_scores": {"calendar.schedule.create": 0.6}})["highest_value_question"][
        ...     "question"]
        '要安排在什么时间？'
    """
    if result.get("decision") != "ask":
        return None
    tpl = templates()
    slots = list(result.get("missing_slots") or [])
    if not slots:
        slots = list((result.get("gate_validation") or {}).get("required_clarifications") or [])
    return build_coach(result.get("lang"), slots, _hint_event(result, tpl))
