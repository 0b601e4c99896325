"""``gatecli classify`` / ``gatecli info`` through typer's runner and the installed script."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatecli.commands.classify import classify
from gatecli.commands.info import model_info
from gatecli.main import app

EXAMPLES = Path(__file__).resolve().parent.parent / "data" / "examples"
runner = CliRunner()


def jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_classify_function_keeps_ids_lines_and_turns(tiny_model_dir: Path) -> None:
    rows = classify(EXAMPLES / "transcript.jsonl", model=tiny_model_dir, batch_size=3)
    assert [(r["id"], r["line"], r["turn_index"]) for r in rows][:3] == [
        ("conv-en", 1, 1), ("conv-en", 1, 3), ("conv-en", 1, 5),
    ]  # fmt: skip
    assert [r["lang"] for r in rows] == ["en", "en", "en", "zh", "zh", "fr", "fr"]
    assert all(r["model"] == "tiny-test@0.0.0" for r in rows)


def test_cli_stdin_errors_in_place_and_strict(tiny_model_dir: Path) -> None:
    data = (
        '{"id": "a", "user_message": "声音调到90"}\n{oops\n\n'
        '{"id": "d", "user_message": "x", "connected_accounts": 1}\n'
    )
    args = ["classify", "-", "--model", str(tiny_model_dir), "--no-pretty"]
    res = runner.invoke(app, args, input=data)
    assert res.exit_code == 0, res.output
    rows = jsonl(res.stdout)
    assert [r["line"] for r in rows] == [1, 2, 3, 4]
    assert [("error" in r) for r in rows] == [False, True, True, True]
    assert rows[0]["id"] == "a" and rows[3]["id"] == "d" and set(rows[1]) == {"id", "line", "error"}
    strict = runner.invoke(app, [*args, "--strict"], input=data)
    assert strict.exit_code == 1 and len(jsonl(strict.stdout)) == 4


def test_cli_output_file_last_and_pretty(tiny_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    m = ["--model", str(tiny_model_dir)]
    res = runner.invoke(
        app, ["classify", str(EXAMPLES / "transcript.jsonl"), "--last", "-o", str(out), *m]
    )
    assert res.exit_code == 0, res.output
    assert [r["turn_index"] for r in jsonl(out.read_text(encoding="utf-8"))] == [5, 2, 2]
    table = runner.invoke(app, ["classify", str(EXAMPLES / "gate-input.jsonl"), "--pretty", *m])
    assert table.exit_code == 0 and "decision" in table.stdout and "ex-5" in table.stdout


def test_cli_csv_text_column(tiny_model_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("id,utterance\n1,turn it up\n2,\n", encoding="utf-8")
    args = [
        "classify",
        str(path),
        "--text-column",
        "utterance",
        "--model",
        str(tiny_model_dir),
        "--no-pretty",
    ]
    rows = jsonl(runner.invoke(app, args).stdout)
    assert [(r["id"], r["line"], "error" in r) for r in rows] == [("1", 2, False), ("2", 3, True)]
    bad = runner.invoke(app, [*args[:2], "--text-column", "nope", *args[4:]])
    assert bad.exit_code == 2 and "no column 'nope'" in bad.stderr


def test_missing_or_corrupt_model_exits_2_with_one_line(
    tmp_path: Path, tiny_model_copy: Path
) -> None:
    res = runner.invoke(app, ["classify", "-", "--model", str(tmp_path / "nope")], input="hi\n")
    assert res.exit_code == 2 and res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1 and str(tmp_path / "nope") in res.stderr
    assert "Traceback" not in res.stderr
    (tiny_model_copy / "model.onnx").write_bytes(b"not a model")
    res = runner.invoke(app, ["info", "--model", str(tiny_model_copy)])
    assert (
        res.exit_code == 2 and "sha256" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    )


def test_info(tiny_model_dir: Path) -> None:
    data = model_info(tiny_model_dir)
    assert data["model"] == "tiny-test@0.0.0"
    assert data["heads"]["decision"]["labels"] == ["execute", "ask", "connect", "refuse", "safety"]
    assert "alarm.set" in [e["name"] for e in data["events"]]
    assert data["card"][0] == "# tiny-test model" and data["policy"]["guards"]
    res = runner.invoke(app, ["info", "--model", str(tiny_model_dir), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["max_length"] == 128
    text = runner.invoke(app, ["info", "--model", str(tiny_model_dir)]).stdout
    assert "calendar.schedule.create" in text
    # the tool names the policy reads as offering an event (catalog `tools`)
    search = next(e for e in data["events"] if e["name"] == "knowledge.web.search")
    assert "web search" in search["tools"] and "declared tools of knowledge.web.search" in text
    assert "get live context" in data["known_tools"] and "known tools (no event):" in text


def test_help_has_examples() -> None:
    for cmd in ("classify", "info"):
        res = runner.invoke(app, [cmd, "--help"])
        assert res.exit_code == 0 and "Examples" in res.stdout


def test_installed_console_script(tiny_model_dir: Path) -> None:
    exe = shutil.which("gatecli")
    if exe is None:
        pytest.skip("gatecli console script not installed (pip install -e .)")
    proc = subprocess.run(
        [exe, "classify", "-", "--model", str(tiny_model_dir)],
        input="声音调到90\n".encode(), capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    rows = jsonl(proc.stdout.decode("utf-8"))
    assert len(rows) == 1 and rows[0]["lang"] == "zh" and rows[0]["line"] == 1
    missing = subprocess.run(
        [exe, "classify", "-", "--model", "/nonexistent/model"],
        input=b"hi\n", capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    assert missing.returncode == 2 and len(missing.stderr.decode().strip().splitlines()) == 1
