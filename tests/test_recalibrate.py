"""Per-language thresholds in the runtime, and ``gatecli calibrate`` on an exported folder.

The tiny random model is plumbing only: these tests check that a language's thresholds
reach its turns and no other, and that a refit folder keeps its weights byte for byte and
loads; quality of the fit is measured by ``gatecli eval`` on the shipped model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatecli import artifact
from gatecli.gate import Gate
from gatecli.main import app
from gatecli_train.config import CalibrationConfig
from gatecli_train.corpus.records import make_record
from gatecli_train.recalibrate import recalibrate

runner = CliRunner()
ZH = [{"user_message": "帮我把客厅的灯关掉"}, {"user_message": "今天天气怎么样？明天呢？"}]
EN = [{"user_message": "turn off the living room lights"}, {"user_message": "hi. how are you?"}]


def _set_lang_thresholds(folder: Path, by_lang: dict) -> None:
    cfg = json.loads((folder / "gatecli.json").read_text(encoding="utf-8"))
    cfg["heads"]["decision"]["thresholds_by_lang"] = by_lang
    (folder / "gatecli.json").write_text(json.dumps(cfg), encoding="utf-8")
    artifact.seal(folder)


def test_language_thresholds_reach_that_language_only(
    tiny_model_dir: Path, tiny_model_copy: Path
) -> None:
    _set_lang_thresholds(tiny_model_copy, {"zh": {"safety": 0.0}})
    base, per_lang = Gate(tiny_model_dir), Gate(tiny_model_copy)
    for rec in per_lang.classify(ZH):  # a floor of 0: every zh turn routes to safety,
        assert rec["lang"] == "zh" and rec["decision"] == "safety"  # segments included
    assert [r["decision"] for r in per_lang.classify(EN)] == [
        r["decision"] for r in base.classify(EN)
    ]


def test_format_2_folder_still_reads_and_unknown_format_is_refused(tiny_model_copy: Path) -> None:
    cfg = json.loads((tiny_model_copy / "gatecli.json").read_text(encoding="utf-8"))
    assert cfg["format_version"] == artifact.FORMAT_VERSION == 3
    cfg["format_version"] = 2
    (tiny_model_copy / "gatecli.json").write_text(json.dumps(cfg), encoding="utf-8")
    # (the config digest covers format_version: a real version-2 folder was sealed as 2)
    v2 = artifact.load_model_folder(tiny_model_copy, verify_hash=False).config
    assert v2.format_version == 2 and v2.heads["decision"].thresholds_by_lang == {}
    cfg["format_version"] = 4
    (tiny_model_copy / "gatecli.json").write_text(json.dumps(cfg), encoding="utf-8")
    with pytest.raises(artifact.ArtifactError, match="format_version 4.*reads 2 and 3"):
        artifact.load_model_folder(tiny_model_copy, verify_hash=False)


def _records() -> list[dict]:
    rows = []
    for i in range(24):
        lang, msg = ("zh", f"我不想活了，第{i}次") if i % 2 else ("en", f"I want to end it all {i}")
        rows.append(_rec(f"s{i}", msg, lang, "safety"))
        msg2 = f"把音量调到{i}" if i % 2 else f"set the volume to {i}"
        rows.append(_rec(f"e{i}", msg2, lang, "execute"))
    return rows


def _rec(rid: str, msg: str, lang: str, decision: str) -> dict:
    return make_record(rid=rid, source="t", lang=lang, message=msg, decision=decision,
                       events=None, tags=None, slots=None, note="n", group=rid)  # fmt: skip


def test_recalibrate_keeps_weights_and_writes_a_loadable_folder(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "refit"
    cfg = CalibrationConfig(lang_min_positives=5)
    refit = recalibrate(tiny_model_dir, out, _records(), cfg, version="9.9.9", described_as="t")
    folder = artifact.load_model_folder(out)  # hashes check
    assert folder.config.version == "9.9.9" and folder.config.format_version == 3
    for name in ("model.onnx", "tokenizer.json", "catalog.yaml", "policy.yaml"):
        assert (out / name).read_bytes() == (tiny_model_dir / name).read_bytes()
    dec = folder.config.heads["decision"]
    assert dec.temperature == refit.calibration.temperatures["decision"]
    assert dec.thresholds_by_lang == refit.calibration.thresholds_by_lang.get("decision", {})
    report = folder.config.extra["recalibration"]
    assert report["rows"] == 48 and set(report["report"]["safety_by_language"]) == {"en", "zh"}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".refit.")]  # no debris


def test_calibrate_cli(tiny_model_dir: Path, tmp_path: Path) -> None:
    data = tmp_path / "dev.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _records()), encoding="utf-8")
    out = tmp_path / "m"
    args = ["calibrate", "-m", str(tiny_model_dir), "--data", str(data), "-o", str(out)]
    ok = runner.invoke(app, [*args, "--set", "calibration.lang_min_positives=5"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["rows"] == 48 and (out / "gatecli.json").is_file()
    bad = runner.invoke(app, [*args[:-1], str(tmp_path / "m2"), "--set", "calibration.nope=1"])
    assert bad.exit_code == 2 and "nope" in bad.output
    missing = runner.invoke(app, ["calibrate", "--data", str(tmp_path / "none.jsonl"), "-o",
                                  str(tmp_path / "m3"), "-m", str(tiny_model_dir)])  # fmt: skip
    assert missing.exit_code == 2 and not (tmp_path / "m3").exists()


def test_refit_of_chosen_heads_keeps_the_others(tiny_model_dir: Path, tmp_path: Path) -> None:
    """``--head``: only the named heads are refit; the decision head keeps its calibration
    byte for byte (what the 1.2.52 candidate needed: its decision refit moved English
    safety), and a head the folder lacks is refused before anything is written."""
    data = tmp_path / "dev.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _records()), encoding="utf-8")
    before = artifact.load_model_folder(tiny_model_dir).config.heads
    out = tmp_path / "m"
    args = ["calibrate", "-m", str(tiny_model_dir), "--data", str(data), "-o", str(out),
            "--set", "calibration.lang_min_positives=5"]  # fmt: skip
    ok = runner.invoke(app, [*args, "--head", "events", "--head", "scenario_tags"])
    assert ok.exit_code == 0, ok.output
    after = artifact.load_model_folder(out).config
    assert after.heads["decision"] == before["decision"]
    assert after.heads["missing_slots"] == before["missing_slots"]
    fit = json.loads(ok.stdout)
    assert after.heads["events"].temperature == fit["temperatures"]["events"]
    assert after.heads["decision"].temperature != fit["temperatures"]["decision"]
    assert after.extra["recalibration"]["heads"] == ["events", "scenario_tags"]
    bad = runner.invoke(app, [*args[:6], str(tmp_path / "m2"), "--head", "nope"])
    assert bad.exit_code == 2 and "no such head: nope" in bad.output
    assert not (tmp_path / "m2").exists()
