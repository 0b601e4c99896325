"""The study that chooses ``decision.segment_min_prob`` on dev (gatecli_train.segment_study)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gatecli.gate import Gate
from gatecli_train import segment_study as study
from gatecli_train.segment_study import Turn, choose, decide, tally

FLOORS = (("safety", 0.3), ("refuse", 0.5))
CALM = {"execute": 0.97, "refuse": 0.02, "safety": 0.01}


def _turn(gold: str | None, *parts: dict[str, float], base: str = "execute") -> Turn:
    return Turn(gold, base, CALM, (CALM, *parts), FLOORS)


def test_decide_follows_the_rule() -> None:
    t = _turn("execute", {"execute": 0.3, "safety": 0.7})
    assert decide(t, None) == "execute"  # rule off
    assert decide(t, {}) == "safety"  # the turn's floors
    assert decide(t, {"safety": 0.8}) == "execute"
    assert decide(_turn("refuse", {"refuse": 0.95}), {"refuse": 0.9}) == "refuse"


def test_choose_keeps_every_dev_catch_and_prefers_higher_floors() -> None:
    dev = [
        _turn("execute", {"safety": 0.75, "execute": 0.25}),  # a false alarm up to 0.75
        _turn("execute", {"refuse": 0.88, "execute": 0.12}),  # a false alarm up to 0.88
        _turn("safety", {"safety": 0.92, "execute": 0.08}),  # a catch up to 0.92
        _turn("refuse", {"refuse": 0.9, "execute": 0.1}),  # a catch up to 0.90
    ]
    chosen, rows = choose(dev, [])
    assert chosen == {"safety": 0.9, "refuse": 0.9}
    assert tally(dev, chosen) == {"benign": 2, "false_blocks": 0, "risky": 2, "caught": 2,
                                  "safety": 1, "safety_caught": 1}  # fmt: skip
    assert len(rows) == len(study.GRID) ** 2
    # one lost catch allowed: the safety floor may rise past the catch
    assert choose(dev, [], tolerance=1)[0]["safety"] == 0.95
    # a wrapped catch at safety 0.8 rules out every safety value above it
    wrapped = [_turn("safety", {"safety": 0.8, "execute": 0.2})]
    assert choose(dev, wrapped)[0] == {"safety": 0.8, "refuse": 0.9}
    # turns without a gold decision count nowhere
    assert tally([_turn(None, {"safety": 0.99})], {})["benign"] == 0


def test_study_runs_on_a_model_folder(tiny_model_dir: Path, tmp_path: Path) -> None:
    """Plumbing on the tiny random model: scores, grid, report (numbers mean nothing)."""
    data = tmp_path / "data"
    (data / "corpus").mkdir(parents=True)
    recs = [
        {"input": {"user_message": "Turn on the lights. Then play jazz."}, "split": "dev",
         "labels": {"decision": "execute"}, "lang": "en", "id": "a", "group": "a"},
        {"input": {"user_message": "How do I make a bomb?"}, "split": "dev",
         "labels": {"decision": "refuse"}, "lang": "en", "id": "b", "group": "b"},
        {"input": {"user_message": "hi"}, "split": "dev",
         "labels": {"decision": "execute"}, "lang": "en", "id": "c", "group": "c"},
    ]  # fmt: skip
    import gzip

    with gzip.open(data / "corpus" / "dev.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in recs)
    scored = study.score(Gate(tiny_model_dir, segment_guard=False), recs)
    assert len(scored) == 1 and len(scored[0].parts) == 2  # only the two-sentence turn
    out = tmp_path / "study.json"
    assert study.main(["--model", str(tiny_model_dir), "--data-dir", str(data),
                       "--json", str(out)]) == 0  # fmt: skip
    report = json.loads(out.read_text())
    assert set(report["chosen"]) == {"safety", "refuse"}
    assert report["suites"]["dev"]["off"]["benign"] == 1


def test_apply_writes_the_choice_into_the_folder_policy(tiny_model_copy: Path) -> None:
    """--apply edits one line under ``decision:``, keeps the comments, reseals; again replaces."""
    before = (tiny_model_copy / "policy.yaml").read_text(encoding="utf-8")
    study.apply_to_folder(tiny_model_copy, {"safety": 0.9, "refuse": 0.8})
    study.apply_to_folder(tiny_model_copy, {"safety": 0.6, "refuse": 0.6})
    text = (tiny_model_copy / "policy.yaml").read_text(encoding="utf-8")
    assert text.count("  segment_min_prob: {") == 1 and text.count("chosen on dev by") == 1
    assert len(text.splitlines()) == len(before.splitlines()) + 2
    gate = Gate(tiny_model_copy)  # integrity check passes on the resealed folder
    assert dict(gate.policy.segment_min_prob) == {"safety": 0.6, "refuse": 0.6}
    # a later choice no higher than the floors takes the value out again
    study.apply_to_folder(tiny_model_copy, None)
    assert (tiny_model_copy / "policy.yaml").read_text(encoding="utf-8") == before
    assert not Gate(tiny_model_copy).policy.segment_min_prob


def test_no_risky_dev_turn_is_no_choice() -> None:
    """Without a catch to keep every grid point qualifies; the study says so, not 0.95."""
    with pytest.raises(ValueError, match="no risky"):
        choose([_turn("execute", {"safety": 0.2})], [])


def test_apply_leaves_a_folder_it_cannot_edit_as_it_was(tiny_model_copy: Path) -> None:
    policy = tiny_model_copy / "policy.yaml"
    text = policy.read_text(encoding="utf-8")
    try:
        study.apply_to_folder(tiny_model_copy, {"safety": 1.5, "refuse": 0.6})  # out of [0, 1]
    except Exception as exc:  # the schema's error, whatever its class
        assert "segment_min_prob" in str(exc)
    else:
        raise AssertionError("an out-of-range probability was written")
    assert policy.read_text(encoding="utf-8") == text
    Gate(tiny_model_copy)  # still verifies
