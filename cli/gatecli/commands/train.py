"""``gatecli train``: fine-tune and export a model folder from a TOML recipe.

A thin wrapper over :func:`gatecli_train.pipeline.run` (which returns the run's summary);
the training package is imported only here, inside the command, so the runtime never
needs torch. A recipe that does not load, a missing corpus or a failed parity check is
one line on stderr and exit code 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from gatecli.commands._util import fail
from gatecli.extras import install_hint

HELP = """Train, calibrate, export to ONNX int8 and check parity.

Examples:

\b
  gatecli train --config train/gatecli_train/configs/smoke.toml --out /tmp/smoke
  gatecli train -c train/gatecli_train/configs/gate-small.toml --set train.epochs=1
  gatecli train -c <distilled recipe> --score-teacher   # the teacher's logits only
"""


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
    progress: Annotated[
        bool, typer.Option("--progress/--no-progress", help="Show a progress bar.")
    ] = True,
    score_teacher: Annotated[
        bool,
        typer.Option(
            "--score-teacher",
            help="Only score the training set with the recipe's [distill] teacher into the "
            "teacher's logit cache, which the student's run then reads; trains nothing.",
        ),
    ] = False,
) -> None:
    try:
        from gatecli_train.config import load_recipe
        from gatecli_train.export import ParityError
        from gatecli_train.pipeline import run, score_teacher_logits
        from gatecli_train.trainer import ResumeError
    except ImportError as exc:
        fail(f"gatecli train needs the training extra ({exc})", hint=install_hint("train"))
    try:
        recipe = load_recipe(config, set_ or [])
    except (OSError, ValueError) as exc:  # tomllib.TOMLDecodeError is a ValueError
        fail(f"{config}: {exc}")
    if score_teacher:
        try:
            summary = score_teacher_logits(recipe, log=lambda m: typer.echo(m, err=True))
        except (FileNotFoundError, ValueError) as exc:
            fail(str(exc))
        typer.echo(json.dumps(summary, indent=2))
        return
    try:
        summary = run(
            recipe,
            out or Path("models") / recipe.export.name,
            # Per recipe file, not per model name: two recipes may ship the same model name.
            run_dir or Path("runs") / config.stem,
            progress=progress,
            log=lambda m: typer.echo(m, err=True),
        )
    except (FileNotFoundError, ParityError, ResumeError) as exc:
        fail(str(exc))
    typer.echo(json.dumps(summary, indent=2))


def register(app: typer.Typer) -> None:
    app.command("train", help=HELP)(train_cli)
