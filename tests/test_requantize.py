"""``gatecli_train.requantize``: a folder's weights under another quantisation, every
calibrated number and folder file kept; and ``export.keep_blockwise`` (dynamic int8 with
some MatMuls as 8-bit weight-only blocks). Plumbing on the tiny random folder."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest

from gatecli import artifact
from gatecli_train import export
from gatecli_train.config import ExportConfig
from gatecli_train.from_onnx import state_from_onnx
from gatecli_train.requantize import requantize
from gatecli_train.tiny import build_tiny_model

TEXTS = ["turn off the lights", "我不想活了", "quelle heure est-il à Tokyo", "ok", "hi there"]
FF_OUT = r"layer\.\d+/output/dense/MatMul"


def _calibrated(folder: Path) -> artifact.ModelConfig:
    """The tiny folder with thresholds no export writes by default (so keeping them shows)."""
    cfg = artifact.load_model_folder(folder).config
    decision = replace(
        cfg.heads["decision"], temperature=1.7, thresholds={"safety": 0.37},
        thresholds_by_lang={"en": {"safety": 0.44}},
    )  # fmt: skip
    cfg = replace(cfg, heads={**cfg.heads, "decision": decision})
    artifact.write_config(folder, cfg)
    artifact.seal(folder)
    return artifact.load_model_folder(folder).config


@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_requantize_keeps_everything_but_the_graph(tmp_path: Path, alpha: float) -> None:
    src = build_tiny_model(tmp_path / "tiny", quantize=True, quantization="blockwise")
    before = _calibrated(src)
    (src / "CHANGELOG.md").write_text("# 1.0.0\n", encoding="utf-8")
    cfg = ExportConfig(
        name=before.name, version="9.9.9", quantization="dynamic", weight_bits=7,
        keep_blockwise=(FF_OUT,), weight_symmetric=False, smooth_alpha=alpha,
        min_int8_agreement=0.0,
    )  # fmt: skip
    out = tmp_path / "out"
    report = requantize(src, out, cfg, parity_texts=TEXTS, calibration_texts=TEXTS)
    after = artifact.load_model_folder(out).config  # hashes checked
    assert after.version == "9.9.9" and after.onnx_max_batch == 1
    assert after.heads == before.heads and after.template == before.template
    for name in (artifact.CATALOG_FILE, artifact.POLICY_FILE):
        assert (out / name).read_bytes() == (src / name).read_bytes()
    assert after.extra["requantized"]["from"] == before.model_id
    assert (out / "CHANGELOG.md").read_text(encoding="utf-8") == "# 1.0.0\n"
    assert after.extra["parity"]["int8_decision_agreement"] == report.int8_decision_agreement
    ops = [n.op_type for n in onnx.load(str(out / artifact.MODEL_FILE)).graph.node]
    assert ops.count("MatMulNBits") == 2  # the feed-forward output of each tiny layer
    assert "DynamicQuantizeLinear" in ops  # the other encoder MatMuls: dynamic int8
    assert any("2 MatMuls as 8-bit MatMulNBits" in n for n in report.notes)
    # Read back (1 / s of a smoothed block folded in): the source's weights up to rounding.
    want, _ = state_from_onnx(src / artifact.MODEL_FILE)
    got, _ = state_from_onnx(out / artifact.MODEL_FILE)
    assert set(got) == set(want)
    for k in want:
        w, g = want[k].numpy(), got[k].numpy()
        assert np.abs(g - w).max() <= 0.03 * np.abs(w).max() + 1e-6, k


def test_a_failed_requantize_leaves_out_as_it_was(tmp_path: Path) -> None:
    """The changelog is carried inside the staged write: a changelog that cannot be copied
    (here a folder by that name) fails the run with an existing ``out`` byte for byte as it
    was (it used to be copied after the swap, over a folder already replaced)."""
    src = build_tiny_model(tmp_path / "tiny", quantize=True, quantization="blockwise")
    (src / "CHANGELOG.md").mkdir()
    out = build_tiny_model(tmp_path / "out", quantize=True, quantization="dynamic")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    cfg = ExportConfig(name="tiny", version="9.9.9", quantization="dynamic", min_int8_agreement=0.0)
    with pytest.raises(IsADirectoryError):
        requantize(src, out, cfg, parity_texts=TEXTS, calibration_texts=TEXTS)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "tiny"]


def test_carried_files_may_not_replace_the_exports_own(tmp_path: Path) -> None:
    src = build_tiny_model(tmp_path / "tiny", quantize=False)
    cfg = ExportConfig(name="tiny", quantize=False)
    with pytest.raises(ValueError, match="policy.yaml"):
        export.write_model_folder(
            tmp_path / "out", None, None, cfg, max_length=32, parity_texts=TEXTS,  # type: ignore[arg-type]
            carried=[src / artifact.POLICY_FILE],
        )  # fmt: skip
    assert not (tmp_path / "out").exists()


def test_requantize_refuses_its_own_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gatecli_train import requantize as module

    src = tmp_path / "m"
    monkeypatch.setattr(
        "sys.argv", ["requantize", "--model", str(src), "--config", "x.toml", "--out", str(src)]
    )
    monkeypatch.setattr(module, "load_recipe", lambda _: type("R", (), {"export": ExportConfig()}))
    with pytest.raises(SystemExit, match="another folder"):
        module.main()


def test_keep_blockwise_is_for_the_dynamic_path_only() -> None:
    with pytest.raises(ValueError, match="keep_blockwise"):
        ExportConfig(keep_blockwise=(FF_OUT,))
    assert ExportConfig(quantization="dynamic", keep_blockwise=(FF_OUT,)).keep_blockwise
