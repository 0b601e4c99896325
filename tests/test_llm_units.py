"""Fast tests of the escalation pieces that need no server: local coach templates per
language, the schema validator, handoff trimming, answer parsing, band and budget."""

from __future__ import annotations

import json

import pytest

from gatecli.coach import build_coach, local_coach, templates
from gatecli.llm.client import LLMFailure, load_config, parse_json
from gatecli.llm.escalate import Escalator, check_answer, make_escalator
from gatecli.llm.handoff import MAX_TOKENS, build_handoff, estimate_tokens
from gatecli.llm.schema import coach_schema, validate

ASK = {
    "decision": "ask",
    "probabilities": {"execute": 0.2, "ask": 0.7, "connect": 0.05, "refuse": 0.03, "safety": 0.02},
    "events": [],
    "event_scores": {"calendar.schedule.create": 0.64},
    "missing_slots": ["time"],
}


@pytest.mark.parametrize(
    ("lang", "question"),
    [
        ("en", "What time should I schedule it?"),
        ("zh", "要安排在什么时间？"),
        ("fr", "À quelle heure dois-je le programmer ?"),
        ("other", "What time should I schedule it?"),
    ],
)
def test_local_coach_asks_in_the_message_language(lang: str, question: str) -> None:
    coach = local_coach({}, {**ASK, "lang": lang})
    assert coach is not None
    q = coach["highest_value_question"]
    assert q["question"] == question
    assert 2 <= len(q["options"]) <= 4
    assert coach["missing_context"][0]["impact"] == "high"
    assert coach["execution_brief"] is None
    assert validate(coach, coach_schema()) == []


def test_local_coach_is_deterministic_and_only_for_ask() -> None:
    rec = {**ASK, "lang": "zh"}
    assert local_coach({}, rec) == local_coach({}, rec)
    assert local_coach({}, {**ASK, "decision": "execute"}) is None
    assert local_coach({}, {**ASK, "decision": "refuse"}) is None


def test_every_template_combination_is_schema_valid() -> None:
    tpl = templates()
    slots = list(tpl["slots"])
    for lang in tpl["languages"]:
        for event in [None, *tpl["events"]]:
            for slot in [*slots, None]:
                coach = build_coach(lang, [slot] if slot else [], event)
                assert validate(coach, coach_schema()) == [], (lang, event, slot)
            assert validate(build_coach(lang, slots, event), coach_schema()) == []


def test_templates_cover_every_language_per_slot_and_event() -> None:
    tpl = templates()
    for lang in tpl["languages"]:
        assert lang in tpl["generic"]
        assert all(lang in spec for spec in tpl["slots"].values())
        assert all(lang in spec for spec in tpl["events"].values())


def test_slot_priority_picks_time_before_content_and_lists_the_rest() -> None:
    coach = build_coach("fr", ["content", "time"], None)
    assert coach["highest_value_question"]["question"] == "Quand est-ce que cela doit avoir lieu ?"
    assert coach["highest_value_question"]["optional_context"] == ["le contenu"]
    assert [m["name"] for m in coach["missing_context"]] == ["l'heure", "le contenu"]


def test_validator_catches_each_keyword() -> None:
    schema = coach_schema()
    good = build_coach("en", ["time"], None)
    assert validate(good, schema) == []
    huge = [{**good["missing_context"][0], "impact": "huge"}]
    cases = {
        "missing required": {k: v for k, v in good.items() if k != "task_type"},
        "unexpected": {**good, "decision": "execute"},
        "expected": {**good, "success_criteria": "one string"},
        "not one of": {**good, "missing_context": huge},
        "fewer than": {**good, "highest_value_question": {**good["highest_value_question"],
                                                          "options": ["only"]}},
        "more than": {**good, "highest_value_question": {**good["highest_value_question"],
                                                        "options": list("abcde")}},
        "longer than": {**good, "task_type": "x" * 500},
    }  # fmt: skip
    for words, bad in cases.items():
        errors = validate(bad, schema)
        assert errors and any(words in e for e in errors), (words, errors)
    assert validate(True, {"type": "integer"})  # bool is not an integer
    assert validate(None, {"type": ["string", "null"]}) == []


def test_check_answer_rejects_a_decision_before_the_schema() -> None:
    good = build_coach("en", ["time"], None)
    assert check_answer(good) == []
    assert "decision" in check_answer({**good, "decision": "execute"})[0]


def test_handoff_has_the_seed_003_fields_and_is_stable() -> None:
    rec = {"user_message": "remind me", "conversation_context": "user: hi\nassistant: hello"}
    ctx = build_handoff(rec, ASK)
    for key in (
        "correlation_id",
        "source_agent",
        "target_agent",
        "handoff_reason",
        "conversation_summary",
        "user_intent",
        "key_facts",
        "hop_count",
        "handoff_chain",
    ):
        assert key in ctx
    assert ctx["key_facts"]["missing_slots"] == ["time"]
    assert ctx == build_handoff(rec, ASK)  # same record, same id: cacheable requests
    assert build_handoff(
        {**rec, "correlation_id": "c-1", "hop_count": 1, "handoff_chain": ["router"]}, ASK
    )["handoff_chain"] == ["router", "gatecli"]


def test_handoff_trims_oldest_turns_first_to_2000_tokens() -> None:
    turns = [{"role": "user", "content": f"turn number {i} 说了一些话"} for i in range(3000)]
    ctx = build_handoff({"user_message": "latest", "conversation_context": turns}, ASK)
    assert estimate_tokens(json.dumps(ctx, ensure_ascii=False)) <= MAX_TOKENS
    summary = ctx["conversation_summary"]
    assert summary.endswith("turn number 2999 说了一些话") and "turn number 0 " not in summary
    assert ctx["user_message"] == "latest"
    # a counter that says every char is a token trims harder
    ctx2 = build_handoff(
        {"user_message": "latest", "conversation_context": turns}, ASK, count_tokens=len
    )
    assert len(json.dumps(ctx2, ensure_ascii=False)) <= MAX_TOKENS
    assert len(ctx2["conversation_summary"]) < len(summary)


def test_handoff_shortens_a_huge_message_after_dropping_context() -> None:
    ctx = build_handoff({"user_message": "字" * 10000, "conversation_context": "user: a"}, ASK)
    assert estimate_tokens(json.dumps(ctx, ensure_ascii=False)) <= MAX_TOKENS
    assert ctx["conversation_summary"] == "" and ctx["user_message"].startswith("字")


def test_parse_json_is_lenient_but_not_blind() -> None:
    assert parse_json('{"a": "x\ny"}') == {"a": "x\ny"}
    assert parse_json('Sure! {"a": 1} hope it helps') == {"a": 1}
    with pytest.raises(LLMFailure) as err:
        parse_json("<html>oops</html>")
    assert err.value.status == "invalid"


def test_band_never_includes_safety_or_refuse() -> None:
    esc = Escalator(None, ask_margin=0.15)
    assert esc.in_band(ASK)[0]
    near = {"decision": "execute", "probabilities": {"execute": 0.5, "ask": 0.4}}
    assert esc.in_band(near)[0] and not Escalator(None, ask_margin=0.05).in_band(near)[0]
    for d in ("safety", "refuse"):
        assert not esc.in_band({**ASK, "decision": d})[0]
    assert not esc.in_band({"decision": "ask", "probabilities": {"safety": 0.5, "ask": 0.45}})[0]


def test_not_configured_keeps_the_local_result() -> None:
    rows = Escalator(None, unconfigured_reason="no LLM").run(
        [{"user_message": "x"}] * 2, [ASK, {"id": 1, "error": "bad"}]
    )
    assert rows[0]["fallback"] == {"status": "not_configured", "reason": "no LLM"}
    assert rows[0]["decision"] == "ask" and rows[1] == {"id": 1, "error": "bad"}


def test_load_config_precedence(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    cfg_file = tmp_path / "llm.yaml"
    cfg_file.write_text("llm:\n  base_url: http://file/v1\n  model: m-file\n  retries: 0\n")
    cfg, _ = load_config(
        config_file=cfg_file, env={"GATECLI_LLM_MODEL": "m-env"}, base_url="http://flag/v1"
    )
    assert (cfg.base_url, cfg.model, cfg.retries) == ("http://flag/v1", "m-env", 0)
    none, why = load_config(env={})
    assert none is None and "GATECLI_LLM_BASE_URL" in why
    monkeypatch.setenv("GATECLI_LLM_API_KEY", "k")
    assert load_config(env={}, base_url="http://x", model="m")[0].api_key == "k"
    with pytest.raises(ValueError, match="unknown LLM config keys"):
        load_config(env={}, base_url="http://x", model="m", temprature=1)
    esc = make_escalator(None, budget=0.5, ask_margin=0.3, base_url=None, model=None)
    assert (esc.client, esc.max_share, esc.ask_margin) == (None, 0.5, 0.3)
