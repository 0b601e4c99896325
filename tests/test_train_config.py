"""Recipes (``extends``, validation on load) and the export's per-head parity check."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from gatecli_train.config import ExportConfig, load_recipe

CONFIGS = Path(__file__).resolve().parent.parent / "train" / "gatecli_train" / "configs"


def test_recipes_state_only_what_they_change() -> None:
    small = load_recipe(CONFIGS / "gate-small.toml")
    distilled = load_recipe(CONFIGS / "gate-small-distilled.toml")
    mini = load_recipe(CONFIGS / "gate-mini-distilled.toml")
    teacher = load_recipe(CONFIGS / "gate-teacher.toml")
    assert (distilled.train.epochs, distilled.export.version) == (2.0, "1.1.0")
    assert distilled.model == small.model and distilled.calibration == small.calibration
    assert distilled.train.decision_class_weights == {"safety": 2.0, "refuse": 1.5}
    assert mini.model.keep_layers == (0, 5, 11) and mini.distill == distilled.distill
    assert (mini.export.name, mini.train.epochs) == ("gate-mini", 1.5)
    assert teacher.model.keep_layers == () and teacher.export.quantize is False
    assert teacher.data == small.data


def test_extends_merges_tables_and_refuses_loops(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text('[train]\nepochs = 3\nlr_heads = 0.01\n'
                                        '[train.head_weights]\ndecision = 2.0\n')  # fmt: skip
    (tmp_path / "child.toml").write_text('extends = "base.toml"\n[train]\nepochs = 1\n')
    r = load_recipe(tmp_path / "child.toml", ["train.max_steps=7"])
    assert (r.train.epochs, r.train.lr_heads, r.train.max_steps) == (1, 0.01, 7)
    assert r.train.head_weights == {"decision": 2.0}
    (tmp_path / "a.toml").write_text('extends = "b.toml"\n')
    (tmp_path / "b.toml").write_text('extends = "a.toml"\n')
    with pytest.raises(ValueError, match="loops"):
        load_recipe(tmp_path / "a.toml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[export]\nquantization = "int3"\n', r"\[export\] quantization must be one of"),
        ("[distill]\nalpha = 1.5\n", r"\[distill\] alpha must be in \[0, 1\]"),
        ('[train]\nepochs = "two"\n', r"\[train\] epochs must be float"),
        ("[model]\nkeep_layer = [1]\n", r"unknown keys in \[model\]"),
        ("[modle]\n", "unknown sections"),
        ('[data.repeat]\n"authored:whyforms" = -1\n', r"\[data\] repeat must be source = fac"),
        ("[train]\nselect_safety_ap = -1.0\n", r"\[train\] select_safety_ap must be >= 0"),
    ],
)
def test_bad_values_fail_at_load(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "r.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load_recipe(path)


def test_parity_is_reported_and_checked_per_head(tiny_model_dir: Path, tmp_path: Path) -> None:
    from gatecli_train import export, tokenizer
    from gatecli_train.model import GateModel, default_head_defs, tiny_encoder
    from gatecli_train.tiny import TEXTS

    parity = json.loads((tiny_model_dir / "gatecli.json").read_text())["extra"]["parity"]
    heads = parity["heads"]
    assert set(heads) == {"decision", "events", "scenario_tags", "missing_slots"}
    assert all(h["output"] == f"{n}_logits" and h["fp32_max_abs_diff"] <= 1e-4
               for n, h in heads.items())  # fmt: skip
    assert heads["decision"]["shape"] == [40, 5]
    tok = tokenizer.train_small(TEXTS, vocab_size=300)
    model = GateModel(tiny_encoder(tok.get_vocab_size()), default_head_defs())
    strict = ExportConfig(name="t", quantize=False, max_abs_diff=1e-30)
    with pytest.raises(export.ParityError) as err:
        export.write_model_folder(tmp_path / "m", model, tok, strict, max_length=64,
                                  parity_texts=TEXTS[:8])  # fmt: skip
    assert "decision:" in str(err.value) and "missing_slots:" in str(err.value)


def test_a_failed_export_leaves_the_folder_as_it_was(tiny_model_dir: Path, tmp_path: Path) -> None:
    """An export that fails its parity floor into a folder that holds a model changes
    nothing there (it used to leave the new model.onnx beside the old gatecli.json, a folder
    whose hashes no longer check) and leaves no staging sibling behind; into a new path it
    creates nothing."""
    import shutil

    from gatecli import artifact
    from gatecli_train import export, tokenizer
    from gatecli_train.model import GateModel, default_head_defs, tiny_encoder
    from gatecli_train.tiny import TEXTS

    out = tmp_path / "m"
    shutil.copytree(tiny_model_dir, out)
    before = {f.name: artifact.sha256_file(f) for f in out.iterdir()}
    tok = tokenizer.train_small(TEXTS, vocab_size=300)
    model = GateModel(tiny_encoder(tok.get_vocab_size()), default_head_defs())
    strict = ExportConfig(name="t", quantize=False, max_abs_diff=1e-30)
    for dest in (out, tmp_path / "new"):
        with pytest.raises(export.ParityError):
            export.write_model_folder(dest, model, tok, strict, max_length=64,
                                      parity_texts=TEXTS[:8])  # fmt: skip
    assert {f.name: artifact.sha256_file(f) for f in out.iterdir()} == before
    artifact.load_model_folder(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]


@pytest.mark.parametrize("fallback", [True, False])
def test_a_failed_block_encoding_falls_back_to_the_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fallback: bool
) -> None:
    """Symmetric blocks failing the floor (forced: the real check, then a failure for the
    symmetric encoding only) leave the folder with zero points and a note; without the
    fallback the failure stands."""
    from gatecli_train import export, tokenizer
    from gatecli_train.model import GateModel, default_head_defs, tiny_encoder
    from gatecli_train.tiny import TEXTS

    real = export.parity_check
    seen: list[bool] = []

    def symmetric_fails(*args: Any, **kw: Any) -> Any:
        report = real(*args, **kw)
        seen.append(args[6].weight_symmetric)
        if args[6].weight_symmetric:
            raise export.ParityError("parity check failed: forced for the symmetric blocks")
        return report

    monkeypatch.setattr(export, "parity_check", symmetric_fails)
    tok = tokenizer.train_small(TEXTS, vocab_size=300)
    model = GateModel(tiny_encoder(tok.get_vocab_size()), default_head_defs())
    cfg = ExportConfig(name="t", min_int8_agreement=0.0, zero_point_fallback=fallback)
    out = tmp_path / "m"
    if not fallback:
        with pytest.raises(export.ParityError, match="forced"):
            export.write_model_folder(out, model, tok, cfg, max_length=64, parity_texts=TEXTS[:8])
        assert seen == [True]
        return
    report = export.write_model_folder(out, model, tok, cfg, max_length=64, parity_texts=TEXTS[:8])
    assert seen == [True, False]
    notes = json.loads((out / "gatecli.json").read_text())["extra"]["parity"]["notes"]
    assert notes == report.notes
    assert any("with zero points" in n for n in notes)
    assert any("weight_symmetric = True failed" in n and "False kept" in n for n in notes)
    assert not any(n.startswith("MatMul") and "zero points" not in n for n in notes)


def test_repeat_multiplies_named_sources_after_the_cap() -> None:
    """``[data] repeat``: whole factors copy every row, the fraction samples by seed, a
    named source with no record is a typo and fails, and the rest is left as it was."""
    from gatecli_train.examples import sample_train

    def rows(source: str, n: int, decision: str) -> list[dict]:
        return [{"source": source, "lang": "en", "text": f"{source} {i}",
                 "labels": {"decision": decision}} for i in range(n)]  # fmt: skip

    records = rows("authored:whyforms", 10, "execute") + rows("hwu64", 50, "execute")
    plain = sample_train(records, 20, 0.0, seed=1)
    more = sample_train(records, 20, 0.0, seed=1, repeat={"authored:whyforms": 2.5})
    count = lambda out, s: sum(r["source"] == s for r in out)  # noqa: E731
    assert (count(plain, "authored:whyforms"), count(plain, "hwu64")) == (10, 20)
    assert (count(more, "authored:whyforms"), count(more, "hwu64")) == (25, 20)
    texts = [r["text"] for r in more if r["source"] == "authored:whyforms"]
    assert all(2 <= texts.count(t) <= 3 for t in set(texts)) and len(set(texts)) == 10
    assert sample_train(records, 20, 0.0, seed=1, repeat={"authored:whyforms": 2.5}) == more
    with pytest.raises(ValueError, match="no training record"):
        sample_train(records, 20, 0.0, seed=1, repeat={"authored:whyform": 2.0})


def test_balance_variants_tops_up_the_offered_side_of_a_tool_pair() -> None:
    """``[data] balance_variants``: the capped-away rows of the smaller variant come back
    first, then repeats; a pair already balanced is left alone, a typo fails."""
    from gatecli_train.examples import sample_train, variant

    def rows(rule: str, n: int, decision: str, source: str) -> list[dict]:
        return [{"id": f"augmented:{rule}:{source}:{i}", "source": source, "lang": "en",
                 "labels": {"decision": decision}} for i in range(n)]  # fmt: skip

    # offered variants share a big execute cell (capped), missing ones a small connect cell
    records = (rows("tools.offered", 30, "execute", "hwu64")
               + [{"id": f"hwu64:{i}", "source": "hwu64", "lang": "en",
                   "labels": {"decision": "execute"}} for i in range(60)]
               + rows("tools.missing", 25, "connect", "hwu64"))  # fmt: skip
    count = lambda out, v: sum(variant(r) == v for r in out)  # noqa: E731
    plain = sample_train(records, 40, 0.0, seed=3)
    assert count(plain, "tools.missing") == 25 and count(plain, "tools.offered") < 25
    pair = {"tools.offered": "tools.missing"}
    fair = sample_train(records, 40, 0.0, seed=3, balance=pair)
    offered = [r["id"] for r in fair if variant(r) == "tools.offered"]
    assert len(offered) == 25 and len(set(offered)) == 25  # fresh rows before any repeat
    others = lambda out: sorted(r["id"] for r in out if variant(r) != "tools.offered")  # noqa: E731
    assert others(fair) == others(plain)  # nothing else changes
    assert sample_train(records, 40, 0.0, seed=3, balance=pair) == fair
    few = records[:5] + records[90:]  # 5 offered rows for 25 missing: repeats make up the rest
    topped = [r["id"] for r in sample_train(few, 40, 0.0, seed=3, balance=pair)
              if variant(r) == "tools.offered"]  # fmt: skip
    assert len(topped) == 25 and len(set(topped)) == 5
    reverse = sample_train(records, 40, 0.0, seed=3, balance={"tools.missing": "tools.offered"})
    assert count(reverse, "tools.missing") == 25  # only ever adds: missing already outnumbers
    with pytest.raises(ValueError, match="no training row"):
        sample_train(records, 40, 0.0, seed=3, balance={"tools.ofered": "tools.missing"})
    # repeat_variants after balancing: both sides doubled, the pair stays balanced
    more = sample_train(records, 40, 0.0, seed=3, balance=pair,
                        repeat_variants={"tools.offered": 2.0, "tools.missing": 1.5})  # fmt: skip
    assert (count(more, "tools.offered"), count(more, "tools.missing")) == (50, 37)
    assert others(more) != others(fair) and count(more, None) == count(fair, None)


def test_a_checkpoint_resumes_only_on_its_training_set(tmp_path: Path) -> None:
    """The same examples resume where the checkpoint stopped; other examples (a later
    corpus) or another vocabulary are refused with a cause, not a size-mismatch trace."""
    from gatecli_train.config import TrainConfig
    from gatecli_train.examples import Example
    from gatecli_train.model import GateModel, HeadDef, tiny_encoder
    from gatecli_train.trainer import ResumeError, fingerprint, finished_result, train

    heads = [HeadDef("decision", ("a", "b"), False)]

    def examples(n: int) -> list[Example]:
        return [Example(ids=[2, 5 + i % 7, 3], targets={"decision": i % 2},
                        known={"decision": True}, record={}) for i in range(n)]  # fmt: skip

    cfg = TrainConfig(max_steps=2, batch_size=4, checkpoint_every=1, threads=1)
    run = tmp_path / "run"
    train(GateModel(tiny_encoder(40), heads), examples(8), cfg, run, progress=False)
    again = dataclasses.replace(cfg, max_steps=3)
    done = train(GateModel(tiny_encoder(40), heads), examples(8), again, run, progress=False)
    assert (done.resumed_from, done.steps) == (2, 3)
    with pytest.raises(ResumeError, match="another training set"):
        train(GateModel(tiny_encoder(40), heads), examples(9), again, run, progress=False)
    with pytest.raises(ResumeError, match="another model"):
        train(GateModel(tiny_encoder(41), heads), examples(8), again, run, progress=False)
    # A finished run is re-exported only for the training set it finished on.
    assert finished_result(run, fingerprint(examples(8))).steps == 3
    with pytest.raises(ResumeError, match="finished on another training set"):
        finished_result(run, fingerprint(examples(9)))


def test_quick_metrics_reports_the_dev_safety_ranking() -> None:
    """Selection can weigh dev safety average precision (``train.select_safety_ap``): the
    quick metrics give it from the decision logits' softmax, whatever the argmax says."""
    import numpy as np

    from gatecli.evaluation.metrics import average_precision
    from gatecli_train.model import default_head_defs
    from gatecli_train.pipeline import quick_metrics

    heads = default_head_defs()
    labels = next(h for h in heads if h.name == "decision").labels
    s, e = labels.index("safety"), labels.index("execute")
    gold = np.array([s, s, e, e, e])
    z = np.zeros((5, len(labels)), dtype=np.float32)
    z[:, e] = 2.0
    z[:, s] = [1.5, 0.0, 1.0, -1.0, 0.5]  # argmax is execute everywhere: recall 0
    known = {"decision": np.array([True] * 5)}
    q = quick_metrics(heads, {"decision": z}, {"decision": gold}, known)
    assert q["safety_recall_argmax"] == 0.0
    # softmax P(safety) follows the safety logit: 1.5 (safe), 1.0, 0.5, 0.0 (safe), -1.0
    assert q["safety_ap"] == pytest.approx(average_precision([1.5, 0.0], [1.0, -1.0, 0.5]))
    assert q["safety_ap"] == pytest.approx((1 + 2 / 4) / 2)
