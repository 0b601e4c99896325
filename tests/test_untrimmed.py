"""``gatecli_train.untrimmed``: the full-vocabulary twin of a folder differs from it in the
word table alone. It used to rebuild the calibration from ``gatecli.json`` without the
per-language thresholds and take the default catalog and policy, so ``gatecli eval`` on the
two folders read those differences as the cost of trimming. Plumbing on the tiny random
folder, its own encoder and tokenizer standing in for e5's full ones (the thing under test
is what the new folder keeps, not e5)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("torch")

from gatecli import artifact  # noqa: E402
from gatecli_train import convert_e5, pipeline, untrimmed  # noqa: E402
from gatecli_train.from_onnx import to_run_dir  # noqa: E402
from gatecli_train.model import default_head_defs  # noqa: E402
from gatecli_train.tiny import TEXTS, build_tiny_model  # noqa: E402


def test_the_full_vocabulary_twin_keeps_the_folders_calibration_and_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = build_tiny_model(tmp_path / "tiny", quantize=False)
    cfg = artifact.load_model_folder(src).config
    decision = replace(
        cfg.heads["decision"], temperature=1.3, thresholds={"safety": 0.37},
        thresholds_by_lang={"zh": {"safety": 0.29}},
    )  # fmt: skip
    artifact.write_config(src, replace(cfg, heads={**cfg.heads, "decision": decision}))
    policy = src / artifact.POLICY_FILE
    policy.write_text(policy.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    artifact.seal(src)
    before = artifact.load_model_folder(src).config
    run = to_run_dir(src, tmp_path / "run")
    model, tok = pipeline.load_run_model(run, default_head_defs())
    monkeypatch.setattr(convert_e5, "load", lambda: (model.encoder, tok))

    out = tmp_path / "full"
    untrimmed.build(run, src, out, TEXTS[:8])
    after = artifact.load_model_folder(out).config
    assert after.heads == before.heads
    assert after.template == before.template
    for name in (artifact.CATALOG_FILE, artifact.POLICY_FILE):
        assert (out / name).read_bytes() == (src / name).read_bytes()
