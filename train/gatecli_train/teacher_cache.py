"""Teacher logits kept beside the teacher, so a second distillation stage does not rescore.

A full distillation is two runs on one training set (the 2-epoch student, then its
1-epoch continuation); scoring that set with the 12-layer teacher costs 12-15 minutes of a
2-core machine each time, about a sixth of the session a release must fit in (issue 14).
The logits depend only on the teacher's weights, the token ids of each example in order,
and the heads, so those are the key; anything else (a retrained teacher, a new corpus or
template, another sampling seed) is a new file. The cache lives in the teacher's run folder,
which is not committed and is rebuilt whenever the teacher is.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gatecli_train.examples import Example, hash_ids
from gatecli_train.model import HeadDef

WEIGHTS = "model.final.pt"


def cache_key(teacher_dir: Path, examples: Sequence[Example], heads: Sequence[HeadDef]) -> str:
    """sha256 over the teacher's weights file, the heads and every example's token ids."""
    h = hashlib.sha256()
    with open(teacher_dir / WEIGHTS, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    for head in heads:
        h.update(f"{head.name}:{','.join(head.labels)};".encode())
    hash_ids(h, examples)
    return h.hexdigest()[:20]


def cache_path(teacher_dir: Path, examples: Sequence[Example], heads: Sequence[HeadDef]) -> Path:
    """Where the logits of ``examples`` live beside the teacher (named by :func:`cache_key`)."""
    return teacher_dir / f"teacher-logits-{cache_key(teacher_dir, examples, heads)}.npz"


def cached_logits(
    teacher_dir: Path,
    examples: Sequence[Example],
    heads: Sequence[HeadDef],
    score: Callable[[], dict[str, np.ndarray]],
    *,
    path: Path | None = None,
) -> tuple[dict[str, np.ndarray], bool]:
    """Logits for ``examples`` from the cache, else ``score()`` written to it atomically.

    Returns the logits and whether they came from the cache. A cache file that cannot be
    read, or whose arrays do not match the heads and example count, is a miss and is
    rewritten; a cache that cannot be written (read-only or full disk) costs the next run
    a rescoring, never this run's logits. ``path`` is :func:`cache_path`'s answer when the
    caller already has it: the key hashes the teacher's weights (130 MB) and every example,
    so a caller that also reports the path computes it once.
    """
    path = path or cache_path(teacher_dir, examples, heads)
    got = _read(path, heads)
    if got is not None and all(got[h.name].shape == (len(examples), len(h.labels)) for h in heads):
        return got, True
    logits = score()
    fd, tmp = tempfile.mkstemp(dir=teacher_dir, suffix=".npz.tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            arrays: dict[str, Any] = dict(logits)  # numpy's stubs read ** as allow_pickle
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        warnings.warn(f"teacher logits not cached in {teacher_dir}: {exc}", stacklevel=2)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return logits, False


def _read(path: Path, heads: Sequence[HeadDef]) -> dict[str, np.ndarray] | None:
    """Every head's array from a cache file, or None when it is missing or unreadable."""
    try:
        with np.load(path) as z:
            return {h.name: z[h.name] for h in heads}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile):
        return None
