"""The release gate's paired bootstrap: noise passes as noise, a real loss still fails, and
every resampled number equals the one ``gatecli eval`` reports."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gatecli.evaluation.compare import Paired, load_criteria, release_gate
from gatecli.evaluation.report import lookup
from gatecli.evaluation.scoring import pair, score_turns
from gatecli.evaluation.significance import RESAMPLERS, paired_bootstrap, resample_weights
from gatecli.main import app

DECISIONS = ["execute", "ask", "connect", "refuse", "safety"]
EVENTS = ["media.play", "knowledge.web.search", "device.volume.adjust"]
LABELS = {"decision": DECISIONS, "events": EVENTS, "scenario_tags": [], "missing_slots": []}


def _records(n: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        dec = rng.choice(DECISIONS)
        events = None if i % 7 == 0 else sorted(rng.sample(EVENTS, rng.choice([0, 0, 1, 2])))
        source = "xstest" if i % 3 == 0 else "hand"
        out.append({"id": str(i), "source": source, "lang": "en",
                    "input": {"user_message": f"turn {i}"},
                    "labels": {"decision": dec, "events": events, "scenario_tags": None,
                               "missing_slots": None}})  # fmt: skip
    return out


def _preds(records: list[dict[str, Any]], wrong: float, seed: int) -> list[dict[str, Any]]:
    """The gold labels with ``wrong`` of the decisions and events replaced at random."""
    rng = random.Random(seed)
    out = []
    for r in records:
        dec = r["labels"]["decision"]
        events = list(r["labels"]["events"] or [])
        if rng.random() < wrong:
            dec = rng.choice(DECISIONS)
            events = sorted(rng.sample(EVENTS, rng.choice([0, 1])))
        probs = {d: 0.05 for d in DECISIONS} | {dec: 0.6}
        if rng.random() < 0.2:
            probs["ask"] = 0.5  # inside the ask band of a 0.15 margin for some turns
        out.append({"decision": dec, "probabilities": probs, "events": events,
                    "scenario_tags": [], "missing_slots": []})  # fmt: skip
    return out


def _scored(records: list[dict[str, Any]], preds: list[dict[str, Any]]) -> tuple[dict, list]:
    turns = pair(records, preds)
    return score_turns(turns, LABELS, 0.15), turns


@pytest.mark.parametrize("key", sorted(RESAMPLERS))
def test_each_resampled_number_equals_the_reported_one(key: str) -> None:
    """The bootstrap only runs when its full-suite number is the one scoring reported; this
    holds it to that for every key it knows (a drifted definition would gate nothing)."""
    recs = _records(400)
    a, ta = _scored(recs, _preds(recs, 0.3, 1))
    b, tb = _scored(recs, _preds(recs, 0.2, 2))
    where = "views" if key.startswith("xstest") else "overall"
    reported = (lookup(a[where], key), lookup(b[where], key))
    assert None not in reported
    boot = paired_bootstrap(key, ta, tb, higher_is_better=True, reported=reported,
                            margins=(0.15, 0.15), resamples=50)  # fmt: skip
    assert boot is not None and boot["resamples"] > 0
    # A number that is not the reported one is refused, not resampled.
    off = (reported[0] + 0.01, reported[1])
    assert paired_bootstrap(key, ta, tb, higher_is_better=True, reported=off,
                            margins=(0.15, 0.15), resamples=50) is None  # fmt: skip


def test_resample_weights_draw_whole_groups() -> None:
    singles = [str(i) for i in range(37)]
    w = resample_weights(singles, resamples=20, seed=3)
    assert w.shape == (20, 37) and (w.sum(axis=1) == 37).all()
    assert (resample_weights(singles, resamples=20, seed=3) == w).all()
    groups = [f"g{i // 4}" for i in range(40)]  # ten groups of four turns
    w = resample_weights(groups, resamples=50, seed=1)
    assert (w.reshape(50, 10, 4) == w.reshape(50, 10, 4)[:, :, :1]).all()  # a group moves whole
    assert (w.sum(axis=1) == 40).all()  # ten groups drawn, four turns each


def test_a_loss_inside_one_group_is_one_draw_not_ten() -> None:
    """Ten broken turns that are one dialogue (one group) are one unlucky draw; the same ten
    spread over ten dialogues are a loss."""
    recs = _records(300, seed=5)
    base = _preds(recs, 0.0, 7)
    cand = [dict(p) for p in base]
    for i in range(10):
        cand[i] = {
            **cand[i],
            "decision": "ask" if recs[i]["labels"]["decision"] != "ask" else "execute",
        }

    def gate(group_of: Any) -> dict[str, Any]:
        grouped = [{**r, "group": group_of(i)} for i, r in enumerate(recs)]
        return _gate(grouped, cand, base)["checks"][0]

    clustered = gate(lambda i: f"dialogue{i // 10}")  # turns 0-9 are dialogue 0
    spread = gate(lambda i: f"dialogue{i % 30}")  # turns 0-9 in ten dialogues
    assert clustered["baseline"] - clustered["model"] > 0.01
    assert clustered["within_noise"] and clustered["bootstrap"]["groups"] == 30
    assert not spread["passed"] and spread["bootstrap"]["worse_share"] >= 0.95


def _gate(recs: list[dict[str, Any]], cand: list[dict], base: list[dict]) -> dict[str, Any]:
    (m, tm), (b, tb) = _scored(recs, cand), _scored(recs, base)
    crit = [c for c in load_criteria() if c.get("name") == "decision_macro_f1"]
    suites = {"s": {"model": m, "baseline": b}}
    return release_gate(suites, crit, {"s": Paired(tm, tb, (0.15, 0.15))})


def test_a_few_flips_pass_as_noise_and_a_real_loss_fails() -> None:
    recs = _records(300, seed=5)
    base = _preds(recs, 0.2, 7)
    # Noise: the candidate breaks six turns the baseline had right and mends four it had
    # wrong (1.2.53 on When2Call: 12 broken, 8 fixed of 300).
    noisy = [dict(p) for p in base]
    pairs = list(enumerate(zip(recs, base, strict=True)))
    broken = [i for i, (r, p) in pairs if p["decision"] == r["labels"]["decision"] == "safety"]
    fixed = [i for i, (r, p) in pairs if p["decision"] != r["labels"]["decision"]]
    for i in broken[:6]:
        noisy[i] = {**noisy[i], "decision": "execute"}
    for i in fixed[:4]:
        noisy[i] = {**noisy[i], "decision": recs[i]["labels"]["decision"]}
    res = _gate(recs, noisy, base)
    check = res["checks"][0]
    drop = check["baseline"] - check["model"]
    assert drop > 0.01, "the test needs a change past the tolerance"
    assert res["passed"] and check["within_noise"], check["reason"]
    assert "paired resamples" in check["reason"] and check["bootstrap"]["worse_share"] < 0.95
    # A real loss: a third of the turns wrong instead of a fifth.
    res = _gate(recs, _preds(recs, 0.45, 7), base)
    check = res["checks"][0]
    assert not res["passed"] and not check["within_noise"], check["reason"]
    assert check["bootstrap"]["worse_share"] >= 0.95


def test_without_per_turn_rows_a_change_past_tolerance_still_fails() -> None:
    recs = _records(300, seed=5)
    base = _preds(recs, 0.2, 7)
    (m, _), (b, _) = _scored(recs, _preds(recs, 0.3, 7)), _scored(recs, base)
    crit = [c for c in load_criteria() if c.get("name") == "decision_macro_f1"]
    res = release_gate({"s": {"model": m, "baseline": b}}, crit)
    assert not res["passed"] and "no paired resampling" in res["checks"][0]["reason"]


def test_safety_recall_stays_absolute() -> None:
    """No draw of turns excuses a missed crisis: the criterion has no confidence."""
    crit = {c["name"]: c for c in load_criteria()}
    assert "confidence" not in crit["safety_recall"] and "confidence" not in crit["seeds_all_pass"]
    recs = _records(300, seed=5)
    base = _preds(recs, 0.0, 7)
    cand = [dict(p) for p in base]
    first = next(i for i, r in enumerate(recs) if r["labels"]["decision"] == "safety")
    cand[first] = {**cand[first], "decision": "execute"}
    (m, tm), (b, tb) = _scored(recs, cand), _scored(recs, base)
    res = release_gate({"s": {"model": m, "baseline": b}}, [crit["safety_recall"]],
                       {"s": Paired(tm, tb, (0.15, 0.15))})  # fmt: skip
    assert not res["passed"] and "bootstrap" not in res["checks"][0]


def test_confidence_out_of_range_is_an_error() -> None:
    recs = _records(100)
    (m, tm), (b, tb) = _scored(recs, _preds(recs, 0.0, 1)), _scored(recs, _preds(recs, 0.0, 1))
    crit = [{"name": "f1", "metric": "decision.macro_f1", "max_drop": 0.01, "confidence": 1.5}]
    with pytest.raises(ValueError, match="confidence"):  # even on a check that passes
        release_gate({"s": {"model": m, "baseline": b}}, crit, {"s": Paired(tm, tb, (0.1, 0.1))})


def test_eval_turns_writes_one_row_per_turn_with_the_baselines_beside(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    recs = _records(12)
    for r in recs[:6]:  # half of them one dialogue: read from the file, not made up by scoring
        r["group"] = "dialogue-1"
    suite = tmp_path / "hand.jsonl"
    suite.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    out = tmp_path / "turns.jsonl"
    args = ["eval", "--model", str(tiny_model_dir), "--baseline", str(tiny_model_dir),
            "--suite", str(suite), "--turns", str(out),
            "--json", str(tmp_path / "r.json")]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [r["id"] for r in recs]
    assert {r["suite"] for r in rows} == {"hand"}
    # The file's group reaches the bootstrap (load_suite once dropped it: every group was
    # then its id, and the "group" draw drew single turns); a record without one is its own.
    assert [r["group"] for r in rows] == ["dialogue-1"] * 6 + [r["id"] for r in recs[6:]]
    first = rows[0]
    assert first["gold"] == recs[0]["labels"] and first["pred"]["decision"] in DECISIONS
    assert first["baseline"]["pred"] == first["pred"] and "latency_ms" not in first["pred"]
    assert set(first["correct"]) == {"decision", "events", "scenario_tags", "missing_slots"}
    assert "turns" not in json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))


def test_a_bad_gate_file_fails_before_any_suite_runs(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The criteria are read before the suites run: a wrong confidence fails in a second,
    not after a nine-minute evaluation of two models."""
    from gatecli.evaluation import run

    gate = tmp_path / "gate.yaml"
    gate.write_text(
        "criteria:\n  - {name: f1, metric: decision.macro_f1, max_drop: 0.01, confidence: 2}\n",
        encoding="utf-8",
    )
    suite = tmp_path / "hand.jsonl"
    suite.write_text("".join(json.dumps(r) + "\n" for r in _records(5)), encoding="utf-8")

    def never(*_: Any) -> Any:
        raise AssertionError("a suite ran before the gate file was read")

    monkeypatch.setattr(run, "evaluate_predictor", never)
    with pytest.raises(ValueError, match="confidence"):
        run.run_eval(tiny_model_dir, [str(suite)], baseline=tiny_model_dir, gate_criteria=gate)
