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


def test_unwritable_rows_become_error_rows(tiny_model_dir: Path, tmp_path: Path) -> None:
    """Runtime review, stop 61: one row whose id held a lone surrogate ("\\ud800", or raw
    bytes in a CSV id), a turn_index that is not an integer (or NaN, which is not JSON) or
    a line nested too deep for the parser ended the whole run with no output; each is now
    an error row in its place and every other row is classified."""
    deep = '{"user_message": "x", "available_files": ' + "[" * 100_000 + "]" * 100_000 + "}"
    src = tmp_path / "turns.jsonl"
    src.write_text(
        "\n".join([
            '{"id": "a", "user_message": "play some jazz"}',
            '{"id": "\\ud800x", "user_message": "hi"}',
            '{"id": "c", "user_message": "hi", "turn_index": "\\ud800"}',
            '{"id": "d", "user_message": "hi", "turn_index": NaN}',
            deep,
            '{"id": "f", "user_message": "turn the lights off"}',
        ]) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    out = tmp_path / "out.jsonl"
    ran = run_cli(["classify", src, "--model", tiny_model_dir, "--no-llm", "-o", out], timeout=60)
    assert "Traceback" not in ran.stderr, ran.stderr[-800:]
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["a", "\ufffdx", "c", "d", None, "f"]
    assert [("error" in r) for r in rows] == [False, True, True, True, True, False]
    assert "invalid Unicode" in rows[1]["error"] and "turn_index" in rows[2]["error"]
    assert "turn_index" in rows[3]["error"] and "nested too deeply" in rows[4]["error"]
    csv = tmp_path / "turns.csv"
    csv.write_bytes(b"id,message\na,play some jazz\nb\xff\xfe,hi\nc,turn the lights off\n")
    ran = run_cli(["classify", csv, "--model", tiny_model_dir, "--no-llm"], timeout=60)
    assert [r["id"] for r in ran.rows()] == ["a", "b\ufffd\ufffd", "c"], ran.stderr[-500:]
