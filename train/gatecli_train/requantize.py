"""Export a model folder's weights again under another quantisation, keeping the rest.

    python -m gatecli_train.requantize --model models/gatecli_models/gate-small \\
        --config train/gatecli_train/configs/gate-small-mixed7-1.2.75.toml --out /tmp/m

Why a step of its own: a recipe that only re-exports (a ``[model] soup`` of one folder)
also refits every threshold on dev, and each refit is a new draw: stop 57 measured a
standard deviation of 0.10 per event threshold between refits of the same logits, and a
decision refit that dropped the English safety threshold (0.44 -> 0.32) failed the release
gate on its own. When the new graph agrees with fp32 as closely as the old one, what changed
is the kernel, so temperatures, thresholds (per language too), template, ``catalog.yaml`` and
``policy.yaml`` are the source folder's byte for byte, and the gate reads the kernel alone.
The recipe's ``[export]`` decides the quantisation and the parity floor; its ``[data]`` names
the dev turns smoothing measures and the test turns parity runs on, as ``gatecli train``
picks them. A source folder with a ``MODEL_CARD.md`` or ``CHANGELOG.md`` gets a short card
naming it (its own card describes another graph) and the changelog carried over.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from gatecli import artifact
from gatecli.template import serialize
from gatecli_train import export, from_onnx
from gatecli_train.calibrate import folder_calibration
from gatecli_train.config import ExportConfig, load_recipe
from gatecli_train.model import head_defs_from_catalog

CARRIED = ("CHANGELOG.md",)


def requantize(
    src: Path,
    out: Path,
    cfg: ExportConfig,
    *,
    parity_texts: list[str],
    calibration_texts: list[str],
) -> export.ExportReport:
    """``out``: ``src``'s weights quantised by ``cfg`` (parity checked as ``gatecli train``
    checks an export), every other file and number of the folder kept."""
    loaded = artifact.load_model_folder(src)
    model, tok, _ = from_onnx.load_folder_model(src, head_defs_from_catalog(loaded.catalog))
    old = loaded.config
    extra: dict[str, Any] = {k: v for k, v in old.extra.items() if k != "parity"}
    extra["requantized"] = {
        "from": old.model_id,
        "model_sha256": old.model_sha256,
        "kept": "temperatures, thresholds, template, catalog.yaml, policy.yaml",
    }
    card = None
    if (src / artifact.CARD_FILE).exists():
        card = (
            f"# {cfg.name} {cfg.version}\n\nThe weights, calibration, template, catalog and "
            f"policy of {old.model_id}, quantised again (`gatecli_train.requantize`: "
            f"`extra.parity` in `gatecli.json`); run `gatecli eval` for its numbers.\n"
        )
    report = export.write_model_folder(
        out, model, tok, cfg, max_length=old.max_length, parity_texts=parity_texts,
        calibration=folder_calibration(old), calibration_texts=calibration_texts,
        template=old.template, catalog_path=src / artifact.CATALOG_FILE,
        policy_path=src / artifact.POLICY_FILE, card_text=card, extra=extra,
        carried=[src / name for name in CARRIED if (src / name).exists()],
    )  # fmt: skip
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, required=True, help="the folder to quantise again")
    ap.add_argument("--config", type=Path, required=True, help="recipe: [export] and [data]")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--version", help="overrides the recipe's export.version")
    args = ap.parse_args()
    recipe = load_recipe(args.config)
    cfg = replace(recipe.export, version=args.version) if args.version else recipe.export
    if args.out.resolve() == args.model.resolve():
        raise SystemExit("requantize: --out must be another folder than --model")
    from gatecli_train.pipeline import load_splits  # torch and the corpus: only when run

    splits = load_splits(recipe.data, recipe.train.seed)
    template = artifact.load_model_folder(args.model).config.template
    parity = [serialize(r["input"], template) for r in splits.test[: cfg.parity_texts]]
    smooth = cfg.smooth_texts if cfg.smooth_alpha else 0
    dev = [serialize(r["input"], template) for r in splits.dev[:smooth]]
    report = requantize(args.model, args.out, cfg, parity_texts=parity, calibration_texts=dev)
    print(json.dumps(report.to_json(), indent=1))


if __name__ == "__main__":
    main()
