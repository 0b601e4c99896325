"""Input template version 2: canonical context, empty fields omitted (issue 12)."""

from __future__ import annotations

import pytest
import yaml

from gatecli.artifact import DEFAULT_CATALOG
from gatecli.template import (
    DEFAULT_TEMPLATE_V1,
    fit_tools,
    history_turns,
    serialize,
    template_from_catalog,
    tool_ranking,
    tool_words,
)

T = template_from_catalog(yaml.safe_load(DEFAULT_CATALOG.read_text(encoding="utf-8")))
MSG = "set up a call with Omar on Thursday at 11"


def test_bare_turn_is_prefix_plus_message() -> None:
    assert serialize({"user_message": "声音调到90"}, T) == "query: 声音调到90"


@pytest.mark.parametrize(
    "empty",
    [
        {"available_tools": []},
        {"connected_accounts": []},
        {"conversation_context": ""},
        {"conversation_context": []},
        {"user_profile": {}},
        {"user_profile": {"skill_level": "unknown", "known_preferences": []}},
        {"available_files": [], "connected_accounts": None, "available_tools": [" "]},
    ],
)
def test_empty_fields_serialise_like_absent_ones(empty: dict) -> None:
    assert serialize({"user_message": MSG, **empty}, T) == serialize({"user_message": MSG}, T)


@pytest.mark.parametrize(
    "accounts",
    [["calendar"], ["google_calendar"], ["Google Calendar"], ["GOOGLE-CALENDAR"],
     ["飞书日历"], ["Apple Calendar"], ["icloud_calendar", "calendar"]],
)  # fmt: skip
def test_account_aliases_serialise_as_the_system(accounts: list[str]) -> None:
    text = serialize({"user_message": MSG, "connected_accounts": accounts}, T)
    assert text == f"query: {MSG.lower()} | accounts: calendar"


def test_multi_system_and_unknown_accounts() -> None:
    text = serialize({"user_message": "hi", "connected_accounts": ["Spotify", "Outlook"]}, T)
    assert text == "query: hi | accounts: calendar, email, spotify"


def test_tools_naming_a_catalog_event_become_the_event() -> None:
    rec = {"user_message": "x", "available_tools": ["Device_Volume_Adjust", "get_weather"]}
    assert serialize(rec, T) == "query: x | tools: device.volume.adjust, get weather"
    swapped = {"user_message": "x", "available_tools": ["get_weather", "device.volume.adjust"]}
    assert serialize(swapped, T) == serialize(rec, T)


@pytest.mark.parametrize(
    "name", ["getWeather", "GetWeather", "get_weather", "Get-Weather", "GET_WEATHER", "get weather"]
)
def test_a_tool_name_reads_the_same_in_every_casing_convention(name: str) -> None:
    """Capitals in a tool name were unknown tokens (the message is lower-cased, so the
    trimmed vocabulary has none); the words are what the model can read."""
    rec = {"user_message": "x", "available_tools": [name, "DeviceVolumeAdjust"]}
    assert serialize(rec, T) == "query: x | tools: device.volume.adjust, get weather"


def test_a_tool_name_without_words_is_left_out() -> None:
    rec = {"user_message": "x", "available_tools": ["@@", "get_weather"]}
    assert serialize(rec, T) == "query: x | tools: get weather"
    assert serialize({"user_message": "x", "available_tools": ["--"]}, T) == "query: x"


def test_a_folder_without_tool_names_keeps_them_as_given() -> None:
    """gate-small <= 1.2.6 was trained on tool names as given; its template has no key."""
    old = {k: v for k, v in T.items() if k != "tool_names"}
    rec = {"user_message": "x", "available_tools": ["Weather_1_GetWeather", "device_volume_adjust"]}
    assert serialize(rec, old) == "query: x | tools: Weather_1_GetWeather, device.volume.adjust"


def test_case_whitespace_and_width_do_not_change_the_text() -> None:
    a = serialize({"user_message": "Turn  ON the Lights"}, T)
    assert a == serialize({"user_message": "turn on the lights "}, T)
    assert serialize({"user_message": "ＡＢＣ１２３"}, T) == "query: abc123"


def test_history_is_newest_first_with_roles_and_trimmed_oldest_first() -> None:
    ctx = [
        {"role": "user", "content": "wake me up tomorrow"},
        {"role": "assistant", "content": "What time should I set it for?"},
    ]
    text = serialize({"user_message": "six fifteen", "conversation_context": ctx}, T)
    assert text == (
        "query: six fifteen | earlier: assistant: what time should i set it for? | "
        "user: wake me up tomorrow"
    )

    def words(s: str) -> int:
        return len(s.split())

    cut = serialize(
        {"user_message": "six fifteen", "conversation_context": ctx},
        T,
        count_tokens=words,
        max_length=words(text) - 2,
    )
    assert "what time should i set it for?" in cut and "wake me up" not in cut


def test_version_1_is_unchanged() -> None:
    """gate-small 1.0/1.1 carry a version-1 template: its layout must not move."""
    rec = {"user_message": "声音调到90", "connected_accounts": ["google_calendar"]}
    assert serialize(rec, DEFAULT_TEMPLATE_V1) == (
        "query: 声音调到90 | accounts: google_calendar | tools: none | files: none | skill: none"
    )


def test_history_turns_accepts_text_and_content_parts() -> None:
    assert history_turns("earlier text") == [("context", "earlier text")]
    parts = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert history_turns(parts) == [("user", "hi")]


def test_a_long_message_keeps_its_request_after_pasted_text() -> None:
    """A message over the budget keeps its beginning and its end (``long_message:
    head_tail``), so "<passage> + summarise it" and "<passage> + how do I make it at home"
    differ in the model's input; a folder without the key cuts from the end, as trained."""

    def words(s: str) -> int:
        return len(s.split())

    passage = " ".join(f"w{i}" for i in range(200))
    safe = {"user_message": f"{passage} can you summarise this for my class"}
    harm = {"user_message": f"{passage} now tell me how to build one at home"}
    got = [serialize(r, T, count_tokens=words, max_length=60) for r in (safe, harm)]
    assert got[0] != got[1] and all(words(g) <= 60 for g in got)
    assert got[0].startswith("query: w0 w1") and got[0].endswith("summarise this for my class")
    assert " ... " in got[0]
    old = {k: v for k, v in T.items() if k != "long_message"}
    cut = [serialize(r, old, count_tokens=words, max_length=60) for r in (safe, harm)]
    assert cut[0] == cut[1] and " ... " not in cut[0]  # what gate-small <= 1.2.19 was fed
    assert serialize({"user_message": "hi there"}, T, count_tokens=words, max_length=60) == (
        "query: hi there"
    )


def test_a_long_tool_list_gives_up_tools_not_the_message() -> None:
    """Home Assistant's agent lists ~30 intent tools. Over the budget, a folder with
    ``tool_overflow: drop_tools`` keeps the whole message and at most a third of the budget
    of tool names, those sharing a word with the request first; a folder without the key
    (gate-small <= 1.2.48) kept the list and left nothing of the request."""

    def words(s: str) -> int:
        return len(s.split())

    tools = [f"HassTool{i:02d}Thing" for i in range(30)] + ["HassLightSet"]
    rec = {"user_message": "dim the kitchen light please", "available_tools": tools}
    got = serialize(rec, T, count_tokens=words, max_length=60)
    assert got.startswith("query: dim the kitchen light please | tools: ")
    kept = got.split(" | tools: ")[1].split(", ")
    assert "hass light set" in kept and words("tools: " + ", ".join(kept)) <= 60 // 3
    assert kept == sorted(kept) and words(got) <= 60
    old = {k: v for k, v in T.items() if k != "tool_overflow"}
    assert serialize(rec, old, count_tokens=words, max_length=60).startswith("query:  ... ")
    # A turn within the budget keeps every tool, trimmed or not.
    short = {"user_message": "dim the light", "available_tools": tools[:3]}
    assert serialize(short, T, count_tokens=words, max_length=60) == serialize(short, T)
    # Earlier turns still go before the message is cut: history, then the message.
    ctx = {**rec, "conversation_context": [{"role": "user", "content": "x " * 50}]}
    assert serialize(ctx, T, count_tokens=words, max_length=60) == got


def test_a_list_of_hundreds_is_cut_as_a_full_search_would_cut_it() -> None:
    """``fit_tools(most=)`` bounds the search by the count of one-token names a third of the
    budget holds (an MCP agent may list hundreds; 1,000 names took 23 ms a turn); the names
    it keeps must be those the unbounded search keeps."""
    names = [f"tool_{i:03d}_{w}" for i, w in enumerate(["a", "bb", "light"] * 200)]
    fields = [("tools", [tool_words(n) for n in names])]
    for budget in (4, 12, 30, 60):

        def fits(fs: list[tuple[str, list[str]]], budget: int = budget) -> bool:
            return sum(len(v) for _, v in fs) <= budget  # one token a name: the tightest case

        full = fit_tools(fields, "tools", "the light", [], fits)
        assert fit_tools(fields, "tools", "the light", [], fits, most=budget) == full
        assert len(full[0][1]) == budget


def test_tool_ranking_prefers_catalog_events_then_shared_words() -> None:
    ranked = tool_ranking(["zeta", "set_timer", "device.volume.adjust", "kitchen_lights"],
                          "turn the kitchen lights off", ["device.volume.adjust"])  # fmt: skip
    assert ranked[:2] == ["device.volume.adjust", "kitchen_lights"]
    # "set" is shared with "set a timer" by most tools; it does not rank a tool.
    got = tool_ranking(["hass light set", "start timer"], "set a timer", [])
    assert got == ["start timer", "hass light set"]
