"""Quantisation-aware fine-tuning: the simulated rounding is onnxruntime's, checked against
onnxruntime itself, and the dynamic int8 export it targets runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from gatecli_train import qat  # noqa: E402
from gatecli_train import quantize as Q  # noqa: E402


def _dynamic_quantize_roundtrip(x: np.ndarray) -> np.ndarray:
    """``x`` through onnxruntime's DynamicQuantizeLinear and back, as MatMulInteger sees it."""
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"]),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(x.shape))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(sess.run(None, {"x": x})[0])


@pytest.mark.parametrize("shift", [0.0, 3.0, -3.0])  # ranges across, above and below zero
def test_simulated_input_rounding_is_onnxruntimes(shift: float) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1, size=(1, 25, 384)).astype(np.float32)
    x[0, 3, 7] = 40.0  # an outlier dimension, as BERT layers have
    x = (x + shift).astype(np.float32)
    want = _dynamic_quantize_roundtrip(x)
    got = qat.fake_quant_input(torch.from_numpy(x)).numpy()
    step = (max(x.max(), 0) - min(x.min(), 0)) / 255
    assert np.abs(got - want).max() <= step * 1.001  # at most one level, on exact ties
    assert np.mean(np.isclose(got, want, atol=step * 1e-3)) > 0.999


def test_rounding_passes_gradients_straight_through() -> None:
    x = torch.randn(2, 5, 8, requires_grad=True)
    w = torch.randn(4, 8, requires_grad=True)
    (qat.fake_quant_input(x).sum() + qat.fake_quant_weight(w).sum()).backward()
    assert torch.equal(x.grad, torch.ones_like(x)) and torch.equal(w.grad, torch.ones_like(w))


def test_fake_quantised_swaps_forward_only_inside_the_block() -> None:
    from gatecli_train.model import GateModel, HeadDef, tiny_encoder

    model = GateModel(tiny_encoder(120), [HeadDef("decision", ("a", "b", "c"), False)])
    model.eval()
    ids = torch.randint(5, 120, (2, 9))
    mask = torch.ones_like(ids)
    keys = list(model.state_dict())
    with torch.no_grad():
        before = model(ids, mask)["decision"]
        with qat.fake_quantised(model) as n:
            inside = model(ids, mask)["decision"]
            assert list(model.state_dict()) == keys
        after = model(ids, mask)["decision"]
    assert n == sum(isinstance(m, torch.nn.Linear) for m in model.encoder.modules()) > 0
    assert not torch.equal(before, inside)
    assert torch.equal(before, after)


def test_plain_runs_fp32_inside_a_fake_quantised_block() -> None:
    from gatecli_train.model import GateModel, HeadDef, tiny_encoder

    model = GateModel(tiny_encoder(120), [HeadDef("decision", ("a", "b", "c"), False)])
    model.eval()
    ids = torch.randint(5, 120, (2, 9))
    mask = torch.ones_like(ids)
    with torch.no_grad():
        before = model(ids, mask)["decision"]
        with qat.fake_quantised(model):
            rounded = model(ids, mask)["decision"]
            with qat.plain(model):
                unrounded = model(ids, mask)["decision"]
            again = model(ids, mask)["decision"]
        after = model(ids, mask)["decision"]
    assert torch.equal(before, unrounded) and torch.equal(before, after)
    assert torch.equal(rounded, again) and not torch.equal(rounded, before)


def test_dynamic_export_quantises_matmuls_not_heads_or_table(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    table = rng.normal(0, 0.05, size=(Q.MIN_EMBEDDING_ROWS, 64)).astype(np.float32)
    w = rng.normal(0, 0.1, size=(64, 32)).astype(np.float32)
    head = rng.normal(0, 0.1, size=(32, 5)).astype(np.float32)
    bias = rng.normal(0, 0.1, size=(5,)).astype(np.float32)
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["e"], name="emb"),
        helper.make_node("MatMul", ["e", "w"], ["h"], name="layer.0/dense/MatMul"),
        helper.make_node("Gemm", ["h", "head", "bias"], ["out"], name="head/Gemm"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [None])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [None, 5])],
        [
            numpy_helper.from_array(a, n)
            for a, n in ((table, "table"), (w, "w"), (head, "head"), (bias, "bias"))
        ],
    )
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(src))
    notes = Q.quantize_dynamic_int8(src, dst)
    ops = [n.op_type for n in onnx.load(str(dst)).graph.node]
    assert ops.count("MatMulInteger") == 1 and "GatherBlockQuantized" in ops, ops
    assert "Gemm" in ops or "MatMul" in ops, ops  # the head, fp32 (as a Gemm or MatMul + Add)
    assert "MatMul: dynamic int8 per channel, 8-bit weights; 0 kept fp32" in notes
    ids = np.array([0, 17, Q.MIN_EMBEDDING_ROWS - 1], dtype=np.int64)
    sess = ort.InferenceSession(str(dst), providers=["CPUExecutionProvider"])
    got = sess.run(None, {"ids": ids})[0]
    np.testing.assert_allclose(got, table[ids] @ w @ head + bias, atol=0.02)
    assert not list(tmp_path.glob("*.staged.onnx"))
    # 7-bit weights (reduce_range): what x86 without VNNI multiplies without int16 saturation
    seven = tmp_path / "q7.onnx"
    notes = Q.quantize_dynamic_int8(src, seven, reduce_range=True)
    assert "MatMul: dynamic int8 per channel, 7-bit weights (reduce_range); 0 kept fp32" in notes
    model = onnx.load(str(seven))
    (mm,) = [n for n in model.graph.node if n.op_type == "MatMulInteger"]
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    q = inits[mm.input[1]]
    assert q.dtype == np.int8 and q.min() >= -64 and q.max() <= 64 and np.abs(q).max() == 64
    sess = ort.InferenceSession(str(seven), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(None, {"ids": ids})[0], got, atol=0.02)


def test_seven_bit_rounding_is_what_reduce_range_stores() -> None:
    """The simulation and onnxruntime's reduce_range agree on the integer grid: [-64, 64]
    per output row, the row's largest magnitude on 64."""
    w = torch.tensor([[0.64, -0.32, 0.011], [-1.0, 0.5, 0.25]])
    q = qat.fake_quant_weight(w, 7)
    steps = q / (w.abs().amax(dim=1, keepdim=True) / 64)
    assert torch.allclose(steps, steps.round(), atol=1e-4)
    assert steps.abs().amax().item() == pytest.approx(64)
    assert steps[0].tolist() == pytest.approx([64.0, -32.0, 1.0], abs=1e-4)
    from gatecli_train.config import ExportConfig

    assert ExportConfig(quantization="dynamic", weight_bits=7).weight_bits == 7
    with pytest.raises(ValueError, match="weight_bits"):  # blockwise has no such kernel
        ExportConfig(weight_bits=7)
    with pytest.raises(ValueError, match="weight_bits"), qat.fake_quantised(object(), 6):  # type: ignore[arg-type]
        pass


@pytest.mark.parametrize("keep_fp32", [(), (r"layer\.\d+/output/dense/MatMul",)])
def test_simulation_of_a_smoothed_graph_is_that_graph(tmp_path: Path, keep_fp32: tuple) -> None:
    """``fake_quantised(model, 7, rounding_from_onnx(graph))`` computes what a smoothed 7-bit
    dynamic graph computes, MatMuls kept fp32 included (1.2.72/1.2.73's exports), one turn at
    a time; the plain simulation (every Linear, unsmoothed) does not."""
    from gatecli.gate import Gate
    from gatecli_train.from_onnx import load_folder_model, rounding_from_onnx
    from gatecli_train.model import head_defs_from_catalog
    from gatecli_train.smoothing import Smoothing
    from gatecli_train.tiny import build_tiny_model

    folder = build_tiny_model(tmp_path / "tiny")
    gate = Gate(folder, coach_fn=None, segment_guard=False)
    texts = ["turn off the lights", "帮我订一张去上海的火车票", "je veux mourir", "ok",
             "remind me to call mom tomorrow at 5 and then play some jazz please"]  # fmt: skip
    seqs, _ = gate._encode([{"user_message": t} for t in texts])
    feeds = [{"input_ids": np.array([s]), "attention_mask": np.ones((1, len(s)), np.int64)}
             for s in seqs]  # fmt: skip
    dst = tmp_path / "q.onnx"
    Q.quantize_dynamic_int8(folder / "model.onnx", dst, keep_fp32, Smoothing(0.7, feeds),
                            reduce_range=True)  # fmt: skip
    rounding = rounding_from_onnx(dst)
    assert len(rounding.rounded) == 6 * 2 - 2 * len(keep_fp32)  # tiny: 2 layers of 6 Linears
    assert len(rounding.inv_scales) == 2 * (2 - len(keep_fp32))  # the smoothed, still int8
    assert rounding.weight_bits == 7
    model, _, _ = load_folder_model(folder, head_defs_from_catalog(gate.folder.catalog))
    sess = ort.InferenceSession(str(dst), providers=["CPUExecutionProvider"])

    def worst(graph: object) -> float:
        diff = 0.0
        with torch.no_grad(), qat.fake_quantised(model, 7, graph):  # type: ignore[arg-type]
            for feed in feeds:
                want = sess.run(["decision_logits"], feed)[0]
                ids, mask = (torch.from_numpy(feed[k]) for k in ("input_ids", "attention_mask"))
                got = model(ids, mask)["decision"].numpy()
                diff = max(diff, float(np.abs(got - want).max()))
        return diff

    exact, plain = worst(rounding), worst(None)
    # tiny random logits are small: 2e-7 against 1.2e-4 when written
    assert exact < 1e-5 and plain > 10 * exact, (exact, plain)
