"""Label one chunk of input rows: classify, escalate ask-band turns, serialise, count.

What a labeling worker runs, whichever engine holds it: :mod:`.pipeline` calls it in
worker processes, :mod:`.ray_engine` in Ray actors. It needs only a loaded gate (and the
run's escalator, if any), so neither engine has to import the other. The escalation count
uses the same ask-band rule as the escalator (:func:`gatecli.records.escalates`), so
``label`` reports what ``classify`` would send. Left out: reading inputs, committing parts.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gatecli.labeling import review
from gatecli.records import ASK_MARGIN, escalates

if TYPE_CHECKING:
    from gatecli.gate import Gate
    from gatecli.llm.escalate import Escalator

# One input item: (line, record or None, error row or None, file index or None).
Item = tuple[int, "dict[str, Any] | None", "dict[str, Any] | None", "int | None"]


def label_chunk(
    gate: Gate, items: Sequence[Item], review_size: int, escalator: Escalator | None = None
) -> tuple[str, dict[str, Any]]:
    """Label one chunk: JSONL text in input order plus its stats (and review candidates).

    With an ``escalator`` the ask-band turns go to its LLM exactly as in ``classify``;
    ``stats["escalated"]`` counts the ones the LLM answered.

    Example:
        >>> items = [(1, {"user_message": "hi"}, None, None)]
        >>> text, stats = label_chunk(gate, items, 10)  # doctest: +SKIP
        >>> stats["rows"]  # doctest: +SKIP
        1
    """
    from gatecli.llm.escalate import attach_escalation

    if escalator is not None:
        margin = escalator.ask_margin
    else:
        margin = float(gate.config.escalation.get("ask_margin", ASK_MARGIN))
    records = [it[1] for it in items if it[1] is not None]
    batch = gate.classify_batch(records) if records else []
    results = iter(attach_escalation(records, batch, escalator) if escalator else batch)
    lines: list[str] = []
    decisions: Counter[str] = Counter()
    errors = escalations = escalated = 0
    cands: list[dict[str, Any]] = []
    for line, rec, err, src in items:
        if rec is None:
            row = dict(err or {})
        else:
            res = next(results)
            row = {"id": res.get("id"), "line": line, **res}
            if "error" not in res:
                decisions[res["decision"]] += 1
                escalations += escalates(res, margin)
                escalated += (res.get("fallback") or {}).get("status") == "ok"
                if review_size:
                    cands.append(review.candidate(rec, res, line, gate.catalog))
        if src is not None:
            row["input_file"] = src
        errors += "error" in row
        lines.append(json.dumps(row, ensure_ascii=False))
    stats = {
        "rows": len(items), "errors": errors, "decisions": dict(decisions),
        "escalations": escalations, "escalated": escalated,
        "review": review.top_candidates(cands, review_size),
    }  # fmt: skip
    return "".join(s + "\n" for s in lines), stats
