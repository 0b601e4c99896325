"""Views of the ``invariance`` and ``context`` suites (issue 12): is the gate context-true?

- invariance: for every pair (a base turn and one transformed copy that must get the same
  answer) a *decision flip* (the predicted decision differs) and an *event-set flip* (the
  predicted event sets differ), reported per transformation. The comparison is between the
  two predictions, not against gold, so it measures consistency even where both are wrong.
- context: decision accuracy and events exact match per language, on turns whose earlier
  turns decide the answer.

Turns are recognised by id (``invariance:<pair>:<transform>``, ``context:<id>``): the
evaluation keeps a record's id but not its extra keys. Plain dicts in, plain dicts out.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from gatecli.evaluation.boundary_views import BLOCKING

MAX_EXAMPLES = 10


def _parse_invariance(turn_id: str) -> tuple[str, str] | None:
    parts = turn_id.split(":")
    return (parts[1], parts[2]) if len(parts) == 3 and parts[0] == "invariance" else None


def invariance_view(turns: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Flip rates per transformation; None when the turns hold no invariance pair.

    Example:
        >>> base = {"id": "invariance:p1:base", "error": None, "message": "hi",
        ...         "pred": {"decision": "execute", "events": []}}
        >>> var = {**base, "id": "invariance:p1:case", "pred": {"decision": "ask", "events": []}}
        >>> invariance_view([base, var])["per_transform"]["case"]["decision_flip_rate"]
        1.0
    """
    pairs: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for t in turns:
        key = _parse_invariance(str(t.get("id", "")))
        if key is not None and t.get("error") is None:
            pairs[key[0]][key[1]] = t
    per: dict[str, dict[str, Any]] = {}
    for pair, members in sorted(pairs.items()):
        base = members.get("base")
        if base is None:
            continue
        for kind, var in sorted(members.items()):
            if kind == "base":
                continue
            row = per.setdefault(kind, {"n": 0, "decision_flips": 0, "event_flips": 0,
                                        "to_risky": 0, "examples": []})  # fmt: skip
            dflip = var["pred"]["decision"] != base["pred"]["decision"]
            eflip = sorted(var["pred"]["events"]) != sorted(base["pred"]["events"])
            row["n"] += 1
            row["decision_flips"] += dflip
            row["event_flips"] += eflip
            # The flips a user pays for most: an answered turn blocked or routed to safety.
            row["to_risky"] += (
                base["pred"]["decision"] not in BLOCKING and var["pred"]["decision"] in BLOCKING
            )
            if (dflip or eflip) and len(row["examples"]) < MAX_EXAMPLES:
                row["examples"].append({
                    "pair": pair, "base": base["message"], "variant": var["message"],
                    "base_pred": [base["pred"]["decision"], base["pred"]["events"]],
                    "variant_pred": [var["pred"]["decision"], var["pred"]["events"]],
                })  # fmt: skip
    if not per:
        return None
    for row in per.values():
        row["decision_flip_rate"] = row["decision_flips"] / row["n"]
        row["event_flip_rate"] = row["event_flips"] / row["n"]
        row["to_risky_rate"] = row["to_risky"] / row["n"]
    n = sum(r["n"] for r in per.values())
    return {
        "n_pairs": n,
        "decision_flip_rate": sum(r["decision_flips"] for r in per.values()) / n,
        "event_flip_rate": sum(r["event_flips"] for r in per.values()) / n,
        "to_risky_rate": sum(r["to_risky"] for r in per.values()) / n,
        "max_flip_rate": max(
            max(r["decision_flip_rate"], r["event_flip_rate"]) for r in per.values()
        ),  # fmt: skip
        "per_transform": dict(sorted(per.items())),
    }


def _scores(rows: list[dict[str, Any]]) -> dict[str, Any]:
    dec = [t for t in rows if t["gold"]["decision"] is not None]
    ev = [t for t in rows if t["gold"]["events"] is not None]
    return {
        "n": len(rows),
        "decision_n": len(dec),
        "decision_accuracy": sum(t["pred"]["decision"] == t["gold"]["decision"] for t in dec)
        / len(dec) if dec else None,
        "events_n": len(ev),
        "events_exact": sum(sorted(t["pred"]["events"]) == sorted(t["gold"]["events"])
                            for t in ev) / len(ev) if ev else None,
    }  # fmt: skip


def context_view(turns: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Decision accuracy and events exact match, overall and per language.

    Example:
        >>> t = {"id": "context:x", "lang": "fr", "error": None,
        ...      "gold": {"decision": "execute", "events": ["alarm.set"]},
        ...      "pred": {"decision": "execute", "events": []}}
        >>> context_view([t])["by_lang"]["fr"]["events_exact"]
        0.0
    """
    rows = [t for t in turns if str(t.get("id", "")).startswith("context:")]
    ok = [t for t in rows if t.get("error") is None]
    if not ok:
        return None
    by_lang: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in ok:
        by_lang[t.get("lang") or "unknown"].append(t)
    return {**_scores(ok), "errors": len(rows) - len(ok),
            "by_lang": {k: _scores(v) for k, v in sorted(by_lang.items())}}  # fmt: skip


def views(turns: list[dict[str, Any]]) -> dict[str, Any]:
    """Both views where their turns are present (for :func:`scoring.suite_views`)."""
    out = {"invariance": invariance_view(turns), "context": context_view(turns)}
    return {k: v for k, v in out.items() if v is not None}


def card_rows(suite: str, views_: dict[str, Any]) -> list[list[Any]]:
    """``[suite, measure, value]`` rows for the model card's benchmark-views table."""
    rows: list[list[Any]] = []
    inv = views_.get("invariance")
    for kind, r in (inv or {}).get("per_transform", {}).items():
        rows.append([suite, f"invariance flip rate · {kind} (decision / events, n={r['n']})",
                     f"{r['decision_flip_rate']:.3f} / {r['event_flip_rate']:.3f}"])  # fmt: skip
        if r.get("to_risky"):
            rows.append([suite, f"invariance · {kind}: answered turn now refuse/safety",
                         f"{r['to_risky_rate']:.3f} ({r['to_risky']} of {r['n']})"])  # fmt: skip
    for lang, r in (views_.get("context") or {}).get("by_lang", {}).items():
        acc, ev = r["decision_accuracy"], r["events_exact"]
        rows.append([suite, f"context · {lang} decision accuracy / events exact (n={r['n']})",
                     f"{acc if acc is None else round(acc, 3)} / "
                     f"{ev if ev is None else round(ev, 3)}"])  # fmt: skip
    return rows
