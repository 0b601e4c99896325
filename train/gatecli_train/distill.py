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


def teacher_batch(
    teacher_logits: dict[str, np.ndarray], index: np.ndarray, device: torch.device
) -> dict[str, torch.Tensor]:
    return {k: torch.from_numpy(v[index]).to(device) for k, v in teacher_logits.items()}
