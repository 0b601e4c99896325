"""The one-import-name layout works installed both ways (editable and wheel)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_layout_holds_only_the_three_packages() -> None:
    """`packages.find` discovers real packages; nothing else can leak in as a top-level name."""
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "package-dir" not in cfg  # no mapping: static tools follow imports from the checkout
    where = cfg["packages"]["find"]["where"]
    tops = {
        child.name
        for root in where
        for child in (REPO / root).iterdir()
        if (child / "__init__.py").is_file()
    }
    assert tops == {"gatecli", "gatecli_train", "gatecli_models"}
    assert not any((REPO / root / "__init__.py").exists() for root in where)


def _dev_site_packages() -> list[str]:
    """The running interpreter's site-packages (a venv's own when pytest runs in one)."""
    import site
    import sysconfig

    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    paths.update(p for p in site.getsitepackages() if "site-packages" in p)
    return sorted(paths)


@pytest.mark.slow
def test_wheel_install_runs_console_script(tmp_path: Path, tiny_model_dir: Path) -> None:
    """`pip install .` (not editable) into a fresh venv gives a working `gatecli`."""
    venv = tmp_path / "venv"
    # A plain venv that sees this interpreter's packages (torch, typer, ...) through a .pth
    # file: `--system-site-packages` would expose the *base* interpreter's packages instead
    # when pytest itself runs in a venv. Path lines of a .pth are appended after the venv's own
    # site-packages (the installed copy wins) and the checkout's editable hook is not loaded.
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    venv_site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(venv_site, "zz_dev_site.pth").write_text("\n".join(_dev_site_packages()) + "\n")
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
            "import gatecli, gatecli_train; print(gatecli.__file__)",
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
