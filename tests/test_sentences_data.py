"""Sentences alone and real wrappers (corpus/sentences.py, risk_context.real_benign)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from gatecli.segments import split_segments
from gatecli_train.corpus import risk_context as RC
from gatecli_train.corpus import sentences
from gatecli_train.corpus.records import make_record, validate

ROOT = Path(__file__).resolve().parents[1]


def _rec(
    rid: str, msg: str, *, source: str = "xpersona", decision: str = "execute",
    split: str = "train", lang: str = "en", events: list[str] | None = None,
) -> dict:  # fmt: skip
    return make_record(rid=rid, source=source, lang=lang, message=msg, decision=decision,
                    events=[] if events is None else events, tags=None, slots=None,
                    note="t", group=f"g:{rid}", split=split)  # fmt: skip


def test_sentences_come_from_ordinary_train_execute_turns_only() -> None:
    recs = [
        _rec("a", "I have two cats. Do you like cats?"),
        _rec("b", "Play jazz. Then stop.", events=["media.play"]),
        _rec("c", "I have two dogs. Do you like dogs?", split="dev"),
        _rec("d", "Lights on. I want to die.", decision="safety"),
        _rec("e", "Tell the story. He says 'I will kill you'.", source="authored:pairs"),
        _rec("f", "just one sentence here"),
    ]
    out = sentences.vary(recs)
    assert [r["input"]["user_message"] for r in out] == [
        "I have two cats.", "Do you like cats?", "Play jazz.", "Then stop."]  # fmt: skip
    for r in out:
        assert not validate(r) and r["split"] == "train" and r["provenance"] == "augmented"
        assert r["labels"]["decision"] == "execute" and r["source"] == "sentence:xpersona"
        assert r["labels"]["scenario_tags"] is None and r["labels"]["missing_slots"] is None
    # a sentence cannot add an action; of a turn with events, which one it carries is unknown
    assert [r["labels"]["events"] for r in out] == [[], [], None, None]
    assert {r["group"] for r in out} == {"g:a", "g:b"}


def test_real_wrappers_leave_the_held_out_sentences_out() -> None:
    held = RC.EVAL_BENIGN["en"]["chat"][0]
    recs = [_rec(f"r{i}", f"Sentence number {i} of mine. And its tail {i}.") for i in range(6)]
    recs.append(_rec("h", f"{held.capitalize()}! Another line here."))
    recs.append(_rec("x", "Dev only sentence. Not in the pool.", split="dev"))
    pools = RC.real_benign(recs)
    assert set(pools) == {"en"}
    pool = set(pools["en"]["chat"])
    assert f"{held.capitalize()}!" not in pool and "Another line here." in pool
    assert not any("Dev only" in s for s in pool)


def test_committed_corpus_has_the_sentences_and_real_wrappers_in_train_only() -> None:
    seen = {"sentence": 0, "train_real": 0}
    for split in ("train", "dev", "test"):
        with gzip.open(ROOT / "data/corpus" / f"{split}.jsonl.gz", "rt", encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                if r["source"].startswith("sentence:"):
                    assert split == "train" and r["labels"]["decision"] == "execute"
                    assert split_segments(r["input"]["user_message"]) == []
                    seen["sentence"] += 1
                elif ":train_real:" in r["id"]:
                    assert split == "train"
                    seen["train_real"] += 1
    assert seen["sentence"] > 2000 and seen["train_real"] > 1000
