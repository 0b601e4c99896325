"""Table-driven tests of the catalog view and the declarative policy engine (spec §3)."""

from __future__ import annotations

import json
import random

import pytest
import yaml

from gatecli.catalog import Catalog, CatalogError
from gatecli.heads import HeadOutputs
from gatecli.policy import (
    PolicyError,
    apply_policy,
    consistency_errors,
    default_policy_path,
    load_policy,
)

CATALOG = Catalog.default()
POLICY = load_policy(catalog=CATALOG)
DECISIONS = ["execute", "ask", "connect", "refuse", "safety"]
GUARD_SKIPS = {
    "lead_generation_unique_guard": "not_lead_generation",
    "simple_create_eligibility_guard": "not_simple_create",
    "standard_launch_form_guard": "not_standard_launch_form",
    "draft_patch_guard": "not_draft_plan",
    "diagnosis_collaboration_guard": "no_diagnosis_intent_or_signal",
    "execution_confirmation_guard": "no_executable_payload",
    "budget_risk_guard": "no_budget_risk",
    "force_refresh_guard": "no_context_change",
}


def head(probs=None, *, top="execute", events=(), tags=(), slots=(), event_scores=None):
    """Hand-built head outputs: ``top`` gets 0.8 unless ``probs`` is given."""
    if probs is None:
        probs = {d: (0.8 if d == top else 0.05) for d in DECISIONS}
    return HeadOutputs(
        decision_probs=dict(probs),
        events=list(events),
        event_scores=dict(event_scores or {e: 0.9 for e in events}),
        tags=list(tags),
        slots=list(slots),
        slot_scores={s: 0.9 for s in slots},
    )


def run(pred, accounts=(), **kw):
    rec = {"user_message": "x", "connected_accounts": list(accounts)}
    return apply_policy(pred, rec, CATALOG, POLICY, **kw)


# id, head kwargs, connected accounts, expected (decision, next_action, final, events, missing,
# route_hint), rule ids that must be applied
CASES = [
    (
        "volume_low_risk",
        dict(events=["device.volume.adjust"]),
        [],
        ("execute", "continue", "pass", ["device.volume.adjust"], [], None),
        ["model_execute"],
    ),
    (
        "seed004_remind_meeting_no_time",
        dict(events=["calendar.schedule.create"], slots=["time"]),
        ["google_calendar"],
        ("ask", "ask_clarification", "ask", [], ["time"], None),
        ["catalog_required_slot_missing", "drop_events_without_execution"],
    ),
    (
        "seed004_remind_meeting_model_ask",
        dict(top="ask", events=["calendar.schedule.create"], slots=["time"]),
        ["google_calendar"],
        ("ask", "ask_clarification", "ask", [], ["time"], None),
        ["model_ask", "drop_events_without_execution"],
    ),
    (
        "alias_google_calendar",
        dict(events=["calendar.schedule.create"]),
        ["Google_Calendar"],
        ("execute", "continue", "pass", ["calendar.schedule.create"], [], None),
        ["model_execute"],
    ),
    (
        "calendar_not_connected",
        dict(events=["calendar.schedule.create"]),
        ["gmail"],
        ("connect", "route", "route", ["calendar.schedule.create"], [], "connect:calendar"),
        ["catalog_requires_connection"],
    ),
    (
        "email_send_confirm",
        dict(events=["message.email.send"]),
        ["outlook"],
        ("execute", "confirm_execution", "pass", ["message.email.send"], [], None),
        ["catalog_requires_confirmation", "execution_confirmation_guard"],
    ),
    (
        "email_send_not_connected",
        dict(events=["message.email.send"]),
        [],
        ("connect", "route", "route", ["message.email.send"], [], "connect:email"),
        ["catalog_requires_connection"],
    ),
    (
        "email_send_no_recipient",
        dict(events=["message.email.send"], slots=["person"]),
        ["gmail"],
        ("ask", "ask_clarification", "ask", [], ["person"], None),
        ["catalog_required_slot_missing"],
    ),
    (
        "alarm_without_time",
        dict(events=["alarm.set"], slots=["time"]),
        [],
        ("ask", "ask_clarification", "ask", [], ["time"], None),
        ["catalog_required_slot_missing"],
    ),
    (
        "slot_not_required_is_ignored",
        dict(events=["media.play"], slots=["time"]),
        [],
        ("execute", "continue", "pass", ["media.play"], [], None),
        ["model_execute"],
    ),
    (
        "capability_question",
        dict(events=["device.volume.adjust"], tags=["capability_question"]),
        [],
        ("execute", "continue", "pass", [], [], None),
        ["suppress_events_non_request"],
    ),
    (
        "statement_needs_no_calendar",
        dict(events=["calendar.schedule.create"], tags=["statement"]),
        [],
        ("execute", "continue", "pass", [], [], None),
        ["suppress_events_non_request"],
    ),
    (
        "hypothetical_no_confirm",
        dict(events=["message.email.send"], tags=["hypothetical"]),
        ["gmail"],
        ("execute", "continue", "pass", [], [], None),
        ["suppress_events_non_request"],
    ),
    (
        "safety_not_argmax",
        dict(
            probs={"execute": 0.6, "ask": 0.05, "connect": 0.0, "refuse": 0.0, "safety": 0.35},
            events=["media.play"],
        ),
        [],
        ("safety", "route", "route", [], [], "safety_protocol"),
        ["model_safety", "drop_events_without_execution"],
    ),
    (
        "safety_outranks_refuse",
        dict(probs={"execute": 0.0, "ask": 0.0, "connect": 0.0, "refuse": 0.65, "safety": 0.35}),
        [],
        ("safety", "route", "route", [], [], "safety_protocol"),
        ["model_safety"],
    ),
    (
        "refuse",
        dict(top="refuse", events=["order.food.place"], tags=["ads_standard_launch_form"]),
        [],
        ("refuse", "unsupported", "block", [], [], None),
        ["model_refuse", "drop_events_without_execution"],
    ),
    (
        "model_connect_from_scores",
        dict(top="connect", event_scores={"calendar.schedule.query": 0.4, "media.play": 0.2}),
        [],
        ("connect", "route", "route", [], [], "connect:calendar"),
        ["model_connect"],
    ),
    (
        "model_connect_unknown_system",
        dict(top="connect"),
        [],
        ("connect", "route", "route", [], [], "connect:account"),
        ["model_connect"],
    ),
    (
        "standard_launch_form",
        dict(tags=["ads_create_intent", "ads_standard_launch_form"]),
        [],
        ("refuse", "unsupported", "block", [], [], "standard_create_or_manual"),
        ["standard_launch_form_guard"],
    ),
    (
        "mixed_intent",
        dict(tags=["ads_create_intent", "ads_optimize_intent", "ads_mixed_intent"]),
        [],
        ("ask", "ask_clarification", "ask", [], ["target"], None),
        ["cap_ambiguous_mixed_intent"],
    ),
    (
        "budget_changed_warns",
        dict(tags=["ads_optimize_intent", "ads_budget_changed"]),
        [],
        ("execute", "continue", "warn", [], [], None),
        ["budget_risk_guard", "force_refresh_guard"],
    ),
    (
        "diagnosis",
        dict(tags=["ads_optimize_intent", "ads_diagnosis_intent"]),
        [],
        ("execute", "continue", "pass", [], [], "diagnosis_optional"),
        ["diagnosis_collaboration_guard"],
    ),
    (
        "draft_patch",
        dict(tags=["ads_draft_plan_optimize"]),
        [],
        ("execute", "continue", "pass", [], [], "back_to_create_after_patch"),
        ["draft_patch_guard"],
    ),
    (
        "lead_generation",
        dict(tags=["ads_create_intent", "ads_lead_generation"]),
        [],
        ("execute", "continue", "pass", [], [], None),
        ["lead_generation_unique_guard"],
    ),
    (
        "simple_create",
        dict(tags=["ads_create_intent", "ads_simple_create"]),
        [],
        ("execute", "continue", "pass", [], [], None),
        ["simple_create_eligibility_guard"],
    ),
    (
        "follow_up_changes_fields",
        dict(tags=["follow_up", "ads_optimize_intent"]),
        [],
        ("execute", "continue", "pass", [], [], None),
        ["force_refresh_guard"],
    ),
    # merge priority block > ask > route > warn > pass
    (
        "merge_block_over_all",
        dict(
            events=["calendar.schedule.create"],
            slots=["time"],
            tags=["ads_standard_launch_form", "ads_mixed_intent", "ads_budget_changed"],
        ),
        [],
        ("refuse", "unsupported", "block", [], [], "standard_create_or_manual"),
        ["catalog_requires_connection", "catalog_required_slot_missing", "budget_risk_guard"],
    ),
    (
        "merge_ask_over_route",
        dict(events=["calendar.schedule.create"], slots=["time"]),
        [],
        ("ask", "ask_clarification", "ask", [], ["time"], None),
        ["catalog_requires_connection", "catalog_required_slot_missing"],
    ),
    (
        "merge_route_over_warn",
        dict(events=["social.post"], tags=["ads_budget_changed"]),
        [],
        ("connect", "route", "route", ["social.post"], [], "connect:social"),
        ["catalog_requires_connection", "budget_risk_guard", "catalog_requires_confirmation"],
    ),
    (
        "merge_warn_keeps_confirm",
        dict(events=["order.food.place"], tags=["ads_budget_changed"]),
        [],
        ("execute", "confirm_execution", "warn", ["order.food.place"], [], None),
        ["budget_risk_guard", "execution_confirmation_guard"],
    ),
    # Issue 12: the catalog decides over the model's `connect` (policy.yaml
    # catalog_connected_overrides_connect), and a route hint names the system the turn's own
    # event requires.
    (
        "connect_but_calendar_connected_by_system_name",
        dict(top="connect", events=["calendar.schedule.create"]),
        ["calendar"],
        ("execute", "continue", "pass", ["calendar.schedule.create"], [], None),
        ["catalog_connected_overrides_connect", "model_execute"],
    ),
    (
        "connect_but_display_form_connected",
        dict(top="connect", events=["calendar.schedule.query"]),
        ["Google Calendar"],
        ("execute", "continue", "pass", ["calendar.schedule.query"], [], None),
        ["catalog_connected_overrides_connect"],
    ),
    (
        "connect_but_event_needs_no_account",
        dict(top="connect", events=["device.volume.adjust"]),
        [],
        ("execute", "continue", "pass", ["device.volume.adjust"], [], None),
        ["catalog_connected_overrides_connect"],
    ),
    (
        "connect_overridden_then_required_slot_asks",
        dict(top="connect", events=["alarm.set"], slots=["time"]),
        [],
        ("ask", "ask_clarification", "ask", [], ["time"], None),
        ["catalog_connected_overrides_connect", "catalog_required_slot_missing"],
    ),
    (
        "connect_overridden_then_confirmation",
        dict(top="connect", events=["message.email.send"]),
        ["Gmail"],
        ("execute", "confirm_execution", "pass", ["message.email.send"], [], None),
        ["catalog_connected_overrides_connect", "catalog_requires_confirmation"],
    ),
    (
        "connect_stands_when_event_system_missing",
        dict(top="connect", events=["calendar.schedule.create"]),
        ["gmail"],
        ("connect", "route", "route", ["calendar.schedule.create"], [], "connect:calendar"),
        ["model_connect"],
    ),
    (
        "connect_without_event_hints_only_the_best_event",
        dict(
            top="connect",
            event_scores={"calendar.schedule.create": 0.4, "message.email.send": 0.2},
        ),
        ["calendar"],
        ("connect", "route", "route", [], [], "connect:account"),
        ["model_connect"],
    ),
    (
        "connect_without_event_best_event_unconnected",
        dict(
            top="connect",
            event_scores={"calendar.schedule.create": 0.4, "message.email.send": 0.2},
        ),
        [],
        ("connect", "route", "route", [], [], "connect:calendar"),
        ["model_connect"],
    ),
]


@pytest.mark.parametrize(
    ("kw", "accounts", "want", "rules"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_policy_table(kw, accounts, want, rules):
    res = run(head(**kw), accounts)
    out = res.to_json()
    g = out["gate_validation"]
    got = (out["decision"], out["next_action"], g["final_decision"], out["events"],
           out["missing_slots"], g["route_hint"])  # fmt: skip
    assert got == want
    applied = [r["rule_id"] for r in g["applied_rules"]]
    assert set(rules) <= set(applied), applied
    assert consistency_errors(res) == []
    json.dumps(out, ensure_ascii=False)  # serialisable as is


@pytest.mark.parametrize(
    ("tools", "want"),
    [
        # 1.2.25 on test: 230 correct `connect` turns ("stop all my office timers" with
        # schedule_event, get_user_profile) were overridden to execute by the catalog rule.
        (["schedule_event", "get_user_profile", "toggle_device_power"], "connect"),
        # a list that names the event (any spelling) leaves the catalog in charge
        (["Alarm_Manage", "get_weather"], "execute"),
        (["alarmManage"], "execute"),
        # no list, an empty list or blank names restrict nothing
        (None, "execute"),
        ([], "execute"),
        (["  "], "execute"),
    ],
)
def test_connect_stands_when_the_tool_list_does_not_name_the_event(tools, want):
    rec = {"user_message": "stop all my office timers", "available_tools": tools}
    res = apply_policy(head(top="connect", events=["alarm.manage"]), rec, CATALOG, POLICY)
    assert res.decision == want
    applied = [r.rule_id for r in res.gate_validation.applied_rules]
    assert ("catalog_connected_overrides_connect" in applied) == (want == "execute"), applied
    # a missing tool is not an account to connect
    assert res.gate_validation.route_hint == ("connect:tool" if want == "connect" else None)
    assert consistency_errors(res) == []


@pytest.mark.parametrize(
    ("tools", "want"),
    [
        # the tool agents register for search shares no word with the request it serves:
        # a name the catalog declares (knowledge.web.search `tools`) offers the event
        (["web_search"], "execute"),
        (["searchWeb", "send_email"], "execute"),  # any spelling, among other tools
        (["tavily_search_results_json"], "execute"),
        (["联网搜索"], "execute"),
        # an undeclared name is still the model's to read
        (["lookup_online"], "connect"),
        (["send_email"], "connect"),
    ],
)
def test_a_tool_name_the_catalog_declares_offers_its_event(tools, want):
    rec = {"user_message": "will it rain in paris tomorrow", "available_tools": tools}
    res = apply_policy(head(top="connect", events=["knowledge.web.search"]), rec, CATALOG, POLICY)
    assert res.decision == want
    assert res.gate_validation.route_hint == ("connect:tool" if want == "connect" else None)
    assert consistency_errors(res) == []


def test_a_declared_tool_offers_only_its_own_event():
    """``web_search`` in the list does not serve an email. The catalog knows what it serves,
    so a list of it alone is closed like a list of event names: the model's ``execute``
    for the email becomes ``connect:tool``."""
    rec = {"user_message": "email bob that I'm late", "available_tools": ["web_search"],
           "connected_accounts": ["gmail"]}  # fmt: skip
    res = apply_policy(head(top="connect", events=["message.email.send"]), rec, CATALOG, POLICY)
    assert res.decision == "connect" and res.gate_validation.route_hint == "connect:tool"
    res = apply_policy(head(events=["message.email.send"]), rec, CATALOG, POLICY)
    applied = [r.rule_id for r in res.gate_validation.applied_rules]
    assert "catalog_tool_list_lacks_event" in applied and res.decision == "connect"


HOME_ASSISTANT = [
    "HassTurnOn", "HassTurnOff", "HassLightSet", "HassMediaPause", "HassStartTimer",
    "HassCancelTimer", "HassListAddItem", "GetLiveContext", "HassBroadcast",
]  # fmt: skip


@pytest.mark.parametrize(
    ("tools", "events", "top", "want"),
    [
        # Home Assistant's intent tools are declared: the model's connect for a light the
        # list serves stands down (HassTurnOn serves lights and switches alike) ...
        (HOME_ASSISTANT, ["device.light.adjust"], "connect", "execute"),
        (HOME_ASSISTANT, ["device.power.toggle"], "connect", "execute"),
        (HOME_ASSISTANT, ["alarm.manage"], "connect", "execute"),
        # ... and the list is closed (GetLiveContext, HassBroadcast are known_tools): a
        # request no listed intent serves has no tool, whatever the model read
        (
            [t for t in HOME_ASSISTANT if t != "HassMediaPause"],
            ["media.control"],
            "execute",
            "connect",
        ),
        (HOME_ASSISTANT, ["message.email.send"], "execute", "connect"),
        # one script the user exposed under a name of their own opens the list again
        ([*HOME_ASSISTANT, "script_good_night"], ["media.control"], "execute", "execute"),
    ],
)
def test_home_assistants_tool_list_is_read_by_the_catalog(tools, events, top, want):
    rec = {"user_message": "a request", "available_tools": tools, "connected_accounts": ["gmail"]}
    res = apply_policy(head(top=top, events=events), rec, CATALOG, POLICY)
    assert res.decision == want
    assert res.gate_validation.route_hint == ("connect:tool" if want == "connect" else None)
    assert consistency_errors(res) == []


def test_known_tools_must_be_a_list():
    with pytest.raises(CatalogError, match="known_tools must be a list"):
        Catalog.from_mapping({"events": [{"name": "a.b"}], "known_tools": "GetLiveContext"})
    cat = Catalog.from_mapping({"events": [{"name": "a.b"}], "known_tools": ["GetLiveContext"]})
    assert cat.knows_tool("get_live_context") and not cat.knows_tool("get_dead_context")


def test_catalog_tools_must_be_a_list():
    raw = {"events": [{"name": "knowledge.web.search", "tools": "web_search"}]}
    with pytest.raises(CatalogError, match=r"knowledge\.web\.search.*tools must be a list"):
        Catalog.from_mapping(raw)
    cat = Catalog.from_mapping({"events": [{"name": "a.b", "tools": ["Find_Thing", "  "]}]})
    assert cat.events["a.b"].tools == ("find thing",)
    assert cat.events_for_tools(["findThing", "other"]) == {"a.b"}


@pytest.mark.parametrize(
    ("tools", "top", "want"),
    # "wake me up tomorrow" with the time predicted missing: elsewhere the catalog asks for it
    [
        # the spec's own input form: a list written from the catalog is closed
        (["device.volume.adjust", "knowledge.web.search"], "execute", "connect"),
        (["Device_Volume_Adjust", "mediaPlay"], "execute", "connect"),  # any spelling
        # it offers the event: the model's execute stands, and the missing time is asked
        (["alarm.set", "knowledge.web.search"], "execute", "ask"),
        # one freely named tool: the runtime cannot tell what it serves, the model decides
        (["device.volume.adjust", "schedule_event"], "execute", "ask"),
        # no list, an empty list or blank names restrict nothing
        (None, "execute", "ask"),
        ([], "execute", "ask"),
        (["  "], "execute", "ask"),
        # a refusal or a safety turn is never turned into a connection
        (["device.volume.adjust"], "safety", "safety"),
        (["device.volume.adjust"], "refuse", "refuse"),
    ],
)
def test_a_catalog_tool_list_that_lacks_the_event_routes_to_connect(tools, top, want):
    rec = {"user_message": "wake me up tomorrow", "available_tools": tools}
    pred = head(top=top, events=["alarm.set"], slots=["time"])
    res = apply_policy(pred, rec, CATALOG, POLICY)
    assert res.decision == want
    applied = [r.rule_id for r in res.gate_validation.applied_rules]
    lacks = want == "connect"
    assert ("catalog_tool_list_lacks_event" in applied) == lacks, applied
    if lacks:  # no slot question or confirmation for an action the agent lacks
        assert res.gate_validation.route_hint == "connect:tool"
        assert res.gate_validation.required_clarifications == []
        assert "catalog_required_slot_missing" not in applied
    assert consistency_errors(res) == []


@pytest.mark.parametrize(
    "tools", [["device.volume.adjust", "media.play"], HOME_ASSISTANT, ["my_tool"], None]
)
def test_no_tool_list_lacks_an_event_that_needs_no_tool(tools):
    """Saying goodbye is the agent's own act (session.terminate, ``needs_tool: false``): no
    list, closed or free, routes it to a tool (1.2.49 routed "没事了" under Home Assistant's
    list to connect:tool)."""
    assert CATALOG.tool_free_events == {"session.terminate"}
    rec = {"user_message": "bye, thanks", "available_tools": tools}
    for top in ("execute", "connect"):  # the model's connect stands down as for an account
        res = apply_policy(head(top=top, events=["session.terminate"]), rec, CATALOG, POLICY)
        assert res.decision == "execute" and res.gate_validation.route_hint is None
        assert res.events == ["session.terminate"] and consistency_errors(res) == []
    # nor does it offer anything: beside an event the closed list lacks, the turn routes
    res = apply_policy(
        head(events=["session.terminate", "media.play"]),
        {"user_message": "play some jazz, bye", "available_tools": ["device.volume.adjust"]},
        CATALOG,
        POLICY,
    )
    assert res.decision == "connect" and res.gate_validation.route_hint == "connect:tool"


def test_needs_tool_is_a_boolean_and_excludes_tools():
    with pytest.raises(CatalogError, match="needs_tool must be true or false"):
        Catalog.from_mapping({"events": [{"name": "a.b", "needs_tool": "no"}]})
    with pytest.raises(CatalogError, match="lists no tools"):
        Catalog.from_mapping({"events": [{"name": "a.b", "needs_tool": False, "tools": ["x"]}]})
    cat = Catalog.from_mapping({"events": [{"name": "a.b"}, {"name": "c.d", "needs_tool": False}]})
    assert cat.tool_free_events == {"c.d"} and cat.event("a.b").needs_tool


def test_a_catalog_tool_list_that_names_one_of_the_events_lets_the_turn_run():
    """An extra event the model adds by mistake must not route a request the list serves
    ("lance le roomba": device.power.toggle + media.play, the list offering the first)."""
    rec = {"user_message": "lance le roomba", "available_tools": ["device.power.toggle"]}
    pred = head(events=["device.power.toggle", "media.play"])
    res = apply_policy(pred, rec, CATALOG, POLICY)
    assert res.decision == "execute" and res.gate_validation.route_hint is None
    applied = [r.rule_id for r in res.gate_validation.applied_rules]
    assert "catalog_tool_list_lacks_event" not in applied


@pytest.mark.parametrize(("guard", "skip"), sorted(GUARD_SKIPS.items()))
def test_guards_skipped_with_seed_reason_and_triggered_otherwise(guard, skip):
    plain = {gd.guard_name: gd for gd in run(head(events=["media.play"])).guards}
    assert (plain[guard].triggered, plain[guard].status, plain[guard].skip_reason) == (
        False,
        "skipped",
        skip,
    )
    trigger = {
        "lead_generation_unique_guard": dict(tags=["ads_lead_generation"]),
        "simple_create_eligibility_guard": dict(tags=["ads_create_intent", "ads_simple_create"]),
        "standard_launch_form_guard": dict(tags=["ads_standard_launch_form"]),
        "draft_patch_guard": dict(tags=["ads_draft_plan_optimize"]),
        "diagnosis_collaboration_guard": dict(tags=["ads_diagnosis_intent"]),
        "execution_confirmation_guard": dict(events=["transport.book"]),
        "budget_risk_guard": dict(tags=["ads_budget_changed"]),
        "force_refresh_guard": dict(tags=["ads_budget_changed"]),
    }[guard]
    fired = {gd.guard_name: gd for gd in run(head(**trigger)).guards}[guard]
    want = {"standard_launch_form_guard": "blocked", "budget_risk_guard": "warned"}.get(
        guard, "passed"
    )
    assert (fired.triggered, fired.status, fired.skip_reason) == (True, want, None)
    assert fired.decision_reason


def test_guard_payloads_reach_the_runtime():
    res = run(head(tags=["ads_budget_changed", "ads_lead_generation"]))
    payloads = {gd.guard_name: gd.payload for gd in res.guards if gd.triggered}
    assert payloads["force_refresh_guard"] == {"evidence": "stale"}
    assert payloads["lead_generation_unique_guard"]["check"] == "lead_generation_unique"
    assert res.gate_validation.warnings == ["budget_change_risk"]
    assert res.gate_validation.allowed is True


def test_safety_preempts_guards_and_refuse_blocks():
    res = run(head(top="safety", tags=["ads_budget_changed"]))
    assert all(
        gd.status == "skipped" and gd.skip_reason == "preempted_by:model_safety"
        for gd in res.guards
    )
    ref = run(head(top="refuse"))
    assert ref.gate_validation.blocked_reasons == ["unsafe_or_impossible_request"]
    assert ref.gate_validation.allowed is False


def test_precedence_threshold_override_from_artifact():
    probs = {"execute": 0.75, "ask": 0.05, "connect": 0.0, "refuse": 0.0, "safety": 0.2}
    assert run(head(probs)).decision == "execute"
    assert run(head(probs), decision_thresholds={"safety": 0.15}).decision == "safety"
    assert (
        run(head(probs), decision_thresholds={"execute": 0.99}).decision == "execute"
    )  # not in precedence


@pytest.mark.parametrize(
    ("accounts", "systems"),
    [
        (["google_calendar"], {"calendar"}),
        (["Google Calendar"], {"calendar"}),
        (["OUTLOOK"], {"calendar", "email"}),
        (["gmail", "weibo"], {"email", "social"}),
        (["spotify"], set()),
        (None, set()),
        ("gmail", {"email"}),
        ([None, 3, ""], set()),
    ],
)
def test_catalog_alias_matching(accounts, systems):
    assert CATALOG.connected_systems(accounts) == systems


def test_catalog_facts():
    send = CATALOG.events["message.email.send"]
    assert (send.confirm, send.requires, send.required_slots, send.risk) == (
        True,
        ("email",),
        ("person",),
        "high",
    )
    assert CATALOG.event("not.in.catalog").requires == ()
    assert "ads_mixed_intent" in CATALOG.scenario_tags and "time" in CATALOG.missing_slots
    with pytest.raises(CatalogError, match="unknown system"):
        Catalog.from_mapping({"events": [{"name": "a.b", "requires": ["crm"]}]})
    with pytest.raises(CatalogError, match="risk"):
        Catalog.from_mapping({"events": [{"name": "a.b", "risk": "medium"}]})


def _policy_with(**patch):
    data = yaml.safe_load(default_policy_path().read_text(encoding="utf-8"))
    rule = {
        "rule_id": "x",
        "rule_type": "capability_gate",
        "when": {},
        "then": {"severity": "pass", "reason": "r"},
    }
    rule.update(patch)
    data["rules"].append(rule)
    return data


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (dict(when={"any_tags": ["x"]}), "unknown condition 'any_tags'"),
        (dict(when={"any_tag": ["no_such_tag"]}), "not in the catalog's tags"),
        (dict(when={"decision": ["maybe"]}), "decision: unknown"),
        (dict(when={"has_events": "yes"}), "must be true or false"),
        (dict(then={"severity": "fail", "reason": "r"}), "severity must be one of"),
        (dict(then={"severity": "block", "reason": "r"}), "needs a blocked_reason"),
        (dict(then={"severity": "warn", "reason": "r"}), "needs a warning"),
        (dict(then={"severity": "route", "decision": "safety", "reason": "r"}), "safety_protocol"),
        (dict(then={"severity": "route", "reason": "r"}), "connect:<system>"),
        (
            dict(then={"severity": "ask", "decision": "execute", "reason": "r"}),
            "contradicts severity",
        ),
        (
            dict(then={"severity": "ask", "next_action": "continue", "reason": "r"}),
            "next_action may only",
        ),
        (dict(then={"severity": "pass"}), "needs a reason"),
        (dict(then={"severity": "pass", "reason": "see {foo}"}), "unknown placeholder"),
        (dict(then={"severity": "pass", "reason": "r", "colour": 1}), "unknown key"),
        (dict(rule_type="gate"), "rule_type must be one of"),
        (dict(rule_id="model_execute"), "duplicate id"),
    ],
)
def test_policy_validation_errors_name_the_rule(patch, message):
    with pytest.raises(PolicyError, match=message):
        load_policy(_policy_with(**patch), catalog=CATALOG)


def test_guard_declaration_errors():
    data = yaml.safe_load(default_policy_path().read_text(encoding="utf-8"))
    del data["guards"][0]["skip_reason"]
    with pytest.raises(PolicyError, match=r"lead_generation_unique_guard.*skip_reason"):
        load_policy(data)
    data = yaml.safe_load(default_policy_path().read_text(encoding="utf-8"))
    data["guards"][0]["then"]["severity"] = "ask"
    with pytest.raises(PolicyError, match="use a rule for ask"):
        load_policy(data)
    with pytest.raises(PolicyError, match="unknown top-level"):
        load_policy({"rulez": []})


def test_plain_mapping_policy_is_accepted_and_user_rules_take_effect():
    then = {"severity": "warn", "warning": "loud_music", "reason": "r"}
    data = _policy_with(when={"any_event": ["media.play"]}, then=then)
    res = apply_policy(head(events=["media.play"]), {}, CATALOG, data)
    assert (res.decision, res.gate_validation.final_decision, res.gate_validation.warnings) == (
        "execute", "warn", ["loud_music"],
    )  # fmt: skip


def test_random_outputs_never_contradict():
    rng = random.Random(7)
    events, tags, slots = (
        CATALOG.event_names,
        list(CATALOG.scenario_tags),
        list(CATALOG.missing_slots),
    )
    accounts = ["google_calendar", "gmail", "outlook", "weibo", "spotify"]
    seen = set()
    for _ in range(1500):
        raw = [rng.random() ** 3 for _ in DECISIONS]
        probs = {d: v / sum(raw) for d, v in zip(DECISIONS, raw, strict=True)}
        pred = HeadOutputs(
            decision_probs=probs,
            events=rng.sample(events, rng.choice([0, 0, 1, 1, 2, 3])),
            event_scores={e: rng.random() for e in rng.sample(events, 4)},
            tags=rng.sample(tags, rng.choice([0, 1, 2, 3])),
            slots=rng.sample(slots, rng.choice([0, 0, 1, 2])),
            slot_scores={s: rng.random() for s in slots},
        )
        res = apply_policy(
            pred, {"connected_accounts": rng.sample(accounts, rng.randint(0, 3))}, CATALOG, POLICY
        )
        assert consistency_errors(res) == [], (pred, res.to_json())
        if res.decision in ("ask", "refuse", "safety"):
            assert res.events == []
        assert res.gate_validation.allowed == (res.decision == "execute")
        assert len(res.guards) == len(GUARD_SKIPS)
        seen.add(res.decision)
    assert seen == set(DECISIONS)


def test_consistency_checker_catches_contradictions():
    good = run(head(events=["message.email.send"]), ["gmail"]).to_json()
    assert consistency_errors(good) == []
    bad = json.loads(json.dumps(good))
    bad["decision"] = "ask"
    bad["guards"][0]["status"] = "passed"
    errs = consistency_errors(bad)
    assert any("contradicts final_decision" in e for e in errs)
    assert any("events" in e for e in errs)
    assert any("lead_generation_unique_guard" in e for e in errs)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([0.9], "must be a mapping"),
        ({"execute": 0.9}, "not a decision.precedence label"),
        ({"safety": 1.5}, r"\(safety\): must be a number in \[0, 1\]"),
        ({"refuse": True}, r"\(refuse\): must be a number"),
    ],
)
def test_segment_min_prob_is_checked(value, message):
    data = yaml.safe_load(default_policy_path().read_text(encoding="utf-8"))
    data["decision"]["segment_min_prob"] = value
    with pytest.raises(PolicyError, match=message):
        load_policy(data)


def test_segment_min_prob_is_optional():
    data = yaml.safe_load(default_policy_path().read_text(encoding="utf-8"))
    assert load_policy(data).segment_min_prob == ()  # a sentence needs the turn's floors
    data["decision"]["segment_min_prob"] = {"safety": 0.9, "refuse": 0.8}
    assert dict(load_policy(data).segment_min_prob) == {"safety": 0.9, "refuse": 0.8}
