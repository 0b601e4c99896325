"""Write classified rows: JSONL for programs, a rich table for people at a terminal.

Rows are either spec §5 records or ``{"id", "line", "error"}`` records; both writers keep
them in input order and never skip one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text


def write_jsonl(rows: Iterable[Mapping[str, Any]], stream: TextIO) -> int:
    """Write one JSON object per line (UTF-8, unescaped) and return how many were written.

    Example:
        >>> import io; buf = io.StringIO()
        >>> write_jsonl([{"id": "a", "decision": "execute"}], buf), buf.getvalue()
        (1, '{"id": "a", "decision": "execute"}\\n')
    """
    n = 0
    for row in rows:
        stream.write(json.dumps(row, ensure_ascii=False) + "\n")
        n += 1
    stream.flush()
    return n


def _short(values: Iterable[str]) -> str:
    return ", ".join(values) or "-"


def render_table(rows: Iterable[Mapping[str, Any]], console: Console | None = None) -> Table:
    """Print a readable table of results (errors in red) and return it.

    Example:
        >>> render_table([{"line": 1, "error": "user_message is empty"}],
        ...              Console(file=io.StringIO())).row_count  # doctest: +SKIP
        1
    """
    table = Table(show_lines=False, header_style="bold")
    for name, kw in (
        ("line", {"justify": "right"}),
        ("id", {"max_width": 12, "overflow": "ellipsis", "no_wrap": True}),
        ("turn", {"justify": "right"}),
        ("lang", {"min_width": 4}),
        ("decision", {"min_width": 8}),
        ("conf", {"justify": "right", "min_width": 4}),
        ("events", {"overflow": "fold"}),
        ("tags", {"overflow": "fold"}),
        ("missing", {"overflow": "fold"}),
        ("next_action", {"overflow": "fold"}),
        ("ms", {"justify": "right"}),
    ):
        table.add_column(name, **kw)
    colour = {
        "execute": "green",
        "ask": "yellow",
        "connect": "cyan",
        "refuse": "red",
        "safety": "magenta",
    }
    for row in rows:
        line = "" if row.get("line") is None else str(row["line"])
        rid = "" if row.get("id") is None else str(row["id"])
        turn = "" if row.get("turn_index") is None else str(row["turn_index"])
        if "error" in row:
            err = Text(str(row["error"]), style="red")
            table.add_row(
                line, Text(rid), turn, "", Text("error", style="red"), "", err, "", "", "", ""
            )
            continue
        d = row["decision"]
        table.add_row(
            line,
            Text(rid),
            turn,
            row.get("lang", ""),
            f"[{colour.get(d, 'white')}]{d}[/]",
            f"{row['confidence']:.2f}",
            _short(row.get("events", [])),
            _short(row.get("scenario_tags", [])),
            _short(row.get("missing_slots", [])),
            row.get("next_action", ""),
            f"{row.get('latency_ms', 0):.1f}",
        )
    (console or Console()).print(table)
    return table
