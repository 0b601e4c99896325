"""The fine-tuning loop: masked multi-head loss, two learning rates, checkpoints, resume.

Heads start from random and need a larger learning rate than the pretrained encoder
(measured in the prototype: a head at 5e-5 barely moved), so the optimiser has two
parameter groups. A checkpoint (model, optimiser, scheduler, step, RNG) is written every
``checkpoint_every`` steps; starting again with the same run folder resumes from it, on
the same training set only (each checkpoint carries its fingerprint).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

from gatecli_train import distill
from gatecli_train.config import DistillConfig, TrainConfig
from gatecli_train.examples import Example, batches, hash_ids
from gatecli_train.model import GateModel, masked_losses

RESULT_FILE = "train_result.json"  # a finished run's TrainResult, for re-exports


@dataclass
class TrainResult:
    steps: int
    seconds: float
    final_loss: float
    resumed_from: int
    # Rows whose soft decision target was the label, not the teacher (distill.correct_teacher),
    # counted over the steps of this process.
    teacher_corrected: int = 0


def pick_device() -> torch.device:
    """A GPU when one is present, else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _to_torch(batch: dict[str, np.ndarray], device: torch.device) -> dict[str, torch.Tensor]:
    return {k: torch.from_numpy(v).to(device) for k, v in batch.items() if k != "index"}


class ResumeError(ValueError):
    """A run folder's checkpoint was written for another model or training set."""


def fingerprint(examples: list[Example]) -> str:
    """sha256 over every example's token ids, targets and masks, in order: what a checkpoint's
    step, epoch and shuffle position mean. A resumed run on other examples would continue
    someone else's schedule; it is refused instead (:class:`ResumeError`)."""
    h = hashlib.sha256(str(len(examples)).encode())
    hash_ids(h, examples)
    for ex in examples:
        h.update(json.dumps([ex.targets, ex.known], sort_keys=True).encode())
    return h.hexdigest()[:20]


def _resume(ckpt: Path, model: GateModel, opt, sched, device: torch.device, data: str) -> int:  # noqa: ANN001
    """Load a checkpoint into model, optimiser and scheduler; its step.

    Why the checks (2026-12-05): a teacher was resumed from a later checkout whose corpus
    had 900 more rows; the trimmed vocabulary differed by 35 pieces and the run died in
    ``load_state_dict`` with a size mismatch that named no cause. Checkpoints written before
    fingerprints existed are resumed as they were."""
    state = torch.load(ckpt, map_location=device, weights_only=False)
    again = "resume with the corpus, template and recipe it started with, or use a new run folder"
    if _other_training_set(state, data):
        raise ResumeError(
            f"{ckpt} was written for another training set (its corpus, template, sampling or "
            f"labels changed since the run started): {again}"
        )
    try:
        model.load_state_dict(state["model"])
    except RuntimeError as exc:
        raise ResumeError(
            f"{ckpt} holds another model (vocabulary, layers or heads differ; a trimmed "
            f"vocabulary follows the corpus): {again}\n{exc}"
        ) from exc
    opt.load_state_dict(state["optimizer"])
    sched.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["torch_rng"])
    return int(state["step"])


def class_weights(
    model: GateModel, cfg: TrainConfig, device: torch.device
) -> dict[str, torch.Tensor]:
    dec = next(h for h in model.head_defs if h.name == "decision")
    w = [float(cfg.decision_class_weights.get(lab, 1.0)) for lab in dec.labels]
    return {"decision": torch.tensor(w, device=device)}


def train(
    model: GateModel,
    examples: list[Example],
    cfg: TrainConfig,
    run_dir: Path,
    *,
    progress: bool = True,
    teacher_logits: dict[str, np.ndarray] | None = None,
    distill_cfg: DistillConfig | None = None,
    select_fn: Callable[[GateModel], float | tuple[float, dict[str, float]]] | None = None,
) -> TrainResult:
    """Train in place; resumable from ``run_dir/checkpoint.pt``.

    With ``teacher_logits`` (one row per example, in ``examples`` order) the loss is
    ``(1 - alpha) * hard + alpha * soft`` with ``distill_cfg``'s alpha, temperature and
    alpha_masked (see :mod:`gatecli_train.distill`).
    With ``select_fn`` (a score, higher is better; or ``(score, parts)``, the parts logged
    beside it) and ``cfg.select_every``, the model
    is scored every that many steps and at the end, and the best-scoring weights are the
    result (``run_dir/model.best.pt``, history in ``selection.json``): the last step of a
    long schedule is not always the best one. With ``cfg.select_initial`` the starting
    weights are scored first (step 0) and win if no step beats them.
    """
    dcfg = distill_cfg or DistillConfig()
    torch.manual_seed(cfg.seed)
    random.seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    device = pick_device()
    model.to(device)
    run_dir.mkdir(parents=True, exist_ok=True)
    steps_per_epoch = math.ceil(len(examples) / cfg.batch_size)
    total = cfg.max_steps or max(1, int(steps_per_epoch * cfg.epochs))
    head_params = [
        p for n, p in model.named_parameters() if n.startswith("heads.") and p.requires_grad
    ]
    enc_params = [
        p for n, p in model.named_parameters() if not n.startswith("heads.") and p.requires_grad
    ]
    opt = torch.optim.AdamW(
        [{"params": enc_params, "lr": cfg.lr_encoder}, {"params": head_params, "lr": cfg.lr_heads}],
        weight_decay=cfg.weight_decay,
    )
    warm = max(1, int(total * cfg.warmup_ratio))

    def schedule(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return max(0.0, (total - step) / max(1, total - warm))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule)
    ckpt = run_dir / "checkpoint.pt"
    data = fingerprint(examples)
    step = _resume(ckpt, model, opt, sched, device, data) if ckpt.exists() else 0
    resumed_from = step
    selector = _Selector(run_dir, select_fn if cfg.select_every else None)
    cw = class_weights(model, cfg, device)
    weights = cfg.head_weights
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, initial=step, desc="train", unit="step", dynamic_ncols=True)
    t0, ema = time.perf_counter(), None
    corrected = 0
    if selector.active and cfg.select_initial and step == 0 and not selector.history:
        selector.score(model, 0)  # the starting weights are a candidate too
    model.train()
    epoch = step // steps_per_epoch
    skip = step % steps_per_epoch
    while step < total:
        for i, batch in enumerate(
            batches(examples, cfg.batch_size, model.head_defs, shuffle=True, seed=cfg.seed + epoch)
        ):
            if i < skip:
                continue
            b = _to_torch(batch, device)
            logits = model(b["input_ids"], b["attention_mask"])
            targets = {h.name: b[f"y:{h.name}"] for h in model.head_defs}
            masks = {h.name: b[f"m:{h.name}"] for h in model.head_defs}
            losses = masked_losses(model, logits, targets, masks, class_weights=cw)
            loss = cast(torch.Tensor, sum(weights.get(n, 1.0) * v for n, v in losses.items()))
            if teacher_logits is not None:
                t_logits = distill.teacher_batch(teacher_logits, batch["index"], device)
                if dcfg.correct_teacher:
                    t_logits, n_fixed = distill.correct_decision(t_logits, targets, masks)
                    corrected += n_fixed
                soft = distill.soft_losses(
                    model, logits, t_logits, masks, dcfg.temperature, dcfg.alpha_masked
                )
                soft_loss = sum(weights.get(n, 1.0) * v for n, v in soft.items())
                loss = (1 - dcfg.alpha) * loss + dcfg.alpha * soft_loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            val = float(loss.detach())
            ema = val if ema is None else 0.95 * ema + 0.05 * val
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{ema:.4f}", dec=f"{float(losses['decision'].detach()):.3f}")
            if step % cfg.checkpoint_every == 0 or step == total:
                _save(ckpt, model, opt, sched, step, data)
            if selector.active and (step % cfg.select_every == 0 or step == total):
                selector.score(model, step)
                model.train()
            if step >= total:
                break
        epoch += 1
        skip = 0
    if bar is not None:
        bar.close()
    model.eval()
    selector.restore_best(model)
    result = TrainResult(step, time.perf_counter() - t0, float(ema or 0.0), resumed_from, corrected)
    (run_dir / RESULT_FILE).write_text(json.dumps(dataclasses.asdict(result)), encoding="utf-8")
    return result


class _Selector:
    """Keeps the best-scoring weights of a run on disk; survives a resume."""

    def __init__(
        self,
        run_dir: Path,
        fn: Callable[[GateModel], float | tuple[float, dict[str, float]]] | None,
    ) -> None:
        self.fn, self.best_path = fn, run_dir / "model.best.pt"
        self.log_path = run_dir / "selection.json"
        self.history: list[dict[str, Any]] = []
        if fn is not None and self.log_path.exists():
            self.history = json.loads(self.log_path.read_text(encoding="utf-8"))

    @property
    def active(self) -> bool:
        return self.fn is not None

    def score(self, model: GateModel, step: int) -> None:
        assert self.fn is not None
        model.eval()
        with torch.no_grad():
            got = self.fn(model)
        value, parts = (got[0], got[1]) if isinstance(got, tuple) else (got, None)
        best = max((h["score"] for h in self.history), default=float("-inf"))
        entry: dict[str, Any] = {"step": step, "score": float(value)}
        if parts is not None:
            entry["parts"] = {k: round(float(v), 5) for k, v in parts.items()}
        self.history.append(entry)
        if value > best:
            torch.save(model.state_dict(), self.best_path)
        self.log_path.write_text(json.dumps(self.history), encoding="utf-8")

    def restore_best(self, model: GateModel) -> None:
        if self.fn is None or not self.history or not self.best_path.exists():
            return
        model.load_state_dict(torch.load(self.best_path, map_location="cpu", weights_only=True))
        model.to(next(model.parameters()).device)


def _other_training_set(state: dict[str, Any], data: str) -> bool:
    """Whether a checkpoint was written for a training set whose :func:`fingerprint` is not
    ``data``. Checkpoints from before fingerprints existed carry none and pass."""
    return state.get("examples", data) != data


def finished_result(run_dir: Path, data: str) -> TrainResult:
    """The result of a run that already ended, for re-exports: what training recorded in
    ``train_result.json`` (time and loss of the real run), else the checkpoint's step.

    ``data`` is :func:`fingerprint` of the training set the caller would train on now; a
    checkpoint written for another one is refused (:class:`ResumeError`), as a resume is.
    Why: a re-export of a finished run in a later checkout (release.sh on a recipe already
    trained) would otherwise calibrate and report a model trained on an older corpus under
    the new one's name."""
    ckpt = run_dir / "checkpoint.pt"
    state = torch.load(ckpt, map_location="cpu", weights_only=False) if ckpt.exists() else None
    if state is not None and _other_training_set(state, data):
        raise ResumeError(
            f"{run_dir} finished on another training set (its corpus, template, sampling "
            "or labels changed since): re-export it from the checkout it was trained in, "
            "or train again in a new run folder"
        )
    saved = run_dir / RESULT_FILE
    if saved.exists():
        done = TrainResult(**json.loads(saved.read_text(encoding="utf-8")))
        return dataclasses.replace(done, resumed_from=done.steps)  # no step taken now
    if state is None:
        raise FileNotFoundError(f"{run_dir} has neither {RESULT_FILE} nor checkpoint.pt")
    step = int(state["step"])
    return TrainResult(step, 0.0, 0.0, step)


def _save(path: Path, model: GateModel, opt, sched, step: int, data: str) -> None:  # noqa: ANN001
    tmp = path.with_suffix(".tmp")
    torch.save(
        {
            "model": model.state_dict(),
            "optimizer": opt.state_dict(),
            "scheduler": sched.state_dict(),
            "step": step,
            "torch_rng": torch.get_rng_state(),
            "examples": data,  # fingerprint(): a resume on another training set is refused
        },
        tmp,
    )
    tmp.replace(path)


@torch.no_grad()
def predict_logits(
    model: GateModel, examples: list[Example], batch_size: int = 64
) -> dict[str, np.ndarray]:
    """Logits for every example, in order (for calibration and evaluation)."""
    model.eval()
    device = next(model.parameters()).device
    out: dict[str, np.ndarray] = {
        h.name: np.zeros((len(examples), len(h.labels)), dtype=np.float32) for h in model.head_defs
    }
    for batch in batches(examples, batch_size, model.head_defs, shuffle=False):
        b = _to_torch(batch, device)
        logits = model(b["input_ids"], b["attention_mask"])
        for name, z in logits.items():
            out[name][batch["index"]] = z.float().cpu().numpy()
    return out
