"""Model folders named at a git revision: ``git:<rev>:<path>`` in ``model.init_from`` and
``[distill] teacher``.

Why: ``models/gatecli_models/gate-small`` is whichever release is shipped now, so a recipe
that continues "the shipped folder" starts from other weights once the next release lands
(the 1.2.34-1.2.36 recipes continued 1.2.28; after 1.2.36 shipped the same line meant
1.2.36). Every shipped folder stays in the committed history, so naming the commit makes the
recipe mean one set of weights on any clone. The folder is extracted once under
``runs/.pinned/`` (not committed, like every run folder) and its own file hashes
(``gatecli.json``) are checked before anything reads it; a teacher is also read back into a
run folder there (:func:`gatecli_train.from_onnx.to_run_dir`), where its logit cache lives.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from gatecli import artifact
from gatecli_train import from_onnx

PREFIX = "git:"
CACHE = Path("runs/.pinned")
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def parse(spec: str) -> tuple[str, str] | None:
    """``(rev, path)`` of a ``git:<rev>:<path>`` spec, None for a plain path.

    >>> parse("git:10a7892:models/gatecli_models/gate-small")
    ('10a7892', 'models/gatecli_models/gate-small')
    >>> parse("runs/gate-small") is None
    True
    """
    if not spec.startswith(PREFIX):
        return None
    rev, sep, path = spec[len(PREFIX) :].partition(":")
    path = path.strip("/")
    if not (rev and sep and path):
        raise ValueError(f"{spec!r}: a pinned folder is written git:<revision>:<path>")
    return rev, path


def _git(repo: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)
    except FileNotFoundError as exc:
        raise RuntimeError("a git: folder needs git on PATH") from exc
    except subprocess.CalledProcessError as exc:
        err = exc.stderr.decode(errors="replace").strip()
        raise ValueError(f"git {' '.join(args)} failed in {repo}: {err}") from exc
    return done.stdout


def _slug(sha: str, path: str) -> str:
    return f"{sha[:12]}-{_SLUG.sub('_', path)}"


def model_folder(spec: str, *, repo: Path = Path("."), cache: Path = CACHE) -> Path:
    """The local folder ``spec`` names: a plain path as it is, a ``git:`` one extracted from
    that commit (once; checked against its hashes every time)."""
    pin = parse(spec)
    if pin is None:
        return Path(spec)
    rev, path = pin
    try:
        sha = _git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").decode().strip()
    except ValueError as exc:
        raise ValueError(f"{spec!r}: {repo.resolve()} has no commit {rev!r}") from exc
    dest = cache / _slug(sha, path)
    if not dest.is_dir():
        blob = _git(repo, "archive", "--format=tar", sha, "--", path)
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
                tar.extractall(tmp, filter="data")
            try:  # a rename: the folder appears whole
                os.rename(Path(tmp) / path, dest)
            except OSError:
                if not dest.is_dir():  # else another process extracted it first
                    raise
    artifact.load_model_folder(dest)  # raises on a file whose hash differs
    return dest


def teacher_run(spec: str, *, repo: Path = Path("."), cache: Path = CACHE) -> Path:
    """The run folder ``[distill] teacher`` names: a plain path as it is (a run folder), a
    ``git:`` model folder read back into a run folder beside its extraction (once)."""
    if parse(spec) is None:
        return Path(spec)
    folder = model_folder(spec, repo=repo, cache=cache)
    run = folder.with_name(folder.name + ".run")
    if not (run / "model.final.pt").is_file():
        tmp = Path(tempfile.mkdtemp(prefix=f".{run.name}.", dir=run.parent))
        try:
            from_onnx.to_run_dir(folder, tmp)
            os.rename(tmp, run)
        except OSError:
            if not (run / "model.final.pt").is_file():  # else another process wrote it first
                raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return run
