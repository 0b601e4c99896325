"""`gatecli data build`: raw public datasets + authored turns -> labeled corpus and eval suites."""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer

# typer reads options from defaults; module-level singletons keep ruff's B008 quiet.
RAW_OPT = typer.Option(None, "--raw", help="Raw datasets folder (default $GATECLI_RAW).")
OUT_OPT = typer.Option(Path("data"), "--out", help="Output folder (default ./data).")
LIMIT_OPT = typer.Option(None, "--limit-per-source", help="Small slice for tests.")
EXTRA_OPT = typer.Option(None, "--extra", help="More spec §6 JSONL files (repeatable).")


def default_raw() -> Path | None:
    """``$GATECLI_RAW``; no guess relative to the package (it may sit in site-packages)."""
    env = os.environ.get("GATECLI_RAW")
    return Path(env) if env else None


def register(app: typer.Typer) -> None:
    data_app = typer.Typer(help="Build the labeled-turn corpus.", no_args_is_help=True)

    @data_app.command("build")
    def build_cmd(
        raw: Path = RAW_OPT,
        out: Path = OUT_OPT,
        limit_per_source: int = LIMIT_OPT,
        extra: list[Path] = EXTRA_OPT,
    ) -> None:
        """Build corpus/{train,dev,test}.jsonl.gz, eval/<suite>.jsonl.gz and README.md."""
        try:
            from gatecli_train.corpus.build import build
        except ImportError as exc:  # pragma: no cover
            raise typer.BadParameter(f"{exc}: pip install 'gatecli[train]'") from exc
        raw = raw or default_raw()
        if raw is None:
            typer.echo("error: no raw datasets folder: pass --raw DIR or set GATECLI_RAW", err=True)
            raise typer.Exit(2)
        try:
            stats = build(
                raw,
                out,
                limit_per_source=limit_per_source,
                extra=extra or [],
                card=out / "README.md",
            )
        except FileNotFoundError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        typer.echo(json.dumps(stats, indent=1, ensure_ascii=False))

    from gatecli.labeling.import_labels import register_import

    register_import(data_app)
    app.add_typer(data_app, name="data")
