"""Turn transcript files into gate-input records (spec §1), one row per input row, streamed.

Every reader is a generator of ``(line, record | RowError)``: a row that cannot be read
becomes a :class:`RowError` in its place, never a gap, so outputs line up with inputs and
batch labeling can stream any size. ``line`` is the 1-based line of JSONL and text input,
the first line of a CSV row, the position of a conversation in a JSON array, or the
Parquet row number. A chat conversation yields one row per user turn (all of them, or the
last with ``last=True``). Problems with the input as a whole (missing file, unknown
format, missing column, no pyarrow) raise :class:`InputError` instead.
"""

from __future__ import annotations

import csv
import gzip
import io
import itertools
import json
import re
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

from gatecli.extras import install_hint
from gatecli.records import validate_record as validate_record  # re-exported

FORMATS = ("auto", "gate", "chat", "text", "csv", "parquet")
CHAT_FIELDS = ("connected_accounts", "available_files", "available_tools", "user_profile")
HISTORY_ROLES = ("user", "assistant")
TEXT_COLUMNS = ("user_message", "text", "message")
BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"


class InputError(ValueError):
    """The input as a whole cannot be read; the message is one line naming the fix."""


_SURROGATES = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class RowError:
    """One unreadable row, kept in place; ``turn_index`` is set for chat turns."""

    message: str
    id: Any = None
    turn_index: int | None = None

    def __post_init__(self) -> None:
        # The id is echoed in the error row, which must itself be writable as UTF-8 JSON:
        # an id with a lone surrogate (a "\ud800" escape, undecodable CSV bytes) keeps the
        # rest of its text, the surrogates shown as U+FFFD.
        if isinstance(self.id, str):
            object.__setattr__(self, "id", _SURROGATES.sub("\ufffd", self.id))

    def to_json(self, line: int | None) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "line": line, "error": self.message}
        if self.turn_index is not None:
            out["turn_index"] = self.turn_index
        return out


Row = tuple[int, "dict[str, Any] | RowError"]


def _checked(line: int, record: Any, turn_index: int | None = None) -> Row:
    err = validate_record(record)
    if err is None:
        return line, record
    rid = record.get("id") if isinstance(record, Mapping) else None
    return line, RowError(err, rid if isinstance(rid, (str, int)) else None, turn_index)


# --- chat (OpenAI messages shape) ------------------------------------------------------


def content_text(content: Any) -> str:
    """Text of an OpenAI message ``content``: a string or a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(p.get("text", "")) if isinstance(p, Mapping) else str(p)
            for p in content
            if isinstance(p, (Mapping, str))
        ).strip()
    return ""


def tool_names(tools: Any) -> list[str]:
    """Names of OpenAI ``tools`` (``{"type": "function", "function": {"name"}}``),
    legacy ``functions`` (``{"name"}``), built-in tools by their type when they have no name
    (the Responses API's ``{"type": "web_search_preview"}``) or plain strings.

    Why the type: a built-in tool is a tool the agent has; dropped, a list of one function
    and web search would read as lacking search, and the request would route to ``connect``.

    Example:
        >>> tool_names([{"type": "function", "function": {"name": "send_email"}},
        ...             {"type": "web_search_preview"}, "get_time", {"type": "function"}])
        ['send_email', 'web_search_preview', 'get_time']
    """
    names: list[str] = []
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, str):
            names.append(tool)
        elif isinstance(tool, Mapping):
            fn = tool.get("function")
            name = fn.get("name") if isinstance(fn, Mapping) else tool.get("name")
            kind = tool.get("type")
            if not name and kind != "function":
                name = kind
            if isinstance(name, str) and name:
                names.append(name)
    return names


def chat_turns(conversation: Any, *, last: bool = False) -> Iterator[dict[str, Any] | RowError]:
    """One gate-input record per user turn, earlier user/assistant turns as context.

    ``turn_index`` is the index of the user message in ``messages`` (system and tool
    messages count for the index but are not context).

    Example:
        >>> conv = {"messages": [{"role": "user", "content": "hi"},
        ...                      {"role": "assistant", "content": "hello"},
        ...                      {"role": "user", "content": "louder"}]}
        >>> [t["turn_index"] for t in chat_turns(conv)]
        [0, 2]
    """
    if isinstance(conversation, list):
        conversation = {"messages": conversation}
    rid = conversation.get("id") if isinstance(conversation, Mapping) else None
    rid = rid if isinstance(rid, (str, int)) else None
    messages = conversation.get("messages") if isinstance(conversation, Mapping) else None
    if not isinstance(messages, list):
        yield RowError("chat record needs a messages list", rid)
        return
    base = {k: conversation[k] for k in CHAT_FIELDS if k in conversation}
    if "available_tools" not in base and ("tools" in conversation or "functions" in conversation):
        base["available_tools"] = tool_names(
            conversation.get("tools") or conversation.get("functions")
        )
    user_at = [
        i for i, m in enumerate(messages) if isinstance(m, Mapping) and m.get("role") == "user"
    ]
    if not user_at:
        yield RowError("chat record has no user turn", rid)
        return
    wanted = {user_at[-1]} if last else set(user_at)
    history: list[dict[str, str]] = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            if not last:
                yield RowError(f"messages[{i}] is not an object", rid, i)
            continue
        role, text = m.get("role"), content_text(m.get("content"))
        if i in wanted:
            record = {"id": rid, **base, "user_message": text, "turn_index": i}
            record["conversation_context"] = list(history)
            err = validate_record(record)
            yield record if err is None else RowError(err, rid, i)
        if role in HISTORY_ROLES and text.strip():
            history.append({"role": role, "content": text})


# --- line formats ----------------------------------------------------------------------


def _lines(stream: Iterable[bytes]) -> Iterator[tuple[int, str | RowError]]:
    for n, raw in enumerate(stream, 1):
        try:
            yield n, raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as exc:
            yield n, RowError(f"invalid UTF-8 at byte {exc.start}")


def _json_line(text: str) -> Any:
    if not text.strip():
        raise ValueError("empty line")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def read_jsonl(stream: Iterable[bytes], fmt: str = "auto", *, last: bool = False) -> Iterator[Row]:
    """Gate-input (``fmt="gate"``), chat (``"chat"``) or mixed (``"auto"``) JSONL.

    Example:
        >>> rows = list(read_jsonl([b'{"user_message": "hi"}\\n', b'{oops\\n']))
        >>> [type(r).__name__ for _, r in rows]
        ['dict', 'RowError']
    """
    for n, text in _lines(stream):
        if isinstance(text, RowError):
            yield n, text
            continue
        try:
            obj = _json_line(text)
        except ValueError as exc:
            yield n, RowError(str(exc))
            continue
        is_chat = isinstance(obj, Mapping) and "messages" in obj and "user_message" not in obj
        if fmt == "chat" or (fmt == "auto" and is_chat):
            for turn in chat_turns(obj, last=last):
                yield n, turn
        else:
            yield _checked(n, data_record_input(obj))


def data_record_input(obj: Any) -> Any:
    """The gate input of a labelled data record (spec §6: ``{"id", "input": {...},
    "labels"}``), with the record's id; anything else unchanged.

    Why: the corpus and the eval suites are data records, and classifying them directly (to
    compare a model with the labels, or to relabel) otherwise fails on every row with
    "missing user_message".

    Example:
        >>> data_record_input({"id": "x:1", "input": {"user_message": "hi"}, "labels": {}})
        {'user_message': 'hi', 'id': 'x:1'}
    """
    if isinstance(obj, Mapping) and "user_message" not in obj:
        inner = obj.get("input")
        if isinstance(inner, Mapping) and "user_message" in inner:
            out = dict(inner)
            if "id" in obj and "id" not in out:
                out["id"] = obj["id"]
            return out
    return obj


def read_text(stream: Iterable[bytes]) -> Iterator[Row]:
    """One user message per line; empty lines become error rows, not gaps."""
    for n, text in _lines(stream):
        yield (n, text) if isinstance(text, RowError) else _checked(n, {"user_message": text})


def chat_document(doc: Any, *, last: bool = False) -> Iterator[Row]:
    """A parsed JSON document: one conversation (object or bare message list), or a list
    of conversations (gate-input records are accepted among them)."""
    single = isinstance(doc, Mapping) or (
        isinstance(doc, list) and doc and all(isinstance(m, Mapping) and "role" in m for m in doc)
    )
    for n, conv in enumerate([doc] if single else doc if isinstance(doc, list) else [doc], 1):
        conv = data_record_input(conv)
        if isinstance(conv, Mapping) and "user_message" in conv and "messages" not in conv:
            yield _checked(n, conv)
            continue
        for turn in chat_turns(conv, last=last):
            yield n, turn


# --- tables ----------------------------------------------------------------------------


def _table_record(
    row: Mapping[str, Any], text_column: str, context_column: str | None
) -> dict[str, Any]:
    record: dict[str, Any] = {"user_message": row.get(text_column)}
    if row.get("id") not in (None, ""):
        record["id"] = row["id"]
    if context_column and row.get(context_column) not in (None, ""):
        record["conversation_context"] = row[context_column]
    return record


def _pick_column(columns: list[str], text_column: str | None, where: str) -> str:
    if text_column:
        if text_column not in columns:
            raise InputError(
                f"{where} has no column {text_column!r} (columns: {', '.join(columns)})"
            )
        return text_column
    for name in TEXT_COLUMNS:
        if name in columns:
            return name
    raise InputError(f"{where}: pass --text-column (columns: {', '.join(columns)})")


def read_csv(
    stream: BinaryIO, *, text_column: str | None = None, context_column: str | None = None
) -> Iterator[Row]:
    """CSV with a header; ``line`` is the physical line where the row starts."""
    # utf-8-sig: a byte-order mark (Excel writes one) is not part of the first column name
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="surrogateescape", newline="")
    reader = csv.DictReader(text)
    col = _pick_column(list(reader.fieldnames or []), text_column, "CSV input")
    if context_column:
        _pick_column(list(reader.fieldnames or []), context_column, "CSV input")
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield start, RowError(f"malformed CSV ({exc})")
            start = reader.line_num + 1
            continue
        record = _table_record(row, col, context_column)
        try:
            json.dumps(record, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            yield start, RowError("invalid UTF-8", record.get("id"))
        else:
            yield _checked(start, record)
        start = reader.line_num + 1


def read_parquet(
    path: str | Path, *, text_column: str | None = None, context_column: str | None = None
) -> Iterator[Row]:
    """Parquet, streamed in record batches; needs the ``parquet`` extra."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(
            f"reading Parquet needs pyarrow: {install_hint('parquet', 'pyarrow')}"
        ) from None
    try:
        pf = pq.ParquetFile(str(path))
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid / ArrowIOError
        raise InputError(f"{path} is not a readable Parquet file ({exc})") from None
    columns = list(pf.schema_arrow.names)
    col = _pick_column(columns, text_column, f"{path}")
    wanted = [c for c in (col, context_column, "id") if c and c in columns]
    if context_column and context_column not in columns:
        _pick_column(columns, context_column, f"{path}")
    n = 0
    for batch in pf.iter_batches(batch_size=1024, columns=wanted):
        for row in batch.to_pylist():
            n += 1
            yield _checked(n, _table_record(row, col, context_column))


# --- dispatch --------------------------------------------------------------------------

_SUFFIX_FORMATS = {
    ".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".json": "chat-json",
    ".txt": "text", ".jsonl": "jsonl", ".ndjson": "jsonl",
}  # fmt: skip


def _sniff(first: bytes) -> str:
    s = first.lstrip()
    if s.startswith(b"["):
        return "chat-json"
    if s.startswith(b"{"):
        try:
            json.loads(s)
        except (ValueError, UnicodeDecodeError):
            return "json-maybe-document"
        return "jsonl"
    return "text"


def read_rows(
    source: str | Path | BinaryIO,
    fmt: str = "auto",
    *,
    text_column: str | None = None,
    context_column: str | None = None,
    last: bool = False,
) -> Iterator[Row]:
    """Read any supported input (a path, ``"-"`` for stdin, or a binary stream).

    Example:
        >>> rows = list(read_rows(io.BytesIO(b"turn it up\\n\\n")))
        >>> [(n, type(r).__name__) for n, r in rows]
        [(1, 'dict'), (2, 'RowError')]
    """
    if fmt not in FORMATS:
        raise InputError(f"unknown --format {fmt!r}; use one of {', '.join(FORMATS)}")
    path: Path | None = None
    if isinstance(source, (str, Path)) and str(source) != "-":
        path = Path(source)
        if path.is_dir():
            raise InputError(f"input {path} is a directory; pass a file (or - for stdin)")
        if not path.is_file():
            raise InputError(f"input file not found: {path}")
    if fmt == "parquet" or (
        fmt == "auto" and path and _SUFFIX_FORMATS.get(path.suffix) == "parquet"
    ):
        if path is None:
            raise InputError("Parquet cannot be read from stdin; pass a file path")
        yield from read_parquet(path, text_column=text_column, context_column=context_column)
        return
    gz = False
    if path is not None:
        raw: BinaryIO = open(path, "rb")  # noqa: SIM115 - closed in finally below
    else:
        raw = sys.stdin.buffer if isinstance(source, (str, Path)) else source
    try:
        if not hasattr(raw, "peek"):
            raw = cast(BinaryIO, io.BufferedReader(cast(Any, raw)))
        gz = cast(io.BufferedReader, raw).peek(2)[:2] == GZIP_MAGIC
        # corpora travel compressed (data/corpus/*.jsonl.gz); the inner suffix decides
        stream: BinaryIO = gzip.GzipFile(fileobj=raw) if gz else raw  # type: ignore[assignment]
        if gz and path is not None and path.suffix.lower() == ".gz":
            path = path.with_suffix("")
            if _SUFFIX_FORMATS.get(path.suffix.lower()) == "parquet":
                raise InputError(f"{source}: gzipped Parquet; decompress it first")
        yield from _dispatch(stream, fmt, path, text_column, context_column, last)
    except (OSError, EOFError, zlib.error) as exc:
        if not gz:
            raise
        raise InputError(f"{source}: cannot be decompressed ({exc})") from None
    finally:
        if path is not None:
            raw.close()


def _dispatch(
    stream: BinaryIO,
    fmt: str,
    path: Path | None,
    text_column: str | None,
    context_column: str | None,
    last: bool,
) -> Iterator[Row]:
    kind = fmt
    if fmt == "auto":
        kind = _SUFFIX_FORMATS.get(path.suffix.lower(), "") if path else ""
    if kind == "csv":
        yield from read_csv(stream, text_column=text_column, context_column=context_column)
        return
    first = stream.readline()
    if first.startswith(BOM):  # a UTF-8 byte-order mark is not part of the first row
        first = first[len(BOM) :]
    if kind == "chat-json":
        yield from _document_or_lines(first + stream.read(), "auto", last)
        return
    rest: Iterator[bytes] = itertools.chain([first] if first else [], stream)
    head: list[bytes] = []
    if kind in ("", "chat"):  # sniff the first non-empty line
        for raw in rest:
            head.append(raw)
            if raw.strip():
                break
        sniffed = _sniff(head[-1]) if head else "text"
        if sniffed in ("chat-json", "json-maybe-document"):
            data = b"".join(head) + stream.read()
            yield from _document_or_lines(data, "chat" if kind == "chat" else "auto", last)
            return
        if kind == "":
            kind = "jsonl" if sniffed == "jsonl" else "text"
    lines = itertools.chain(head, rest)
    if kind == "text":
        yield from read_text(lines)
    else:
        yield from read_jsonl(lines, {"gate": "gate", "chat": "chat"}.get(kind, "auto"), last=last)


def _document_or_lines(data: bytes, fmt: str, last: bool) -> Iterator[Row]:
    """One JSON document if the bytes parse as one, else JSONL with per-line errors."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        yield from read_jsonl(io.BytesIO(data), fmt, last=last)
        return
    yield from chat_document(doc, last=last)
