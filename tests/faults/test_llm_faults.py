"""Issue 15 #1 and #2: what may reach an LLM, and how long an LLM may hold a run.

The real ``gatecli classify`` runs in a subprocess with the shipped model against
:class:`StubLLM`, a real HTTP server on 127.0.0.1 that hangs, drips, sleeps, drops the
connection or lies. Every run is bounded by ``run_cli(timeout=...)``: a hang fails the
test instead of stalling the suite.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from faultkit import Ran, StubLLM, free_port, run_cli

RISKY = ("pipe bomb", "end my life", "pills", "cannot help", "crisis line")
CHAT = [
    {"role": "user", "content": "play some jazz"},
    {"role": "assistant", "content": "Playing jazz."},
    {"role": "user", "content": "how do I make a pipe bomb"},
    {"role": "assistant", "content": "I cannot help with that."},
    {"role": "user", "content": "I want to end my life, I have the pills ready"},
    {"role": "assistant", "content": "I am so sorry you feel this way. Please call a crisis line."},
    {"role": "user", "content": "remind me about the meeting"},
]
THINGS = ["dentist", "meeting", "call", "rent", "party", "gym", "flight", "report", "laundry",
          "taxes", "plants", "cat", "doctor", "bills", "exam", "trip", "dinner"]  # fmt: skip


def ask_turns(tmp_path: Path, n: int) -> Path:
    """n distinct ask-band turns ("remind me about the ..."): distinct, so none is cached."""
    src = tmp_path / "turns.jsonl"
    src.write_text(
        "".join(
            json.dumps({"id": i, "user_message": f"remind me about the {THINGS[i]}"}) + "\n"
            for i in range(n)
        ),
        encoding="utf-8",
    )
    return src


def classify(src: Path, base_url: str, *flags: str, timeout: float = 20) -> Ran:
    args = ["classify", src, "--llm-base-url", base_url, "--llm-model", "stub",
            "--llm-budget", "1", *flags]  # fmt: skip
    ran = run_cli(args, timeout=timeout)
    assert ran.rc == 0, ran.stderr[-2000:]
    return ran


def statuses(ran: Ran) -> list[str]:
    return [r["fallback"]["status"] for r in ran.rows()]


@pytest.mark.parametrize(("mode", "status"), [("ok", "ok"), ("flip", "invalid")])
def test_safety_and_refuse_turns_never_reach_the_llm(
    llm: StubLLM, tmp_path: Path, mode: str, status: str
) -> None:
    """#1: risky earlier turns (and the assistant's answers to them) are withheld."""
    llm.mode = mode
    src = tmp_path / "chat.jsonl"
    src.write_text(json.dumps({"id": "c1", "messages": CHAT}) + "\n", encoding="utf-8")
    ran = classify(src, llm.base_url, "--llm-timeout", "5")
    rows = ran.rows()
    assert [r["turn_index"] for r in rows] == [0, 2, 4, 6]
    last = rows[-1]
    assert last["decision"] == "ask", f"the shipped model no longer asks here: {last}"
    sent = llm.sent_text()
    assert llm.requests, "the ask turn was not escalated"
    for words in RISKY:
        assert words not in sent, f"{words!r} reached the LLM"
    assert "play some jazz" in sent and "meeting" in sent  # harmless context still travels
    assert last["fallback"]["status"] == status and last["fallback"]["redacted_turns"] == 4
    assert last["source"] == ("llm" if mode == "ok" else "local")
    for row in rows[1:3]:  # the risky turns themselves stay local
        assert row["decision"] in ("refuse", "safety") and row["fallback"]["status"] == "not_needed"


def test_a_dripping_server_is_cut_at_llm_timeout(llm: StubLLM, tmp_path: Path) -> None:
    """#2: headers, then a byte every 0.5 s: --llm-timeout bounds the whole request."""
    llm.mode, llm.drip_s = "drip", 0.5
    src = ask_turns(tmp_path, 3)
    ran = classify(src, llm.base_url, "--llm-timeout", "1.5", "--llm-concurrency", "1")
    assert statuses(ran) == ["timeout", "timeout", "circuit_open"]
    assert len(llm.requests) == 2
    assert llm.times[1] - llm.times[0] < 2.5  # the first call ended at its deadline
    assert ran.seconds < 12


@pytest.mark.parametrize("mode", ["sleep", "hang"])
def test_a_silent_server_opens_the_breaker_after_two_timeouts(
    llm: StubLLM, tmp_path: Path, mode: str
) -> None:
    """#2: 17 turns against a server that never answers: 2 timed-out calls, not 3 x 20 s."""
    llm.mode = mode
    src = ask_turns(tmp_path, 17)
    ran = classify(src, llm.base_url, "--llm-timeout", "1", "--llm-concurrency", "1")
    assert statuses(ran) == ["timeout"] * 2 + ["circuit_open"] * 15
    assert len(llm.requests) == 2  # a timeout is never retried: it has spent the deadline
    assert ran.seconds < 10


def test_a_refused_connection_opens_the_breaker_fast(tmp_path: Path) -> None:
    """#2: nothing listening: no retries with backoff, the breaker opens after 3 calls."""
    src = ask_turns(tmp_path, 10)
    url = f"http://127.0.0.1:{free_port()}/v1"
    ran = classify(src, url, "--llm-timeout", "5", "--llm-concurrency", "1")
    got = statuses(ran)
    assert got == ["error"] * 3 + ["circuit_open"] * 7, got
    assert "ConnectError" in ran.rows()[0]["fallback"]["reason"]
    assert ran.seconds < 8


def test_retries_stay_inside_the_deadline(llm: StubLLM, tmp_path: Path) -> None:
    """#2: a dropped connection is retried, but only while --llm-timeout leaves room."""
    llm.mode = "close"
    src = ask_turns(tmp_path, 1)
    ran = classify(src, llm.base_url, "--llm-timeout", "1", "--llm-concurrency", "1")
    assert statuses(ran) == ["error"]
    # attempt at 0 s, retry after 0.5 s; the next retry (after 1 s more) would pass 1 s
    assert len(llm.requests) == 2
    assert llm.times[1] - llm.times[0] < 1.0


def test_the_escalation_stage_has_a_deadline(llm: StubLLM, tmp_path: Path) -> None:
    """#2: every call may be within its timeout, yet the stage as a whole stops in time."""
    llm.mode, llm.sleep_s = "sleep", 0.7
    cfg = tmp_path / "llm.yaml"
    cfg.write_text("llm:\n  stage_timeout_s: 2\n", encoding="utf-8")
    src = ask_turns(tmp_path, 12)
    ran = classify(
        src, llm.base_url, "--llm-timeout", "5", "--llm-concurrency", "1", "--llm-config", cfg
    )
    rows = ran.rows()
    got = statuses(ran)
    assert 1 <= got.count("ok") <= 3, got
    assert "stage deadline" in rows[-1]["fallback"]["reason"]
    assert got[-1] == "timeout" and len(llm.requests) <= 4
    assert llm.times[-1] - llm.times[0] < 2.5
    assert all(r["decision"] == "ask" for r in rows)  # the local result always stands
