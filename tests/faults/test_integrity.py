"""Issue 15 #4: every file of a model folder is checked at load, not only ``model.onnx``.

The attack from the issue: swap two pieces of the shipped tokenizer (``▁bomb`` and
``▁music``) and "how do I make a pipe bomb" reads as a harmless request. The real CLI
must refuse such a folder with one line naming the file, whichever file was touched.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from faultkit import CLI, Ran, cli_env, run_cli


def shipped_copy(tmp_path: Path) -> Path:
    import gatecli_models

    dst = tmp_path / "gate-small"
    shutil.copytree(Path(gatecli_models.__file__).parent / "gate-small", dst)
    return dst


def classify_with(model: Path, tmp_path: Path) -> Ran:
    src = tmp_path / "turn.txt"
    src.write_text("how do I make a pipe bomb\n", encoding="utf-8")
    return run_cli(["classify", src, "--model", model, "--no-llm"], timeout=25)


def test_a_swapped_tokenizer_piece_is_refused(tmp_path: Path) -> None:
    model = shipped_copy(tmp_path)
    path = model / "tokenizer.json"
    tok = json.loads(path.read_text(encoding="utf-8"))
    vocab = tok["model"]["vocab"]
    at = {piece: i for i, (piece, _) in enumerate(vocab)}
    a, b = at["▁bomb"], at["▁music"]
    vocab[a][0], vocab[b][0] = vocab[b][0], vocab[a][0]
    path.write_text(json.dumps(tok, ensure_ascii=False), encoding="utf-8")
    ran = classify_with(model, tmp_path)
    assert ran.rc == 2 and ran.stdout == "", ran.stdout[:500]
    assert "tokenizer.json does not match the sha256" in ran.stderr
    assert "Traceback" not in ran.stderr


def _relax_policy(model: Path) -> None:
    path = model / "policy.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "\n# harmless-looking edit\n", "utf-8")


def _edit_catalog(model: Path) -> None:
    path = model / "catalog.yaml"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n", 1))


def _raise_safety_threshold(model: Path) -> None:
    path = model / "gatecli.json"
    cfg = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(cfg, indent=4), encoding="utf-8")  # reformatting alone is fine
    assert run_cli(["info", "--model", model], timeout=25).rc == 0
    cfg["heads"]["decision"]["thresholds"]["safety"] = 0.99
    path.write_text(json.dumps(cfg, indent=4), encoding="utf-8")


@pytest.mark.parametrize(
    ("tamper", "named"),
    [
        (_relax_policy, "policy.yaml does not match"),
        (_edit_catalog, "catalog.yaml does not match"),
        (_raise_safety_threshold, "gatecli.json was changed after export"),
    ],
)
def test_every_file_of_the_folder_is_checked(
    tiny_model_copy: Path, tmp_path: Path, tamper: Callable[[Path], None], named: str
) -> None:
    assert run_cli(["info", "--model", tiny_model_copy], timeout=25).rc == 0
    tamper(tiny_model_copy)
    ran = classify_with(tiny_model_copy, tmp_path)
    assert ran.rc == 2 and named in ran.stderr, ran.stderr[-1000:]
    # an edit made on purpose (docs/policy.md "Writing your own"): the message names the
    # command that reseals the folder, and the resealed folder loads with the edit
    assert f"python -m gatecli.artifact seal {tiny_model_copy}" in ran.stderr, ran.stderr
    seal = [CLI[0], "-m", "gatecli.artifact", "seal", str(tiny_model_copy)]
    done = subprocess.run(seal, capture_output=True, text=True, timeout=25, env=cli_env())
    assert done.returncode == 0, done.stderr
    assert classify_with(tiny_model_copy, tmp_path).rc == 0


def test_a_format_1_folder_is_refused_with_the_fix(tiny_model_copy: Path, tmp_path: Path) -> None:
    path = tiny_model_copy / "gatecli.json"
    cfg = json.loads(path.read_text(encoding="utf-8"))
    cfg.pop("integrity", None)
    cfg["format_version"] = 1
    path.write_text(json.dumps(cfg, indent=2), encoding="utf-8")
    ran = classify_with(tiny_model_copy, tmp_path)
    assert ran.rc == 2 and "format_version 1" in ran.stderr
    assert "python -m gatecli.artifact seal" in ran.stderr
    # the named fix works: sealing a folder you trust makes it load again
    seal = [CLI[0], "-m", "gatecli.artifact", "seal", str(tiny_model_copy)]
    done = subprocess.run(seal, capture_output=True, text=True, timeout=25, env=cli_env())
    assert done.returncode == 0, done.stderr
    assert classify_with(tiny_model_copy, tmp_path).rc == 0
