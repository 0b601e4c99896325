"""The kernel benchmark's verdict with more than two int8 variants (bench.py kernels)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from _bench_kernels import verdict  # noqa: E402


def _row(p50: float, agreement: float, rate: float) -> dict:
    return {"latency_ms": {"p50": p50}, "agreement": agreement, "batch_turns_per_s": rate}


def test_fastest_passing_variant_wins_among_three() -> None:
    """blockwise_zp joined blockwise and dynamic_pc: the verdict names the fastest variant at
    the agreement floor and compares it with the next, ignoring the faster one below it."""
    rows = {
        "fp32": _row(7.7, 1.0, 124.0),
        "blockwise": _row(5.8, 0.999, 142.0),
        "blockwise_zp": _row(6.0, 1.0, 144.7),
        "dynamic_pc": _row(3.6, 0.978, 262.8),
    }
    text = verdict(rows)
    assert text.startswith("blockwise is the fastest at agreement >= 0.995")
    assert "blockwise_zp" in text and "dynamic_pc" not in text


def test_no_variant_passes() -> None:
    assert verdict({"fp32": _row(7.0, 1.0, 1.0), "dynamic_pc": _row(3.0, 0.97, 2.0)}).startswith(
        "neither"
    )


def test_single_turn_agreement_counts_too() -> None:
    """Dynamic int8 reads padding into its ranges: a variant passing on batches but not on
    single turns (the classify path) is not kept."""
    fast = _row(3.0, 0.996, 300.0)
    fast["agreement_1"] = 0.994
    rows = {"fp32": _row(7.0, 1.0, 1.0), "blockwise": _row(5.8, 0.999, 142.0),
            "dynamic_smooth": fast}  # fmt: skip
    assert verdict(rows).startswith("blockwise: the only int8 variant")
    fast["agreement_1"] = 0.996
    assert verdict(rows).startswith("dynamic_smooth is the fastest")


def test_every_variant_is_written_and_runs(tmp_path: Path) -> None:
    """quantize_variants on the tiny fp32 folder (plumbing): each int8 variant, the smoothed
    7-bit one included, loads in onnxruntime and gives every head's logits for real ids."""
    import numpy as np
    import onnxruntime as ort
    from _bench_kernels import calibration_feeds, quantize_variants

    from gatecli.gate import Gate
    from gatecli_train.smoothing import Smoothing
    from gatecli_train.tiny import build_tiny_model

    folder = build_tiny_model(tmp_path / "tiny")
    gate = Gate(folder, coach_fn=None, segment_guard=False)
    seqs, _ = gate._encode([{"user_message": t} for t in ("turn off the lights", "je veux")])
    feeds = calibration_feeds(seqs, gate._pad_id)
    paths, how = quantize_variants(folder / "model.onnx", tmp_path, Smoothing(0.7, feeds))
    assert set(paths) == set(how) >= {"dynamic_pc7", "dynamic_smooth", "dynamic_smooth7",
                                      "mixed7_ffo", "mixed7_ffo_qkv"}  # fmt: skip
    assert any("MatMulNBits" in note for note in how["mixed7_ffo_qkv"])
    assert any("smoothed" in note for note in how["dynamic_smooth7"])
    assert any("7-bit" in note for note in how["dynamic_smooth7"])
    for name, path in paths.items():
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        out = session.run(None, {k: v for k, v in feeds[0].items()})
        assert all(np.isfinite(o).all() for o in out), name
