"""The corpus pipeline on a small slice of the raw data (seconds, not minutes)."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from gatecli.catalog import Catalog
from gatecli_train.corpus.build import build
from gatecli_train.corpus.records import normalise, validate
from gatecli_train.corpus.split import LeakError, check_leaks

RAW = Path(os.environ.get("GATECLI_RAW", Path(__file__).resolve().parents[2] / "shared/datasets"))
EMPTY = Path("/nonexistent-authored")  # hermetic: authored files change while people write them
pytestmark = pytest.mark.skipif(not RAW.exists(), reason="raw datasets not present")


def _read(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    build(RAW, out, limit_per_source=30, card=out / "README.md", authored_dir=EMPTY)
    return out


def test_records_valid_and_masked(built: Path) -> None:
    recs = [r for s in ("train", "dev", "test") for r in _read(built / f"corpus/{s}.jsonl.gz")]
    assert len(recs) > 300
    assert all(not validate(r) for r in recs)
    adv = [r for r in recs if r["source"] == "advbench"]
    assert adv and all(r["labels"]["scenario_tags"] is None for r in adv)
    assert all(r["labels"]["events"] == [] and r["labels"]["decision"] == "refuse" for r in adv)
    assert {r["split"] for r in recs} <= {"train", "dev", "test"}
    evals = [r for p in (built / "eval").glob("*.jsonl.gz") for r in _read(p)]
    assert evals and all(r["split"] == "eval_only" and not validate(r) for r in evals)


def test_no_leaks_and_groups_whole(built: Path) -> None:
    split_of_group: dict[str, str] = {}
    train = set()
    for s in ("train", "dev", "test"):
        for r in _read(built / f"corpus/{s}.jsonl.gz"):
            if r["provenance"] != "augmented":
                assert split_of_group.setdefault(r["group"], s) == s
            if s == "train":
                train.add(normalise(r["input"]["user_message"]))
    held = [r for s in ("dev", "test") for r in _read(built / f"corpus/{s}.jsonl.gz")]
    held += [r for p in (built / "eval").glob("*.jsonl.gz") for r in _read(p)]
    assert not [r for r in held if normalise(r["input"]["user_message"]) in train]


def test_rebuild_byte_identical(built: Path, tmp_path: Path) -> None:
    build(RAW, tmp_path, limit_per_source=30, card=tmp_path / "README.md", authored_dir=EMPTY)
    for p in sorted((built / "corpus").glob("*.gz")) + sorted((built / "eval").glob("*.gz")):
        assert (tmp_path / p.relative_to(built)).read_bytes() == p.read_bytes(), p.name


def _records_by_id(folder: Path) -> dict[str, dict]:
    paths = sorted((folder / "corpus").glob("*.gz")) + sorted((folder / "eval").glob("*.gz"))
    return {f"{p.name}:{r['id']}": r for p in paths for r in _read(p)}


@pytest.mark.slow
def test_added_authored_rows_change_only_what_they_displace(tmp_path: Path) -> None:
    """Corpus 1.2.66: 388 authored privacy rows changed 11,284 unrelated train records and
    970 of the invariance suite's turns, because every augmentation drew from one stream per
    language. Now draws are hash-ranked and per-record (gatecli_train.corpus.draws): no
    record present in both builds may differ, and each added record displaces at most one.
    Grown here: a new file (privacy), and more rows of the files whose rows are partners of
    other records (follow-ups before a crisis, closings after one, passages before a crisis
    tail, crisis turns, ordinary sentences that wrap risky turns)."""
    authored = Path("data/authored")
    base, grown = tmp_path / "base", tmp_path / "grown"
    whole = ("pairs.en", "ask.fr", "crisis.zh", "harmq.en", "events.zh")
    partial = ("followups.en", "closings.en", "passages.en", "crisis.en", "longreq.en")
    for d, k in ((base, 40), (grown, 60)):
        d.mkdir()
        for name in whole:
            (d / f"{name}.jsonl").write_bytes((authored / f"{name}.jsonl").read_bytes())
        for name in partial:  # the grown build has 20 more rows of each
            lines = (authored / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
            (d / f"{name}.jsonl").write_text("\n".join(lines[:k]) + "\n", encoding="utf-8")
    (grown / "privacy.en.jsonl").write_bytes((authored / "privacy.en.jsonl").read_bytes())
    build(RAW, tmp_path / "a", limit_per_source=60, authored_dir=base)
    build(RAW, tmp_path / "b", limit_per_source=60, authored_dir=grown)
    a, b = _records_by_id(tmp_path / "a"), _records_by_id(tmp_path / "b")
    changed = [k for k in a if k in b and a[k] != b[k]]
    removed, added = set(a) - set(b), set(b) - set(a)
    assert not changed, changed[:5]
    assert any("privacy" in k for k in added) and any("followups.en" in k for k in added)
    assert len(removed) <= len(added), sorted(removed)[:5]


def test_planted_leak_fails() -> None:
    # an XSTest prompt (eval-only) planted as a training record with another spelling
    xs = (RAW / "xstest/xstest_prompts.csv").read_text(encoding="utf-8").splitlines()[1]
    prompt = xs.split(",")[1].strip('"')
    row = {
        "id": "planted:1",
        "source": "planted",
        "lang": "en",
        "input": {"user_message": prompt.upper() + " !!"},
        "labels": {"decision": "execute", "events": [], "scenario_tags": [], "missing_slots": []},
        "note": "planted",
        "group": "planted",
    }
    corpus = {"train": [row], "dev": [], "test": []}
    with pytest.raises(LeakError):
        check_leaks(corpus, {"xstest": [{"id": "x", "input": {"user_message": prompt}}]})
    with pytest.raises(LeakError):  # and a train message in dev
        check_leaks({"train": [row], "dev": [dict(row, id="planted:2")], "test": []}, {})


def test_label_refinements_and_capability_filter() -> None:
    from gatecli_train.corpus.augment import imperative
    from gatecli_train.corpus.label_rules import refine

    cal = (["calendar.schedule.create"], "execute", ["private_data"])
    assert refine("calendar_set", "i'll be seeing my therapist on thursday", set(), cal)[0] == (
        [],
        "execute",
        ["statement"],
    )
    assert refine("calendar_set", "remind me to call mom at 5", {"time"}, cal)[0] == cal
    assert refine("social_post", "i have a complaint", set(), (["social.post"], "execute", []))[0]
    assert refine("calendar_query", "what else is on the list", set(), cal)[0] is None
    email = (["message.email.send"], "execute", ["private_data"])
    assert refine("email_sendemail", "email tom", {"person"}, email)[0][1] == "ask_content"
    assert refine("email_sendemail", "email tom about lunch", {"person"}, email)[0] == email
    assert imperative("turn on the lights", "en")
    assert not imperative("please recommend a restaurant", "en")
    assert not imperative("what is the forecast for 15:04", "en")
    assert not imperative("天气预报是什么", "zh")


def test_catalog_list_variants_are_train_only_and_closed(built: Path) -> None:
    """A catalog-name list offers the request (same labels) or lacks it (connect); only train
    requests get one, so the dev and test splits do not move."""
    from gatecli_train.corpus.tool_names import FAMILY

    events = set(Catalog.default().event_names)
    recs = {s: _read(built / f"corpus/{s}.jsonl.gz") for s in ("train", "dev", "test")}
    by_id = {r["id"]: r for rs in recs.values() for r in rs}
    var = [r for rs in recs.values() for r in rs if r["id"].startswith("augmented:catalog_list.")]
    assert var and all(r["split"] == "train" for r in var)
    kinds = set()
    for r in var:
        kind, base = r["id"].split(":")[1].split(".")[1], by_id[r["id"].split(":", 2)[2]]
        kinds.add(kind)
        tools, wanted = r["input"]["available_tools"], base["labels"]["events"]
        others = len(tools) - len(wanted) if kind == "offered" else len(tools) - 1
        assert set(tools) <= events and 1 <= others <= 3 and len(set(tools)) == len(tools)
        if kind == "offered":
            assert set(wanted) <= set(tools)
        else:  # no event of the request's families: a power switch could serve a light
            assert not {FAMILY[e] for e in wanted} & {FAMILY[t] for t in tools}
        want = "connect" if kind == "missing" else base["labels"]["decision"]
        assert r["labels"] == dict(base["labels"], decision=want)
        assert (
            r["group"] == base["group"]
            and r["input"]["user_message"] == base["input"]["user_message"]
        )
    assert kinds == {"offered", "missing"}


# Words that say which family a tool serves (tool_names.FAMILY): a name listed for an event
# must not carry another family's word.
FAMILY_MARKERS = {
    "device": {"volume", "light", "lights", "lamp", "dimmer", "brightness", "appliance", "plug"},
    "media": {"music", "song", "playlist", "podcast", "radio", "track", "playback"},
    "knowledge": {"weather", "forecast", "news", "headlines", "stock", "currency", "internet"},
    "alarm": {"alarm", "alarms", "timer", "timers", "countdown"},
    "calendar": {"calendar", "agenda", "meeting", "reminder"},
    "email": {"email", "emails", "mail", "inbox", "gmail", "smtp"},
    "list": {"shopping", "grocery", "todo"},
    "order": {"food", "meal", "takeout", "takeaway", "restaurant", "deliveroo", "ubereats"},
    "transport": {"trip", "travel", "taxi", "cab", "ride", "ticket", "transportation"},
    "social": {"social", "tweet", "feed", "weibo"},
}


def test_serving_tool_names_carry_no_other_familys_word() -> None:
    """A misplaced name mislabels every pair drawn with it: until corpus 1.2.42 ``book_trip``,
    ``reserve_transportation`` and ``travel_booking_create`` were listed as serving
    ``social.post`` (42 train social posts ``execute`` under a list that only offers a trip)."""
    from gatecli.template import tool_words
    from gatecli_train.corpus.tool_names import FAMILY, SERVES

    wrong = [
        (event, name, sorted(words & marks))
        for event, pats in SERVES.items()
        for _, names in pats
        for name in names
        for words in [set(tool_words(name).split())]
        for fam, marks in FAMILY_MARKERS.items()
        if fam != FAMILY[event] and words & marks
    ]
    assert not wrong
    assert set(FAMILY_MARKERS) == set(FAMILY.values())


def test_tool_list_variants(built: Path) -> None:
    from tokenizers import Tokenizer

    from gatecli.template import DEFAULT_TEMPLATE, serialize, tool_words
    from gatecli_train.corpus.tool_names import OTHER, SERVES
    from gatecli_train.corpus.tools_variation import HELD, LONG_K, ask_events, base_key

    shipped = Path(__file__).resolve().parents[1] / "models/gatecli_models/gate-small"
    tok = Tokenizer.from_file(str(shipped / "tokenizer.json"))

    def count(text: str) -> int:
        return len(tok.encode(text).ids)

    names = [n for pats in SERVES.values() for _, lst in pats for n in lst] + OTHER

    def listed(tool: str) -> str:  # the list name a styled spelling was made from
        return max((n for n in names if base_key(tool).endswith(base_key(n))), key=len)

    recs = [r for s in ("train", "dev", "test") for r in _read(built / f"corpus/{s}.jsonl.gz")]
    by_id = {r["id"]: r for r in recs}
    var = [r for r in recs if r["id"].startswith("augmented:tools.")]
    kinds = {r["id"].split(":")[1] for r in var}
    assert kinds == {"tools.offered", "tools.missing", "tools.plain", "tools.ask"}
    for r in var:
        base = by_id[r["id"].split(":", 2)[2]]
        tools = r["input"]["available_tools"]
        assert 2 <= len(tools) <= LONG_K[1] and r["provenance"] == "augmented"
        if len(tools) > 6 and "tools.offered" in r["id"]:  # the template's cut keeps it
            twin = by_id[r["id"].replace("tools.offered", "tools.missing")]
            assert len(twin["input"]["available_tools"]) > 6  # long for both, or neither
            text = serialize(r["input"], DEFAULT_TEMPLATE, count_tokens=count, max_length=96)
            kept = [t for t in tools if f"{tool_words(t)}," in f"{text.split('tools: ')[1]},"]
            must = r["note"].split("tool offered: ")[1].split(" (rule")[0].split(", ")
            assert {base_key(listed(t)) for t in kept} & set(map(base_key, must)), text
        assert (r["group"], r["split"]) == (base["group"], base["split"])
        assert all((listed(t) in HELD) == (r["split"] != "train") for t in tools)
        assert r["input"]["user_message"] == base["input"]["user_message"]
        if "tools.ask" in r["id"]:  # a tool serves one of the events the missing slot is for
            assert r["labels"] == base["labels"] and base["labels"]["decision"] == "ask"
            wanted = ask_events(base["labels"]["missing_slots"])
            served = {
                e for e in wanted for _, lst in SERVES[e] for n in lst if n in map(listed, tools)
            }
            assert served, (r["id"], tools)
            continue
        want = "connect" if "tools.missing" in r["id"] else "execute"
        assert r["labels"] == dict(base["labels"], decision=want)
        assert ("needed tool not offered" in r["note"]) == (want == "connect")
    decisions = {r["labels"]["decision"] for r in var if r["labels"]["events"]}
    assert decisions == {"execute", "connect"}
