"""Issue 15 #3: ``classify -o`` never destroys a file.

The input is read before the output is touched, ``-o`` over the input is refused, and the
output is written to a temporary file in the same folder and renamed into place, so a
failed, refused or killed run leaves an existing file exactly as it was.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from faultkit import CLI, cli_env, run_cli

OLD = '{"id": "kept", "note": "an earlier result that must survive"}\n'


def test_missing_input_leaves_the_output_alone(tiny_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "existing.jsonl"
    out.write_text(OLD, encoding="utf-8")
    ran = run_cli(["classify", tmp_path / "missing.txt", "-o", out, "-m", tiny_model_dir],
                  timeout=30)  # fmt: skip
    assert ran.rc == 2 and "missing.txt" in ran.stderr and "Traceback" not in ran.stderr
    assert out.read_text(encoding="utf-8") == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing.jsonl"]  # no temp left


def test_output_over_the_input_is_refused(tiny_model_dir: Path, tmp_path: Path) -> None:
    src = tmp_path / "a.txt"
    src.write_text("turn it up\nplay some jazz\n", encoding="utf-8")
    before = src.read_bytes()
    for target in (src, tmp_path / "." / "a.txt"):  # also through another spelling
        ran = run_cli(["classify", src, "-o", target, "-m", tiny_model_dir], timeout=30)
        assert ran.rc == 2 and "is the input file" in ran.stderr
        assert len(ran.stderr.strip().splitlines()) == 1
    link = tmp_path / "b.txt"
    link.symlink_to(src)
    ran = run_cli(["classify", link, "-o", src, "-m", tiny_model_dir], timeout=30)
    assert ran.rc == 2 and src.read_bytes() == before


def test_killed_run_keeps_the_old_output(tiny_model_dir: Path, tmp_path: Path) -> None:
    src = tmp_path / "big.txt"
    src.write_text("".join(f"please play track {i} in the kitchen\n" for i in range(20_000)))
    out = tmp_path / "out.jsonl"
    out.write_text(OLD, encoding="utf-8")
    args = ["classify", str(src), "-o", str(out), "-m", str(tiny_model_dir), "--no-llm"]
    proc = subprocess.Popen([*CLI, *args], env=cli_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        temp: list[Path] = []
        while time.monotonic() < deadline and proc.poll() is None:
            temp = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
            written = sum(p.stat().st_size for p in temp if p.exists())
            if written or out.read_text(encoding="utf-8") != OLD:  # rows are being written
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the run finished before it was killed: the test proves nothing"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert out.read_text(encoding="utf-8") == OLD  # the rows went to the temporary file
    assert temp and temp[0].parent == out.parent  # same folder: the rename is atomic


def test_a_finished_run_replaces_the_output(tiny_model_dir: Path, tmp_path: Path) -> None:
    src = tmp_path / "a.txt"
    src.write_text("turn it up\n\nplay some jazz\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    out.write_text(OLD, encoding="utf-8")
    out.chmod(0o640)
    ran = run_cli(["classify", src, "-o", out, "-m", tiny_model_dir, "--no-llm", "--strict"],
                  timeout=30)  # fmt: skip
    assert ran.rc == 1 and "3 rows (1 errors)" in ran.stderr  # --strict still writes every row
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["line"] for r in rows] == [1, 2, 3] and "error" in rows[1]
    assert out.stat().st_mode & 0o777 == 0o640
    ran = run_cli(["classify", src, "-o", tmp_path / "nope" / "out.jsonl", "-m", tiny_model_dir],
                  timeout=30)  # fmt: skip
    assert ran.rc == 2 and "does not exist" in ran.stderr
