"""``gatecli calibrate``: refit a model folder's temperatures and thresholds on labelled data.

For a folder whose training run is gone (a new machine keeps only the shipped folder), or
for users who want thresholds fitted on their own traffic: the folder's ONNX model scores
the records, :mod:`gatecli_train.calibrate` fits pooled and per-language thresholds, and a
new folder is written with the same weights. Needs the training extra (the fit lives with
training); a bad recipe, file or folder is one line on stderr and exit code 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from gatecli.commands._util import ModelOpt, fail
from gatecli.extras import install_hint

HELP = """Refit temperatures and thresholds (pooled and per language) of a model folder.

Records are corpus-format JSONL with labels (`gatecli data` writes them); by default the
dev split of the recipe's corpus. The weights are copied unchanged into --out.

Examples:

\b
  gatecli calibrate --out /tmp/gate-small-recal --version 1.2.2
  gatecli calibrate -m models/gatecli_models/gate-small --data my_labelled.jsonl -o /tmp/m
  gatecli calibrate -c train/gatecli_train/configs/gate-small.toml \\
      --set calibration.safety_min_precision=0.85 -o /tmp/m
  gatecli calibrate --head events --head missing_slots --head scenario_tags -o /tmp/m
"""


def calibrate_cli(
    out: Annotated[Path, typer.Option("--out", "-o", help="The new model folder.")],
    model: ModelOpt = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="Recipe whose [calibration] and [data] apply (default: the built-in defaults "
            "and data/corpus).",
        ),
    ] = None,  # fmt: skip
    data: Annotated[
        Path | None,
        typer.Option("--data", help="Labelled JSONL(.gz) instead of the corpus dev split."),
    ] = None,
    version: Annotated[
        str | None, typer.Option("--version", help="Version of the new folder (default: same).")
    ] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a key: --set calibration.x=1")
    ] = None,
    head: Annotated[
        list[str] | None,
        typer.Option("--head", help="Refit only this head (repeatable); the others are kept."),
    ] = None,
) -> None:
    try:
        from gatecli_train.config import load_recipe
        from gatecli_train.pipeline import load_dev
        from gatecli_train.recalibrate import recalibrate
    except ImportError as exc:
        fail(f"gatecli calibrate needs the training extra ({exc})", hint=install_hint("train"))
    from gatecli.artifact import ArtifactError, default_model_dir
    from gatecli.records import read_jsonl

    try:
        recipe = load_recipe(config, set_ or [])
    except (OSError, ValueError) as exc:
        fail(f"{config}: {exc}")
    try:
        if data is not None:
            records, what = list(read_jsonl(data)), str(data)
        else:
            records = load_dev(recipe.data, recipe.train.seed)
            what = f"{recipe.data.corpus_dir} dev split"
        result = recalibrate(
            Path(model) if model else default_model_dir(), out, records, recipe.calibration,
            version=version, described_as=what, heads=tuple(head or ()),
        )  # fmt: skip
    except (OSError, ValueError, KeyError, ArtifactError) as exc:
        fail(str(exc))
    cal = result.calibration
    typer.echo(
        json.dumps(
            {
                "out_dir": str(result.out_dir),
                "rows": result.rows,
                "temperatures": cal.temperatures,
                "thresholds": cal.thresholds,
                "thresholds_by_lang": cal.thresholds_by_lang,
                "report": cal.report,
                "previous": result.previous,
            },
            indent=2,
            ensure_ascii=False,
        )
    )


def register(app: typer.Typer) -> None:
    app.command("calibrate", help=HELP)(calibrate_cli)
