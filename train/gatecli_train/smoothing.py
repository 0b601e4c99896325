"""Migrating activation outliers into the weights before dynamic int8 (SmoothQuant).

Dynamic int8 (``MatMulInteger``) rounds each MatMul's input to 256 levels spread over the
whole tensor's range. In the gate's encoder a few channels of the feed-forward inputs reach
20-46 while the median channel stays below 2 (the 1.2.7 candidate, 200 dev turns), so most
channels get a handful of levels. Rounding those inputs changed 2% of decisions against
fp32 where rounding the weights alone changed 0.5% (400 test turns, a one-off measurement;
benchmarks/README.md, kernels).

SmoothQuant (Xiao et al. 2023) divides input channel ``j`` by ``s_j`` and multiplies row
``j`` of the weight by it, which leaves the product unchanged in exact arithmetic:
``s_j = max|x_j| ** alpha / max|W_j| ** (1 - alpha)``, ``max|x_j|`` measured on calibration
turns. ``alpha`` moves the rounding burden from activations (0) to weights (1). The
division is an explicit ``Mul`` by ``1 / s`` before the MatMuls that share the input: for
inputs fed by a LayerNorm it could be folded into the LayerNorm's scale and bias, for the
GELU-fed feed-forward output projection it cannot, and one rule for both keeps the graph
rewrite small (six elementwise Muls over [tokens, 1536] cost little beside the MatMuls).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# The feed-forward MatMuls of every encoder layer: their inputs (LayerNorm output, GELU
# output) carry the outliers; the attention MatMuls' inputs span 2-6 (see above).
FEED_FORWARD = (r"layer\.\d+/intermediate/dense/MatMul$", r"layer\.\d+/output/dense/MatMul$")
MIN_SCALE, MAX_SCALE = 1e-3, 1e3


@dataclass(frozen=True)
class Smoothing:
    """What :func:`smooth` needs: the migration strength, the MatMuls (name regexes) whose
    inputs are smoothed, and calibration feeds (``input_ids``, ``attention_mask`` batches)."""

    alpha: float
    feeds: list[dict[str, np.ndarray]] = field(default_factory=list)
    patterns: tuple[str, ...] = FEED_FORWARD


def smoothed_groups(model: Any, patterns: tuple[str, ...]) -> dict[str, list[Any]]:  # onnx
    """Input tensor -> the constant-weight MatMul nodes matching ``patterns`` that read it."""
    consts = {i.name for i in model.graph.initializer}
    groups: dict[str, list[Any]] = defaultdict(list)
    for node in model.graph.node:
        if (
            node.op_type == "MatMul"
            and node.input[1] in consts
            and any(re.search(p, node.name) for p in patterns)
        ):
            groups[node.input[0]].append(node)
    return dict(groups)


def activation_ranges(
    model: Any, tensors: list[str], feeds: Iterable[dict[str, np.ndarray]]
) -> dict[str, np.ndarray]:
    """Per-channel ``max |x|`` of each named tensor of ``model`` (an onnx ModelProto, left
    unchanged) over the unpadded positions of ``feeds`` (tensors shaped [batch, tokens,
    channels])."""
    import onnx
    import onnxruntime as ort

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    have = {o.name for o in probe.graph.output}
    for name in tensors:
        if name not in have:
            info = onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None)
            probe.graph.output.append(info)
    session = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    inputs = {i.name for i in session.get_inputs()}
    ranges: dict[str, np.ndarray] = {}
    for feed in feeds:
        outs = session.run(tensors, {k: v for k, v in feed.items() if k in inputs})
        keep = feed["attention_mask"].astype(bool)
        for name, out in zip(tensors, outs, strict=True):
            peak = np.abs(out[keep]).max(0)
            ranges[name] = np.maximum(ranges[name], peak) if name in ranges else peak
    if len(ranges) != len(tensors):
        raise ValueError("activation_ranges needs at least one calibration feed")
    return ranges


def smooth(src: Path, dst: Path, cfg: Smoothing) -> str:
    """Write ``src`` with the inputs of ``cfg.patterns``' MatMuls smoothed to ``dst``; the
    fp32 outputs are unchanged up to rounding. Returns a note for the export report."""
    import onnx
    from onnx import helper, numpy_helper

    if not 0.0 <= cfg.alpha <= 1.0:
        raise ValueError(f"smoothing alpha {cfg.alpha} is not in [0, 1]")
    model = onnx.load(str(src))
    groups = smoothed_groups(model, cfg.patterns)
    amax = activation_ranges(model, list(groups), cfg.feeds)
    weights = {i.name: i for i in model.graph.initializer}
    muls: dict[str, Any] = {}  # first consumer's name -> the Mul to emit before it
    for k, (tensor, nodes) in enumerate(groups.items()):
        mats = [numpy_helper.to_array(weights[n.input[1]]) for n in nodes]
        wmax = np.max([np.abs(w).max(1) for w in mats], axis=0)
        s = np.maximum(amax[tensor], 1e-5) ** cfg.alpha / np.maximum(wmax, 1e-5) ** (1 - cfg.alpha)
        s = np.clip(s, MIN_SCALE, MAX_SCALE).astype(np.float32)
        for node, w in zip(nodes, mats, strict=True):
            scaled = (w * s[:, None]).astype(np.float32)
            weights[node.input[1]].CopyFrom(numpy_helper.from_array(scaled, node.input[1]))
        inv, out = f"smooth_{k}_inv", f"smooth_{k}_out"
        model.graph.initializer.append(numpy_helper.from_array(1.0 / s, inv))
        muls[nodes[0].name] = helper.make_node("Mul", [tensor, inv], [out], name=f"smooth_{k}")
        for node in nodes:
            node.input[0] = out
    ordered = []
    for node in model.graph.node:  # each Mul right before its first consumer: still sorted
        if node.name in muls:
            ordered.append(muls.pop(node.name))
        ordered.append(node)
    del model.graph.node[:]
    model.graph.node.extend(ordered)
    onnx.save(model, str(dst))
    n_turns = sum(int(f["attention_mask"].shape[0]) for f in cfg.feeds)
    return f"smoothed {len(groups)} MatMul inputs (alpha {cfg.alpha}, {n_turns} calibration turns)"
