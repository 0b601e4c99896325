"""Choose the turns a person should label next, and write them as Label Studio tasks.

Uncertainty has three signals, because a low margin alone misses confident contradictions:
the decision margin (top-1 minus top-2 probability), heads that disagree (a non-execute
decision while the events head still scores an event, or an execute with a high-risk event
whose required slot is reported missing), and an escalation-band turn. Each chunk keeps
only its best candidates per predicted decision (:func:`top_candidates`), so the final
queue (:func:`select`) is built in constant memory from every part. The queue is Label
Studio's task import JSON (``data`` + ``predictions`` with ``choices`` results) with a
labeling config whose ``Choices`` names match the results' ``from_name``. Left out:
reading annotations back (:mod:`.import_labels`).
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

# Label Studio control names (from_name) and the object they label (to_name).
TEXT_NAME = "text"
CONTEXT_NAME = "context"
HEAD_CONTROLS = {
    "decision": "single",
    "events": "multiple",
    "scenario_tags": "multiple",
    "missing_slots": "multiple",
}
EVENT_DISAGREE = 0.5  # an event scored this high under a no-event decision is a disagreement


def uncertainty(result: Mapping[str, Any], catalog: Any = None) -> tuple[float, list[str]]:
    """A score (higher = more worth a human look) and the reasons behind it.

    Example:
        >>> uncertainty({"decision": "ask", "probabilities": {"ask": 0.5, "execute": 0.45},
        ...              "event_scores": {"alarm.set": 0.9}, "events": []})
        (1.45, ['low_margin', 'decision_ask_but_events'])
    """
    probs = sorted(result.get("probabilities", {}).values(), reverse=True) + [0.0, 0.0]
    margin = probs[0] - probs[1]
    score, reasons = 1.0 - margin, []
    if margin < 0.2:
        reasons.append("low_margin")
    decision = result.get("decision")
    scores = result.get("event_scores", {})
    if decision != "execute" and any(s >= EVENT_DISAGREE for s in scores.values()):
        reasons.append(f"decision_{decision}_but_events")
    if decision == "execute" and catalog is not None:
        missing = set(result.get("missing_slots", []))
        for name in result.get("events", []):
            spec = catalog.event(name)
            if spec.risk == "high" and missing & set(spec.required_slots):
                reasons.append(f"execute_high_risk_{name}_missing_slot")
                break
    score += 0.5 * sum(r != "low_margin" for r in reasons)
    return round(score, 6), reasons


def candidate(
    record: Mapping[str, Any], result: Mapping[str, Any], line: int, catalog: Any = None
) -> dict[str, Any]:
    """What the queue needs of one turn: its input, the compact prediction and its score."""
    score, reasons = uncertainty(result, catalog)
    return {
        "score": score,
        "reasons": reasons,
        "line": line,
        "input": dict(record),
        "prediction": {
            "model": result.get("model"),
            "decision": result.get("decision"),
            "confidence": result.get("confidence"),
            "events": list(result.get("events", [])),
            "scenario_tags": list(result.get("scenario_tags", [])),
            "missing_slots": list(result.get("missing_slots", [])),
        },
    }


def top_candidates(cands: Iterable[dict[str, Any]], per_label: int) -> list[dict[str, Any]]:
    """Keep the ``per_label`` highest-scoring candidates of each predicted decision.

    Ties go to the earlier line, so the choice does not depend on chunking or workers.
    """
    heaps: dict[str, list[tuple[float, int, int, dict[str, Any]]]] = {}
    for k, c in enumerate(cands):
        h = heaps.setdefault(str(c["prediction"]["decision"]), [])
        item = (c["score"], -c["line"], -k, c)
        if len(h) < per_label:
            heapq.heappush(h, item)
        elif item[:3] > h[0][:3]:
            heapq.heapreplace(h, item)
    return [it[3] for h in heaps.values() for it in sorted(h, key=lambda it: it[:3], reverse=True)]


def select(
    pools: Iterable[Sequence[dict[str, Any]]], size: int, labels: Sequence[str]
) -> list[dict[str, Any]]:
    """The final queue: an equal quota per predicted decision, spare quota to the rest.

    Example:
        >>> c = lambda d, s, n: {"score": s, "line": n, "prediction": {"decision": d}}
        >>> [x["line"] for x in select([[c("ask", .9, 1), c("ask", .8, 2), c("execute", .1, 3)]],
        ...                            2, ["execute", "ask"])]
        [1, 3]
    """
    by_label: dict[str, list[dict[str, Any]]] = {}
    for pool in pools:
        for c in top_candidates(pool, size):
            by_label.setdefault(str(c["prediction"]["decision"]), []).append(c)
    for lab in by_label:
        by_label[lab] = top_candidates(by_label[lab], size)
    quota = max(1, size // max(1, len(labels)))
    chosen = [c for lab in by_label for c in by_label[lab][:quota]]
    spare = [c for lab in by_label for c in by_label[lab][quota:]]
    spare.sort(key=lambda c: (-c["score"], c["line"]))
    chosen += spare[: max(0, size - len(chosen))]
    chosen.sort(key=lambda c: (-c["score"], c["line"]))
    return chosen[:size]


def _context_text(ctx: Any) -> str:
    if isinstance(ctx, list):
        return "\n".join(
            f"{m.get('role', '?')}: {m.get('content', '')}" if isinstance(m, Mapping) else str(m)
            for m in ctx
        )
    return "" if ctx is None else str(ctx)


def to_task(cand: Mapping[str, Any]) -> dict[str, Any]:
    """One Label Studio task: ``data`` for the config's ``$text``/``$context`` and one
    prediction whose results are ``choices`` per head (empty heads are left out)."""
    pred = cand["prediction"]
    rec = cand["input"]
    result = []
    for head in HEAD_CONTROLS:
        values = [pred[head]] if head == "decision" else list(pred[head])
        if values and values[0] is not None:
            result.append(
                {"from_name": head, "to_name": TEXT_NAME, "type": "choices",
                 "value": {"choices": values}}
            )  # fmt: skip
    return {
        "data": {
            TEXT_NAME: rec.get("user_message", ""),
            CONTEXT_NAME: _context_text(rec.get("conversation_context")),
            "input": rec,
            "line": cand["line"],
            "uncertainty": cand["score"],
            "reasons": ", ".join(cand["reasons"]),
        },
        "predictions": [
            {
                "model_version": str(pred.get("model")),
                "score": pred.get("confidence"),
                "result": result,
            }
        ],  # fmt: skip
    }


def label_config(labels: Mapping[str, Sequence[str]]) -> str:
    """The Label Studio labeling config XML matching :func:`to_task` (one Choices per head).

    Example:
        >>> "<Choices name=\\"decision\\"" in label_config({"decision": ["execute", "ask"]})
        True
    """
    lines = [
        "<View>",
        '  <Header value="Earlier turns"/>',
        f'  <Text name="{CONTEXT_NAME}" value="${CONTEXT_NAME}"/>',
        '  <Header value="User turn"/>',
        f'  <Text name="{TEXT_NAME}" value="${TEXT_NAME}"/>',
    ]
    for head, choice in HEAD_CONTROLS.items():
        if head not in labels:
            continue
        req = ' required="true"' if head == "decision" else ""
        lines.append(f'  <Header value="{head}"/>')
        lines.append(
            f'  <Choices name="{head}" toName="{TEXT_NAME}" choice="{choice}" '
            f'showInLine="true"{req}>'
        )
        lines += [f"    <Choice value={quoteattr(str(v))}/>" for v in labels[head]]
        lines.append("  </Choices>")
    lines.append("</View>")
    return "\n".join(lines) + "\n"


def write_queue(
    path: str | Path, chosen: Sequence[Mapping[str, Any]], labels: Mapping[str, Sequence[str]]
) -> tuple[Path, Path]:
    """Write the task JSON and ``PATH.label_config.xml`` beside it; return both paths."""
    from gatecli.labeling.store import atomic_write

    path = Path(path)
    tasks = [to_task(c) for c in chosen]
    atomic_write(path, (json.dumps(tasks, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))
    config = path.with_name(path.name + ".label_config.xml")
    atomic_write(config, label_config(labels).encode("utf-8"))
    return path, config
