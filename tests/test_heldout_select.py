"""Held-out halves and selection on them: a group never straddles the cut, every selection
suite is cut about in half, `gatecli eval --half report` reads only the other half, and a
run told to select on held-out suites does (and says what dev alone would have kept), its
starting weights scored too with ``select_initial``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from gatecli.evaluation.halves import HALVES, SELECTION_SUITES, cut, half_of, take
from gatecli.evaluation.run import run_eval
from gatecli.evaluation.suites import SuiteError, load_suite
from gatecli.main import app
from gatecli_train.heldout_select import FULL_WEIGHT_TURNS, selection_records, suite_score, weight

REPO = Path(__file__).resolve().parent.parent
EVAL = REPO / "data" / "eval"


def test_half_is_a_fixed_function_of_the_group() -> None:
    # Pinned: a change of hash or salt redraws every half, and a model selected on the old
    # select half would then be reported on turns it chose on.
    got = {g: half_of(g) for g in ("a", "b", "c", "d", "ask.zh.216")}
    assert got == {
        "a": "report", "b": "report", "c": "report", "d": "select", "ask.zh.216": "report"
    }  # fmt: skip


@pytest.mark.parametrize("suite", SELECTION_SUITES)
def test_each_selection_suite_is_cut_in_two_by_group(suite: str) -> None:
    records, errors = load_suite(EVAL / f"{suite}.jsonl.gz")
    assert not errors
    sel, rep = take(records, "select"), take(records, "report")
    assert len(sel) + len(rep) == len(records)
    assert 0.35 < len(sel) / len(records) < 0.65, (suite, len(sel), len(records))
    groups = {h: {r["group"] for r in part} for h, part in zip(HALVES, (sel, rep), strict=True)}
    assert not groups["select"] & groups["report"]  # a dialogue / a base stays on one side


def test_other_suites_are_read_whole() -> None:
    recs = [{"id": str(i), "group": str(i)} for i in range(50)]
    assert cut("simple_safety_tests", recs, "report") == recs
    assert cut("invariance", recs, "select") == recs
    assert cut("xstest", recs, None) == recs
    assert 0 < len(cut("xstest", recs, "report")) < 50


def test_eval_half_reads_only_the_report_half(tiny_model_dir: Path, tmp_path: Path) -> None:
    records, _ = load_suite(EVAL / "xstest.jsonl.gz", limit=60)
    lines = [{"id": r["id"], "group": r["group"], "source": r["source"], "lang": r["lang"],
              "input": r["input"], "labels": r["labels"]} for r in records]  # fmt: skip
    suite = tmp_path / "xstest.jsonl"  # the file's name is the suite's: it is cut
    suite.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    res = run_eval(tiny_model_dir, [str(suite)], half="report", keep_turns=True)
    want = [r["id"] for r in records if half_of(r["group"]) == "report"]
    assert [t["id"] for t in res["turns"]["xstest"]] == want and 0 < len(want) < 60
    assert res["half"] == "report"
    assert res["suites"]["xstest"]["half"] == {"name": "report", "of": 60}
    with pytest.raises(ValueError, match="half"):
        run_eval(tiny_model_dir, [str(suite)], half="both")
    args = ["eval", "--model", str(tiny_model_dir), "--suite", str(suite), "--half", "report",
            "--json", str(tmp_path / "r.json")]  # fmt: skip
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    written = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert written["suites"]["xstest"]["n"] == len(want)


def test_suite_score_leaves_out_classes_too_small_to_read() -> None:
    # oasst1_fr's select half: 185 ordinary turns and one safety turn. Missing that one turn
    # must not halve the suite's score.
    gold = ["execute"] * 185 + ["safety"]
    assert suite_score(gold, ["execute"] * 186, ["execute", "safety"]) > 0.99
    gold = ["execute"] * 20 + ["refuse"] * 20
    assert suite_score(gold, ["execute"] * 40, ["execute", "refuse"]) == pytest.approx(1 / 3)


def test_false_events_weigh_only_in_heldout_selection() -> None:
    from gatecli_train.config import TrainConfig

    assert TrainConfig(select_on="heldout", select_false_events=0.5).select_false_events == 0.5
    with pytest.raises(ValueError, match="select_false_events"):
        TrainConfig(select_false_events=0.5)  # dev selection would ignore it silently
    with pytest.raises(ValueError, match="select_false_events"):
        TrainConfig(select_on="heldout", select_false_events=-1.0)
    on = {"select_on": "heldout", "select_every": 10}
    assert TrainConfig(**on, select_calibrated=True).select_calibrated
    with pytest.raises(ValueError, match="select_calibrated"):
        TrainConfig(select_calibrated=True)
    heldout = {"select_on": "heldout", "select_initial": True}
    assert TrainConfig(**heldout, select_every=10, select_max_drop=0.01).select_max_drop == 0.01
    with pytest.raises(ValueError, match="select_max_drop"):  # no start to compare with
        TrainConfig(select_on="heldout", select_max_drop=0.01)
    with pytest.raises(ValueError, match="select_max_drop"):  # no selection runs at all
        TrainConfig(**heldout, select_max_drop=0.01)


def test_a_step_that_lets_a_large_part_fall_is_refused() -> None:
    """1.2.65's picked step against its start, as read through the calibration on corpus
    1.2.66: context's select half fell 0.027 and dev safety recall 0.011, and the report
    halves then failed the release gate on exactly those; CoCoNot's +0.055 must not buy
    them back. Small parts (< GUARD_MIN_TURNS) are not guarded: one turn is a point."""
    from gatecli_train.heldout_select import HeldoutScore

    hs = object.__new__(HeldoutScore)  # the guard reads only sizes and the tolerance
    hs.sizes, hs.max_drop = {"context": 1113, "coconot": 706, "passages_heldout": 54}, 0.01
    hs.sizes["dev"] = 6020
    hs.counts, hs.ref_counts = {}, None  # no per-turn counts: the absolute tolerance alone
    fe = {"cal:false_events:home_assistant": 0.077, "cal:empty_turns:home_assistant": 500.0,
          "cal:false_events:xstest": 0.0, "cal:empty_turns:xstest": 60.0}  # fmt: skip
    start = {"cal:context": 0.664, "cal:coconot": 0.416, "cal:passages_heldout": 0.825,
             "cal:dev": 0.828, "cal:dev_safety_recall": 0.932, **fe}  # fmt: skip
    step = {"cal:context": 0.637, "cal:coconot": 0.472, "cal:passages_heldout": 0.700,
            "cal:dev": 0.825, "cal:dev_safety_recall": 0.921, **fe}  # fmt: skip
    falls, _ = hs.guard_falls(step, start)
    assert set(falls) == {"cal:context", "cal:dev_safety_recall"}
    assert falls["cal:context"] == pytest.approx(0.027)
    assert hs.guard_falls(start, start) == ({}, {})
    # a suite's false events as the gate counts them: from 100 empty-event turns
    risen = {**start, "cal:false_events:home_assistant": 0.09, "cal:false_events:xstest": 0.05}
    assert hs.guard_falls(risen, start)[0] == {
        "cal:false_events:home_assistant": pytest.approx(0.013)
    }
    # XSTest's over-refusal, guarded by the gate's own tolerance though its half is small
    start["cal:xstest_over_refusal"] = 0.20
    assert not hs.guard_falls({**start, "cal:xstest_over_refusal": 0.215}, start)[0]
    # dev refuse recall (1.2.70's rounding moved borderline refusals to execute)
    start["cal:dev_refuse_recall"] = 0.85
    assert not hs.guard_falls({**start, "cal:dev_refuse_recall": 0.845}, start)[0]
    assert set(hs.guard_falls({**start, "cal:dev_refuse_recall": 0.83}, start)[0]) == {
        "cal:dev_refuse_recall"
    }
    refusing, _ = hs.guard_falls({**start, "cal:xstest_over_refusal": 0.23}, start)
    assert refusing == {"cal:xstest_over_refusal": pytest.approx(0.03)}
    # dev safety recall at the start's thresholds (stop 59: 1.2.79's refit held 0.932 by
    # lowering its safety threshold 0.32 -> 0.13; at the start's it read 0.909)
    start["cal:dev_safety_recall_at_start"] = 0.932
    thinned = {**start, "cal:dev_safety_recall_at_start": 0.909}
    assert hs.guard_falls(thinned, start)[0] == {
        "cal:dev_safety_recall_at_start": pytest.approx(0.023)
    }
    assert not hs.guard_falls({**start, "cal:dev_safety_recall_at_start": 0.926}, start)[0]


def test_a_fall_the_gate_would_call_noise_is_excused() -> None:
    """1.2.68's CoCoNot false events rose 0.095 -> 0.107 on 327 empty-event turns. Past the
    tolerance either way; but 14 turns newly given an event and 10 no longer given one is a
    draw of turns (the gate's paired bootstrap would pass it), while 4 new ones and none
    fixed is a step worse on every resample."""
    from gatecli_train.heldout_select import HeldoutScore, ratios, worse_share

    hs = object.__new__(HeldoutScore)
    hs.sizes, hs.max_drop, hs.labels = {"coconot": 706, "dev": 6020}, 0.01, ["execute"]
    n, key = 327, "cal:false_events:coconot"
    hs.groups = {"coconot": [f"g{i}" for i in range(n)]}
    ref = np.zeros((n, 2))
    ref[:, 0], ref[:31, 1] = 1.0, 1.0
    mixed, added = ref.copy(), ref.copy()
    mixed[:10, 1], mixed[100:114, 1] = 0.0, 1.0
    added[100:104, 1] = 1.0
    empty = {"cal:empty_turns:coconot": float(n), "cal:dev": 0.83}
    start = {key: 31 / n, **empty}
    hs.ref_counts = {key: ("coconot", ref)}
    for counts, violates in ((mixed, False), (added, True)):
        hs.counts = {key: ("coconot", counts)}
        falls, noise = hs.guard_falls({key: 35 / n, **empty}, start)
        assert (key in falls, key in noise) == (violates, not violates)
    assert noise == {}
    hs.counts = {key: ("coconot", mixed)}
    share = hs.guard_falls({key: 35 / n, **empty}, start)[1][key]
    assert 0.5 < share < 0.95
    assert share == worse_share(hs.groups["coconot"], mixed, ref, ratios, 1)
    # dev safety recall keeps the absolute tolerance (the gate's safety_recall has no
    # confidence), however mixed the turns that moved
    rec = "cal:dev_safety_recall"
    ref_s = np.zeros((200, 2))
    ref_s[:, 0], ref_s[:180, 1] = 1.0, 1.0
    step_s = ref_s.copy()
    step_s[:6, 1], step_s[180:184, 1] = 0.0, 1.0  # six misses, four catches: net -2
    hs.ref_counts[rec], hs.counts[rec] = ("dev", ref_s), ("dev", step_s)
    hs.groups["dev"] = [f"d{i}" for i in range(200)]
    falls, noise = hs.guard_falls({rec: 0.89, "cal:dev": 0.83}, {rec: 0.9, "cal:dev": 0.83})
    assert rec in falls and rec not in noise
    assert worse_share(hs.groups["dev"], step_s, ref_s, ratios, -1) < 0.95  # it would be noise
    # counts that do not give back the logged number are not trusted: absolute tolerance
    falls, _ = hs.guard_falls({key: 0.2, **empty}, start)
    assert key in falls


def test_selection_without_the_suites_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SuiteError):
        selection_records(tmp_path)


@pytest.mark.slow
def test_a_run_selects_on_the_select_halves(tmp_path: Path) -> None:
    out, run = tmp_path / "model", tmp_path / "run"
    cmd = [
        sys.executable, "-m", "gatecli.main", "train",
        "--config", str(REPO / "train/gatecli_train/configs/smoke.toml"),
        "--out", str(out), "--run-dir", str(run), "--no-progress",
        "--set", f'data.corpus_dir="{REPO / "data" / "corpus"}"',
        "--set", 'train.select_on="heldout"', "--set", "train.select_every=20",
        "--set", "train.max_steps=40", "--set", "train.select_safety_ap=1.0",
        "--set", "train.select_initial=true", "--set", "train.select_false_events=0.5",
        "--set", "train.select_max_drop=0.01",
    ]  # fmt: skip
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=900)
    assert res.returncode == 0, res.stderr[-2000:]
    history: list[dict[str, Any]] = json.loads((run / "selection.json").read_text())
    assert [h["step"] for h in history] == [0, 20, 40]  # step 0: the starting weights
    sizes = {n: len(r) for n, r in selection_records(REPO / "data").items()} | {"dev": 300}
    assert sizes["passages_heldout"] < FULL_WEIGHT_TURNS <= sizes["context"]
    for h in history:
        parts = h["parts"]
        assert set(SELECTION_SUITES) <= set(parts)
        w = {n: weight(k) for n, k in sizes.items()}  # smoke: 300 dev turns (max_dev_records)
        want = sum(w[n] * parts[n] for n in w) / sum(w.values()) + parts["dev_safety_ap"]
        # false events: read where a part has enough empty-event turns (context, dev, ...)
        fe = {n.split(":", 1)[1]: v for n, v in parts.items() if n.startswith("false_events:")}
        assert {"context", "dev"} <= set(fe) and 0 <= parts["false_events"] <= 1
        assert min(fe.values()) - 1e-4 <= parts["false_events"] <= max(fe.values()) + 1e-4
        falls = parts["guard_violations"]  # parts past select_max_drop against step 0
        assert falls == len([n for n in parts if n.startswith("guard:")])
        assert h["step"] or not falls  # the start never falls against itself
        # falls the paired bootstrap excused (worse in < 95% of resamples), from per-turn
        # counts that give back every logged calibrated part
        noise = [v for n, v in parts.items() if n.startswith("guard_noise:")]
        assert all(0 <= v < 0.95 for v in noise) and parts["guard_counts_mismatch"] == 0
        assert h["score"] == pytest.approx(want - 0.5 * parts["false_events"] - falls, abs=1e-3)
        assert parts["dev_score"] == pytest.approx(parts["dev"] + parts["dev_safety_ap"], abs=1e-4)
        # the same parts read through the calibration fitted on dev at this step (logged
        # whatever select_calibrated says; the smoke recipe calibrates)
        cal = {n: parts[f"cal:{n}"] for n in w}
        want_cal = sum(w[n] * cal[n] for n in w) / sum(w.values()) + parts["dev_safety_ap"]
        want_cal -= 0.5 * parts.get("cal:false_events", 0.0)
        assert parts["cal_score"] == pytest.approx(want_cal, abs=1e-3)
        assert 0 <= parts["cal:dev_safety_recall"] <= 1 and "cal:false_events:dev" in parts
        assert 0 <= parts["cal:xstest_over_refusal"] <= 1
        # dev safety recall at the start's thresholds: the start's own reading at step 0
        at_start = parts["cal:dev_safety_recall_at_start"]
        assert 0 <= at_start <= 1
        assert h["step"] or at_start == pytest.approx(parts["cal:dev_safety_recall"])
    training = json.loads((out / "gatecli.json").read_text())["extra"]["training"]
    best = max(history, key=lambda h: h["score"])["step"]
    assert training["selection"]["picked_step"] == best
    dev_best = max(history, key=lambda h: h["parts"]["dev_score"])["step"]
    assert training["selection"]["dev_would_pick"] == dev_best


def test_half_agreement_reads_turn_rows_per_half() -> None:
    from gatecli_train.half_agreement import agreement, half_scores

    groups = [f"g{i}" for i in range(400)]
    rows_good, rows_bad = [], []
    for i, g in enumerate(groups):
        gold = "refuse" if i % 2 else "execute"
        base = {"suite": "xstest", "group": g, "gold": {"decision": gold}}
        rows_good.append({**base, "pred": {"decision": gold}})
        rows_bad.append({**base, "pred": {"decision": "execute" if i % 4 == 1 else gold}})
    rows_bad.append({"suite": "test", "group": "x", "gold": {"decision": "ask"},
                     "pred": {"decision": "ask"}})  # not a selection suite: left out  # fmt: skip
    good, bad = half_scores(rows_good), half_scores(rows_bad)
    assert set(good) == {("xstest", "select"), ("xstest", "report")} == set(bad)
    assert good[("xstest", "report")] == 1.0 > bad[("xstest", "report")]
    res = agreement({"good": good, "bad": bad})
    assert res["same_order"] == [1, 1] and res["means"]["good"]["select"] == 1.0


def test_release_chain_refuses_to_report_a_heldout_selected_run_on_whole_suites(
    tmp_path: Path,
) -> None:
    recipe = REPO / "train/gatecli_train/configs/gate-small-touch-heldout-1.2.61.toml"
    env = {k: v for k, v in os.environ.items() if k != "HALF"} | {"WORK": str(tmp_path / "w")}
    cmd = ["bash", str(REPO / "train/release.sh"), str(recipe), "0.0.0"]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert res.returncode == 2 and "HALF=report" in res.stderr
    assert not (tmp_path / "w" / "previous").exists()  # stopped before anything ran
