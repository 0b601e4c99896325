"""The Gate on the tiny random model: record shape (spec §5), batching, trimming."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatecli.gate import Gate
from gatecli.langid import detect
from gatecli.policy import consistency_errors

SPEC_KEYS = [
    "id", "turn_index", "lang", "decision", "confidence", "probabilities", "events",
    "event_scores", "scenario_tags", "scenario_confidence", "missing_slots", "next_action",
    "gate_validation", "guards", "coach", "source", "fallback", "model", "latency_ms",
]  # fmt: skip
GV_KEYS = {
    "allowed", "final_decision", "blocked_reasons", "warnings", "route_hint",
    "required_clarifications", "next_action", "applied_rules",
}  # fmt: skip

TURNS = [
    {"id": "a", "user_message": "声音调到90", "available_tools": ["device.volume.adjust"]},
    {"id": "b", "user_message": "remind me about the meeting tomorrow at 3pm with Sam and Kim",
     "connected_accounts": ["google_calendar"]},
    {"id": "c", "user_message": "monte le son", "turn_index": 4,
     "conversation_context": [{"role": "user", "content": "bonjour"},
                              {"role": "assistant", "content": "salut"}]},
    {"id": "d", "user_message": "ok"},
    {"id": "e", "user_message": "I want to hurt myself " * 20},
]  # fmt: skip


@pytest.fixture(scope="module")
def gate(tiny_model_dir: Path) -> Gate:
    return Gate(tiny_model_dir, batch_size=2)


def test_record_has_spec_shape(gate: Gate) -> None:
    r = gate.classify(TURNS[0])
    assert list(r) == SPEC_KEYS
    assert r["id"] == "a" and r["turn_index"] == 0 and r["lang"] == "zh"
    assert set(r["probabilities"]) == set(gate.heads["decision"].labels)
    assert abs(sum(r["probabilities"].values()) - 1.0) < 1e-4
    assert r["confidence"] in r["probabilities"].values()
    assert set(r["gate_validation"]) == GV_KEYS
    assert r["source"] == "local" and r["fallback"] == {"status": "not_needed"}
    assert r["model"] == "tiny-test@0.0.0"
    # the local coach (always on) asks one question for ask turns only
    if r["decision"] == "ask":
        assert r["coach"]["highest_value_question"]["question"]
    else:
        assert r["coach"] is None
    assert r["latency_ms"] > 0
    assert all(s >= 0.05 or e in r["events"] for e, s in r["event_scores"].items())
    assert set(r["scenario_confidence"]) == set(r["scenario_tags"])
    assert set(r["scenario_confidence"].values()) <= {"high", "medium", "low"}
    assert consistency_errors(r) == []
    for g in r["guards"]:
        assert g["status"] in {"passed", "blocked", "warned", "routed", "skipped"}


def test_batch_keeps_order_and_matches_single(gate: Gate) -> None:
    batch = gate.classify(TURNS)
    assert [r["id"] for r in batch] == [t["id"] for t in TURNS]
    assert batch[2]["turn_index"] == 4
    for turn, got in zip(TURNS, batch, strict=True):
        single = gate.classify(turn)
        assert single["decision"] == got["decision"]
        for label, p in single["probabilities"].items():
            assert abs(p - got["probabilities"][label]) < 1e-4


def test_invalid_records_stay_in_place(gate: Gate) -> None:
    out = gate.classify(
        [TURNS[0], {"id": "x", "user_message": "  "}, {"user_message": 3}, TURNS[3]]
    )
    assert [r.get("error") for r in out] == [
        None, "user_message is empty", "user_message must be a string, got int", None,
    ]  # fmt: skip
    assert out[1]["id"] == "x" and out[3]["id"] == "d"


def test_long_history_is_trimmed_oldest_first(gate: Gate) -> None:
    names = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
    history = [{"role": "user", "content": f"turn {n} " + "blah " * 6} for n in names]
    rec = {"user_message": "turn it up", "conversation_context": history}
    seqs, bad = gate._encode([rec])
    assert not bad and len(seqs[0]) <= gate.max_length
    text = gate._tok.decode(seqs[0])
    assert "turn it up" in text
    assert "foxtrot" in text and "alpha" not in text  # newest kept, oldest dropped
    assert gate.classify(rec)["decision"] in gate.heads["decision"].labels


def test_huge_message_is_classified_not_an_error(gate: Gate) -> None:
    r = gate.classify({"user_message": "louder " * 15000})
    assert "error" not in r and r["decision"] in gate.heads["decision"].labels


def test_coach_hook_fills_coach(tiny_model_dir: Path) -> None:
    g = Gate(tiny_model_dir, coach_fn=lambda rec, out: {"question": rec["user_message"]})
    assert g.classify({"user_message": "hi"})["coach"] == {"question": "hi"}


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("声音调到90", "zh"), ("明天天气怎么样", "zh"), ("帮我 play 周杰伦的歌", "zh"),
        ("turn the volume up", "en"), ("What does 你好 mean?", "en"), ("ok", "en"),
        ("monte le son", "fr"), ("rappelle-moi la réunion", "fr"), ("c'est quoi", "fr"),
        ("éteins la lumière", "fr"), ("Привет, как дела", "other"), ("こんにちは", "other"),
        ("¿Qué hora es?", "other"), ("", "other"), ("123", "other"),
    ],
)  # fmt: skip
def test_langid(text: str, lang: str) -> None:
    assert detect(text) == lang
