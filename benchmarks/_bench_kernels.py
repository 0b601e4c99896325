"""``bench.py kernels``: blockwise 8-bit MatMulNBits (with and without zero points) against
per-channel dynamic int8.

All variants are quantised here from one fp32 export of the same model and keep the same
embedding table (:func:`gatecli_train.quantize.quantize_embeddings`: 4-bit exact on the Q4
grid, else 8-bit blocks), so the only difference is the MatMul kernel:

- ``blockwise``: the export's default (:func:`gatecli_train.quantize.quantize_blockwise`,
  8-bit ``MatMulNBits``, blocks of 32, ``accuracy_level`` 4, symmetric: no zero points);
- ``blockwise_zp``: the same with a zero point per block (``export.weight_symmetric =
  false``, the 1.2.3 recipe's export);
- ``dynamic_pc``: the export's ``quantization = "dynamic"``
  (:func:`gatecli_train.quantize.quantize_dynamic_int8`: ``quantize_dynamic`` with
  ``per_channel=True`` on the MatMuls only, int8 weights per output channel, uint8
  activations per tensor: the U8S8 VNNI kernels);
- ``dynamic_pc7``: the same with 7-bit weights (``export.weight_bits = 7``, onnxruntime's
  ``reduce_range``), which x86 CPUs without VNNI multiply without int16 saturation;
- ``dynamic_smooth``: the same after moving the feed-forward inputs' outliers into the
  weights (``export.smooth_alpha``, :mod:`gatecli_train.smoothing`), calibrated on dev turns;
  ``dynamic_smooth7`` with 7-bit weights (the 1.2.72 candidate's export);
- ``mixed7_ffo``: ``dynamic_smooth7`` with the feed-forward output projections as 8-bit
  ``MatMulNBits`` blocks with zero points (``export.keep_blockwise``, the 1.2.75 recipe), and
  ``mixed7_ffo_qkv`` with the attention's query, key and value projections too (1.2.76).

Each is timed like the runtime uses it (one thread, bare ``session.run`` on pre-tokenised
ids): p50 of single turns and turns/s of length-sorted batches of 32. Decision agreement is
the argmax of the decision logits against fp32 on both paths the runtime takes: those
length-sorted batches (``label``) and the single turns (``classify``); dynamic int8 reads
padded positions into its per-tensor ranges, so the two differ. Inputs are corpus test turns
serialised with the model's own template.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from _bench_inputs import pct, sample_inputs, timed

if TYPE_CHECKING:  # the [train] extra; imported where a variant needs it
    from gatecli_train.smoothing import Smoothing

AGREEMENT_FLOOR = 0.995  # the export's min_int8_agreement and issue 14's target
PAD_TOKENS = ("<pad>", "[PAD]", "<|pad|>", "<|endoftext|>")
QUANT_OPS = ("GatherBlockQuantized", "MatMulNBits", "MatMulInteger", "MatMul", "Gemm")


def _ops(path: Path) -> str:
    import onnx

    counts = Counter(n.op_type for n in onnx.load(str(path)).graph.node)
    return ", ".join(f"{op} {counts[op]}" for op in QUANT_OPS if counts[op]) or "-"


def _session(path: Path) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def encode_corpus(folder: Any, patterns: list[str], n: int) -> tuple[list[list[int]], int]:
    """Token ids of ``n`` corpus turns serialised with the folder's own template and trimmed
    to its ``max_length`` exactly as the runtime trims; and the pad id."""
    from tokenizers import Tokenizer

    from gatecli.template import serialize

    tok = Tokenizer.from_file(str(folder.tokenizer_path))
    tok.no_padding()
    tok.no_truncation()
    cfg = folder.config

    def count(text: str) -> int:
        return len(tok.encode(text).ids)

    seqs = []
    for rec in sample_inputs(patterns, n):
        text = serialize(rec, cfg.template, count_tokens=count, max_length=cfg.max_length)
        seqs.append(tok.encode(text).ids[: cfg.max_length])
    pad = next((i for i in map(tok.token_to_id, PAD_TOKENS) if i is not None), 0)
    return seqs, pad


def _padded(rows: list[list[int]], pad: int) -> dict[str, np.ndarray]:
    """``input_ids`` and ``attention_mask`` of ``rows`` right-padded with ``pad``."""
    width = max(len(r) for r in rows)
    ids = np.full((len(rows), width), pad, dtype=np.int64)
    mask = np.zeros_like(ids)
    for k, r in enumerate(rows):
        ids[k, : len(r)] = r
        mask[k, : len(r)] = 1
    return {"input_ids": ids, "attention_mask": mask}


def _feed(session: Any, rows: list[list[int]], pad: int) -> dict[str, np.ndarray]:
    names = _padded(rows, pad)
    zeros = np.zeros_like(names["input_ids"])
    return {i.name: names.get(i.name, zeros) for i in session.get_inputs()}


def measure(path: Path, seqs: list[list[int]], pad: int, output: str, n_single: int,
            batch: int = 32) -> dict[str, Any]:  # fmt: skip
    """p50/p90/p99 of single turns, batch turns/s and the decision argmax per turn."""
    sess = _session(path)
    singles = [_feed(sess, [s], pad) for s in seqs[:n_single]]
    single_out: list[np.ndarray] = []
    lat = pct(timed(lambda f: single_out.append(sess.run([output], f)[0]), singles))
    argmax_1 = np.array([o.argmax(-1)[0] for o in single_out[len(single_out) - len(singles) :]])
    order = sorted(range(len(seqs)), key=lambda k: len(seqs[k]))
    feeds = [_feed(sess, [seqs[k] for k in order[i : i + batch]], pad)
             for i in range(0, len(order), batch)]  # fmt: skip
    sess.run([output], feeds[0])  # warm-up
    t = time.perf_counter()
    outs = [sess.run([output], f)[0] for f in feeds]
    rate = len(seqs) / (time.perf_counter() - t)
    argmax = np.empty(len(seqs), dtype=np.int64)
    argmax[order] = np.concatenate([o.argmax(-1) for o in outs])
    return {"latency_ms": lat, "batch_turns_per_s": round(rate, 1), "argmax": argmax,
            "argmax_1": argmax_1, "mb": round(path.stat().st_size / 1e6, 2),
            "ops": _ops(path)}  # fmt: skip


def verdict(rows: dict[str, dict[str, Any]]) -> str:
    """Which int8 kernel to keep: the faster of those at or above the agreement floor on
    batches and, where measured, on single turns."""

    def passes(r: dict[str, Any]) -> bool:
        return min(r["agreement"], r.get("agreement_1", 1.0)) >= AGREEMENT_FLOOR

    ok = {k: r for k, r in rows.items() if k != "fp32" and passes(r)}
    if not ok:
        return f"neither int8 variant reaches decision agreement {AGREEMENT_FLOOR}"
    if len(ok) == 1:
        (name,) = ok
        return f"{name}: the only int8 variant at agreement >= {AGREEMENT_FLOOR}"
    a, b = sorted(ok, key=lambda k: ok[k]["latency_ms"]["p50"])[:2]
    fa, fb = ok[a]["batch_turns_per_s"], ok[b]["batch_turns_per_s"]
    p50 = ok[a]["latency_ms"]["p50"] / ok[b]["latency_ms"]["p50"]
    too = "faster there too" if fa >= fb else "slower there"
    return (f"{a} is the fastest at agreement >= {AGREEMENT_FLOOR} ("
            f"{ok[a]['agreement']:.4f} vs {ok[b]['agreement']:.4f}): single-turn p50 "
            f"{p50:.2f}x {b}'s; batch-32 {fa} vs {fb} turns/s, {too}")  # fmt: skip


# the mixed variants are these recipes' [export] (blocks, encoding, bits read from them, so
# the benchmark times what the recipe exports); smoothing is the variants' shared one
MIXED = {
    "mixed7_ffo": "gate-small-mixed7-1.2.75.toml",
    "mixed7_ffo_qkv": "gate-small-mixed7-qkv-1.2.76.toml",
}


def quantize_variants(
    fp32: Path, tmp: Path, smoothing: Smoothing | None = None
) -> tuple[dict[str, Path], dict[str, list[str]]]:
    """The int8 variants of ``fp32`` under ``tmp``: paths and how each was made."""
    from gatecli_train import quantize as quant
    from gatecli_train.config import load_recipe

    paths = {"fp32": fp32, "blockwise": tmp / "blockwise.onnx",
             "blockwise_zp": tmp / "blockwise_zp.onnx",
             "dynamic_pc": tmp / "dynamic_pc.onnx",
             "dynamic_pc7": tmp / "dynamic_pc7.onnx"}  # fmt: skip
    logging.disable(logging.WARNING)  # the quantisers log every node they skip
    try:
        how = {"fp32": ["as exported"],
               "blockwise": quant.quantize_blockwise(fp32, paths["blockwise"]),
               "blockwise_zp": quant.quantize_blockwise(fp32, paths["blockwise_zp"],
                                                        symmetric=False),
               "dynamic_pc": quant.quantize_dynamic_int8(fp32, paths["dynamic_pc"]),
               "dynamic_pc7": quant.quantize_dynamic_int8(fp32, paths["dynamic_pc7"],
                                                          reduce_range=True)}  # fmt: skip
        if smoothing is not None:
            paths["dynamic_smooth"] = tmp / "dynamic_smooth.onnx"
            how["dynamic_smooth"] = quant.quantize_dynamic_int8(
                fp32, paths["dynamic_smooth"], smoothing=smoothing
            )
            paths["dynamic_smooth7"] = tmp / "dynamic_smooth7.onnx"
            how["dynamic_smooth7"] = quant.quantize_dynamic_int8(
                fp32, paths["dynamic_smooth7"], smoothing=smoothing, reduce_range=True
            )
            for name, recipe in MIXED.items():
                cfg = load_recipe(Path(quant.__file__).parent / "configs" / recipe).export
                paths[name] = tmp / f"{name}.onnx"
                how[name] = quant.quantize_dynamic_int8(
                    fp32, paths[name], smoothing=smoothing, reduce_range=cfg.weight_bits == 7,
                    blockwise=cfg.keep_blockwise, accuracy_level=cfg.accuracy_level or None,
                    symmetric=cfg.weight_symmetric,
                )  # fmt: skip
    finally:
        logging.disable(logging.NOTSET)
    return paths, how


def calibration_feeds(seqs: list[list[int]], pad: int, batch: int = 32) -> list[dict[str, Any]]:
    """Padded ``input_ids``/``attention_mask`` batches for :class:`Smoothing`."""
    return [_padded(seqs[i : i + batch], pad) for i in range(0, len(seqs), batch)]


def bench_kernels(fp32_dir: str, corpus: list[str], n_texts: int, n_single: int,
                  notes: list[str], smooth_corpus: list[str] | None = None,
                  smooth_alpha: float = 0.0) -> dict[str, Any]:  # fmt: skip
    """Quantise the fp32 model each way, time them and fp32, count decision agreement;
    ``smooth_alpha`` > 0 adds ``dynamic_smooth``, calibrated on 512 ``smooth_corpus`` turns."""
    from gatecli import artifact
    from gatecli_train.smoothing import Smoothing

    folder = artifact.load_model_folder(fp32_dir, verify_hash=False)
    output = folder.config.heads["decision"].output
    seqs, pad = encode_corpus(folder, corpus, n_texts)
    res: dict[str, Any] = {"fp32_model": fp32_dir, "n_texts": len(seqs),
                           "n_single": min(n_single, len(seqs)),
                           "mean_tokens": round(float(np.mean([len(s) for s in seqs])), 1),
                           "variants": {}}  # fmt: skip
    smoothing = None
    if smooth_alpha > 0 and smooth_corpus:
        cal, _ = encode_corpus(folder, smooth_corpus, 512)
        smoothing = Smoothing(smooth_alpha, calibration_feeds(cal, pad))
        res["smooth_corpus"] = smooth_corpus
    with tempfile.TemporaryDirectory() as tmp:
        paths, how = quantize_variants(folder.model_path, Path(tmp), smoothing)
        rows = {k: measure(p, seqs, pad, output, n_single) for k, p in paths.items()}
    ref, ref_1 = rows["fp32"]["argmax"], rows["fp32"]["argmax_1"]
    for name, row in rows.items():
        row["agreement"] = round(float((row.pop("argmax") == ref).mean()), 4)
        row["agreement_1"] = round(float((row.pop("argmax_1") == ref_1).mean()), 4)
        row["how"] = "; ".join(how[name])
        res["variants"][name] = row
    res["verdict"] = verdict(rows)
    if not any("GatherBlockQuantized" in r["ops"] for r in rows.values()):
        notes.append("kernels: no embedding table was quantised (under 1000 rows, or shared)")
    return res
