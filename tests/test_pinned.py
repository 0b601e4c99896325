"""``git:<rev>:<path>`` folders: a recipe that names a commit gets that commit's folder, even
after the path holds a newer release, checked against its own hashes; a teacher is read back
into a run folder. On the tiny random folder in a throwaway repository (plumbing)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from gatecli.artifact import ArtifactError
from gatecli_train import pinned
from gatecli_train.config import load_recipe
from gatecli_train.model import default_head_defs
from gatecli_train.pipeline import load_run_model

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}  # fmt: skip
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True,
                          text=True, env=env)  # fmt: skip
    return done.stdout.strip()


@pytest.fixture
def repo(tiny_model_dir: Path, tmp_path: Path) -> tuple[Path, str]:
    """A repository whose models/m is the tiny folder at its first commit (returned) and a
    different folder (one file changed, hashes rewritten) at HEAD."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    shutil.copytree(tiny_model_dir, root / "models/m")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "first")
    first = _git(root, "rev-parse", "HEAD")
    shutil.rmtree(root / "models/m")
    (root / "models/m").mkdir()
    (root / "models/m/NOTE").write_text("the next release\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "second")
    return root, first


def test_plain_paths_pass_through() -> None:
    assert pinned.model_folder("runs/x") == Path("runs/x")
    assert pinned.teacher_run("runs/x") == Path("runs/x")


@pytest.mark.parametrize("spec", ["git:", "git:abc", "git::models/m", "git:abc:/"])
def test_malformed_spec(spec: str) -> None:
    with pytest.raises(ValueError, match="git:<revision>:<path>"):
        pinned.parse(spec)


def test_the_commit_wins_over_the_worktree(repo: tuple[Path, str], tiny_model_dir: Path,
                                           tmp_path: Path) -> None:  # fmt: skip
    root, first = repo
    cache = tmp_path / "cache"
    got = pinned.model_folder(f"git:{first[:7]}:models/m", repo=root, cache=cache)
    assert got.parent == cache and got.name.startswith(first[:12])
    want = sorted(p.name for p in tiny_model_dir.iterdir())
    assert sorted(p.name for p in got.iterdir()) == want
    for name in want:
        assert (got / name).read_bytes() == (tiny_model_dir / name).read_bytes()
    # a second call reuses the extraction
    assert pinned.model_folder(f"git:{first}:models/m", repo=root, cache=cache) == got


def test_a_changed_extraction_is_refused(repo: tuple[Path, str], tmp_path: Path) -> None:
    root, first = repo
    cache = tmp_path / "cache"
    got = pinned.model_folder(f"git:{first}:models/m", repo=root, cache=cache)
    (got / "model.onnx").write_bytes(b"not the pinned weights")
    with pytest.raises(ArtifactError):
        pinned.model_folder(f"git:{first}:models/m", repo=root, cache=cache)


def test_unknown_commit_and_path(repo: tuple[Path, str], tmp_path: Path) -> None:
    root, first = repo
    with pytest.raises(ValueError, match="has no commit 'deadbeef'"):
        pinned.model_folder("git:deadbeef:models/m", repo=root, cache=tmp_path / "c")
    with pytest.raises(ValueError, match="git archive"):
        pinned.model_folder(f"git:{first}:models/none", repo=root, cache=tmp_path / "c")


def test_teacher_is_read_back_into_a_run_folder(repo: tuple[Path, str], tmp_path: Path) -> None:
    root, first = repo
    run = pinned.teacher_run(f"git:{first}:models/m", repo=root, cache=tmp_path / "cache")
    assert run.name.endswith(".run") and (run / "model.final.pt").is_file()
    model, _ = load_run_model(run, default_head_defs())
    ids = torch.tensor([[2, 5, 3]])
    with torch.no_grad():
        out = model(ids, torch.ones_like(ids))
    assert set(out) == {h.name for h in default_head_defs()}
    # a second call reuses it
    assert pinned.teacher_run(f"git:{first}:models/m", repo=root, cache=tmp_path / "cache") == run


def test_recipes_pin_the_folders_they_continue() -> None:
    """No recipe continues or distils from the bare shipped path (it moves with each release),
    and every ``git:`` folder a recipe names is a model folder at that commit of this
    repository (a fresh clone has the whole history)."""
    repo = Path(__file__).resolve().parent.parent
    if not (repo / ".git").exists():
        pytest.skip("not a git checkout")
    if _git(repo, "rev-parse", "--is-shallow-repository") == "true":
        pytest.skip("a shallow clone lacks the pinned commits")
    shipped = "models/gatecli_models/gate-small"
    pins = 0
    for path in sorted((repo / "train/gatecli_train/configs").glob("*.toml")):
        recipe = load_recipe(path)
        for spec in (recipe.model.init_from, recipe.distill.teacher):
            assert spec.strip("./") != shipped, f"{path.name}: pin {spec!r} to a commit"
            pin = pinned.parse(spec)
            if pin is None:
                continue
            rev, folder = pin
            _git(repo, "cat-file", "-e", f"{rev}^{{commit}}:{folder}/gatecli.json")
            pins += 1
    assert pins >= 8
