"""Refit an exported model folder's calibration on labelled records, without its run.

Temperatures and thresholds are fitted by :func:`gatecli_train.calibrate.calibrate` on the
folder's own ONNX outputs (the int8 model that runs, not the fp32 weights of a run folder,
which a new machine does not have), over the corpus dev split or a user's labelled JSONL.
The weights, tokenizer, catalog and policy are copied byte for byte; only ``gatecli.json``
changes (version, heads' temperatures and thresholds, ``extra.recalibration``), and the
folder is written beside the target and renamed into place, so a failure leaves nothing
half written.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from gatecli import artifact
from gatecli.gate import Gate
from gatecli_train import calibrate, examples, staging
from gatecli_train.config import CalibrationConfig
from gatecli_train.model import HeadDef, head_defs_from_catalog, heads_match


@dataclass
class Refit:
    """What :func:`recalibrate` wrote: the folder, the fit, and the rows it rests on."""

    out_dir: Path
    calibration: calibrate.Calibration
    rows: int
    previous: dict[str, Any]


def folder_logits(
    gate: Gate, exs: list[examples.Example], batch_size: int = 64
) -> dict[str, np.ndarray]:
    """Raw logits of every head for ``exs`` (token ids as training built them), in order."""
    parts: dict[str, list[np.ndarray]] = {name: [] for name in gate.heads}
    order = sorted(range(len(exs)), key=lambda i: len(exs[i].ids))
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        for name, z in gate.logits_ids([exs[i].ids for i in chunk]).items():
            parts[name].append(z)
    back = np.argsort(np.array(order))
    return {name: np.concatenate(zs)[back] for name, zs in parts.items()}


def fit_folder(
    gate: Gate, records: list[dict[str, Any]], cfg: CalibrationConfig
) -> tuple[calibrate.Calibration, list[HeadDef]]:
    """Calibration of ``gate``'s model on labelled corpus-format ``records``."""
    heads = head_defs_from_catalog(gate.folder.catalog)
    if not heads_match(gate.heads, heads):
        raise ValueError(
            f"{gate.folder.path}: the heads of catalog.yaml and gatecli.json differ "
            f"({sorted(h.name for h in heads)} vs {sorted(gate.heads)}, or their labels)"
        )
    exs = examples.build_examples(
        records, heads, gate.tokenizer, gate.config.template, gate.config.max_length
    )
    if not exs:
        raise ValueError("no labelled records to calibrate on")
    logits = folder_logits(gate, exs)
    targets, known = examples.arrays(exs, heads)
    cal = calibrate.calibrate(heads, logits, targets, known, cfg, calibrate.languages(exs))
    return cal, heads


def recalibrate(
    model_dir: Path,
    out_dir: Path,
    records: list[dict[str, Any]],
    cfg: CalibrationConfig,
    *,
    version: str | None = None,
    described_as: str = "",
    heads: tuple[str, ...] = (),
) -> Refit:
    """Write ``out_dir``: ``model_dir`` with calibration refitted on ``records``; with
    ``heads``, only those heads' temperatures and thresholds, the others kept as they are.

    Why ``heads``: a refit moves what it refits, and not only where the new rule acts: the
    1.2.52 candidate (multi-label thresholds on the plateau) also refit the decision head,
    whose English safety threshold then fell from 0.44 to the pooled 0.32 on today's dev and
    routed three English passages to safety (README "Training", stop 57).

    Example:
        >>> recalibrate(Path("models/gatecli_models/gate-small"), Path("/tmp/m"),
        ...             dev_records, CalibrationConfig(), version="1.2.2")  # doctest: +SKIP
    """
    gate = Gate(model_dir, coach_fn=None)
    unknown = sorted(set(heads) - set(gate.heads))
    if unknown:
        raise ValueError(f"no such head: {', '.join(unknown)} (heads: {', '.join(gate.heads)})")
    cal, _ = fit_folder(gate, records, cfg)
    old = gate.config
    previous = {
        name: {
            "temperature": h.temperature,
            "thresholds": h.thresholds,
            "thresholds_by_lang": h.thresholds_by_lang,
        }
        for name, h in old.heads.items()
    }
    refit = set(heads or old.heads)
    new_heads = {
        name: replace(
            h,
            temperature=cal.temperatures.get(name, 1.0),
            thresholds=cal.thresholds.get(name, {}),
            thresholds_by_lang=cal.thresholds_by_lang.get(name, {}),
        )
        if name in refit
        else h
        for name, h in old.heads.items()
    }
    extra = dict(old.extra)
    extra["recalibration"] = {
        "from": gate.model_id,
        "rows": len(records),
        "records": described_as,
        "logits": "this folder's model.onnx (onnxruntime, CPU)",
        "report": cal.report,
        "previous": previous,
        "heads": sorted(refit),
    }
    config = replace(old, version=version or old.version, heads=new_heads, extra=extra)
    out_dir = Path(out_dir)
    with staging.staged_folder(out_dir) as tmp:
        for f in gate.folder.path.iterdir():
            if f.is_file() and f.name != artifact.CONFIG_FILE:
                shutil.copy2(f, tmp / f.name)
        artifact.write_config(tmp, config)
        artifact.load_model_folder(tmp)  # the new folder loads and its hashes check
    return Refit(out_dir, cal, len(records), previous)
