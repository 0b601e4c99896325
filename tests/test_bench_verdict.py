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
