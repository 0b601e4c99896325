"""Shared fixtures: one tiny random model folder per test session (plumbing only)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A complete model folder with random weights, built offline through the real export."""
    from gatecli_train.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "tiny-model")


@pytest.fixture
def tiny_model_copy(tiny_model_dir: Path, tmp_path: Path) -> Path:
    """A private copy that a test may corrupt."""
    dst = tmp_path / "model"
    shutil.copytree(tiny_model_dir, dst)
    return dst
