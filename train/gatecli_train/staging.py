"""Model folders are built beside their destination and put in place whole, or not at all.

Why: ``gatecli train`` exported straight into ``--out``, so an export that failed its parity
floor left ``model.onnx`` there without a ``gatecli.json`` (or beside the previous one, whose
hashes then no longer matched): a folder nothing can load, over whatever ``--out`` held.
A folder under construction lives in a hidden sibling (same file system, so the final rename
is one step) and replaces ``out_dir`` only once it is complete; on any error the sibling is
removed and ``out_dir`` is exactly as it was.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def staged_folder(out_dir: Path) -> Iterator[Path]:
    """Yield an empty sibling of ``out_dir`` to write a folder into; on a clean exit it
    replaces ``out_dir`` whole (every file the old folder held is gone, a hand-written card
    included), on an error it is removed and ``out_dir`` is untouched. A path that exists and
    is not a folder is refused; a symlink's target folder is the one replaced.

    Example:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp()) / "model"
        >>> with staged_folder(out) as tmp:
        ...     _ = (tmp / "a.txt").write_text("done")
        >>> sorted(p.name for p in out.iterdir())
        ['a.txt']
        >>> try:
        ...     with staged_folder(out) as tmp:
        ...         _ = (tmp / "b.txt").write_text("half")
        ...         raise RuntimeError("parity check failed")
        ... except RuntimeError:
        ...     pass
        >>> sorted(p.name for p in out.iterdir()), len(list(out.parent.iterdir()))
        (['a.txt'], 1)
    """
    out_dir = Path(out_dir)
    if out_dir.is_symlink():
        out_dir = out_dir.resolve()  # the folder it names is replaced, as mkdir wrote into it
    if out_dir.exists() and not out_dir.is_dir():
        raise NotADirectoryError(f"{out_dir} exists and is not a folder: not replaced")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".partial", dir=out_dir.parent))
    # mkdtemp makes the folder private (0700); a model folder is read by other users and
    # services as mkdir would have made it (the umask's mode).
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)
    old: Path | None = None
    try:
        yield tmp
        if out_dir.exists():
            # Renamed aside first, so that out_dir is never a half-deleted folder: between the
            # two renames it is absent, never wrong; if the second fails it is put back.
            old = Path(
                tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".old", dir=out_dir.parent)
            )
            os.rename(out_dir, old / out_dir.name)
        try:
            os.rename(tmp, out_dir)
        except BaseException:
            if old is not None and (old / out_dir.name).exists():
                os.rename(old / out_dir.name, out_dir)
            raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
