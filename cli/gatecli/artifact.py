"""The model-folder contract: file names, ``gatecli.json`` and its checks.

A model folder is everything a runtime needs and nothing else; labels, thresholds,
temperatures, the input template and the catalog live here, never in code, so a model
trained elsewhere drops in by copying a folder. This module owns the names and the
reading/writing; nothing else opens these files by name.

Every file the runtime reads is checked at load: ``gatecli.json`` holds an ``integrity``
table with the sha256 of ``model.onnx``, ``tokenizer.json``, ``catalog.yaml`` and
``policy.yaml`` and of its own content without that table (canonical JSON, so reformatting
it is harmless but changing a value is not). A swapped tokenizer piece or a relaxed policy
is refused like a replaced model. Format 1 hashed only ``model.onnx``; it is refused with
the fix (re-export, or ``python -m gatecli.artifact seal DIR`` for a folder you trust).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gatecli import yamlfile
from gatecli.records import HEAD_NAMES as HEAD_NAMES  # re-exported
from gatecli.records import escalation_defaults

FORMAT_VERSION = 3
# 3 adds per-language thresholds (HeadSpec.thresholds_by_lang); a version-2 folder has none
# and reads the same. An older gatecli refuses a version-3 folder instead of silently
# applying pooled thresholds the model was not calibrated to use alone.
READABLE_VERSIONS = (2, 3)

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "gatecli.json"
CATALOG_FILE = "catalog.yaml"
POLICY_FILE = "policy.yaml"
CARD_FILE = "MODEL_CARD.md"

REQUIRED_FILES = (MODEL_FILE, TOKENIZER_FILE, CONFIG_FILE, CATALOG_FILE, POLICY_FILE)
HASHED_FILES = (MODEL_FILE, TOKENIZER_FILE, CATALOG_FILE, POLICY_FILE)
SEAL_COMMAND = "python -m gatecli.artifact seal"  # rewrites the table (:func:`seal`)
INTEGRITY_KEY = "integrity"
HEAD_KINDS = ("single", "multi")


class ArtifactError(RuntimeError):
    """A model folder is missing, incomplete, corrupt or of another format version.

    The message is one line naming the path and the fix; the CLI prints it as is.
    """


@dataclass(frozen=True)
class HeadSpec:
    """One output head: its labels, how to turn logits into probabilities, and thresholds.

    ``kind`` is ``single`` (softmax over labels) or ``multi`` (independent sigmoids).
    ``thresholds`` are per label; for a single-label head they are minimum probabilities
    below which the label is not trusted (used by escalation), for a multi-label head the
    probability at which the label is emitted. ``thresholds_by_lang`` override them for
    the turns :func:`gatecli.langid.detect` gives that language (calibrated per language on
    dev, format version 3); :meth:`thresholds_for` merges the two.
    """

    name: str
    kind: str
    labels: list[str]
    output: str
    temperature: float = 1.0
    thresholds: dict[str, float] = field(default_factory=dict)
    default_threshold: float = 0.5
    thresholds_by_lang: dict[str, dict[str, float]] = field(default_factory=dict)

    def threshold(self, label: str) -> float:
        return self.thresholds.get(label, self.default_threshold)

    def thresholds_for(self, lang: str) -> dict[str, float]:
        """The thresholds for a turn in ``lang``: the language's own over the pooled ones."""
        return {**self.thresholds, **self.thresholds_by_lang.get(lang, {})}

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "labels": list(self.labels),
            "output": self.output,
            "temperature": self.temperature,
            "thresholds": dict(self.thresholds),
            "default_threshold": self.default_threshold,
            **({"thresholds_by_lang": self.thresholds_by_lang} if self.thresholds_by_lang else {}),
        }

    @classmethod
    def from_json(cls, name: str, data: dict[str, Any]) -> HeadSpec:
        if data.get("kind") not in HEAD_KINDS:
            raise ValueError(f"head {name!r}: kind must be one of {HEAD_KINDS}")
        return cls(
            name=name,
            kind=data["kind"],
            labels=list(data["labels"]),
            output=data.get("output", f"{name}_logits"),
            temperature=float(data.get("temperature", 1.0)),
            thresholds={k: float(v) for k, v in data.get("thresholds", {}).items()},
            default_threshold=float(data.get("default_threshold", 0.5)),
            thresholds_by_lang={
                str(lang): {k: float(v) for k, v in th.items()}
                for lang, th in data.get("thresholds_by_lang", {}).items()
            },
        )


@dataclass(frozen=True)
class ModelConfig:
    """The parsed ``gatecli.json``.

    ``template`` is the input-serialisation definition shared with training
    (see :mod:`gatecli.template`); ``confidence_bands`` map a calibrated probability to
    ``high|medium|low``; ``escalation`` holds the ask band and budget defaults.
    """

    name: str
    version: str
    heads: dict[str, HeadSpec]
    max_length: int
    template: dict[str, Any]
    onnx_inputs: list[str]
    model_sha256: str
    # How model.onnx was optimised offline, when it was (session.save_optimized: level,
    # providers, onnxruntime version); the runtime then skips optimising it at every load.
    onnx_optimized: dict[str, Any] | None = None
    # The most sequences one forward pass may hold, when a row's outputs depend on the other
    # rows: a dynamic int8 graph quantises each MatMul input over the whole batch tensor, so
    # a turn classified beside others could get another decision than alone (1% of test turns
    # at batch 32 for gate-small 1.2.70). None = any batch.
    onnx_max_batch: int | None = None
    confidence_bands: dict[str, float] = field(default_factory=lambda: {"high": 0.8, "medium": 0.5})
    escalation: dict[str, Any] = field(default_factory=escalation_defaults)
    extra: dict[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION

    @property
    def model_id(self) -> str:
        return f"{self.name}@{self.version}"

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": self.format_version,
            "name": self.name,
            "version": self.version,
            "max_length": self.max_length,
            "template": self.template,
            "heads": {n: h.to_json() for n, h in self.heads.items()},
            "onnx": {
                "inputs": list(self.onnx_inputs),
                "sha256": self.model_sha256,
                **({"optimized": dict(self.onnx_optimized)} if self.onnx_optimized else {}),
                **({"max_batch": self.onnx_max_batch} if self.onnx_max_batch else {}),
            },
            "confidence_bands": dict(self.confidence_bands),
            "escalation": dict(self.escalation),
            "extra": dict(self.extra),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelConfig:
        return cls(
            format_version=int(data["format_version"]),
            name=data["name"],
            version=data["version"],
            max_length=int(data["max_length"]),
            template=data["template"],
            heads={n: HeadSpec.from_json(n, h) for n, h in data["heads"].items()},
            onnx_inputs=list(data["onnx"]["inputs"]),
            model_sha256=data["onnx"]["sha256"],
            onnx_optimized=_optimized(data["onnx"].get("optimized")),
            onnx_max_batch=_max_batch(data["onnx"].get("max_batch")),
            confidence_bands=data.get("confidence_bands", {"high": 0.8, "medium": 0.5}),
            escalation=data.get("escalation", escalation_defaults()),
            extra=data.get("extra", {}),
        )


def _optimized(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("providers"), list):
        raise ValueError(f"onnx.optimized must be a mapping with a providers list, not {value!r}")
    return value


def _max_batch(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"onnx.max_batch must be a positive integer, not {value!r}")
    return value


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def config_digest(raw: dict[str, Any]) -> str:
    """sha256 of a ``gatecli.json`` object without its integrity table, as canonical JSON.

    Example:
        >>> config_digest({"a": 1, "integrity": {}}) == config_digest({"a": 1})
        True
    """
    body = {k: v for k, v in raw.items() if k != INTEGRITY_KEY}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def integrity_table(folder: str | Path, raw: dict[str, Any]) -> dict[str, Any]:
    """The ``integrity`` table for ``raw`` (a ``gatecli.json`` object) over ``folder``'s files."""
    p = Path(folder)
    return {
        "files": {name: sha256_file(p / name) for name in HASHED_FILES},
        "config_sha256": config_digest(raw),
    }


def check_integrity(folder: Path, raw: dict[str, Any]) -> None:
    """Raise :class:`ArtifactError` unless every hashed file and the config match the table."""
    table = raw.get(INTEGRITY_KEY)
    if not isinstance(table, dict) or not isinstance(table.get("files"), dict):
        raise ArtifactError(
            f"{folder / CONFIG_FILE} has no integrity table; re-export the model "
            f"(or, for a folder you trust, `python -m gatecli.artifact seal {folder}`)"
        )
    files: dict[str, Any] = table["files"]
    for name in HASHED_FILES:
        expected = files.get(name)
        if not isinstance(expected, str):
            raise ArtifactError(f"{folder / CONFIG_FILE}: the integrity table lacks {name}")
        if sha256_file(folder / name) != expected:
            raise ArtifactError(
                f"{folder / name} does not match the sha256 in {CONFIG_FILE} "
                f"(corrupt or replaced file); restore the folder or re-export the model, or, "
                f"for an edit you made on purpose, reseal it: {SEAL_COMMAND} {folder}"
            )
    if table.get("config_sha256") != config_digest(raw):
        raise ArtifactError(
            f"{folder / CONFIG_FILE} was changed after export (its content does not match "
            f"its config_sha256); restore the folder or re-export the model, or, for an "
            f"edit you made on purpose, reseal it: {SEAL_COMMAND} {folder}"
        )


# The runtime owns the default label contract; training copies it into every model folder.
ASSETS = Path(__file__).resolve().parent / "assets"
DEFAULT_CATALOG = ASSETS / "catalog.yaml"
DEFAULT_POLICY = ASSETS / "policy.yaml"


def default_model_dir() -> Path:
    """The shipped model folder, from the ``gatecli_models`` package data.

    ``$GATECLI_MODEL`` overrides it (a deployment pins its own folder without a flag). The
    path is returned whether or not it exists; loading it gives the one-line error.
    """
    env = os.environ.get("GATECLI_MODEL")
    if env:
        return Path(env)
    try:
        import gatecli_models
    except ImportError:  # runtime installed without its model data
        return Path("gate-small")
    return Path(gatecli_models.__file__).resolve().parent / "gate-small"


@dataclass(frozen=True)
class ModelFolder:
    """A checked model folder: the parsed config, catalog and policy, and its paths.

    ``digest`` changes when any file of the folder does (labeling's resume fingerprint)."""

    path: Path
    config: ModelConfig
    catalog: dict[str, Any]
    policy: dict[str, Any]
    digest: str = ""  # sha256 of the integrity table: one hash of every file of the folder

    @property
    def model_path(self) -> Path:
        return self.path / MODEL_FILE

    @property
    def tokenizer_path(self) -> Path:
        return self.path / TOKENIZER_FILE

    @property
    def card_path(self) -> Path:
        return self.path / CARD_FILE


def _fix_hint(path: Path) -> str:
    return (
        f"pass --model DIR with a gatecli model folder, or train one with "
        f"`gatecli train --config train/gatecli_train/configs/gate-small.toml` (looked in {path})"
    )


def load_model_folder(path: str | Path | None = None, *, verify_hash: bool = True) -> ModelFolder:
    """Read and check a model folder; raise :class:`ArtifactError` with a one-line fix.

    Example:
        >>> folder = load_model_folder("models/gatecli_models/gate-small")  # doctest: +SKIP
        >>> folder.config.heads["decision"].labels  # doctest: +SKIP
        ['execute', 'ask', 'connect', 'refuse', 'safety']
    """
    p = Path(path) if path is not None else default_model_dir()
    if not p.is_dir():
        raise ArtifactError(f"model folder not found: {p}; {_fix_hint(p)}")
    missing = [name for name in REQUIRED_FILES if not (p / name).is_file()]
    if missing:
        raise ArtifactError(
            f"model folder {p} is incomplete (missing {', '.join(missing)}); {_fix_hint(p)}"
        )
    try:
        raw = json.loads((p / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ArtifactError(f"{p / CONFIG_FILE} is not valid JSON ({exc}); {_fix_hint(p)}") from exc
    version = raw.get("format_version") if isinstance(raw, dict) else None
    if version == 1:
        raise ArtifactError(
            f"{p / CONFIG_FILE} has format_version 1 (only model.onnx hashed); this gatecli "
            f"reads {FORMAT_VERSION}, which checks every file of the folder: re-export the "
            f"model, or, if you trust every file in it, `python -m gatecli.artifact seal {p}`"
        )
    if version not in READABLE_VERSIONS:
        raise ArtifactError(
            f"{p / CONFIG_FILE} has format_version {version!r}, this gatecli reads "
            f"{' and '.join(map(str, READABLE_VERSIONS))}; re-export the model with this "
            "gatecli version or upgrade gatecli"
        )
    try:
        config = ModelConfig.from_json(raw)
    except (KeyError, TypeError, ValueError) as exc:
        raise ArtifactError(f"{p / CONFIG_FILE} is malformed ({exc}); {_fix_hint(p)}") from exc
    if verify_hash:
        check_integrity(p, raw)
    try:
        catalog = yamlfile.safe_load((p / CATALOG_FILE).read_text(encoding="utf-8")) or {}
        policy = yamlfile.safe_load((p / POLICY_FILE).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ArtifactError(f"{p}: catalog.yaml or policy.yaml unreadable ({exc})") from exc
    table = raw.get(INTEGRITY_KEY)
    digest = hashlib.sha256(json.dumps(table, sort_keys=True).encode()).hexdigest()
    return ModelFolder(path=p, config=config, catalog=catalog, policy=policy, digest=digest)


def _write_raw(folder: Path, raw: dict[str, Any]) -> Path:
    """Write ``raw`` as ``gatecli.json`` with a fresh integrity table over the folder's files."""
    body = {k: v for k, v in raw.items() if k != INTEGRITY_KEY}
    body["format_version"] = FORMAT_VERSION
    body[INTEGRITY_KEY] = integrity_table(folder, body)
    out = folder / CONFIG_FILE
    out.write_text(
        json.dumps(body, ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    return out


def write_config(folder: str | Path, config: ModelConfig) -> Path:
    """Write ``gatecli.json`` (sorted keys, UTF-8, trailing newline) and return its path.

    Call it last, once the model, tokenizer, catalog and policy are in place: it hashes
    them into the integrity table.
    """
    return _write_raw(Path(folder), config.to_json())


def seal(folder: str | Path) -> Path:
    """Rewrite the integrity table of ``folder`` over its files as they are now.

    For a folder whose files you have checked (a format-1 folder, or one whose policy you
    edited on purpose); every other field of ``gatecli.json`` is kept as is.
    """
    p = Path(folder)
    raw = json.loads((p / CONFIG_FILE).read_text(encoding="utf-8"))
    if not isinstance(raw, dict):
        raise ArtifactError(f"{p / CONFIG_FILE} is not a JSON object")
    return _write_raw(p, raw)


def main(argv: list[str] | None = None) -> int:
    """``python -m gatecli.artifact seal DIR``: (re)write a trusted folder's integrity table."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] != "seal":
        print("usage: python -m gatecli.artifact seal MODEL_DIR", file=sys.stderr)
        return 2
    out = seal(args[1])
    load_model_folder(args[1])  # proves the new table verifies
    print(f"sealed {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
