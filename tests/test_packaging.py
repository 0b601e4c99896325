"""The one-import-name layout works installed both ways (editable and wheel)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _declared() -> tuple[list[str], dict[str, str]]:
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    return cfg["packages"], cfg["package-dir"]


def test_every_package_folder_is_declared() -> None:
    packages, dirs = _declared()
    found = set()
    for name, root in dirs.items():
        for init in (REPO / root).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / root)
            dotted = ".".join((name, *rel.parts)) if rel.parts else name
            if not any(
                dotted.startswith(f"{other}.") or dotted == other
                for other in dirs
                if other != name and len(other) > len(name)
            ):
                found.add(dotted)
    assert found == set(packages)
    # no top-level cli/train modules leak into site-packages
    assert not any(p.split(".")[0] in {"cli", "train"} for p in packages)


@pytest.mark.slow
def test_wheel_install_runs_console_script(tmp_path: Path, tiny_model_dir: Path) -> None:
    """`pip install .` (not editable) into a fresh venv gives a working `gatecli`."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    pip = venv / "bin" / "pip"
    subprocess.run(
        [str(pip), "install", "-q", "--no-deps", str(REPO)],
        check=True,
        cwd=tmp_path,
    )
    exe = venv / "bin" / "gatecli"
    env = {**os.environ, "PYTHONPATH": ""}
    out = subprocess.run(
        [str(exe), "--version"], capture_output=True, text=True, env=env, cwd=tmp_path, check=True
    )
    assert out.stdout.startswith("gatecli ")
    where = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import gatecli, gatecli.train; print(gatecli.__file__)",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    )
    assert str(venv) in where.stdout  # the installed copy, not the checkout
    res = subprocess.run(
        [str(exe), "classify", "-", "--model", str(tiny_model_dir)],
        input="声音调到90\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    )
    assert res.stdout.count("\n") == 1 and '"decision"' in res.stdout
    # the shipped model is package data: no --model needed after a plain install
    res = subprocess.run(
        [str(exe), "classify", "-"],
        input="声音调到90\n",
        capture_output=True,
        text=True,
        env={k: v for k, v in env.items() if k != "GATECLI_MODEL"},
        cwd=tmp_path,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert '"model": "gate-small@' in res.stdout
