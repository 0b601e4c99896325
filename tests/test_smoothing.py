"""Smoothing before dynamic int8: fp32 outputs kept, outliers moved, padding ignored, and
the int8 graph closer to fp32 than without it (onnxruntime runs every graph)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from gatecli_train.quantize import quantize_dynamic_int8  # noqa: E402
from gatecli_train.smoothing import Smoothing, activation_ranges, smooth  # noqa: E402

C, H = 64, 256  # channels in and out of the feed-forward block


def _ffn(path: Path, seed: int = 0) -> None:
    """x -> MatMul (named as the encoder's) -> Relu -> MatMul -> y, 'attention_mask' unused."""
    rng = np.random.default_rng(seed)
    w1 = rng.normal(0, C**-0.5, (C, H)).astype(np.float32)
    w2 = rng.normal(0, H**-0.5, (H, C)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="/layer.0/intermediate/dense/MatMul"),
        helper.make_node("Relu", ["h"], ["a"], name="relu"),
        helper.make_node("MatMul", ["a", "w2"], ["y"], name="/layer.0/output/dense/MatMul"),
    ]
    graph = helper.make_graph(
        nodes,
        "ffn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, None, C])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None, C])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def _inputs(n: int, seed: int, outlier: float = 40.0) -> np.ndarray:
    """[n, 12, C] activations, channel 3 an outlier as in the encoder's LayerNorm outputs."""
    x = np.random.default_rng(seed).normal(0, 1, (n, 12, C)).astype(np.float32)
    x[..., 3] *= outlier
    return x


def _feeds(x: np.ndarray) -> list[dict[str, np.ndarray]]:
    return [{"x": x, "attention_mask": np.ones(x.shape[:2], np.int64)}]


def _run(path: Path, x: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(["y"], {"x": x})[0]


def test_smoothing_keeps_fp32_outputs_and_flattens_the_input(tmp_path: Path) -> None:
    src, dst = tmp_path / "f.onnx", tmp_path / "s.onnx"
    _ffn(src)
    note = smooth(src, dst, Smoothing(0.5, _feeds(_inputs(8, 1))))
    assert note == "smoothed 2 MatMul inputs (alpha 0.5, 8 calibration turns)"
    x = _inputs(4, 2)
    np.testing.assert_allclose(_run(dst, x), _run(src, x), rtol=1e-4, atol=1e-4)
    model = onnx.load(str(dst))
    assert [n.op_type for n in model.graph.node] == ["Mul", "MatMul", "Relu", "Mul", "MatMul"]
    before = activation_ranges(onnx.load(str(src)), ["x"], _feeds(x))["x"]
    after = activation_ranges(onnx.load(str(dst)), ["smooth_0_out"], _feeds(x))["smooth_0_out"]
    assert before.max() / np.median(before) > 20
    assert after.max() / np.median(after) < before.max() / np.median(before) / 3


def test_padded_positions_do_not_count(tmp_path: Path) -> None:
    src = tmp_path / "f.onnx"
    _ffn(src)
    x = _inputs(2, 3, outlier=1.0)
    mask = np.ones(x.shape[:2], np.int64)
    mask[1, 6:] = 0
    padded = x.copy()
    padded[1, 6:] = 1e4  # what a padded position may hold; never seen at batch 1
    feeds = [{"x": padded, "attention_mask": mask}]
    ranges = activation_ranges(onnx.load(str(src)), ["x"], feeds)["x"]
    np.testing.assert_allclose(ranges, np.abs(x[mask.astype(bool)]).max(0))


def test_smoothing_brings_dynamic_int8_closer_to_fp32(tmp_path: Path) -> None:
    src, plain, smoothed = tmp_path / "f.onnx", tmp_path / "q.onnx", tmp_path / "qs.onnx"
    _ffn(src)
    quantize_dynamic_int8(src, plain)
    notes = quantize_dynamic_int8(src, smoothed, smoothing=Smoothing(0.5, _feeds(_inputs(8, 4))))
    assert notes[0].startswith("smoothed 2 MatMul inputs")
    x = _inputs(16, 5)
    ref = _run(src, x)
    err_plain = np.abs(_run(plain, x) - ref).mean()
    err_smoothed = np.abs(_run(smoothed, x) - ref).mean()
    assert err_smoothed < err_plain / 2, (err_smoothed, err_plain)


def test_alpha_outside_the_unit_interval_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "f.onnx"
    _ffn(src)
    with pytest.raises(ValueError, match="alpha"):
        smooth(src, tmp_path / "s.onnx", Smoothing(1.5, _feeds(_inputs(1, 0))))


def test_recipes_may_smooth_only_the_dynamic_path() -> None:
    from gatecli_train.config import ExportConfig

    assert ExportConfig(quantization="dynamic", smooth_alpha=0.7).smooth_alpha == 0.7
    with pytest.raises(ValueError, match="smooth_alpha"):
        ExportConfig(smooth_alpha=0.7)  # blockwise
