"""``staged_folder``: a model folder is put in place whole, or the old one stays."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gatecli_train import staging


def test_the_folder_gets_the_umask_mode_not_a_private_one(tmp_path: Path) -> None:
    out = tmp_path / "m"
    with staging.staged_folder(out) as tmp:
        (tmp / "model.onnx").write_bytes(b"x")
    umask = os.umask(0)
    os.umask(umask)
    assert (out.stat().st_mode & 0o777) == 0o777 & ~umask


def test_a_path_that_is_a_file_is_refused_and_kept(tmp_path: Path) -> None:
    out = tmp_path / "m"
    out.write_text("not a folder")
    with pytest.raises(NotADirectoryError), staging.staged_folder(out):
        pass
    assert out.read_text() == "not a folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]


def test_a_failed_swap_puts_the_old_folder_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old folder is renamed aside before the new one moves in; if that second rename
    fails, the old one returns to its place and nothing is left beside it."""
    out = tmp_path / "m"
    out.mkdir()
    (out / "gatecli.json").write_text("old")
    real = os.rename

    def refuse_the_new_folder(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if str(src).endswith(".partial"):
            raise OSError("disk said no")
        real(src, dst)

    monkeypatch.setattr(staging.os, "rename", refuse_the_new_folder)
    with pytest.raises(OSError, match="disk said no"), staging.staged_folder(out) as tmp:
        (tmp / "gatecli.json").write_text("new")
    assert (out / "gatecli.json").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]


def test_a_symlinked_destination_replaces_the_folder_it_names(tmp_path: Path) -> None:
    target = tmp_path / "real"
    target.mkdir()
    (target / "stale.txt").write_text("old")
    link = tmp_path / "link"
    link.symlink_to(target)
    with staging.staged_folder(link) as tmp:
        (tmp / "model.onnx").write_bytes(b"x")
    assert link.is_symlink() and sorted(p.name for p in target.iterdir()) == ["model.onnx"]
