"""The latency benchmark times two models A B B A (bench.py ``abba``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench import abba  # noqa: E402


def test_new_and_previous_are_timed_a_b_b_a_and_merged_per_model() -> None:
    """Timed new-first in every pair, identical graphs read 1.12x apart (gate-small 1.2.51
    against 1.2.49): each model must be timed first once and second once."""
    calls: list[tuple[str, int]] = []

    def timing(role: str, half: int) -> dict[str, list[Any]]:
        calls.append((role, half))
        ms = 10.0 if role == "new" else 5.0
        return {"tokens": [20 + half], "gatecli": [ms + half], "bare_ort": [ms / 2]}

    rows = abba(["new", "previous"], timing)
    assert calls == [("new", 0), ("previous", 0), ("previous", 1), ("new", 1)]
    assert rows["new"]["mean_tokens"] == 20.5 and rows["previous"]["gatecli"]["p50"] == 5.5
    assert rows["new"]["overhead_ratio_p50"] == round(10.5 / 5.0, 2)
    assert abba(["new"], timing)["new"]["gatecli"]["p50"] == 10.5  # no --previous
