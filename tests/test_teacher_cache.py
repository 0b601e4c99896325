"""The teacher-logit cache: one file per (teacher weights, heads, token ids), checked on read."""

from __future__ import annotations

import errno
from pathlib import Path

import numpy as np
import pytest

from gatecli_train import teacher_cache
from gatecli_train.examples import Example
from gatecli_train.model import HeadDef
from gatecli_train.teacher_cache import cached_logits

HEADS = [HeadDef("decision", ("execute", "ask"), False), HeadDef("events", ("a", "b", "c"), True)]


def _examples(*ids: list[int]) -> list[Example]:
    return [Example(ids=i, targets={}, known={}, record={}) for i in ids]


def _scorer(n: int, calls: list[int], value: float = 1.0):
    def score() -> dict[str, np.ndarray]:
        calls.append(n)
        return {h.name: np.full((n, len(h.labels)), value, np.float32) for h in HEADS}

    return score


def test_second_call_reads_the_cache_and_a_new_input_rescores(tmp_path: Path) -> None:
    (tmp_path / "model.final.pt").write_bytes(b"weights-1")
    ex = _examples([1, 2, 3], [4, 5])
    calls: list[int] = []
    first, hit = cached_logits(tmp_path, ex, HEADS, _scorer(2, calls))
    assert not hit and calls == [2]
    again, hit = cached_logits(tmp_path, ex, HEADS, _scorer(2, calls, 9.0))
    assert hit and calls == [2]
    assert np.array_equal(again["events"], first["events"])
    # one token more, or other teacher weights: scored again, not read
    _, hit = cached_logits(tmp_path, _examples([1, 2, 3], [4, 5, 6]), HEADS, _scorer(2, calls))
    assert not hit
    (tmp_path / "model.final.pt").write_bytes(b"weights-2")
    _, hit = cached_logits(tmp_path, ex, HEADS, _scorer(2, calls))
    assert not hit and len(calls) == 3
    assert not list(tmp_path.glob("*.tmp"))


def test_a_cache_file_of_the_wrong_shape_is_rewritten(tmp_path: Path) -> None:
    (tmp_path / "model.final.pt").write_bytes(b"w")
    ex = _examples([1], [2])
    calls: list[int] = []
    cached_logits(tmp_path, ex, HEADS, _scorer(2, calls))
    (path,) = tmp_path.glob("teacher-logits-*.npz")
    np.savez(path, decision=np.zeros((1, 2)))  # truncated: one row, one head
    got, hit = cached_logits(tmp_path, ex, HEADS, _scorer(2, calls, 5.0))
    assert not hit and got["events"].shape == (2, 3) and float(got["events"][0, 0]) == 5.0
    _, hit = cached_logits(tmp_path, ex, HEADS, _scorer(2, calls))
    assert hit


def test_a_damaged_cache_file_is_a_miss_and_is_rewritten(tmp_path: Path) -> None:
    (tmp_path / "model.final.pt").write_bytes(b"w")
    ex = _examples([1], [2])
    calls: list[int] = []
    cached_logits(tmp_path, ex, HEADS, _scorer(2, calls))
    (path,) = tmp_path.glob("teacher-logits-*.npz")
    path.write_bytes(path.read_bytes()[:40])  # cut mid-file, as a crash would leave it
    _, hit = cached_logits(tmp_path, ex, HEADS, _scorer(2, calls))
    assert not hit and len(calls) == 2
    _, hit = cached_logits(tmp_path, ex, HEADS, _scorer(2, calls))
    assert hit  # rewritten whole


def test_a_full_disk_costs_the_cache_not_the_logits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC while writing (injected: a real full disk is not a test fixture) only warns."""

    def no_space(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    (tmp_path / "model.final.pt").write_bytes(b"w")
    monkeypatch.setattr(teacher_cache.np, "savez", no_space)
    with pytest.warns(UserWarning, match="not cached"):
        got, hit = cached_logits(tmp_path, _examples([1], [2]), HEADS, _scorer(2, []))
    assert not hit and got["decision"].shape == (2, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.final.pt"]  # no temp file left


def test_a_given_cache_path_is_not_rehashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--score-teacher`` reports the cache path it scored into: it hashes the teacher's
    weights and every example once, not once more inside ``cached_logits``."""
    (tmp_path / "model.final.pt").write_bytes(b"w")
    ex = _examples([1], [2])
    path = teacher_cache.cache_path(tmp_path, ex, HEADS)

    def no_rehash(*args: object) -> str:
        raise AssertionError("cache key computed twice")

    monkeypatch.setattr(teacher_cache, "cache_key", no_rehash)
    calls: list[int] = []
    _, hit = cached_logits(tmp_path, ex, HEADS, _scorer(2, calls), path=path)
    assert not hit and path.exists()
    _, hit = cached_logits(tmp_path, ex, HEADS, _scorer(2, calls), path=path)
    assert hit and len(calls) == 1
