"""The OpenAI moderation request and response shapes over gate records.

Clients that already call ``POST /v1/moderations`` (the OpenAI SDK, LiteLLM, LangChain's
moderation chain) read ``results[i].flagged`` and the per-category booleans and scores.
The gate does not score OpenAI's harm taxonomy; what it knows is its decision:
``flagged`` is true when the decision is ``refuse`` or ``safety``, the gate's own
categories ``gate/refuse`` and ``gate/safety`` carry that decision and its calibrated
probability, and OpenAI's category keys are present (``false``, ``0.0``, applied to no
input type) so that strict parsers accept the answer without the gate claiming a score it
never computed. The full gate record rides along under ``gate``.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from gatecli.serve.inputs import BodyError

FLAGGED_DECISIONS = ("refuse", "safety")
GATE_CATEGORIES = {"gate/refuse": "refuse", "gate/safety": "safety"}
OPENAI_CATEGORIES = (
    "harassment", "harassment/threatening", "hate", "hate/threatening", "illicit",
    "illicit/violent", "self-harm", "self-harm/instructions", "self-harm/intent", "sexual",
    "sexual/minors", "violence", "violence/graphic",
)  # fmt: skip
NOT_ESCALATED = {"status": "not_needed", "reason": "moderation requests are never escalated"}


def moderation_inputs(body: Any, *, max_records: int = 256) -> list[str]:
    """The texts of a moderation request: ``input`` as a string, a list of strings, or a
    list of ``{"type": "text", "text": ...}`` parts (one input, parts joined).

    Example:
        >>> moderation_inputs({"input": ["hi", "turn it up"], "model": "any"})
        ['hi', 'turn it up']
    """
    if not isinstance(body, Mapping) or "input" not in body:
        raise BodyError('a moderation request is a JSON object with "input"', code="bad_shape")
    raw = body["input"]
    if isinstance(raw, str):
        texts = [raw]
    elif isinstance(raw, list) and raw and all(isinstance(x, str) for x in raw):
        texts = list(raw)
    elif isinstance(raw, list) and raw and all(isinstance(x, Mapping) for x in raw):
        kinds = {str(p.get("type")) for p in raw}
        if kinds != {"text"} or not all(isinstance(p.get("text"), str) for p in raw):
            raise BodyError(
                "only text parts are supported: the gate does not read images", code="bad_input"
            )
        texts = [" ".join(str(p["text"]) for p in raw)]
    else:
        raise BodyError(
            "input must be a string, a non-empty list of strings, or a list of text parts",
            code="bad_input",
        )
    if len(texts) > max_records:
        raise BodyError(
            f"{len(texts)} inputs in one request; the limit is {max_records} (--max-records)",
            code="too_many_records",
            status=413,
        )
    return texts


def moderation_result(record: Mapping[str, Any]) -> dict[str, Any]:
    """One ``results[]`` entry from one gate record."""
    decision = record.get("decision")
    probs: Mapping[str, float] = record.get("probabilities") or {}
    categories: dict[str, bool] = dict.fromkeys(OPENAI_CATEGORIES, False)
    scores: dict[str, float] = dict.fromkeys(OPENAI_CATEGORIES, 0.0)
    applied: dict[str, list[str]] = {c: [] for c in OPENAI_CATEGORIES}
    for key, label in GATE_CATEGORIES.items():
        categories[key] = decision == label
        scores[key] = float(probs.get(label, 0.0))
        applied[key] = ["text"]
    return {
        "flagged": decision in FLAGGED_DECISIONS,
        "categories": categories,
        "category_scores": scores,
        "category_applied_input_types": applied,
        "gate": {**record, "fallback": dict(NOT_ESCALATED)},
    }


def moderation_response(model_id: str, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The response body; raises :class:`BodyError` naming the first input the gate could
    not read (an empty string): an unread input is never reported as unflagged.

    Example:
        >>> r = moderation_response("gate-small@1.1.0", [{"decision": "safety",
        ...     "probabilities": {"safety": 0.93}}])
        >>> r["results"][0]["flagged"], r["results"][0]["category_scores"]["gate/safety"]
        (True, 0.93)
    """
    for i, rec in enumerate(records):
        if "error" in rec:
            raise BodyError(f"input[{i}]: {rec['error']}", code="bad_input")
    return {
        "id": f"modr-{uuid.uuid4().hex}",
        "model": model_id,
        "results": [moderation_result(r) for r in records],
    }
