"""Request bodies to the rows ``gatecli classify`` reads, and back to the rows it writes.

A ``POST /v1/classify`` body is one gate-input record, one chat conversation (OpenAI
messages shape) or ``{"records": [...]}`` holding either kind; each element is what one
JSONL line is to ``classify``, and ``line`` in the answer is its 1-based position. The
per-element rules are those of :func:`gatecli.readers.read_jsonl` (``fmt="auto"``): a chat
object yields one row per user turn, anything unreadable an error row in its place, and
:func:`assemble` is ``classify_stream``'s own merge, so a served row is the row
``classify`` writes for the same line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gatecli.readers import RowError, chat_turns, validate_record

Row = tuple[int, "dict[str, Any] | RowError"]


class BodyError(ValueError):
    """The body as a whole is not a request this endpoint takes (HTTP 4xx)."""

    def __init__(self, message: str, *, code: str = "bad_request", status: int = 400) -> None:
        super().__init__(message)
        self.code, self.status = code, status


def _element_rows(line: int, obj: Any, last: bool) -> Iterator[Row]:
    if isinstance(obj, Mapping) and "messages" in obj and "user_message" not in obj:
        for turn in chat_turns(obj, last=last):
            yield line, turn
        return
    err = validate_record(obj)
    if err is None:
        yield line, obj
    else:
        rid = obj.get("id") if isinstance(obj, Mapping) else None
        yield line, RowError(err, rid if isinstance(rid, (str, int)) else None)


def classify_rows(
    body: Any, *, last: bool = False, max_records: int = 256
) -> tuple[list[Row], bool]:
    """The rows of a classify body, and whether it was one bare gate-input record.

    Raises :class:`BodyError` for a body that is no request (a JSON array, a string, a
    ``records`` that is not a list) and for more than ``max_records`` turns.

    Example:
        >>> rows, single = classify_rows({"records": [{"user_message": "hi"}, 3]})
        >>> [(n, type(r).__name__) for n, r in rows], single
        ([(1, 'dict'), (2, 'RowError')], False)
    """
    if not isinstance(body, Mapping):
        raise BodyError(
            'send one gate-input record, one chat conversation or {"records": [...]} '
            f"as a JSON object, not a JSON {_json_type(body)}",
            code="bad_shape",
        )
    single = "records" not in body and not ("messages" in body and "user_message" not in body)
    elements = body.get("records", [body])
    if not isinstance(elements, list):
        raise BodyError(f"records must be a list, got {_json_type(elements)}", code="bad_shape")
    if len(elements) > max_records:
        raise BodyError(
            f"{len(elements)} records in one request; the limit is {max_records} "
            "(--max-records): split the request",
            code="too_many_records",
            status=413,
        )
    rows: list[Row] = []
    for n, obj in enumerate(elements, 1):
        rows.extend(_element_rows(n, obj, last))
        if len(rows) > max_records:
            raise BodyError(
                f"more than {max_records} turns in one request (--max-records counts every "
                "user turn of a chat conversation): split the request or pass ?last=true",
                code="too_many_records",
                status=413,
            )
    return rows, single


def valid_records(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """The readable rows' records, in order (what ``classify`` hands ``classify_batch``)."""
    return [r for _, r in rows if not isinstance(r, RowError)]


def assemble(rows: Sequence[Row], results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``classify_stream``'s merge: results for readable rows, error records in place.

    Example:
        >>> rows = [(1, {"user_message": "hi"}), (2, RowError("empty line"))]
        >>> for row in assemble(rows, [{"id": None, "decision": "execute"}]):
        ...     print(row)
        {'id': None, 'line': 1, 'decision': 'execute'}
        {'id': None, 'line': 2, 'error': 'empty line'}
    """
    out: list[dict[str, Any]] = []
    results_iter = iter(results)
    for line, r in rows:
        if isinstance(r, RowError):
            out.append(r.to_json(line))
        else:
            res = next(results_iter)
            out.append({"id": res.get("id"), "line": line, **res})
    return out


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return "number" if isinstance(value, (int, float)) else type(value).__name__
