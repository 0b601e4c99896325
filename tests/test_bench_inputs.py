"""Benchmark inputs of a given token length (bench.py latency ``tok64``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from _bench_inputs import turns_of_tokens  # noqa: E402


def test_a_length_over_the_budget_gives_budget_long_turns(tiny_model_dir: Path) -> None:
    """A model whose template fits a message to its budget (head_tail) never serialises to
    more than the budget: asking for more must stop there, not double the text until memory
    runs out (the smoke folder's rehearsal was killed for memory)."""
    from gatecli.gate import Gate

    gate = Gate(tiny_model_dir)
    budget = gate.folder.config.max_length
    turns = turns_of_tokens(gate, 3, budget * 4)
    sizes = [len(gate._encode([t])[0][0]) for t in turns]
    assert len(turns) == 3 and all(budget - 8 <= s <= budget for s in sizes), (budget, sizes)
    short = turns_of_tokens(gate, 3, 24)
    assert all(len(gate._encode([t])[0][0]) <= 24 for t in short)
