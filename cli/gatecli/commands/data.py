"""``gatecli data``: build the labeled corpus, and bring reviewed labels back into it.

``data build`` wraps :func:`gatecli_train.corpus.build.build` (raw public datasets +
authored turns -> corpus splits, eval suites and the data card; needs the [train] extra);
``data import-labels`` wraps :func:`gatecli.labeling.import_labels.import_labels`. Paths
come from options or the environment (``$GATECLI_RAW``), never from where the package is
installed. Every problem with a path is reported as one line naming that path.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from gatecli.commands._util import APP_SETTINGS, fail
from gatecli.extras import install_hint

BUILD_HELP = """Build corpus/{train,dev,test}.jsonl.gz, eval/<suite>.jsonl.gz and README.md.

Examples:

\b
  gatecli data build --raw ../shared/datasets --out data
  GATECLI_RAW=../shared/datasets gatecli data build --limit-per-source 30 --out /tmp/corpus
"""

data_app = typer.Typer(help="Build the labeled-turn corpus.", **APP_SETTINGS)


def default_raw() -> Path | None:
    """``$GATECLI_RAW``; no guess relative to the package (it may sit in site-packages)."""
    env = os.environ.get("GATECLI_RAW")
    return Path(env) if env else None


def check_paths(raw: Path | None, extra: list[Path], authored: Path) -> Path:
    """The raw folder to read, after checking every path the build will open.

    Raises ValueError with one line naming the path and what it is instead.

    Example:
        >>> check_paths(None, [], Path("data/authored"))  # doctest: +SKIP
        Traceback (most recent call last):
        ValueError: no raw datasets folder: pass --raw DIR or set GATECLI_RAW
    """
    raw = raw or default_raw()
    if raw is None:
        raise ValueError("no raw datasets folder: pass --raw DIR or set GATECLI_RAW")
    if not raw.is_dir():
        what = "a file" if raw.exists() else "missing"
        raise ValueError(f"--raw {raw} is {what}; it must be the folder of raw datasets")
    for path in extra:
        if path.is_dir():
            raise ValueError(f"--extra {path} is a directory; pass JSONL files ({path}/*.jsonl)")
        if not path.is_file():
            raise ValueError(f"--extra {path}: file not found")
    if authored.exists() and not authored.is_dir():
        raise ValueError(f"--authored {authored} is a file; it must be a folder of *.jsonl")
    return raw


@data_app.command("build", help=BUILD_HELP)
def build_cli(
    raw: Annotated[
        Path | None, typer.Option("--raw", help="Raw datasets folder (default $GATECLI_RAW).")
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = Path("data"),
    limit_per_source: Annotated[
        int | None, typer.Option("--limit-per-source", min=1, help="A small slice, for tests.")
    ] = None,
    extra: Annotated[
        list[Path] | None, typer.Option("--extra", help="More spec §6 JSONL files (repeatable).")
    ] = None,
    authored: Annotated[
        Path, typer.Option("--authored", help="Folder of authored *.jsonl turns.")
    ] = Path("data/authored"),
    seeds: Annotated[
        Path, typer.Option("--seeds", help="Seed examples JSONL (the seeds suite).")
    ] = Path("data/suites/seeds.jsonl"),
) -> None:
    try:
        from gatecli_train.corpus.build import build
    except ImportError as exc:
        fail(f"gatecli data build needs the training extra ({exc})", hint=install_hint("train"))
    try:
        raw_dir = check_paths(raw, list(extra or []), authored)
        if not authored.is_dir():
            typer.echo(f"gatecli: {authored} does not exist: no authored turns", err=True)
        stats = build(
            raw_dir, out, limit_per_source=limit_per_source, extra=list(extra or []),
            authored_dir=authored, seed_file=seeds, card=out / "README.md",
        )  # fmt: skip
    except (OSError, ValueError) as exc:  # FileNotFoundError, IsADirectoryError, LeakError...
        if isinstance(exc, OSError) and exc.filename and exc.strerror:
            fail(f"{exc.filename}: {exc.strerror}")
        fail(str(exc))
    typer.echo(json.dumps(stats, indent=1, ensure_ascii=False))


@data_app.command("import-labels")
def import_labels_cli(
    file: Annotated[Path, typer.Argument(help="Label Studio JSON export with annotations.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Corpus JSONL to write.")],
    source: Annotated[str, typer.Option("--source", help="Record source / id prefix.")] = "review",
) -> None:
    """Bring reviewed Label Studio tasks back as corpus records (provenance authored)."""
    from gatecli.labeling.import_labels import import_labels

    try:
        res = import_labels(file, output, source=source)
    except (OSError, ValueError) as exc:
        fail(str(exc))
    for s in res.skipped:
        typer.echo(f"skipped task {s['task']}: {s['error']}", err=True)
    typer.echo(f"{res.records} records ({len(res.skipped)} skipped) -> {output}", err=True)


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")
