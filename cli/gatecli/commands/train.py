"""``gatecli train``: fine-tune and export a model folder from a TOML recipe."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def train_cli(
    config: Annotated[
        Path, typer.Option("--config", "-c", help="Recipe TOML (gatecli_train/configs/*.toml).")
    ],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Model folder (default models/<name>).")
    ] = None,
    run_dir: Annotated[
        Path | None,
        typer.Option(
            "--run-dir", help="Checkpoints; run again to resume (default runs/<recipe stem>)."
        ),
    ] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a key: --set train.epochs=1")
    ] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress")] = True,
) -> None:
    """Train, calibrate, export to ONNX int8 and check parity.

    Example: gatecli train --config train/gatecli_train/configs/gate-small.toml --set train.epochs=1
    """
    try:
        from gatecli_train.config import load_recipe
        from gatecli_train.pipeline import run
    except ImportError as exc:
        typer.echo(
            f"gatecli train needs the training extra: pip install 'gatecli[train]' ({exc})",
            err=True,
        )
        raise typer.Exit(2) from exc
    recipe = load_recipe(config, set_ or [])
    name = recipe.export.name
    summary = run(
        recipe,
        out or Path("models") / name,
        # Per recipe file, not per model name: two recipes may ship the same model name.
        run_dir or Path("runs") / config.stem,
        progress=progress,
        log=lambda m: typer.echo(m, err=True),
    )
    typer.echo(json.dumps(summary, indent=2))


def register(app: typer.Typer) -> None:
    app.command("train")(train_cli)
