"""Calibration: temperatures recover a known scale; thresholds meet their stated targets."""

from __future__ import annotations

import numpy as np
import pytest

from gatecli_train.calibrate import (
    best_f1_threshold,
    calibrate,
    expected_calibration_error,
    fit_temperature,
    language_safety_thresholds,
    safety_threshold,
)
from gatecli_train.config import CalibrationConfig
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


def test_plateau_threshold_is_the_highest_near_the_best_f1() -> None:
    """A flat F1 curve: the arg-max lands where noise puts it, the plateau rule at the top
    of the near-best range (fewer predicted labels on turns that have none)."""
    rng = np.random.default_rng(0)
    y = (rng.random(4000) < 0.1).astype(int)
    p = np.clip(np.where(y == 1, rng.normal(0.75, 0.12, 4000), rng.beta(1, 12, 4000)), 0, 1)
    argmax = best_f1_threshold(p, y, 0.2, 0.8)
    top = best_f1_threshold(p, y, 0.2, 0.8, plateau=0.01)
    assert top > argmax
    f1 = {t: _f1(p >= t, y) for t in (argmax, top)}
    assert f1[top] >= f1[argmax] - 0.01
    assert best_f1_threshold(p, y, 0.2, 0.8, plateau=0.99) == pytest.approx(0.8)  # ceiling
    with pytest.raises(ValueError, match="threshold_plateau"):
        CalibrationConfig(threshold_plateau=1.0)


def _f1(pred: np.ndarray, y: np.ndarray) -> float:
    tp = float((pred & (y == 1)).sum())
    return 2 * tp / max(1.0, float(pred.sum()) + float(y.sum()))


def _two_languages() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """en safety turns score high, zh ones low: one pooled threshold serves zh badly."""
    rng = np.random.default_rng(2)
    n = 1000
    lang = np.array(["en"] * n + ["zh"] * n)
    is_safety = np.zeros(2 * n, dtype=bool)
    is_safety[:60] = True
    is_safety[n : n + 60] = True
    p = np.concatenate([
        np.where(is_safety[:n], rng.uniform(0.45, 1.0, n), rng.uniform(0.0, 0.3, n)),
        np.where(is_safety[n:], rng.uniform(0.1, 0.5, n), rng.uniform(0.0, 0.08, n)),
    ])  # fmt: skip
    return p, is_safety, lang


def test_language_thresholds_follow_each_language_and_shrink_to_pooled() -> None:
    p, is_safety, lang = _two_languages()
    cfg = CalibrationConfig()
    pooled = safety_threshold(p, is_safety, cfg.safety_recall, cfg.safety_min_precision)
    by_lang, report = language_safety_thresholds(p, is_safety, lang, pooled, cfg)
    assert by_lang["zh"] < pooled  # zh's safety turns are less sure: a lower bar
    assert report["zh"]["recall"] > report["zh"]["pooled_recall"]
    own = safety_threshold(p[lang == "zh"], is_safety[lang == "zh"], 0.98, 0.8)
    k, n = cfg.lang_prior_positives, 60
    assert by_lang["zh"] == round((n * own + k * pooled) / (n + k), 4)
    # no prior weight: the language's own fit; infinite-ish prior: the pooled one
    raw, _ = language_safety_thresholds(
        p, is_safety, lang, pooled, CalibrationConfig(lang_prior_positives=0)
    )
    assert raw["zh"] == round(own, 4)


def test_language_with_few_safety_turns_keeps_pooled() -> None:
    p, is_safety, lang = _two_languages()
    cfg = CalibrationConfig(lang_min_positives=61)
    by_lang, report = language_safety_thresholds(p, is_safety, lang, 0.3, cfg)
    assert by_lang == {} and report["zh"]["threshold"] == 0.3


def test_calibrate_writes_language_thresholds_only_when_asked() -> None:
    p, is_safety, lang = _two_languages()
    head = HeadDef("decision", ("execute", "ask", "connect", "refuse", "safety"), False)
    z = np.zeros((len(p), 5))
    z[:, 4] = np.log(p / (1 - p)) + np.log(4)  # softmax(z)[safety] == p at temperature 1
    y = np.where(is_safety, 4, 0)
    args = ([head], {"decision": z}, {"decision": y}, {"decision": np.ones(len(y), bool)})
    on = calibrate(*args, CalibrationConfig(), lang)
    assert "zh" in on.thresholds_by_lang["decision"]
    assert "safety_by_language" in on.report
    off = calibrate(*args, CalibrationConfig(per_language=False), lang)
    assert off.thresholds_by_lang == {}
    assert calibrate(*args, CalibrationConfig()).thresholds_by_lang == {}


def test_language_threshold_that_does_not_beat_pooled_is_not_adopted() -> None:
    # No cut is 0.80 precise (a negative scores with the positives): the F2 fallback's
    # lowest tied cut does as well as the pooled 0.5, not better -> pooled stays.
    p = np.array([0.6, 0.6, 0.6, 0.2, 0.2, 0.1] * 5)
    gold = np.array([True, True, False, False, False, False] * 5)
    lang = np.array(["fr"] * len(p))
    cfg = CalibrationConfig(lang_min_positives=5, lang_prior_positives=0)
    assert safety_threshold(p, gold, 0.98, 0.8) < 0.5  # the language's own fit differs
    by_lang, report = language_safety_thresholds(p, gold, lang, 0.5, cfg)
    assert by_lang == {} and report["fr"]["threshold"] == 0.5
