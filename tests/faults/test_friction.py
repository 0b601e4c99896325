"""Issue 15 #12: what a new user trips over first.

Progress on a terminal for a long ``classify``; ``--help`` that reads cleanly (no
``<bool>`` placeholders, help on every ``--llm-*`` flag); a README example that runs; an
"unchanged" ``label`` summary that does not report the old run's workers as this one's;
an install hint for a missing extra that is right from a clone too.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path

from faultkit import CLI, cli_env, run_cli

REPO = Path(__file__).resolve().parents[2]


def stderr_on_a_terminal(args: list[object], timeout: float) -> tuple[int, str]:
    """Run ``gatecli ARGS`` with stderr on a pseudo-terminal (stdout to /dev/null)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([*CLI, *map(str, args)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=slave, env=cli_env())  # fmt: skip
    os.close(slave)
    chunks: list[bytes] = []

    def drain() -> None:  # a full pty would block the child
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the child closed its end
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        rc = proc.wait(timeout=timeout)
    finally:
        proc.kill()
        reader.join(timeout=5)
        os.close(master)
    return rc, b"".join(chunks).decode("utf-8", "replace")


def test_classify_shows_progress_on_a_terminal(tiny_model_dir: Path, tmp_path: Path) -> None:
    src = tmp_path / "many.txt"
    src.write_text("".join(f"please play track {i} in the kitchen, a bit louder than before\n"
                           for i in range(4000)), encoding="utf-8")  # fmt: skip
    out = tmp_path / "out.jsonl"
    rc, err = stderr_on_a_terminal(
        ["classify", src, "-o", out, "-m", tiny_model_dir, "--no-llm"], timeout=120
    )
    assert rc == 0, err[-1000:]
    assert "classify" in err and "rows/s" in err and "/4000" in err, err[-1000:]
    assert len(out.read_text(encoding="utf-8").splitlines()) == 4000
    # and never when stderr is not a terminal (a log file gets only the summary)
    ran = run_cli(["classify", src, "-o", out, "-m", tiny_model_dir, "--no-llm"], timeout=120)
    assert ran.stderr.strip() == f"4000 rows (0 errors) -> {out}"


def test_help_is_clean() -> None:
    for command in ("classify", "label", "info", "train", "eval", "data"):
        ran = run_cli([command, "--help"], timeout=30)
        assert ran.rc == 0 and "<bool>" not in ran.stdout, ran.stdout
    text = " ".join(run_cli(["classify", "--help"], timeout=30).stdout.split())
    for flag in ("--llm-base-url", "--llm-model", "--llm-config"):
        after = text.split(flag, 1)[1].split(" --", 1)[0]
        assert re.search(r"[a-z]{4,}.*[a-z]{4,}", after), (flag, after)  # words, not nothing
    assert "GATECLI_LLM_BASE_URL" in text  # bracketed text was eaten as markup before


def test_readme_examples_name_files_that_exist() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    paths = re.findall(
        r"gatecli (?:classify|label) (\S+\.(?:csv|jsonl|json|txt|parquet)(?:\.gz)?)", readme
    )
    assert any(p.endswith(".csv") for p in paths), paths
    missing = [p for p in paths if not (REPO / p).is_file()]
    assert not missing, missing


def test_unchanged_label_summary_reports_no_workers(tiny_model_dir: Path, tmp_path: Path) -> None:
    src = tmp_path / "t.txt"
    src.write_text("turn it up\nplay jazz\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    first = run_cli(["label", src, "-o", out, "-m", tiny_model_dir, "-w", "2"], timeout=120)
    assert first.rc == 0 and "2 worker(s)" in first.stderr, first.stderr
    again = run_cli(["label", src, "-o", out, "-m", tiny_model_dir, "-w", "3"], timeout=120)
    assert again.rc == 0 and "already complete" in again.stderr, again.stderr
    assert "worker" not in again.stderr, again.stderr


def test_missing_extra_hint_works_from_a_clone(tmp_path: Path) -> None:
    parquet = tmp_path / "logs.parquet"
    parquet.write_bytes(b"PAR1")
    code = ("import sys; sys.modules['pyarrow'] = sys.modules['pyarrow.parquet'] = None; "
            "from gatecli.main import main; main()")  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", code, "classify", str(parquet)],
                          capture_output=True, text=True, timeout=60, env=cli_env(),
                          stdin=subprocess.DEVNULL)  # fmt: skip
    assert proc.returncode == 2
    assert "pip install pyarrow" in proc.stderr and "-e '.[parquet]'" in proc.stderr, proc.stderr
