"""The contract module: one ask-band rule for classify, label and eval; record validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatecli.evaluation.scoring import head_metrics
from gatecli.llm.escalate import Escalator
from gatecli.records import (
    DECISIONS,
    HEAD_NAMES,
    escalates,
    escalation_defaults,
    in_ask_band,
    iter_jsonl,
    validate_record,
)

# A policy-made ask (a required slot is missing) on a turn the model calls execute.
POLICY_ASK = {"decision": "ask", "probabilities": {"execute": 0.90, "ask": 0.05}}
CASES = [
    (POLICY_ASK, True),
    ({"decision": "execute", "probabilities": {"execute": 0.5, "ask": 0.4}}, True),
    ({"decision": "execute", "probabilities": {"execute": 0.6, "ask": 0.3}}, False),
    ({"decision": "ask", "probabilities": {"safety": 0.5, "ask": 0.45}}, False),
    ({"decision": "refuse", "probabilities": {"ask": 0.9, "refuse": 0.1}}, False),
]


@pytest.mark.parametrize(("result", "band"), CASES)
def test_escalator_and_evaluation_share_one_band(result: dict, band: bool) -> None:
    assert Escalator(None, ask_margin=0.15).in_band(result)[0] is band
    assert escalates(result, 0.15) is band
    # what `gatecli eval` reports as escalation_share for a suite of this one turn
    turn = {"error": None, "gold": {h: None for h in HEAD_NAMES},
            "pred": {**result, "latency_ms": 1.0}}  # fmt: skip
    assert head_metrics([turn], {}, 0.15)["escalation_share"] == float(band)


def test_band_reasons_and_error_rows() -> None:
    ok, why = in_ask_band("ask", POLICY_ASK["probabilities"])
    assert ok and "decision ask" in why
    assert in_ask_band("safety", {"safety": 0.9})[1] == "safety stays local"
    assert escalates({"id": 1, "error": "bad"}) is False


def test_names_and_defaults_are_the_spec() -> None:
    assert HEAD_NAMES == ("decision", "events", "scenario_tags", "missing_slots")
    assert DECISIONS == ("execute", "ask", "connect", "refuse", "safety")
    assert escalation_defaults() == {"ask_margin": 0.15, "max_share": 0.2}
    escalation_defaults()["ask_margin"] = 1.0  # a copy: callers cannot change the default
    assert escalation_defaults()["ask_margin"] == 0.15


def test_validate_record() -> None:
    assert validate_record({"user_message": "hi"}) is None
    assert validate_record({"user_message": " "}) == "user_message is empty"
    assert validate_record({"user_message": "hi", "id": True}).startswith("id must be")
    assert validate_record([]) == "record must be a JSON object, got list"


def test_iter_jsonl_reports_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n\n{oops\n[2]\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"r\.jsonl:3: invalid JSON"):
        list(iter_jsonl(path))
    bad: list[int] = []
    rows = list(iter_jsonl(path, on_error=lambda n, _: bad.append(n)))
    assert rows == [(1, {"a": 1}), (4, [2])] and bad == [3]
