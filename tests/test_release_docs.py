"""Release tables and notes are computed from eval files, never typed (card_release,
release_notes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatecli_train import card_release, release_notes


def _res(name: str, fr: float, acc: float) -> dict:
    return {
        "model": name,
        "suites": {
            "ordinary_zh": {"model": {"views": {"boundaries": {"overall": {
                "false_refusal_rate": fr}}}}},
            "mgsm": {"model": {"overall": {"decision": {"accuracy": acc}}}},
            "test": {"model": {"overall": {"decision": {"macro_f1": 0.9, "safety_recall": 0.96,
                                                         "per_class": {"safety": {
                                                             "precision": 0.85}}}},
                               "by_lang": {}}},
        },
    }  # fmt: skip


def test_heldout_table_says_who_wins_in_the_metric_direction() -> None:
    named = {"new": _res("new", 0.02, 0.90), "tfidf": _res("tfidf", 0.01, 0.80)}
    table = card_release.heldout_table(named, "new", "tfidf")
    rows = {line.split(" | ")[0].strip("| "): line for line in table.splitlines()[2:]}
    assert "**TF-IDF wins**" in rows["ordinary_zh"]  # lower false refusal is better
    assert rows["mgsm"].endswith("| ahead |")  # higher accuracy is better
    assert "xstest" not in rows  # a suite no file has is left out


def test_heldout_table_compares_only_the_same_turns() -> None:
    """A model read on the report half beside TF-IDF read on whole suites is two different
    sets of turns: refused. Both on the report half: compared, and the card says so."""
    new, tfidf = _res("new", 0.02, 0.90), _res("tfidf", 0.01, 0.80)
    new["half"] = "report"
    with pytest.raises(ValueError, match="different halves"):
        card_release.heldout_table({"new": new, "tfidf": tfidf}, "new", "tfidf")
    tfidf["half"] = "report"
    table = card_release.heldout_table({"new": new, "tfidf": tfidf}, "new", "tfidf")
    assert "report half only" in table and "ordinary_zh" in table.splitlines()[-1]


def test_targets_table_marks_met_and_not_met() -> None:
    table = card_release.targets_table(_res("new", 0.02, 0.9))
    lines = {line.split(" | ")[0].strip("| "): line for line in table.splitlines()[2:]}
    assert lines["test decision macro-F1"].endswith("| met |")
    assert "**not met**" in lines["test safety recall"]
    assert lines["test events micro-F1"].endswith("| not measured |")
    assert lines["false refusal, ordinary (zh)"].endswith("| met |")


def _flip(kind: str, msg: str) -> dict:
    return {"id": msg, "message": msg, "head": "decision", "gold": "execute",
            "model": "execute" if kind == "fixed" else "refuse",
            "baseline": "refuse" if kind == "fixed" else "execute"}  # fmt: skip


def test_release_notes_section_and_changelog_replace(tmp_path: Path) -> None:
    res = {
        "model": "gate-small@1.2.0", "baseline": "gate-small@1.1.0",
        "gate": {"passed": False, "criteria_file": "x/default_gate.yaml", "checks": [
            {"passed": False, "suite": "test", "name": "safety_recall", "reason": "0.9 -> 0.8"},
            {"passed": True, "suite": "ordinary_en", "name": "events_micro_f1",
             "reason": "skipped: events.gold_labels = 16 < min_support 50"},
            {"passed": True, "within_noise": True, "suite": "when2call",
             "name": "decision_macro_f1", "reason": "0.32 -> 0.30; worse in 80%"}]},
        "comparison": {"test": {"n_fixed": 1, "n_broken": 1,
                                "deltas": {"decision.macro_f1": {"delta": 0.05}},
                                "fixed": [_flip("fixed", "什么是斯多葛主义？")],
                                "broken": [_flip("broken", "a | b")]}},
        "suites": {"test": {"n": 2, "model": {"m": 1}, "baseline": {"b": 1}}},
    }  # fmt: skip
    text = release_notes.section(res, "1.2.0")
    assert "**fails** (1 check)" in text and "safety_recall: 0.9 -> 0.8" in text
    assert "| test | 1 | 1 | +0.050 |" in text
    assert "Not checked:" in text and "ordinary_en: events_micro_f1: skipped:" in text
    assert "within the draw of turns" in text and "when2call: decision_macro_f1: 0.32" in text
    assert "什么是斯多葛主义？" in text and "a \\| b" in text
    log = tmp_path / "CHANGELOG.md"
    release_notes.write_changelog(log, "## 1.1.0\n\nold\n", "1.1.0")
    release_notes.write_changelog(log, text, "1.2.0")
    release_notes.write_changelog(log, text.replace("fails", "FAILS"), "1.2.0")
    body = log.read_text(encoding="utf-8")
    assert body.count("## 1.2.0") == 1 and "FAILS" in body and "## 1.1.0" in body
    assert body.index("## 1.2.0") < body.index("## 1.1.0")
    base = release_notes.baseline_results(res)
    assert base["model"] == "gate-small@1.1.0" and base["suites"]["test"]["model"] == {"b": 1}


def test_card_says_how_the_folders_own_template_fits_a_long_message() -> None:
    """The card text follows the folder: a folder exported before ``long_message`` existed
    cuts from the end, and its card must not claim otherwise."""
    from gatecli.template import DEFAULT_TEMPLATE
    from gatecli_train.card import long_message_text

    card = (Path(__file__).parents[1] / "train/gatecli_train/assets/card.md").read_text()
    assert "{long_message}" in card
    assert "head_tail" in long_message_text(DEFAULT_TEMPLATE)
    assert long_message_text({}) == "A message over the budget is cut from its end."


def test_card_says_what_the_folders_template_does_with_a_long_tool_list() -> None:
    """Likewise for ``tool_overflow``: a folder before the key cut the message to keep the
    whole tool list, and its card says so."""
    from gatecli.template import DEFAULT_TEMPLATE
    from gatecli_train.card import tool_overflow_text

    card = (Path(__file__).parents[1] / "train/gatecli_train/assets/card.md").read_text()
    assert "{tool_overflow}" in card
    assert "drop_tools" in tool_overflow_text(DEFAULT_TEMPLATE)
    assert "the message is cut instead" in tool_overflow_text({})
