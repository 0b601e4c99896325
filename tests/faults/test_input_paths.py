"""Issue 15 #10: a path that is not what a command expects is one line naming that path.

A directory given as an input file says it is a directory (not "file not found"), a
corrupt Parquet file names itself, and ``data build`` checks its paths before it reads a
single dataset, with no traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from faultkit import run_cli


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr[-2000:]
    return lines[0]


@pytest.mark.parametrize("command", ["classify", "label"])
def test_a_directory_as_input_says_so(command: str, tiny_model_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "turns"
    folder.mkdir()
    args = [command, folder, "-m", tiny_model_dir]
    ran = run_cli([*args, "-o", tmp_path / "out.jsonl"], timeout=30)
    line = one_line(ran.stderr)
    assert ran.rc == 2 and "is a directory" in line and str(folder) in line
    assert not (tmp_path / "out.jsonl.parts").exists()  # nothing was started


@pytest.mark.parametrize("command", ["classify", "label"])
def test_a_corrupt_parquet_file_names_itself(
    command: str, tiny_model_dir: Path, tmp_path: Path
) -> None:
    pytest.importorskip("pyarrow")
    bad = tmp_path / "logs.parquet"
    bad.write_bytes(b"PAR1 this is not really a parquet file")
    ran = run_cli([command, bad, "-m", tiny_model_dir, "-o", tmp_path / "out.jsonl"], timeout=30)
    line = one_line(ran.stderr)
    assert ran.rc == 2 and str(bad) in line and "Parquet" in line


def test_data_build_checks_its_paths_first(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    extra = tmp_path / "more"
    extra.mkdir()
    ran = run_cli(["data", "build", "--raw", raw, "--extra", extra, "--out", tmp_path / "o"],
                  timeout=60)  # fmt: skip
    line = one_line(ran.stderr)
    assert ran.rc == 2 and str(extra) in line and "is a directory" in line
    not_a_folder = tmp_path / "raw.txt"
    not_a_folder.write_text("x")
    ran = run_cli(["data", "build", "--raw", not_a_folder, "--out", tmp_path / "o"], timeout=60)
    line = one_line(ran.stderr)
    assert ran.rc == 2 and str(not_a_folder) in line and "is a file" in line
    assert not (tmp_path / "o").exists()
