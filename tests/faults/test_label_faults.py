"""Issue 15 #5, #6, #7: ``gatecli label`` under kill -9, a second run, a damaged output.

Real ``gatecli label`` processes on the tiny model. Process checks read ``/proc`` (psutil
is not a dependency), so they run on Linux only.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from faultkit import CLI, cli_env, run_cli

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def write_turns(path: Path, n: int) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"id": i, "user_message": f"remind me about thing {i}"}) + "\n")
    return path


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state) of a live process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), fields[0]


def descendants(root: int) -> set[int]:
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (st := _stat(int(entry.name))) is not None:
            parents.setdefault(st[0], []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pids: set[int]) -> set[int]:
    """The pids that still run (a zombie has exited: only its parent has not reaped it)."""
    return {p for p in pids if (st := _stat(p)) is not None and st[1] != "Z"}


def start_label(src: Path, out: Path, model: Path, *extra: str) -> subprocess.Popen[bytes]:
    cmd = [*CLI, "label", str(src), "-o", str(out), "--model", str(model), *extra]
    return subprocess.Popen(
        cmd, env=cli_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip


def wait_for(cond, timeout: float, what: str) -> None:  # noqa: ANN001
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            pytest.fail(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.05)


def first_part(out: Path) -> bool:
    return (out.parent / f"{out.name}.parts" / "part-00000.jsonl").exists()


@linux_only
def test_killing_label_leaves_no_process_behind(tiny_model_dir: Path, tmp_path: Path) -> None:
    """#5: kill -9 of the parent: workers, forkserver and resource tracker all exit."""
    src = write_turns(tmp_path / "turns.jsonl", 20_000)
    out = tmp_path / "out.jsonl"
    proc = start_label(src, out, tiny_model_dir, "--workers", "2", "--chunk-size", "500")
    family: set[int] = set()
    try:
        wait_for(lambda: first_part(out) or proc.poll() is not None, 20, "the first part")
        family = descendants(proc.pid)
        assert proc.poll() is None and len(family) >= 3, "label ended before it was killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(5)
        end = time.monotonic() + 5
        while alive(family) and time.monotonic() < end:
            time.sleep(0.1)
        assert not alive(family), f"left behind: {sorted(alive(family))} of {sorted(family)}"
    finally:
        for pid in alive(family | {proc.pid}):  # only what this test started
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@linux_only
def test_a_second_run_on_the_same_output_is_refused(tiny_model_dir: Path, tmp_path: Path) -> None:
    """#6: while one run labels OUTPUT, another says it is in use and changes nothing."""
    src = write_turns(tmp_path / "turns.jsonl", 20_000)
    out = tmp_path / "out.jsonl"
    first = start_label(src, out, tiny_model_dir, "--workers", "1", "--chunk-size", "500")
    try:
        wait_for(lambda: first_part(out) or first.poll() is not None, 20, "the first part")
        assert first.poll() is None, "the first run ended before the second started"
        second = run_cli(["label", src, "-o", out, "--model", tiny_model_dir], timeout=20)
        assert first.poll() is None, "the first run did not survive the second"
        assert second.rc == 2 and "in use by another `gatecli label` run" in second.stderr
        assert not out.exists()  # nothing assembled, nothing overwritten
    finally:
        if first.poll() is None:
            first.kill()
        first.wait(5)
    # the first run's parts are intact: a resume finishes the job exactly once
    done = run_cli(["label", src, "-o", out, "--model", tiny_model_dir, "--json"], timeout=25)
    assert done.rc == 0, done.stderr[-1000:]
    summary = json.loads(done.stdout)
    assert summary["resumed_rows"] > 0 and summary["rows"] == 20_000
    lines = [json.loads(s)["line"] for s in out.read_text(encoding="utf-8").splitlines()]
    assert lines == list(range(1, 20_001))


def _truncate(path: Path) -> None:
    with open(path, "r+b") as f:
        f.truncate(1000)


def _same_size_edit(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"decision": "ask"', b'"decision": "yes"', 1))


@pytest.mark.parametrize("damage", [_truncate, _same_size_edit])
def test_a_damaged_finished_output_is_relabeled(
    tiny_model_dir: Path, tmp_path: Path, damage
) -> None:  # noqa: ANN001
    """#7: a finished output is trusted only while its size and sha256 match the manifest."""
    src = write_turns(tmp_path / "turns.jsonl", 300)
    out = tmp_path / "out.jsonl"
    args = ["label", src, "-o", out, "--model", tiny_model_dir, "--json"]
    first = run_cli(args, timeout=25)
    assert first.rc == 0, first.stderr[-1000:]
    good = out.read_bytes()
    again = run_cli(args, timeout=25)
    assert json.loads(again.stdout)["unchanged"] is True  # an intact output is not redone
    damage(out)
    assert out.read_bytes() != good
    redo = run_cli(args, timeout=25)
    assert redo.rc == 0, redo.stderr[-1000:]
    summary = json.loads(redo.stdout)
    assert summary["unchanged"] is False and summary["labeled_rows"] == 300
    assert "labeling it again" in redo.stderr and "labeling it again" in summary["notes"][0]
    strip = [{k: v for k, v in json.loads(s).items() if k != "latency_ms"} for s in
             out.read_text(encoding="utf-8").splitlines()]  # fmt: skip
    want = [{k: v for k, v in json.loads(s).items() if k != "latency_ms"} for s in
            good.decode("utf-8").splitlines()]  # fmt: skip
    assert strip == want
