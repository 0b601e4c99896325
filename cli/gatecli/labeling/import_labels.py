"""``gatecli data import-labels``: reviewed Label Studio tasks back into spec §6 corpus records.

Reads a Label Studio JSON export (a list of tasks, each with ``data`` and ``annotations``)
of a queue written by ``gatecli label --review-queue``. The newest annotation that was not
cancelled wins; its ``choices`` per control name (``decision``, ``events``,
``scenario_tags``, ``missing_slots``) become the labels. A reviewer sees every head in one
form, so a head with no choice selected means "none" (``[]``), not unknown. Records get
``provenance: "authored"`` with ``note: "human review via Label Studio ..."``: the spec has
no ``reviewed`` provenance, and a human decided every label. A task without a decision is
reported and skipped, never turned into a guess. Left out: the command
(``gatecli data import-labels`` in :mod:`gatecli.commands.data`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gatecli.records import HEAD_NAMES


@dataclass
class ImportResult:
    """Records written, and the tasks skipped with why."""

    output: str
    records: int = 0
    skipped: list[dict[str, Any]] = field(default_factory=list)


def _annotation(task: Mapping[str, Any]) -> Mapping[str, Any] | None:
    anns = [a for a in task.get("annotations") or [] if not a.get("was_cancelled")]
    if not anns:
        return None
    newest: Mapping[str, Any] = max(
        anns,
        key=lambda a: (str(a.get("updated_at") or a.get("created_at") or ""), str(a.get("id"))),
    )
    return newest


def task_to_record(task: Mapping[str, Any], *, source: str = "review") -> dict[str, Any]:
    """One exported task as a §6 record; raises ``ValueError`` naming what is missing.

    Example:
        >>> t = {"id": 4, "data": {"text": "louder"}, "annotations": [{"result": [
        ...     {"from_name": "decision", "to_name": "text", "type": "choices",
        ...      "value": {"choices": ["execute"]}}]}]}
        >>> task_to_record(t)["labels"]["decision"], task_to_record(t)["labels"]["events"]
        ('execute', [])
    """
    from gatecli.langid import detect

    data = task.get("data") or {}
    ann = _annotation(task)
    if ann is None:
        raise ValueError("no annotation (or all cancelled)")
    chosen: dict[str, list[str]] = {}
    for item in ann.get("result") or []:
        if item.get("type") == "choices" and item.get("from_name") in HEAD_NAMES:
            chosen[item["from_name"]] = [str(c) for c in item.get("value", {}).get("choices", [])]
    if not chosen.get("decision"):
        raise ValueError("annotation has no decision")
    rec = data.get("input") if isinstance(data.get("input"), Mapping) else None
    inp = dict(rec) if rec else {"user_message": data.get("text", "")}
    if not isinstance(inp.get("user_message"), str) or not inp["user_message"].strip():
        raise ValueError("task has no user message")
    if not rec and data.get("context"):
        inp["conversation_context"] = data["context"]
    key = inp.get("id") if inp.get("id") is not None else task.get("id")
    who = ann.get("completed_by")
    return {
        "id": f"{source}:{key if key is not None else data.get('line')}",
        "source": source,
        "split": "train",
        "lang": detect(inp["user_message"]),
        "input": inp,
        "labels": {
            "decision": chosen["decision"][0],
            "events": chosen.get("events", []),
            "scenario_tags": chosen.get("scenario_tags", []),
            "missing_slots": chosen.get("missing_slots", []),
        },
        "provenance": "authored",
        "note": "human review via Label Studio"
        + (f" (task {task.get('id')}, annotator {who})" if who is not None else ""),
    }


def import_labels(path: str | Path, output: str | Path, *, source: str = "review") -> ImportResult:
    """Convert a Label Studio export file into a §6 JSONL corpus file.

    Example:
        >>> import_labels("export.json", "data/authored/reviewed.jsonl").records  # doctest: +SKIP
        42
    """
    from gatecli.labeling.store import atomic_write

    tasks = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(tasks, Mapping):
        tasks = [tasks]
    if not isinstance(tasks, list):
        raise ValueError(f"{path}: expected a Label Studio JSON export (a list of tasks)")
    result = ImportResult(output=str(output))
    lines = []
    for k, task in enumerate(tasks):
        try:
            lines.append(json.dumps(task_to_record(task, source=source), ensure_ascii=False))
        except (ValueError, AttributeError, TypeError) as exc:
            result.skipped.append({"task": task.get("id", k) if isinstance(task, Mapping) else k,
                                   "error": str(exc)})  # fmt: skip
    atomic_write(Path(output), "".join(s + "\n" for s in lines).encode("utf-8"))
    result.records = len(lines)
    return result
