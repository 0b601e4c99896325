"""Tool-list views of a corpus split: does the gate read ``available_tools``?

The corpus pairs a request with a list that serves it (``tools.offered`` -> execute) and with
one that does not (``tools.missing`` -> connect); plain answers (``tools.plain``) and asks
(``tools.ask``) keep their decision under a list, and catalog-name lists do the same with
event names (``catalog_list.offered`` / ``catalog_list.missing``). Decision accuracy per
rule, per language, and for search requests apart from the rest, because a search request
shares no word with the tool that serves it ("is it snowing" / ``duckduckgo_search``): until
this view, each release measured the pairs with a script of its own (README "Training",
1.2.40-1.2.43).

Turns are recognised by id (``augmented:<rule>:<base id>``, as the corpus writes them), and
the ``tools_home_assistant`` suite's (``tools_home_assistant:<pair>:<kind>``) as
``home_assistant.<kind>``: Home Assistant's intent-named tools (offered, lacking, plain).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

RULES = (
    "tools.offered",
    "tools.missing",
    "tools.plain",
    "tools.ask",
    "catalog_list.offered",
    "catalog_list.missing",
    "home_assistant.offered",
    "home_assistant.lacking",
    "home_assistant.plain",
)
HA_SUITE = "tools_home_assistant"
SEARCH = "knowledge.web.search"


def rule_of(turn_id: str) -> str | None:
    """The tool-list rule a corpus id names, or None.

    Example:
        >>> rule_of("augmented:tools.offered:hwu64:train:weather_query.3")
        'tools.offered'
        >>> rule_of("augmented:inv.tools_added:x") is None
        True
        >>> rule_of("tools_home_assistant:0a1b2c3d4e5f:lacking")
        'home_assistant.lacking'
    """
    parts = turn_id.split(":", 2)
    if len(parts) == 3 and parts[0] == "augmented" and parts[1] in RULES:
        return parts[1]
    if len(parts) == 3 and parts[0] == HA_SUITE and f"home_assistant.{parts[2]}" in RULES:
        return f"home_assistant.{parts[2]}"
    return None


def _accuracy(rows: list[dict[str, Any]]) -> dict[str, Any]:
    right = sum(t["pred"]["decision"] == t["gold"]["decision"] for t in rows)
    return {"n": len(rows), "decision_accuracy": right / len(rows)}


def tool_view(turns: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Decision accuracy per tool-list rule (by language, search apart); None without any.

    Example:
        >>> t = {"id": "augmented:tools.offered:a", "lang": "en", "error": None,
        ...      "gold": {"decision": "execute", "events": [SEARCH]},
        ...      "pred": {"decision": "connect", "events": [SEARCH]}}
        >>> v = tool_view([t])["tools.offered"]
        >>> v["decision_accuracy"], v["search"]["decision_accuracy"], v["other"]
        (0.0, 0.0, None)
    """
    by_rule: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in turns:
        rule = rule_of(str(t.get("id", "")))
        if rule and t.get("error") is None and t["gold"].get("decision") is not None:
            by_rule[rule].append(t)
    if not by_rule:
        return None
    out: dict[str, Any] = {}
    for rule in RULES:
        rows = by_rule.get(rule)
        if not rows:
            continue
        by_lang: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for t in rows:
            by_lang[t.get("lang") or "unknown"].append(t)
        search = [t for t in rows if t["gold"].get("events") == [SEARCH]]
        other = [t for t in rows if t["gold"].get("events") != [SEARCH]]
        out[rule] = {
            **_accuracy(rows),
            "by_lang": {k: _accuracy(v) for k, v in sorted(by_lang.items())},
            "search": _accuracy(search) if search else None,
            "other": _accuracy(other) if other else None,
        }
    return out


def views(turns: list[dict[str, Any]]) -> dict[str, Any]:
    """The view where tool-list turns are present (for :func:`scoring.suite_views`)."""
    v = tool_view(turns)
    return {"tool_lists": v} if v is not None else {}


def card_rows(suite: str, views_: dict[str, Any]) -> list[list[Any]]:
    """``[suite, measure, value]`` rows for the model card's benchmark-views table."""
    rows: list[list[Any]] = []
    for rule, r in (views_.get("tool_lists") or {}).items():
        value = f"{r['decision_accuracy']:.3f} (n={r['n']})"
        if r["search"] is not None:
            value += f"; search {r['search']['decision_accuracy']:.3f} (n={r['search']['n']})"
        rows.append([suite, f"tool lists · {rule}: decision accuracy", value])
    return rows
