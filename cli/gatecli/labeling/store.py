"""Committed output parts, the manifest and the final assembly: what makes labeling resumable.

A run writes ``OUTPUT.parts/part-00000.jsonl`` ... (temp file + ``os.replace``), each part
holding the output rows of one input chunk, then ``manifest.json`` (also temp + rename).
A run killed at any point leaves only whole parts; the next run counts the rows of the
committed parts and skips that many input rows (input order is deterministic), so no row is
labeled twice or lost. When every part exists the final OUTPUT is assembled into a temp file
and renamed, the manifest is marked complete, and the part files are deleted. The manifest's
fingerprint (input paths, sizes, mtimes, model sha256, reading options) refuses to resume
against changed inputs or another model. A finished output is trusted only while its size
and sha256 match the manifest; a truncated or edited one is labeled again, with a note
saying why. One run at a time per output: :func:`output_lock` takes an exclusive
``flock`` on ``.OUTPUT.lock`` beside it, and a second run is refused before it touches
anything. Left out: classification (:mod:`.pipeline`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
PART_RE = re.compile(r"^part-(\d{5,})\.jsonl$")
MANIFEST_VERSION = 2  # 2: the finished output's size and sha256


class StoreError(RuntimeError):
    """The output folder cannot be resumed as is; the message names the fix."""


def fingerprint(
    inputs: Sequence[str | Path], model_sha256: str, options: dict[str, Any]
) -> dict[str, Any]:
    """What must not change between a run and its resume.

    Example:
        >>> fingerprint([], "abc", {"format": "auto"})["model_sha256"]
        'abc'
    """
    files = []
    for p in inputs:
        st = Path(p).stat()
        files.append(
            {"path": str(Path(p).resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
        )
    return {"inputs": files, "model_sha256": model_sha256, "options": dict(sorted(options.items()))}


def lock_path(output: Path) -> Path:
    """The lock file of a labeling output: ``.NAME.lock`` beside it."""
    return output.with_name(f".{output.name}.lock")


@contextlib.contextmanager
def output_lock(output: Path) -> Iterator[Path]:
    """Hold an exclusive lock on ``output`` for one labeling run.

    ``flock`` is released by the kernel when the process ends, however it ends, so a
    killed run never leaves a stale lock. Raises :class:`StoreError` at once when another
    run holds it. Without ``fcntl`` (Windows) runs are not locked.

    Example:
        >>> with output_lock(Path("out.jsonl")):  # doctest: +SKIP
        ...     pass
    """
    path = lock_path(Path(output))
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield path
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(
                f"{output} is in use by another `gatecli label` run (it holds {path}); "
                f"wait for that run to finish, or label into another output"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield path
    finally:
        os.close(fd)


def file_digest(path: Path) -> dict[str, Any]:
    """``{"size", "sha256"}`` of a file, as the manifest stores the finished output."""
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
            size += len(block)
    return {"size": size, "sha256": h.hexdigest()}


def atomic_write(path: Path, data: bytes) -> None:
    """Write bytes so that ``path`` is either absent, old, or complete (never half-written)."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


@dataclass
class PartInfo:
    """One committed part: its index, its row count and its per-part statistics."""

    index: int
    rows: int
    stats: dict[str, Any]


class PartStore:
    """The ``OUTPUT.parts`` folder of one labeling run.

    Example:
        >>> store = PartStore(Path("out.jsonl"), {"inputs": []})  # doctest: +SKIP
        >>> store.open(restart=False).done_rows  # doctest: +SKIP
        0
    """

    def __init__(self, output: Path, fp: dict[str, Any]) -> None:
        self.output = Path(output)
        self.dir = self.output.with_name(self.output.name + ".parts")
        self.fp = fp
        self.parts: list[PartInfo] = []
        self.complete = False
        self.summary: dict[str, Any] = {}
        self.output_digest: dict[str, Any] | None = None
        self.notes: list[str] = []  # why a finished output is labeled again

    # --- state -----------------------------------------------------------------------

    @property
    def done_rows(self) -> int:
        return sum(p.rows for p in self.parts)

    def part_path(self, index: int, suffix: str = ".jsonl") -> Path:
        return self.dir / f"part-{index:05d}{suffix}"

    def open(self, *, restart: bool = False) -> PartStore:
        """Load the committed state, or start empty; refuse a mismatched fingerprint."""
        if restart and self.dir.exists():
            shutil.rmtree(self.dir)
        manifest = self._read_manifest()
        if manifest is None:
            if self.output.exists() and not restart:
                raise StoreError(
                    f"{self.output} exists and was not written by `gatecli label` "
                    f"(no {self.dir / MANIFEST}); pass --restart to overwrite it"
                )
            self.dir.mkdir(parents=True, exist_ok=True)
            self._write_manifest()
            return self
        if manifest.get("fingerprint") != self.fp:
            raise StoreError(
                f"{self.dir} belongs to other inputs, options or another model; "
                f"pass --restart to discard it and label from the start"
            )
        if manifest.get("complete"):
            problem = self._output_problem(manifest.get("output"))
            if problem is None:
                self.complete = True
                self.summary = manifest.get("summary", {})
                self.output_digest = manifest.get("output")
                self.parts = [
                    PartInfo(p["index"], p["rows"], p["stats"]) for p in manifest["parts"]
                ]
                return self
            # The parts were deleted when the output was assembled: label from the start.
            self.notes.append(f"{self.output} {problem}; labeling it again from the start")
            self._remove_after(0)
            self._write_manifest()
            return self
        self.summary = manifest.get("summary", {})
        stats = {p["index"]: p["stats"] for p in manifest.get("parts", [])}
        self.parts = []
        for index in range(len(self._part_files())):
            path = self.part_path(index)
            if not path.exists():
                break  # only a contiguous prefix counts
            rows = _count_lines(path)
            side = self.read_stats(index)
            self.parts.append(
                PartInfo(index, rows, side if side is not None else stats.get(index, {}))
            )
        self._remove_after(len(self.parts))
        return self

    def _output_problem(self, expected: Any) -> str | None:
        """Why the finished output cannot be trusted as complete, or None when it can."""
        if not self.output.is_file():
            return "is missing"
        if not isinstance(expected, dict) or "sha256" not in expected:
            return "has no size and sha256 in its manifest (an older gatecli wrote it)"
        actual = file_digest(self.output)
        if actual["size"] != expected.get("size"):
            return (
                f"is {actual['size']} bytes but its manifest says {expected.get('size')} "
                f"(truncated or changed after labeling)"
            )
        if actual["sha256"] != expected["sha256"]:
            return "does not match the sha256 in its manifest (changed after labeling)"
        return None

    def _part_files(self) -> list[Path]:
        return sorted(p for p in self.dir.iterdir() if PART_RE.match(p.name))

    def _remove_after(self, n: int) -> None:
        for p in self.dir.iterdir():
            m = re.match(r"^part-(\d{5,})\.", p.name)
            if (m and int(m.group(1)) >= n) or ".tmp-" in p.name:
                p.unlink()

    def _read_manifest(self) -> dict[str, Any] | None:
        path = self.dir / MANIFEST
        if not path.exists():
            return None
        try:
            manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise StoreError(f"{path} is unreadable ({exc}); pass --restart") from exc
        return manifest

    def read_stats(self, index: int) -> dict[str, Any] | None:
        path = self.part_path(index, ".stats.json")
        try:
            stats: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return stats

    def _write_manifest(self) -> None:
        body = {
            "version": MANIFEST_VERSION,
            "fingerprint": self.fp,
            "complete": self.complete,
            "parts": [
                {"index": p.index, "rows": p.rows, "stats": _public(p.stats)} for p in self.parts
            ],
            "summary": self.summary,
            "output": self.output_digest,
        }
        atomic_write(self.dir / MANIFEST, json.dumps(body, ensure_ascii=False, indent=1).encode())

    # --- writing ---------------------------------------------------------------------

    def commit(self, text: str, rows: int, stats: dict[str, Any]) -> PartInfo:
        """Commit the next part: its stats sidecar first, then the rows (the commit point)."""
        info = PartInfo(len(self.parts), rows, stats)
        atomic_write(self.part_path(info.index, ".stats.json"), json.dumps(stats).encode())
        atomic_write(self.part_path(info.index), text.encode("utf-8"))
        self.parts.append(info)
        self._write_manifest()
        return info

    def iter_rows(self) -> Iterator[bytes]:
        """The committed rows in order, as raw JSONL lines (for assembly and review)."""
        for p in self.parts:
            with open(self.part_path(p.index), "rb") as f:
                yield from f

    def finish(self, summary: dict[str, Any], write_final: Any) -> None:
        """Assemble OUTPUT (temp + rename via ``write_final(tmp_path)``), mark the manifest
        complete, then delete the parts."""
        tmp = self.output.with_name(f".{self.output.name}.tmp-{os.getpid()}")
        write_final(tmp)
        self.output_digest = file_digest(tmp)
        os.replace(tmp, self.output)
        self.complete = True
        self.summary = summary
        self._write_manifest()
        for p in self.dir.iterdir():
            if p.name != MANIFEST:
                p.unlink()


def _public(stats: dict[str, Any]) -> dict[str, Any]:
    """Stats without the review candidates (those stay in the sidecar, out of the manifest)."""
    return {k: v for k, v in stats.items() if k != "review"}


def _count_lines(path: Path) -> int:
    n = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            n += block.count(b"\n")
    return n
