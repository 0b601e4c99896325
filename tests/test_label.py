"""`gatecli label`: exactly once, in order, resumable after SIGKILL, idempotent when done."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gatecli.labeling.pipeline import label
from gatecli.labeling.store import StoreError


def _write_turns(path: Path, n: int, *, bad_every: int = 0) -> set[int]:
    """n input lines; every bad_every-th line is broken (alternately bad JSON / empty)."""
    words = [
        "turn the volume up", "声音调到90", "提醒我开会 明天下午三点 在会议室",
        "what's the weather tomorrow in Paris and should I take an umbrella", "关灯",
    ]  # fmt: skip
    bad: set[int] = set()
    with open(path, "w", encoding="utf-8") as f:
        for i in range(1, n + 1):
            if bad_every and i % bad_every == 0:
                bad.add(i)
                f.write(
                    "{oops\n" if i % 2 else json.dumps({"id": f"t{i}", "user_message": ""}) + "\n"
                )
                continue
            f.write(json.dumps({"id": f"t{i}", "user_message": f"{words[i % 5]} {i}"}) + "\n")
    return bad


def _rows(path: Path) -> list[dict]:
    return [json.loads(s) for s in path.read_text(encoding="utf-8").splitlines()]


def _strip(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "latency_ms"}


def test_20k_turns_two_workers_exactly_once_in_order(tiny_model_dir: Path, tmp_path: Path) -> None:
    n = 20_000
    src = tmp_path / "turns.jsonl"
    bad = _write_turns(src, n, bad_every=997)
    out = tmp_path / "out.jsonl"
    s = label([src], out, model=tiny_model_dir, workers=2, chunk_size=2500, review_size=0)
    rows = _rows(out)
    assert [r["line"] for r in rows] == list(range(1, n + 1))
    ids = [r["id"] for r in rows if r["id"] is not None]
    assert len(ids) == len(set(ids))
    errors = {r["line"] for r in rows if "error" in r}
    assert errors == bad  # bad rows are error records in their own place
    for r in rows:
        if r["line"] not in bad:
            assert r["id"] == f"t{r['line']}" and r["decision"] in r["probabilities"]
    assert (s.rows, s.errors, s.parts) == (n, len(bad), 8)
    assert sum(s.decisions.values()) == n - len(bad)
    assert not any(out.parent.joinpath("out.jsonl.parts").glob("part-*"))


def test_rerun_over_finished_output_changes_nothing(tiny_model_dir: Path, tmp_path: Path) -> None:
    src = tmp_path / "turns.jsonl"
    _write_turns(src, 600, bad_every=50)
    out = tmp_path / "out.jsonl"
    first = label([src], out, model=tiny_model_dir, chunk_size=100)
    before, mtime = out.read_bytes(), out.stat().st_mtime_ns
    again = label([src], out, model=tiny_model_dir, chunk_size=100)
    assert again.unchanged and again.labeled_rows == 0
    assert out.read_bytes() == before and out.stat().st_mtime_ns == mtime
    assert (again.rows, again.errors, again.decisions) == (
        first.rows,
        first.errors,
        first.decisions,
    )


def test_changed_input_refuses_to_resume(tiny_model_dir: Path, tmp_path: Path) -> None:
    src = tmp_path / "turns.jsonl"
    _write_turns(src, 50)
    out = tmp_path / "out.jsonl"
    label([src], out, model=tiny_model_dir)
    _write_turns(src, 60)
    with pytest.raises(StoreError, match="--restart"):
        label([src], out, model=tiny_model_dir)
    assert label([src], out, model=tiny_model_dir, restart=True).rows == 60


def test_sigkill_then_resume_equals_uninterrupted_run(tiny_model_dir: Path, tmp_path: Path) -> None:
    n = 8_000
    src = tmp_path / "turns.jsonl"
    _write_turns(src, n, bad_every=301)
    ref = tmp_path / "ref.jsonl"
    label([src], ref, model=tiny_model_dir, chunk_size=400)
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, "-m", "gatecli.main", "label", str(src), "-o", str(out),
           "-m", str(tiny_model_dir), "--chunk-size", "400", "--workers", "2"]  # fmt: skip
    env = {**os.environ, "COLUMNS": "100"}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    parts = out.with_name("out.jsonl.parts")
    deadline = time.time() + 60
    while time.time() < deadline and not (parts / "part-00001.jsonl").exists():
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not out.exists(), "the run finished before it was killed: the test proves nothing"
    committed = sorted(parts.glob("part-*.jsonl"))
    assert committed, "no part was committed before the kill"
    # leftovers of the kill (a temp file) must not break the resume
    (parts / ".part-99999.jsonl.tmp-1").write_text("half a line")
    done = subprocess.run(cmd + ["--json"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["resumed_rows"] >= 400 and summary["rows"] == n
    got, want = _rows(out), _rows(ref)
    assert [r["line"] for r in got] == list(range(1, n + 1))
    assert [_strip(r) for r in got] == [_strip(r) for r in want]


def test_parquet_in_and_out(tiny_model_dir: Path, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    texts = ["louder", "", "提醒我开会", None, "play jazz"]
    src = tmp_path / "turns.parquet"
    pq.write_table(pa.table({"id": [f"r{i}" for i in range(5)], "message": texts}), src,
                   row_group_size=2)  # fmt: skip
    out = tmp_path / "out.parquet"
    s = label([src], out, model=tiny_model_dir, text_column="message", chunk_size=2)
    table = pq.read_table(out).to_pylist()
    assert [r["line"] for r in table] == [1, 2, 3, 4, 5]
    assert [r["error"] is not None for r in table] == [False, True, False, True, False]
    assert json.loads(table[0]["probabilities"]).keys() >= {"execute", "ask"}
    assert s.errors == 2


def test_cli_label_prints_summary(tiny_model_dir: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gatecli.main import app

    src = tmp_path / "turns.txt"
    src.write_text("louder\n\nplay jazz\n", encoding="utf-8")
    out = tmp_path / "o.jsonl"
    res = CliRunner().invoke(app, ["label", str(src), "-o", str(out), "-m", str(tiny_model_dir),
                                   "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout.strip().splitlines()[-1])["errors"] == 1
    assert [r["line"] for r in _rows(out)] == [1, 2, 3]
