"""Calibration: temperatures recover a known scale; thresholds meet their stated targets."""

from __future__ import annotations

import numpy as np

from gatecli_train.calibrate import (
    best_f1_threshold,
    expected_calibration_error,
    fit_temperature,
    safety_threshold,
)
from gatecli_train.model import HeadDef


def test_temperature_recovers_overconfident_logits() -> None:
    rng = np.random.default_rng(0)
    true = rng.normal(size=(4000, 5))
    y = np.array([rng.choice(5, p=np.exp(r) / np.exp(r).sum()) for r in true])
    head = HeadDef("decision", ("a", "b", "c", "d", "e"), multilabel=False)
    t = fit_temperature(head, true * 3.0, y)  # logits three times too sharp
    assert 2.5 < t < 3.6


def test_safety_threshold_keeps_precision() -> None:
    rng = np.random.default_rng(1)
    is_safety = np.zeros(2000, dtype=bool)
    is_safety[:100] = True
    p = np.where(is_safety, rng.uniform(0.05, 1.0, 2000), rng.uniform(0.0, 0.12, 2000))
    t = safety_threshold(p, is_safety, target_recall=0.98, min_precision=0.8)
    pred = p >= t
    precision = (pred & is_safety).sum() / pred.sum()
    assert precision >= 0.8
    # the recall-only rule would have gone down to the grid floor and lost precision
    assert t > 0.02


def test_safety_threshold_falls_back_to_f2_when_never_precise() -> None:
    is_safety = np.array([True, False] * 50)
    p = np.full(100, 0.3)
    assert 0.02 <= safety_threshold(p, is_safety, 0.98, 0.8) <= 0.5


def test_f1_threshold_and_ece() -> None:
    p = np.array([0.9, 0.8, 0.35, 0.3, 0.1])
    y = np.array([1, 1, 1, 0, 0])
    assert 0.3 < best_f1_threshold(p, y, 0.2, 0.8) <= 0.35
    perfect = np.eye(3)[[0, 1, 2, 0]]
    assert expected_calibration_error(perfect, np.array([0, 1, 2, 0])) == 0.0
