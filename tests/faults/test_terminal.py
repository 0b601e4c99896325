"""Issue 15 #8 and #11: what ``classify --pretty`` shows a person.

#8: input ids and messages are untrusted; an escape sequence in them must reach the
terminal as nothing (no clear-screen, no window title, no 8-bit CSI), and neither may one
in an error message. #11: at 80 columns the table keeps every row on its input (line and
a message column cut to fit), keeps the latency column and never folds an event name.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from faultkit import CLI, Ran, cli_env, run_cli
from rich.cells import cell_len

CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")  # anything but a newline
NASTY = {
    "id": "\x1b[2J\x1b[Hclear",
    "user_message": "play \x1b]0;pwned\x07jazz \x9b31m now\x08\x08\x08\x08 \u202eevil",
}


def run_at(columns: int, args: list[object]) -> Ran:
    """``gatecli ARGS`` with its terminal width set, as a person's terminal would."""
    proc = subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=30,
                          env=cli_env(COLUMNS=str(columns)), stdin=subprocess.DEVNULL)  # fmt: skip
    return Ran(proc.returncode, proc.stdout, proc.stderr, 0.0)


def test_escapes_in_ids_and_messages_never_reach_the_terminal(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    src = tmp_path / "nasty.jsonl"
    src.write_text(json.dumps(NASTY) + '\n{"id": "\\u001b[31mred", "user_message": ""}\n')
    ran = run_cli(["classify", src, "--pretty", "-m", tiny_model_dir, "--no-llm"], timeout=30)
    assert ran.rc == 0, ran.stderr
    assert not CONTROL.search(ran.stdout), repr(ran.stdout)
    assert "\u202e" not in ran.stdout
    assert "clear" in ran.stdout and "play" in ran.stdout  # the text itself stays readable
    # an error message that quotes input (a CSV column name) is cleaned too
    csv = tmp_path / "t.csv"
    csv.write_text("message\nhi\n", encoding="utf-8")
    bad = run_cli(["classify", csv, "--text-column", "\x1b[2Jx", "-m", tiny_model_dir],
                  timeout=30)  # fmt: skip
    assert bad.rc == 2 and not CONTROL.search(bad.stderr), repr(bad.stderr)


def test_pretty_table_fits_80_columns(tiny_model_dir: Path, tmp_path: Path) -> None:
    messages = [
        "turn the volume up a bit and then play some relaxing jazz in the living room please",
        "明天下午三点提醒我和产品团队开会，顺便把会议室也订好",
        "rappelle-moi d'appeler le plombier demain matin avant de partir au travail",
        "hi",
    ]
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps({"id": f"r{i}", "user_message": m}) + "\n"
                           for i, m in enumerate(messages, 1)), encoding="utf-8")  # fmt: skip
    ran = run_at(80, ["classify", src, "--pretty", "-m", tiny_model_dir, "--no-llm"])
    assert ran.rc == 0, ran.stderr
    lines = [ln for ln in ran.stdout.splitlines() if ln.strip()]
    assert all(cell_len(ln) <= 80 for ln in lines), "\n".join(lines)
    header = lines[0].split()
    assert header[0] == "line" and "ms" in header and header[-1] == "message"
    starts = [ln.split()[0] for ln in lines[1:] if ln.split()[0].isdigit()]
    assert starts == ["1", "2", "3", "4"]  # one row per input line, in order
    for i, m in enumerate(messages, 1):  # each row shows the start of its own message
        row = next(ln for ln in lines[1:] if ln.split()[0] == str(i))
        assert m[:6] in row, row
        assert re.search(r"\d+\.\d\s", row), row  # the latency is there, not cut
    # events are listed whole: every event name printed is one the catalog knows
    rows = run_cli(["classify", src, "-m", tiny_model_dir, "--no-llm"], timeout=30).rows()
    names = {e for r in rows for e in r["events"]}
    shown = set(re.findall(r"\b[a-z]+\.[a-z]+\.?[a-z]*\b", ran.stdout))
    assert names <= shown, (names, shown)
