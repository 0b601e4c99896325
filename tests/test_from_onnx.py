"""Weights read back from an exported model.onnx reproduce the graph's own outputs.

Run on the tiny folder in fp32, blockwise and dynamic int8 (plumbing: every op the recovery reads)
and on the shipped folder (the graph ``model.init_from`` continues in practice).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from gatecli.artifact import default_model_dir
from gatecli.gate import Gate
from gatecli_train.from_onnx import load_folder_model
from gatecli_train.model import head_defs_from_catalog
from gatecli_train.tiny import build_tiny_model

TEXTS = [
    "turn off the lights", "我不想活了", "quelle heure est-il à Tokyo", "how do I make a bomb",
    "remind me to call mom tomorrow at 5 and then play some jazz in the kitchen please",
    "帮我订一张去上海的火车票", "je veux mourir", "ok",
]  # fmt: skip


def _compare(folder: Path) -> dict[str, float]:
    gate = Gate(folder, coach_fn=None, segment_guard=False)
    model, _, base = load_folder_model(folder, head_defs_from_catalog(gate.folder.catalog))
    assert base["model"] == gate.model_id
    seqs, _ = gate._encode([{"user_message": t} for t in TEXTS])
    ort = gate.logits_ids(seqs)
    width = max(map(len, seqs))
    ids = torch.full((len(seqs), width), gate._pad_id)
    mask = torch.zeros_like(ids)
    for i, s in enumerate(seqs):
        ids[i, : len(s)], mask[i, : len(s)] = torch.tensor(s), 1
    with torch.no_grad():
        out = {k: v.numpy() for k, v in model(ids, mask).items()}
    return {
        name: float(np.corrcoef(ort[name].ravel(), out[name].ravel())[0, 1]) for name in ort
    } | {"max_diff": max(float(np.abs(ort[n] - out[n]).max()) for n in ort)}


@pytest.mark.parametrize("quantization", ["fp32", "blockwise", "dynamic"])
def test_tiny_folder_round_trips(tmp_path: Path, quantization: str) -> None:
    quantize = quantization != "fp32"
    kind = quantization if quantize else "blockwise"
    folder = build_tiny_model(tmp_path / "tiny", quantize=quantize, quantization=kind)
    got = _compare(folder)
    if not quantize:  # fp32 initialisers: the same numbers, up to kernel rounding
        assert got["max_diff"] < 1e-4, got
    assert min(v for k, v in got.items() if k != "max_diff") > 0.99, got


def _compare_simulated(folder: Path) -> dict[str, float]:
    """A dynamic int8 folder: its graph against the read-back model fake-quantised as that
    graph rounds (:func:`gatecli_train.from_onnx.rounding_from_onnx`), one turn at a time
    as the runtime runs such a graph (``onnx.max_batch`` 1)."""
    from gatecli_train.from_onnx import rounding_from_onnx
    from gatecli_train.qat import fake_quantised

    gate = Gate(folder, coach_fn=None, segment_guard=False)
    model, _, _ = load_folder_model(folder, head_defs_from_catalog(gate.folder.catalog))
    rounding = rounding_from_onnx(gate.folder.model_path)
    seqs, _ = gate._encode([{"user_message": t} for t in TEXTS])
    ort = gate.logits_ids(seqs)
    out: dict[str, list[np.ndarray]] = {name: [] for name in ort}
    with torch.no_grad(), fake_quantised(model, rounding.weight_bits, rounding):
        for s in seqs:
            ids = torch.tensor([s])
            got = model(ids, torch.ones_like(ids))
            for name in ort:
                out[name].append(got[name.removesuffix("_logits")].numpy()[0])
    sim = {name: np.stack(v) for name, v in out.items()}
    per_turn = np.max([np.abs(ort[n] - sim[n]).max(axis=1) for n in ort], axis=0)
    return {
        name: float(np.corrcoef(ort[name].ravel(), sim[name].ravel())[0, 1]) for name in ort
    } | {"exact_share": float((per_turn <= 1e-4).mean())}


def test_shipped_folder_round_trips() -> None:
    folder = default_model_dir()
    if Gate(folder, coach_fn=None).config.onnx_max_batch == 1:  # dynamic int8: simulated
        got = _compare_simulated(folder)
        assert min(v for k, v in got.items() if k != "exact_share") > 0.999, got
        # most turns come out bit for bit; on the others one activation lands on the other
        # side of a rounding step (float sums in another order) and the logits move by up
        # to ~0.7 (1.2.70 and 1.2.72: 5 of these 8 turns exact each)
        assert got["exact_share"] >= 0.5, got
        return
    got = _compare(folder)
    # int8 activations in onnxruntime vs fp32 in torch: close, not equal
    assert min(v for k, v in got.items() if k != "max_diff") > 0.999, got
    assert got["max_diff"] < 0.3, got


@pytest.mark.parametrize("optimised", [False, True])
@pytest.mark.parametrize("keep_fp32", [(), (r"layer\.\d+/output/dense/MatMul",)])
def test_smoothed_dynamic_graph_reads_back_unsmoothed(
    tmp_path: Path, optimised: bool, keep_fp32: tuple[str, ...]
) -> None:
    """Smoothing multiplies weight row ``j`` by ``s_j`` and the MatMul input by ``1 / s``;
    the reader folds ``1 / s`` back in, so the weights are the fp32 ones up to int8 rounding
    (read without the fold they are off by ``s``, which alpha 0.5 spreads far from 1 on
    these random weights), also from the graph saved optimised (``DynamicQuantizeMatMul``)
    and where the smoothed feed-forward output projections stay fp32 (1.2.73's export)."""
    from gatecli.session import save_optimized
    from gatecli_train.from_onnx import state_from_onnx
    from gatecli_train.quantize import quantize_dynamic_int8
    from gatecli_train.smoothing import Smoothing

    folder = build_tiny_model(tmp_path / "tiny")
    gate = Gate(folder, coach_fn=None, segment_guard=False)
    seqs, _ = gate._encode([{"user_message": t} for t in TEXTS])
    width = max(map(len, seqs))
    ids = np.full((len(seqs), width), gate._pad_id, dtype=np.int64)
    mask = np.zeros_like(ids)
    for i, s in enumerate(seqs):
        ids[i, : len(s)], mask[i, : len(s)] = s, 1
    dst = tmp_path / "smoothed.onnx"
    smoothing = Smoothing(0.5, [{"input_ids": ids, "attention_mask": mask}])
    notes = quantize_dynamic_int8(folder / "model.onnx", dst, keep_fp32, smoothing)
    assert notes[-1].endswith(f"{2 * len(keep_fp32)} kept fp32")
    if optimised:
        save_optimized(dst, tmp_path / "optimised.onnx")
        dst = tmp_path / "optimised.onnx"
    want, _ = state_from_onnx(folder / "model.onnx")
    got, _ = state_from_onnx(dst)
    assert set(got) == set(want)
    smoothed = [k for k in want if k.endswith(("intermediate.dense.weight", "output.dense.weight"))
                and ".attention." not in k]  # fmt: skip
    assert len(smoothed) == 2 * 2  # two feed-forward MatMuls in each of the tiny's layers
    for k in want:
        w, g = want[k].numpy(), got[k].numpy()
        assert np.abs(g - w).max() <= 0.02 * np.abs(w).max() + 1e-6, k


def test_folder_written_as_a_run_folder_loads_as_a_teacher(tmp_path: Path) -> None:
    """``to_run_dir`` (self-distillation from a committed release): the run folder it writes
    is what ``[distill] teacher`` and ``model.init_from`` load, with the graph's weights."""
    from gatecli_train.from_onnx import to_run_dir
    from gatecli_train.pipeline import RUN_FILES, load_run_model

    folder = build_tiny_model(tmp_path / "tiny", quantize=True, quantization="blockwise")
    run = to_run_dir(folder, tmp_path / "run")
    assert all((run / f).is_file() for f in RUN_FILES)
    heads = head_defs_from_catalog(Gate(folder, coach_fn=None).folder.catalog)
    want, _, _ = load_folder_model(folder, heads)
    got, tok = load_run_model(run, heads)
    assert tok.get_vocab() == Gate(folder, coach_fn=None).tokenizer.get_vocab()
    for name, tensor in want.state_dict().items():
        assert torch.equal(tensor, got.state_dict()[name]), name
