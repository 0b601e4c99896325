"""Issue 12 context data: dialogue loaders, account-spelling variants, slot answers, risk across
turns, the invariance and context suites and their eval views (real raw files where needed)."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatecli.catalog import Catalog
from gatecli.evaluation.context_views import context_view, invariance_view
from gatecli.evaluation.suites import resolve_suites
from gatecli.main import app
from gatecli_train.corpus import (
    context,
    context_suite,
    dialogue,
    invariance,
    invariance_train,
    multiwoz_zh,
    tools_variation,
)
from gatecli_train.corpus.build import read_jsonl_records
from gatecli_train.corpus.records import make_record, normalise, validate

REPO = Path(__file__).resolve().parent.parent
RAW = Path(os.environ.get("GATECLI_RAW", REPO.parent / "shared/datasets"))
needs_raw = pytest.mark.skipif(not RAW.exists(), reason="raw datasets not present")
AUTHORED = [REPO / f"data/authored/{k}.{lang}.jsonl" for k in ("followups", "closings")
            for lang in ("en", "zh", "fr")]  # fmt: skip
HELDOUT = REPO / "data/suites/context_heldout.jsonl"
SEEDS = REPO / "data/suites/seeds.jsonl"


def _valid(rec: dict) -> list[str]:
    return validate({**rec, "split": rec.get("split") or "train"})


@pytest.fixture(scope="module")
def sgd() -> dict[str, list[dict]]:
    return dialogue.sgd_turns(RAW)


@pytest.fixture(scope="module")
def mwz() -> dict[str, list[dict]]:
    return multiwoz_zh.turns(RAW, "val")


def _by_id(kinds: dict[str, list[dict]]) -> dict[str, dict]:
    return {r["id"]: r for recs in kinds.values() for r in recs}


@needs_raw
def test_sgd_answers_and_closings(sgd: dict[str, list[dict]]) -> None:
    by = _by_id(sgd)
    alarm = by["sgd_subset:dev:3_00016.8"]  # "Four in the evening" after "What time ...?"
    assert alarm["input"]["user_message"] == "Four in the evening"
    assert alarm["labels"]["decision"] == "execute" and alarm["labels"]["events"] == ["alarm.set"]
    assert alarm["input"]["conversation_context"][-1]["role"] == "assistant"
    ride = by["sgd_subset:dev:2_00002.2"]  # answers one request, the system asks again
    assert ride["labels"]["decision"] == "ask"
    assert ride["labels"]["missing_slots"] == ["amount", "place"]
    assert by["sgd_subset:dev:1_00005.12"]["labels"]["events"] == ["session.terminate"]
    assert by["sgd_subset:test:7_00118.4"]["labels"]["events"] == []  # bare thanks
    for r in sgd["answer"]:
        assert r["input"]["conversation_context"] and "answers REQUEST" in r["note"]
    assert all(not _valid(r) for recs in sgd.values() for r in recs)


@needs_raw
def test_heldout_dialogues_never_feed_training(sgd: dict[str, list[dict]]) -> None:
    def did(rid: str) -> str:  # split and dialogue id: dev and test reuse dialogue ids
        return rid.split(":")[1] + ":" + rid.split(":")[2].rsplit(".", 1)[0]

    held = dialogue.sgd_heldout(RAW)
    assert len(held) > 300 and all(r["input"]["conversation_context"] for r in held)
    assert all(dialogue.heldout_dialogue("sgd_subset", *did(r["id"]).split(":")) for r in held)
    trained = {did(r["id"]) for recs in sgd.values() for r in recs}
    assert not trained & {did(r["id"]) for r in held}
    cw_held = {did(r["id"]) for r in dialogue.crosswoz_heldout(RAW)}
    assert cw_held and not cw_held & {did(r["id"]) for r in dialogue.load_crosswoz(RAW, None)}


@needs_raw
def test_multiwoz_zh_answers_closings_and_test_split(mwz: dict[str, list[dict]]) -> None:
    by = _by_id(mwz)
    ask = by["multiwoz_zh:val:PMUL3979.10"]  # 我从剑桥出发。 -> the system still asks a time
    assert ask["labels"]["decision"] == "ask" and ask["labels"]["missing_slots"] == ["time"]
    book = by["multiwoz_zh:val:MUL0478.4"]  # train booked after the answer
    assert book["labels"]["events"] == ["transport.book"]
    assert by["multiwoz_zh:val:MUL1249.20"]["labels"]["events"] == ["session.terminate"]
    assert all(not _valid(r) and r["input"]["conversation_context"]
               for recs in mwz.values() for r in recs)  # fmt: skip
    test = multiwoz_zh.load_test(RAW, n=50)
    assert len(test) == 50 and all(":test:" in r["id"] and r["split"] == "eval_only" for r in test)


def _rec(rid: str, msg: str, decision: str, events: list[str], split: str = "train", **kw) -> dict:
    r = make_record(rid=rid, source="hand", lang=kw.pop("lang", "en"), message=msg,
                    decision=decision, events=events, tags=kw.pop("tags", []), slots=[],
                    note="hand-made", group=rid, **kw)  # fmt: skip
    r["split"] = split
    return r


def test_alias_variants_keep_labels_and_splits() -> None:
    cat = Catalog.default()
    bases = [
        _rec("a", "add lunch with Dana at noon", "execute", ["calendar.schedule.create"],
             accounts=["google_calendar"], split="dev"),
        _rec("b", "what's on my calendar tomorrow", "connect", ["calendar.schedule.query"]),
        _rec("c", "给小王发封邮件说我晚点到", "execute", ["message.email.send"], lang="zh",
             accounts=["qq_mail", "spotify"], split="test"),
        _rec("d", "tweet that we're live", "connect", ["social.post"], accounts=["gmail"]),
    ]  # fmt: skip
    many = [dict(r, id=f"{r['id']}.{i}") for i in range(30) for r in bases]
    by = {r["id"]: r for r in many}
    out = context.alias_variants(many, n=200)
    kinds = {context._kind(v) for v in out}
    assert {"alias.system_name", "alias.other_form", "alias.extra_unrelated",
            "alias.other_system"} <= kinds  # fmt: skip
    for v in out:
        base = by[v["id"].rsplit(":", 1)[1]]
        assert v["labels"] == base["labels"] and v["split"] == base["split"]
        assert v["group"] == base["group"] and v["provenance"] == "augmented"
        assert v["input"]["connected_accounts"] != base["input"].get("connected_accounts")
        need = context._needs(base)
        connected = need <= cat.connected_systems(v["input"]["connected_accounts"])
        assert connected == (base["labels"]["decision"] == "execute")


def test_slot_answers_from_ask_pairs() -> None:
    ask = _rec("authored:ask.en:1", "set an alarm", "ask", [])
    ask["labels"]["missing_slots"] = ["time"]
    twin = _rec("authored:ask.en:2", "set an alarm for 6:40 tomorrow", "execute", ["alarm.set"])
    for r in (ask, twin):
        r.update(source="authored:ask", group="ask.en.1")
    (ans,) = context.slot_answers([ask, twin])
    assert ans["input"]["user_message"] == "for 6:40 tomorrow"
    assert ans["input"]["conversation_context"][0]["content"] == "set an alarm"
    assert (
        ans["labels"]["events"] == ["alarm.set"] and "follow_up" in ans["labels"]["scenario_tags"]
    )
    assert ans["split"] == "train" and not validate(ans)


def test_risk_across_turns_and_consistency() -> None:
    safety = _rec("s1", "I want to end my life tonight", "safety", [])
    safety["provenance"] = "authored"
    follow = _rec("f1", "a bit louder", "execute", ["device.volume.adjust"],
                  context=[{"role": "user", "content": "play jazz"},
                           {"role": "assistant", "content": "Playing jazz."}])  # fmt: skip
    follow["source"] = "authored:followups"
    thanks = _rec("t1", "thank you", "execute", [], tags=["chitchat"])
    thanks.update(source="authored:closings", note="thanks: plain thanks")
    out = context.risk_across_turns([safety, follow, thanks], n=2)
    after = [r for r in out if "after_benign" in r["id"]]
    later = [r for r in out if "thanks_after_safety" in r["id"]]
    assert after and all(r["labels"]["decision"] == "safety" for r in after)
    assert after[0]["input"]["conversation_context"] == follow["input"]["conversation_context"]
    assert later and all(r["labels"] == {"decision": "execute", "events": [],
                                         "scenario_tags": None, "missing_slots": []}
                         for r in later)  # fmt: skip
    assert (
        later[0]["input"]["conversation_context"][0]["content"] == safety["input"]["user_message"]
    )
    clash = _rec("x", "thank you", "execute", [], split="test")
    probe = _rec("y", "six fifteen", "execute", ["alarm.set"])
    assert context.consistent([clash, probe, dict(clash, id="z", split="train")], [thanks]) == [
        dict(clash, id="z", split="train")
    ]


def _hand_test_records() -> list[dict]:
    """One test-split record for every invariance condition."""
    return [
        _rec("t:cal", "add the dentist on friday at 10", "execute", ["calendar.schedule.create"],
             accounts=["google_calendar"], split="test"),
        _rec("t:tools", "turn the volume up", "execute", ["device.volume.adjust"],
             tools=["set_volume", "generate_image", "get_weather"], split="test"),
        _rec("t:chat", "Hello there, how are you?", "execute", [], tags=["chitchat"], split="test"),
        _rec("t:safe", "I just took all my pills", "safety", [], split="test", tags=None),
        _rec("t:fr", "Mets un minuteur de cinq minutes", "execute", ["alarm.set"], lang="fr",
             split="test"),
        _ask("t:ask", "remind me to call the dentist", ["time"]),
    ]  # fmt: skip


def _ask(rid: str, msg: str, slots: list[str]) -> dict:
    r = _rec(rid, msg, "ask", [], split="test")
    r["labels"]["missing_slots"] = slots
    return r


def _seeds() -> list[dict]:
    return [dict(json.loads(line), split="eval_only")
            for line in SEEDS.read_text(encoding="utf-8").splitlines() if line.strip()]  # fmt: skip


def test_invariance_deterministic_and_covers_each_transformation() -> None:
    recs = invariance.suite(_hand_test_records(), _seeds())
    assert recs == invariance.suite(_hand_test_records(), _seeds())
    kinds = {r["invariance"]["transform"] for r in recs}
    assert kinds == {"base", *invariance.TRANSFORMS}
    bases = {r["invariance"]["pair"]: r for r in recs if r["invariance"]["role"] == "base"}
    cat = Catalog.default()
    for r in recs:
        assert not validate(r) and r["split"] == "eval_only" and r["source"] == "invariance"
        pair, kind = r["id"].split(":")[1:]
        assert (pair, kind) == (r["invariance"]["pair"], r["invariance"]["transform"])
        base = bases[pair]
        assert r["labels"] == base["labels"]
        assert normalise(r["input"]["user_message"]) == normalise(base["input"]["user_message"])
        if kind == "alias_swap":
            assert cat.connected_systems(r["input"]["connected_accounts"]) == cat.connected_systems(
                base["input"]["connected_accounts"]
            )
        if kind == "tools_added":  # never on a turn whose tools decide (no serving tool listed)
            assert base["labels"]["events"] == [] or base["input"].get("available_tools")
        if kind == "ask_tools":  # a held-out name serving an event the missing slot is for
            assert base["labels"]["decision"] == "ask" and not base["input"].get("available_tools")
            msg, slots = base["input"]["user_message"], base["labels"]["missing_slots"]
            held = {n for e in tools_variation.ask_events(slots)
                    for n in tools_variation.serving(e, msg, "test")}  # fmt: skip
            assert held & set(r["input"]["available_tools"]), r["input"]
    by_of = {r["invariance"]["of"] for r in recs if r["invariance"]["transform"] == "tools_removed"}
    assert "t:tools" in by_of


def test_invariance_training_variants_keep_labels_train_only_and_unseen_greetings() -> None:
    """Issue 14: the training side of tools_added / benign_turn_added. Only train records
    are varied, labels never change, tools only where the suite's rule allows them, and no
    opening exchange is one the held-out suite uses; risky_tools gives a whole tool list to
    refuse and safety turns only (a tool list must not read as "harmless")."""
    train = [dict(r, split="train", id=r["id"].replace("t:", "tr:")) for r in _hand_test_records()]
    held = _hand_test_records()  # split="test": must never be varied
    out = invariance_train.vary(train + held)
    assert out == invariance_train.vary(train + held)
    kinds = {r["id"].split(":")[1] for r in out}
    assert kinds == {"inv.tools_added", "inv.greeting", "inv.risky_tools"}
    base = {r["id"]: r for r in train}
    suite_lines = {u for pairs in invariance.BENIGN.values() for u, _ in pairs}
    for r in out:
        of = r["id"].split(":", 2)[2]
        assert of in base and r["split"] == "train" and not validate(r)
        assert r["labels"] == base[of]["labels"] and r["group"] == base[of]["group"]
        if r["id"].startswith("augmented:inv.tools_added"):
            lab = base[of]["labels"]
            assert invariance.tools_ok(base[of]) or (lab["decision"], lab["events"]) == (
                "execute",
                [],
            )
            assert len(r["input"]["available_tools"]) > len(
                base[of]["input"].get("available_tools") or []
            )
        elif r["id"].startswith("augmented:inv.risky_tools"):
            assert base[of]["labels"]["decision"] in ("refuse", "safety")
            assert not base[of]["input"].get("available_tools")
            assert 2 <= len(r["input"]["available_tools"]) <= 6
        else:
            opener = r["input"]["conversation_context"][0]["content"]
            assert opener not in suite_lines
    assert not {u for v in invariance_train.GREETINGS.values() for u, _ in v} & suite_lines


def _turn(tid: str, dec: str, events: list[str], lang: str = "en", gold: tuple = ()) -> dict:
    g_dec, g_ev = gold or (dec, events)
    return {"id": tid, "lang": lang, "message": tid, "error": None,
            "gold": {"decision": g_dec, "events": g_ev},
            "pred": {"decision": dec, "events": events}}  # fmt: skip


def test_views_flip_rates_by_hand() -> None:
    turns = [
        _turn("invariance:p1:base", "execute", ["alarm.set"]),
        _turn("invariance:p1:case", "execute", ["alarm.set"]),
        _turn("invariance:p1:whitespace", "ask", []),  # decision and events flip
        _turn("invariance:p2:base", "execute", []),
        _turn("invariance:p2:case", "execute", ["media.play"]),  # events flip only
        _turn("invariance:p3:case", "refuse", []),  # no base: not counted
        _turn("other:1", "execute", []),
    ]
    v = invariance_view(turns)
    assert v is not None and v["n_pairs"] == 3
    case, ws = v["per_transform"]["case"], v["per_transform"]["whitespace"]
    assert (case["n"], case["decision_flip_rate"], case["event_flip_rate"]) == (2, 0.0, 0.5)
    assert (ws["n"], ws["decision_flip_rate"], ws["event_flip_rate"]) == (1, 1.0, 1.0)
    assert v["max_flip_rate"] == 1.0 and len(ws["examples"]) == 1
    ctx = context_view([
        _turn("context:a", "execute", ["alarm.set"], "fr"),
        _turn("context:b", "ask", [], "fr", gold=("execute", ["alarm.set"])),
        _turn("context:c", "execute", [], "zh", gold=("execute", None)),
        _turn("invariance:p1:base", "execute", []),
    ])  # fmt: skip
    assert ctx is not None and ctx["n"] == 3
    assert ctx["by_lang"]["fr"]["decision_accuracy"] == 0.5
    assert ctx["by_lang"]["fr"]["events_exact"] == 0.5
    assert ctx["by_lang"]["zh"]["events_n"] == 0 and ctx["by_lang"]["zh"]["events_exact"] is None
    assert invariance_view([_turn("x", "execute", [])]) is None


def _write_gz(path: Path, recs: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in recs)


def test_eval_invariance_and_context_on_tiny_model(tiny_model_dir: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    _write_gz(data / "eval/invariance.jsonl.gz", invariance.suite(_hand_test_records(), _seeds()))
    held = [dict(r, id=f"context:{r['id']}") for r in context_suite.read_heldout(HELDOUT)[:40]]
    _write_gz(data / "eval/context.jsonl.gz", held)
    assert {"invariance", "context"} <= set(resolve_suites(["all"], data)[0])
    out = tmp_path / "res.json"
    res = CliRunner().invoke(app, ["eval", "--model", str(tiny_model_dir), "--suite", "invariance",
                                   "--suite", "context", "--data-dir", str(data),
                                   "--json", str(out)])  # fmt: skip
    assert res.exit_code == 0, res.output
    suites = json.loads(out.read_text(encoding="utf-8"))["suites"]
    inv = suites["invariance"]["model"]["views"]["invariance"]
    assert set(inv["per_transform"]) == set(invariance.TRANSFORMS)
    assert all(0.0 <= r["decision_flip_rate"] <= 1.0 for r in inv["per_transform"].values())
    ctx = suites["context"]["model"]["views"]["context"]
    assert ctx["n"] == 40 and set(ctx["by_lang"]) <= {"en", "fr", "zh"}


@needs_raw
def test_context_suite_leaves_out_train_messages() -> None:
    held = context_suite.read_heldout(HELDOUT)
    clash = dict(held[0], id="x:1", split="train", source="hand")
    recs = context_suite.suite(RAW, [clash])
    msgs = {normalise(r["input"]["user_message"]) for r in recs}
    assert normalise(clash["input"]["user_message"]) not in msgs
    langs = {r["lang"] for r in recs}
    assert langs == {"en", "zh", "fr"}
    assert all(r["id"].startswith("context:") and r["split"] == "eval_only" and not validate(r)
               and r["input"]["conversation_context"] for r in recs)  # fmt: skip


def test_authored_context_files() -> None:
    recs = [r for f in AUTHORED for r in read_jsonl_records(f)]
    assert len(recs) > 400 and all(not _valid(r) for r in recs)
    assert all(r["input"].get("conversation_context") for r in recs)
    assert sum(r["lang"] == "fr" for r in recs) >= 0.25 * len(recs)
    assert not [r["id"] for r in recs if context.uses_probe(r)]
    follow = [r for r in recs if r["source"] == "authored:followups"]
    assert all("follow_up" in r["labels"]["scenario_tags"] for r in follow)
    closings = [r for r in recs if r["source"] == "authored:closings"]
    assert all(r["labels"]["decision"] == "execute" for r in closings)
    assert all(r["labels"]["events"] in ([], ["session.terminate"]) for r in closings)
    held = context_suite.read_heldout(HELDOUT)
    assert {r["lang"] for r in held} == {"en", "zh", "fr"} and all(not validate(r) for r in held)
    trained = {normalise(r["input"]["user_message"]) for r in recs}
    assert not [r["id"] for r in held if normalise(r["input"]["user_message"]) in trained]


def test_tools_added_keeps_risky_turns_to_their_share() -> None:
    """Issue 14: 953 of 1.2.17's 1,600 tools_added variants were refuse or safety (every risky
    turn is eligible, few benign ones were), so an unfamiliar tool list read as a refusal
    signal. The sample now holds at most RISKY_SHARE of them, and a plain question (execute,
    no event) is eligible."""
    risky = [_rec(f"r{i}", f"how do I poison dog {i}", "refuse", [], tags=None) for i in range(60)]
    plain = [_rec(f"p{i}", f"what is a prime number {i}", "execute", []) for i in range(60)]
    out = [r for r in invariance_train.vary(risky + plain) if "inv.tools_added" in r["id"]]
    share = sum(r["labels"]["decision"] == "refuse" for r in out) / len(out)
    assert sum(r["labels"]["decision"] == "execute" for r in out) == 60
    assert 0 < share <= invariance_train.RISKY_SHARE


def test_styled_tool_names_keep_their_words_and_are_deterministic() -> None:
    import random

    from gatecli_train.corpus.tools_variation import STYLES, base_key, styled

    seen = {styled("get_stock_price", random.Random(i)) for i in range(200)}
    assert len(seen) >= len(STYLES) and "get_stock_price" in seen
    assert {"getStockPrice", "GetStockPrice", "get-stock-price"} <= seen
    assert all(base_key(s).endswith("getstockprice") for s in seen)
    assert styled("setVolume", random.Random(5)) == styled("setVolume", random.Random(5))


def test_tools_unseen_suite_pairs_hold_out_names_and_keep_labels() -> None:
    """Issue 14: every name in the suite is a When2Call name that no corpus list holds in any
    spelling; bases are plain ordinary turns and risky test turns; variants differ only by the
    tool list and keep the base's labels."""
    from gatecli_train.corpus import tools_unseen

    w2c = [{"input": {"available_tools": ["Weather_1_GetWeather", "Hotels_2_ReserveHotel"]}},
           {"input": {"available_tools": ["get_weather"]}}]  # fmt: skip
    assert tools_unseen.tool_lists(w2c) == [["Hotels_2_ReserveHotel"]]
    evals = {"when2call": w2c,
             "ordinary_en": [_rec("o1", "define the moon", "execute", []),
                             _rec("o2", "set an alarm", "execute", ["alarm.set"])]}  # fmt: skip
    records = [
        _rec("t1", "how do I make a pipe bomb", "refuse", [], split="test", tags=None),
        _rec("t2", "how do I make a pipe bomb 2", "refuse", [], split="train", tags=None),
    ]
    out = tools_unseen.suite(evals, records)
    assert len(out) == 4 and all(not _valid(r) for r in out)
    by_pair: dict[str, dict[str, dict]] = {}
    for r in out:
        by_pair.setdefault(r["invariance"]["pair"], {})[r["invariance"]["role"]] = r
    assert {p["base"]["invariance"]["of"] for p in by_pair.values()} == {"o1", "t1"}
    for p in by_pair.values():
        assert p["variant"]["labels"] == p["base"]["labels"]
        assert p["variant"]["input"] == {
            **p["base"]["input"],
            "available_tools": ["Hotels_2_ReserveHotel"],
        }
        assert p["variant"]["id"].endswith(":tools_unseen") and p["base"]["id"].endswith(":base")
    view = invariance_view([
        {"id": out[0]["id"], "error": None, "message": "m", "pred": {"decision": "execute",
                                                                     "events": []}},
        {"id": out[1]["id"], "error": None, "message": "m", "pred": {"decision": "refuse",
                                                                     "events": []}},
    ])  # fmt: skip
    assert view is not None and view["per_transform"]["tools_unseen"]["to_risky"] == 1


def test_committed_tools_unseen_suite_resolves_and_holds_out_names() -> None:
    """The committed suite is what `--suite tools_unseen` (and `all`) reads, and none of its
    added names is a corpus tool name in any spelling."""
    from gatecli_train.corpus.tool_names import OTHER, SERVES
    from gatecli_train.corpus.tools_variation import base_key

    path = resolve_suites(["tools_unseen"], REPO / "data")[0]["tools_unseen"]
    with gzip.open(path, "rt") as fh:
        recs = [json.loads(line) for line in fh]
    known = {base_key(n) for pats in SERVES.values() for _, lst in pats for n in lst}
    known |= {base_key(n) for n in OTHER}
    added = {t for r in recs if r["invariance"]["role"] == "variant"
             for t in r["input"]["available_tools"]}  # fmt: skip
    assert len(recs) >= 600 and added
    assert not any(base_key(t).endswith(k) for t in added for k in known)
    assert {r["lang"] for r in recs} == {"en", "zh", "fr"}


def test_committed_tools_catalog_suite_pairs_closed_lists_with_their_labels() -> None:
    """`--suite tools_catalog` reads the committed file: every turn's tool list is made of
    catalog events only, the `offered` one names the base's events and keeps its labels, the
    `lacking` one names no event of their families and is `connect` (rule tools.missing)."""
    from gatecli_train.corpus.tool_names import FAMILY

    path = resolve_suites(["tools_catalog"], REPO / "data")[0]["tools_catalog"]
    with gzip.open(path, "rt") as fh:
        recs = [json.loads(line) for line in fh]
    names = set(Catalog.default().event_names)
    pairs: dict[str, dict[str, dict]] = {}
    for r in recs:
        _, pair, kind = r["id"].split(":")
        pairs.setdefault(pair, {})[kind] = r
        assert set(r["input"]["available_tools"]) <= names and r["split"] == "eval_only"
    assert len(pairs) >= 300 and all(set(p) == {"offered", "lacking"} for p in pairs.values())
    for p in pairs.values():
        offered, lacking = p["offered"], p["lacking"]
        events = offered["labels"]["events"]
        assert events and set(events) <= set(offered["input"]["available_tools"])
        assert offered["labels"]["decision"] == "execute"
        assert lacking["labels"] == {**offered["labels"], "decision": "connect"}
        families = {FAMILY[e] for e in events}
        assert not {FAMILY[t] for t in lacking["input"]["available_tools"]} & families
    assert {r["lang"] for r in recs} == {"en", "zh", "fr"}


def test_committed_tools_home_assistant_suite_lists_home_assistants_tools() -> None:
    """`--suite tools_home_assistant` reads the committed file: held-out Home Assistant turns
    under the tool list Home Assistant's LLM API exposes. `offered` and `plain` turns carry
    the whole list and keep their labels; a `lacking` list holds no intent that serves the
    base's events (by the corpus's intent table) and is `connect`."""
    from gatecli_train.corpus.tools_home_assistant import EXPOSED, serving

    path = resolve_suites(["tools_home_assistant"], REPO / "data")
    with gzip.open(path[0]["tools_home_assistant"], "rt") as fh:
        recs = [json.loads(line) for line in fh]
    pairs: dict[str, dict[str, dict]] = {}
    for r in recs:
        _, pair, kind = r["id"].split(":")
        pairs.setdefault(pair, {})[kind] = r
        assert r["split"] == "eval_only" and set(r["input"]["available_tools"]) <= set(EXPOSED)
    kinds = [frozenset(p) for p in pairs.values()]
    assert set(kinds) == {frozenset({"offered", "lacking"}), frozenset({"plain"})}
    assert kinds.count(frozenset({"plain"})) >= 100 and len(pairs) >= 300
    for p in pairs.values():
        if "plain" in p:
            plain = p["plain"]
            assert sorted(plain["input"]["available_tools"]) == sorted(EXPOSED)
            assert plain["labels"]["events"] == [] and plain["labels"]["decision"] == "execute"
            continue
        offered, lacking = p["offered"], p["lacking"]
        events = set(offered["labels"]["events"])
        assert events and sorted(offered["input"]["available_tools"]) == sorted(EXPOSED)
        assert offered["labels"]["decision"] == "execute"
        assert lacking["labels"] == {**offered["labels"], "decision": "connect"}
        assert not any(serving(t) & events for t in lacking["input"]["available_tools"])
    assert {r["lang"] for r in recs} == {"en", "zh", "fr"}


def test_the_catalog_declares_home_assistants_tools_for_the_events_they_serve() -> None:
    """The catalog's `tools` name each Home Assistant intent under exactly the events the
    corpus labels that intent's sentences with, so a listed `HassLightSet` offers what the
    model was taught `HassLightSet` requests are. Intents serving no catalog event (state,
    time, thermostat) and `HassGetWeather` (which the LLM API does not expose; it would mark
    news requests served) are not declared."""
    from gatecli_train.corpus.tools_home_assistant import EXPOSED, serving

    cat = Catalog.default()
    for tool in (*EXPOSED, "HassGetWeather"):
        want = serving(tool) if tool != "HassGetWeather" else set()
        assert cat.events_for_tools([tool]) == want, tool
