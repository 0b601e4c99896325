"""From raw head logits to calibrated probabilities and thresholded labels.

Temperatures and per-label thresholds come from the artifact (``gatecli.json``); this
module only applies them. Single-label heads use a tempered softmax, multi-label heads a
tempered sigmoid per label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from gatecli.artifact import HeadSpec


@dataclass
class HeadOutputs:
    """Calibrated outputs of the four heads for one turn (input of the policy engine)."""

    decision_probs: dict[str, float]
    event_scores: dict[str, float] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)
    tag_scores: dict[str, float] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    slot_scores: dict[str, float] = field(default_factory=dict)
    slots: list[str] = field(default_factory=list)

    @property
    def top_decision(self) -> str:
        return max(self.decision_probs, key=self.decision_probs.__getitem__)


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = logits.astype(np.float64) / max(temperature, 1e-6)
    z -= z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    out: np.ndarray = e / e.sum(axis=-1, keepdims=True)
    return out


def sigmoid(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = logits.astype(np.float64) / max(temperature, 1e-6)
    return 1.0 / (1.0 + np.exp(-z))


def head_probabilities(spec: HeadSpec, logits: np.ndarray) -> np.ndarray:
    """Calibrated probabilities, shape ``(batch, len(spec.labels))``."""
    if spec.kind == "single":
        return softmax(logits, spec.temperature)
    return sigmoid(logits, spec.temperature)


def postprocess(
    heads: Mapping[str, HeadSpec], logits: Mapping[str, np.ndarray]
) -> list[HeadOutputs]:
    """Turn a batch of logits (keyed by head name) into one :class:`HeadOutputs` per row."""
    probs = {name: head_probabilities(spec, logits[name]) for name, spec in heads.items()}
    batch = next(iter(probs.values())).shape[0]
    out: list[HeadOutputs] = []
    for i in range(batch):
        scores = {
            name: dict(zip(spec.labels, np.round(probs[name][i], 6).tolist(), strict=True))
            for name, spec in heads.items()
        }
        chosen = {
            name: [lab for lab in spec.labels if scores[name][lab] >= spec.threshold(lab)]
            for name, spec in heads.items()
        }
        out.append(
            HeadOutputs(
                decision_probs=scores["decision"],
                event_scores=scores.get("events", {}),
                events=chosen.get("events", []),
                tag_scores=scores.get("scenario_tags", {}),
                tags=chosen.get("scenario_tags", []),
                slot_scores=scores.get("missing_slots", {}),
                slots=chosen.get("missing_slots", []),
            )
        )
    return out
