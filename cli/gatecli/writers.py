"""Write classified rows: JSONL for programs, a table for people at a terminal.

Rows are either spec §5 records or ``{"id", "line", "error"}`` records; both writers keep
them in input order and never skip one. Everything a person's terminal shows passes
through :func:`terminal_safe` first: input ids and messages are untrusted, and an escape
sequence in them must not clear the screen or retitle the window. The table fits the
terminal's width: the columns that match a row to its input (line, message) and the
decision always stay; optional columns are dropped, never squeezed into a few characters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

# CSI / OSC / other ESC sequences first (so their parameters go too), then any C0/C1
# control character and the bidirectional overrides that reorder what a terminal shows.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: ESC [ params final
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: ESC ] ... BEL or ST
    r"|\x1b[ -/]*[0-~]?"  # other ESC sequences
    r"|[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
)
# C1 controls are not escaped by json.dumps(ensure_ascii=False); some terminals act on them.
_C1 = re.compile(r"[\x80-\x9f]")


def terminal_safe(text: object) -> str:
    """``text`` with terminal control sequences removed (tabs and newlines become spaces).

    Example:
        >>> terminal_safe("a\\x1b[2Jb\\tc\\x07")
        'ab c'
    """
    return _ESCAPES.sub(lambda m: " " if m.group() in "\t\n\r" else "", str(text))


def write_jsonl(rows: Iterable[Mapping[str, Any]], stream: IO[str], *, tty: bool = False) -> int:
    """Write one JSON object per line (UTF-8, unescaped) and return how many were written.

    ``tty=True`` (the stream is a terminal) also escapes C1 control characters as
    ``\\u00XX``: the same JSON value, but nothing a terminal would act on.

    Example:
        >>> import io; buf = io.StringIO()
        >>> write_jsonl([{"id": "a", "decision": "execute"}], buf), buf.getvalue()
        (1, '{"id": "a", "decision": "execute"}\\n')
    """
    n = 0
    for row in rows:
        line = json.dumps(row, ensure_ascii=False)
        if tty:
            line = _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", line)
        stream.write(line + "\n")
        n += 1
    stream.flush()
    return n


# --- the table -------------------------------------------------------------------------

COLOURS = {"execute": "green", "ask": "yellow", "connect": "cyan", "refuse": "red",
           "safety": "magenta"}  # fmt: skip
MESSAGE_MIN = 18  # the message column never gets narrower than this ...
MESSAGE_WANT = 32  # ... and optional columns beyond the id only come beside this much
GAP = 2  # between two columns: a space of padding on each side


def _short(values: Any) -> str:
    return ", ".join(str(v) for v in values) if values else "-"


@dataclass(frozen=True)
class _Col:
    name: str
    cell: Callable[[Mapping[str, Any]], str]
    cap: int  # widest it may get
    justify: str = "left"
    wrap: bool = False  # wrap between words (events); others are cut with an ellipsis


def _num(key: str, fmt: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda r: "" if r.get(key) is None or "error" in r else format(r[key], fmt)


def _text(key: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda r: "" if r.get(key) is None else str(r[key])


def _list(key: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda r: "" if "error" in r else _short(r.get(key))


# Columns in display order; REQUIRED always show, the others are added in PRIORITY order
# while the message column keeps MESSAGE_MIN (for the id) or MESSAGE_WANT characters.
COLUMNS = {
    "line": _Col("line", _text("line"), 7, "right"),
    "id": _Col("id", _text("id"), 14),
    "turn": _Col("turn", _text("turn_index"), 4, "right"),
    "lang": _Col("lang", lambda r: "" if "error" in r else str(r.get("lang", "")), 4),
    "decision": _Col("decision", lambda r: "error" if "error" in r else str(r["decision"]), 8),
    "conf": _Col("conf", _num("confidence", ".2f"), 4, "right"),
    "events": _Col("events", _list("events"), 26, wrap=True),
    "tags": _Col("tags", _list("scenario_tags"), 20, wrap=True),
    "missing": _Col("missing", _list("missing_slots"), 14, wrap=True),
    "next_action": _Col("next_action", _text("next_action"), 17),
    "ms": _Col("ms", _num("latency_ms", ".1f"), 6, "right"),
}
REQUIRED = ("line", "decision", "conf", "events", "ms")
PRIORITY = ("id", "next_action", "missing", "turn", "lang", "tags")


def _width(col: _Col, rows: Sequence[Mapping[str, Any]]) -> int:
    """What the column needs: its widest cell (for wrapped lists, its widest item)."""
    cells = [terminal_safe(col.cell(r)) for r in rows]
    parts = [p for c in cells for p in (c.split(", ") if col.wrap else [c])]
    return min(col.cap, max([len(col.name), *map(len, parts)]))


def choose_columns(rows: Sequence[Mapping[str, Any]], width: int) -> dict[str, int]:
    """The columns (name -> width) that fit ``width`` beside a message column.

    Example:
        >>> list(choose_columns([{"line": 1, "decision": "ask", "confidence": 0.5}], 60))
        ['line', 'id', 'decision', 'conf', 'events', 'ms']
    """
    need = {name: _width(COLUMNS[name], rows) for name in COLUMNS}
    chosen = set(REQUIRED)
    used = sum(need[n] + GAP for n in chosen)
    if used + MESSAGE_MIN > width:  # a narrow terminal: events wrap in what is left
        need["events"] = max(len("events"), need["events"] - (used + MESSAGE_MIN - width))
        used = sum(need[n] + GAP for n in chosen)
    for name in PRIORITY:
        keep = MESSAGE_MIN if name == "id" else MESSAGE_WANT
        if used + need[name] + GAP + keep <= width:
            chosen.add(name)
            used += need[name] + GAP
    return {name: need[name] for name in COLUMNS if name in chosen}


def render_table(
    rows: Iterable[Mapping[str, Any]],
    console: Console | None = None,
    *,
    messages: Sequence[str | None] | None = None,
) -> Table:
    """Print a table of results that fits the terminal (errors in red) and return it.

    ``messages`` (the input message of each row, ``None`` for an error row) fills the last
    column, cut to fit, so every row can be matched to its input.

    Example:
        >>> render_table([{"line": 1, "error": "user_message is empty"}],
        ...              Console(file=io.StringIO())).row_count  # doctest: +SKIP
        1
    """
    console = console or Console()
    rows = list(rows)
    texts = list(messages) if messages is not None else [None] * len(rows)
    cols = choose_columns(rows, console.width)
    message_width = max(MESSAGE_MIN, console.width - sum(w + GAP for w in cols.values()))
    table = Table(box=None, header_style="bold underline", pad_edge=False, show_edge=False)
    for name, w in cols.items():
        col = COLUMNS[name]
        table.add_column(
            name, justify=col.justify, width=w,  # type: ignore[arg-type]
            no_wrap=not col.wrap, overflow="fold" if col.wrap else "ellipsis",
        )  # fmt: skip
    table.add_column("message", max_width=message_width, no_wrap=True, overflow="ellipsis")
    for row, message in zip(rows, texts, strict=True):
        cells: list[Text] = []
        for name in cols:
            value = terminal_safe(COLUMNS[name].cell(row))
            style = ""
            if name == "decision":
                style = "red" if "error" in row else COLOURS.get(value, "")
            cells.append(Text(value, style=style))
        if "error" in row:
            cells.append(Text(terminal_safe(row["error"]), style="red"))
        else:
            cells.append(Text(terminal_safe(message or "")))
        table.add_row(*cells)
    console.print(table)
    return table
