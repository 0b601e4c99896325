"""Knowledge distillation: a shallow student learns the fine-tuned teacher's outputs.

The student is the teacher cut to about half its layers (initialised from the teacher's
own fine-tuned layers and heads), then trained on the hard labels plus the teacher's soft
outputs: KL divergence at temperature ``T`` for the softmax head, BCE to the teacher's
probabilities for the sigmoid heads. Soft targets also cover heads a record leaves
masked, which is where a teacher adds information the labels do not have; they get the
smaller weight ``alpha_masked``.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from gatecli_train.model import GateModel


def soft_losses(
    model: GateModel,
    logits: dict[str, torch.Tensor],
    teacher: dict[str, torch.Tensor],
    masks: dict[str, torch.Tensor],
    temperature: float,
    alpha_masked: float,
) -> dict[str, torch.Tensor]:
    """Per-head distillation loss; rows with a known label weigh 1, masked rows
    ``alpha_masked``."""
    out: dict[str, torch.Tensor] = {}
    for h in model.head_defs:
        w = torch.where(masks[h.name], 1.0, alpha_masked).to(logits[h.name].dtype)
        s, t = logits[h.name], teacher[h.name]
        if h.multilabel:
            per_row = nn.functional.binary_cross_entropy_with_logits(
                s / temperature, torch.sigmoid(t / temperature), reduction="none"
            ).sum(-1)  # summed over labels, as the hard loss (model.masked_losses)
        else:
            per_row = nn.functional.kl_div(
                nn.functional.log_softmax(s / temperature, -1),
                nn.functional.log_softmax(t / temperature, -1),
                log_target=True,
                reduction="none",
            ).sum(-1) * (temperature**2)
        out[h.name] = (per_row * w).sum() / w.sum().clamp(min=1e-6)
    return out


def correct_decision(
    teacher: dict[str, torch.Tensor],
    targets: dict[str, torch.Tensor],
    masks: dict[str, torch.Tensor],
    margin: float = 10.0,
) -> tuple[dict[str, torch.Tensor], int]:
    """The teacher's decision logits, with rows where it contradicts a known label replaced by
    that label (logit ``margin`` on it, 0 elsewhere); and how many rows were replaced.

    Why (2026-12-04): with the shipped model as its own teacher (1.2.20), the soft targets
    pulled back every turn the corpus had just relabelled (a benign request refused because a
    tool list was present): each fix came out at half strength. Where the teacher agrees with
    the label its soft outputs still carry what labels do not (how close a safe prompt is to
    a harmful one); where it disagrees, the label wins.

    Example:
        >>> t = {"decision": torch.tensor([[2.0, 0.0], [0.0, 2.0]])}
        >>> y = {"decision": torch.tensor([0, 0])}
        >>> m = {"decision": torch.tensor([True, True])}
        >>> out, n = correct_decision(t, y, m)
        >>> n, out["decision"][1].tolist()
        (1, [10.0, 0.0])
    """
    t, y, m = teacher["decision"], targets["decision"], masks["decision"]
    wrong = m & (t.argmax(-1) != y)
    n = int(wrong.sum())
    if not n:
        return teacher, 0
    gold = nn.functional.one_hot(y.clamp(min=0), t.shape[-1]).to(t.dtype) * margin
    return {**teacher, "decision": torch.where(wrong[:, None], gold, t)}, n


def teacher_batch(
    teacher_logits: dict[str, np.ndarray], index: np.ndarray, device: torch.device
) -> dict[str, torch.Tensor]:
    return {k: torch.from_numpy(v[index]).to(device) for k, v in teacher_logits.items()}
