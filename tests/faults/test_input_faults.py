"""Issue 15 #9: a UTF-8 byte-order mark at the start of an input is not part of its data.

Notepad and Excel write one; the first row must read like the others, in every format.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from faultkit import run_cli

BOM = b"\xef\xbb\xbf"
INPUTS = {
    "turns.jsonl": b'{"id": "a", "user_message": "play some jazz"}\n'
    b'{"id": "b", "user_message": "turn the lights off"}\n',
    "turns.csv": b"id,message\na,play some jazz\nb,turn the lights off\n",
    "turns.json": json.dumps(
        [
            {"id": "a", "messages": [{"role": "user", "content": "play some jazz"}]},
            {"id": "b", "messages": [{"role": "user", "content": "turn the lights off"}]},
        ]
    ).encode(),  # fmt: skip
    "turns": b'{"id": "a", "user_message": "play some jazz"}\n'  # no suffix: sniffed
    b'{"id": "b", "user_message": "turn the lights off"}\n',
}


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_a_byte_order_mark_is_accepted(tiny_model_dir: Path, tmp_path: Path, name: str) -> None:
    src = tmp_path / name
    src.write_bytes(BOM + INPUTS[name])
    ran = run_cli(["classify", src, "--model", tiny_model_dir, "--no-llm", "--strict"], timeout=25)
    assert ran.rc == 0, ran.stdout[:300] + ran.stderr[-500:]
    rows = ran.rows()
    assert [r["id"] for r in rows] == ["a", "b"] and not any("error" in r for r in rows)
