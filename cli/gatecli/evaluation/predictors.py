"""One protocol for everything ``gatecli eval`` can score: the gate and the baselines.

A predictor has ``name``, ``labels`` (head -> label list), ``escalation`` (the shipped
``ask_margin``) and ``predict(records) -> list of spec §5-like dicts``. Keeping the gate and
the reference baselines interchangeable is what lets one report compare them honestly.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from gatecli.evaluation.baseline_predictors import MARKER, load_baseline


class Predictor(Protocol):
    name: str
    labels: dict[str, list[str]]
    escalation: dict[str, Any]

    def predict(self, records: list[Mapping[str, Any]]) -> list[dict[str, Any]]: ...


class GatePredictor:
    """The ONNX gate behind the predictor protocol (decision after policy, as shipped)."""

    def __init__(self, model_dir: str | Path | None = None) -> None:
        from gatecli.gate import Gate

        self.gate = Gate(model_dir)
        self.name = self.gate.model_id
        self.labels = {h: list(spec.labels) for h, spec in self.gate.heads.items()}
        self.escalation = dict(self.gate.config.escalation)

    def predict(self, records: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return self.gate.classify(list(records))  # type: ignore[return-value]


def load_predictor(path: str | Path | None = None) -> Predictor:
    """A gate model folder or a baseline folder (``baseline.json``) as a predictor.

    Example:
        >>> pred = load_predictor(str(default_model_dir()))  # doctest: +SKIP
        >>> pred.predict([{"user_message": "hi"}])  # doctest: +SKIP
        [{'decision': 'execute', ...}]
    """
    if path is not None and (Path(path) / MARKER).is_file():
        return load_baseline(path)
    return GatePredictor(path)
