"""Export a trained :class:`GateModel` to a runtime model folder, with parity checks.

ONNX with one named output per head and dynamic batch/sequence axes, then int8
quantisation (:mod:`gatecli_train.quantize`). The export fails (raises
:class:`ParityError`) when torch and ONNX fp32 disagree by more than ``max_abs_diff`` or
when int8 changes more decisions than ``min_int8_agreement`` allows: a silently broken
export is worse than none.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from gatecli import artifact
from gatecli.artifact import DEFAULT_CATALOG, DEFAULT_POLICY
from gatecli.template import template_from_catalog
from gatecli_train import quantize as quant
from gatecli_train.model import ExportWrapper, GateModel

ONNX_INPUTS = ["input_ids", "attention_mask"]


class ParityError(RuntimeError):
    """ONNX outputs drifted from torch (or int8 from fp32) beyond the stated tolerance."""


@dataclass
class ExportReport:
    fp32_max_abs_diff: float
    int8_decision_agreement: float | None
    n_parity_texts: int
    onnx_bytes: int
    notes: list[str] = field(default_factory=list)


def export_onnx(model: GateModel, path: Path, opset: int = 17) -> None:
    """Trace ``model`` to ONNX (fp32). ``.eval()`` before and after: the exporter can leave
    the module in training mode (dropout on), which would poison later parity checks."""
    model.eval()
    wrapper = ExportWrapper(model).eval()
    names = [f"{h.name}_logits" for h in model.head_defs]
    dummy = (torch.ones(2, 8, dtype=torch.long), torch.ones(2, 8, dtype=torch.long))
    axes: dict[str, dict[int, str]] = {n: {0: "batch", 1: "sequence"} for n in ONNX_INPUTS}
    axes.update({n: {0: "batch"} for n in names})
    with torch.no_grad():
        torch.onnx.export(
            wrapper,
            dummy,
            str(path),
            input_names=ONNX_INPUTS,
            output_names=names,
            dynamic_axes=axes,
            opset_version=opset,
            dynamo=False,
        )
    model.eval()


def quantize_model(
    src: Path,
    dst: Path,
    method: str = "blockwise",
    accuracy_level: int | None = 4,
    keep_fp32: tuple[str, ...] = (),
) -> list[str]:
    """int8 model ``dst`` from fp32 ``src`` by ``method`` (blockwise | dynamic)."""
    if method == "blockwise":
        return quant.quantize_blockwise(src, dst, keep_fp32, accuracy_level)
    if method == "dynamic":
        return quant.quantize_dynamic_int8(src, dst, keep_fp32)
    raise ValueError(f"unknown quantization {method!r}; use blockwise or dynamic")


def _encode(tokenizer: Any, texts: list[str], max_length: int) -> tuple[np.ndarray, np.ndarray]:
    encs = tokenizer.encode_batch(texts)
    ids = [e.ids[:max_length] for e in encs]
    width = max(len(i) for i in ids)
    input_ids = np.full((len(ids), width), 1, dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=np.int64)
    for r, row in enumerate(ids):
        input_ids[r, : len(row)] = row
        mask[r, : len(row)] = 1
    return input_ids, mask


def _session(path: Path) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def parity_check(
    model: GateModel,
    fp32_path: Path,
    int8_path: Path | None,
    tokenizer: Any,
    texts: list[str],
    max_length: int,
    *,
    max_abs_diff: float = 1e-4,
    min_int8_agreement: float = 0.995,
    batch: int = 32,
) -> ExportReport:
    """Compare torch vs ONNX fp32 (all heads, padded batches) and fp32 vs int8 decisions."""
    model.eval()
    worst, agree, total = 0.0, 0, 0
    fp32_sess = _session(fp32_path)
    int8_sess = _session(int8_path) if int8_path is not None else None
    for start in range(0, len(texts), batch):
        ids, mask = _encode(tokenizer, texts[start : start + batch], max_length)
        with torch.no_grad():
            ref = model(torch.from_numpy(ids), torch.from_numpy(mask))
        ref_list = [ref[h.name].numpy() for h in model.head_defs]
        feed = {"input_ids": ids, "attention_mask": mask}
        fp32 = fp32_sess.run(None, feed)
        diffs = [float(np.abs(a - b).max()) for a, b in zip(ref_list, fp32, strict=True)]
        worst = max(worst, *diffs)
        if int8_sess is not None:
            q = int8_sess.run(None, feed)
            agree += int((q[0].argmax(-1) == fp32[0].argmax(-1)).sum())
            total += ids.shape[0]
    if worst > max_abs_diff:
        raise ParityError(f"torch vs ONNX fp32 max abs logit diff {worst:.2e} > {max_abs_diff:.0e}")
    agreement = agree / total if total else None
    if agreement is not None and agreement < min_int8_agreement:
        raise ParityError(
            f"int8 decision agreement {agreement:.4f} < {min_int8_agreement} on {total} texts"
        )
    size = (int8_path or fp32_path).stat().st_size
    return ExportReport(worst, agreement, len(texts), size)


def write_model_folder(
    out_dir: Path,
    model: GateModel,
    tokenizer: Any,
    *,
    name: str,
    version: str,
    max_length: int,
    parity_texts: list[str],
    temperatures: dict[str, float] | None = None,
    thresholds: dict[str, dict[str, float]] | None = None,
    template: dict[str, Any] | None = None,
    quantize: bool = True,
    catalog_path: Path = DEFAULT_CATALOG,
    policy_path: Path = DEFAULT_POLICY,
    card_text: str | None = None,
    extra: dict[str, Any] | None = None,
    min_int8_agreement: float = 0.995,
    quantization: str = "blockwise",
    accuracy_level: int | None = 4,
    keep_fp32: tuple[str, ...] = (),
) -> ExportReport:
    """Write a complete runtime model folder (spec artifact contract) and return the parity
    report. ``tokenizer`` is a ``tokenizers.Tokenizer`` configured by
    :func:`gatecli_train.tokenizer.configure`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    fp32 = out_dir / "model.fp32.onnx"
    export_onnx(model, fp32)
    final = out_dir / artifact.MODEL_FILE
    int8_tmp = out_dir / "model.int8.onnx" if quantize else None
    notes: list[str] = []
    if int8_tmp is not None:
        notes = quantize_model(fp32, int8_tmp, quantization, accuracy_level, keep_fp32)
    try:
        report = parity_check(
            model,
            fp32,
            int8_tmp,
            tokenizer,
            parity_texts,
            max_length,
            min_int8_agreement=min_int8_agreement,
        )
    finally:
        if int8_tmp is not None and int8_tmp.exists():
            int8_tmp.replace(final)
            fp32.unlink()
        else:
            fp32.replace(final)
    report.onnx_bytes = final.stat().st_size
    report.notes.extend(notes)
    tokenizer.save(str(out_dir / artifact.TOKENIZER_FILE))
    shutil.copyfile(catalog_path, out_dir / artifact.CATALOG_FILE)
    shutil.copyfile(policy_path, out_dir / artifact.POLICY_FILE)
    temperatures = temperatures or {}
    thresholds = thresholds or {}
    heads = {
        h.name: artifact.HeadSpec(
            name=h.name,
            kind=h.kind,
            labels=list(h.labels),
            output=f"{h.name}_logits",
            temperature=float(temperatures.get(h.name, 1.0)),
            thresholds=dict(thresholds.get(h.name, {})),
        )
        for h in model.head_defs
    }
    config = artifact.ModelConfig(
        name=name,
        version=version,
        heads=heads,
        max_length=max_length,
        template=template
        or template_from_catalog(yaml.safe_load(catalog_path.read_text(encoding="utf-8"))),
        onnx_inputs=list(ONNX_INPUTS),
        model_sha256=artifact.sha256_file(final),
        extra={"parity": report.__dict__, **(extra or {})},
    )
    artifact.write_config(out_dir, config)
    if card_text is not None:
        (out_dir / artifact.CARD_FILE).write_text(card_text, encoding="utf-8")
    return report
