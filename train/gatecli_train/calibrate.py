"""Calibration on dev: one temperature per head, one threshold per label.

Temperatures minimise the dev negative log-likelihood (softmax heads) or binary
cross-entropy (sigmoid heads) over a log-spaced grid refined once: a scalar search is
enough and needs no optimiser. Multi-label thresholds maximise per-label F1 on dev within
[floor, ceiling] when the label has enough positive examples. The decision head gets a
``safety`` threshold: the highest probability at which dev safety recall still meets the
target (the policy routes to safety above it even when safety is not the argmax).

With ``languages`` (what :func:`gatecli.langid.detect` says of each dev turn: the runtime
picks thresholds by the same call), the safety threshold is also fitted per language and
shrunk toward the pooled one by the language's number of dev safety turns: a language's
safety turns differ in how sure the model is of them (1.2.1 dev: zh keeps 0.935 recall at
0.80 precision only below 0.1, en tops out at 0.935 whatever the threshold), but a few dozen
positives are a noisy sample, so the pooled fit is the prior.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gatecli import artifact
from gatecli.evaluation.metrics import ece
from gatecli.heads import sigmoid, softmax
from gatecli.langid import detect
from gatecli_train.config import CalibrationConfig
from gatecli_train.examples import Example
from gatecli_train.model import HeadDef


@dataclass
class Calibration:
    temperatures: dict[str, float] = field(default_factory=dict)
    thresholds: dict[str, dict[str, float]] = field(default_factory=dict)
    # head -> language -> label -> threshold, where a language's own fit differs
    thresholds_by_lang: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    report: dict[str, object] = field(default_factory=dict)


def folder_calibration(config: artifact.ModelConfig) -> Calibration:
    """A model folder's temperatures and thresholds (per language too), as
    ``export.write_model_folder`` writes them: what a re-export of the same weights keeps."""
    heads = config.heads.values()
    return Calibration(
        temperatures={h.name: h.temperature for h in heads},
        thresholds={h.name: dict(h.thresholds) for h in heads},
        thresholds_by_lang={h.name: dict(h.thresholds_by_lang) for h in heads},
        report={"kept_from": config.model_id},
    )


def _nll(head: HeadDef, z: np.ndarray, y: np.ndarray, t: float) -> float:
    if head.multilabel:
        p = np.clip(sigmoid(z, t), 1e-7, 1 - 1e-7)
        return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())
    p = softmax(z, t)
    return float(-np.log(np.clip(p[np.arange(len(y)), y], 1e-12, 1)).mean())


def fit_temperature(head: HeadDef, z: np.ndarray, y: np.ndarray) -> float:
    if len(y) == 0:
        return 1.0
    grid = np.exp(np.linspace(np.log(0.25), np.log(8.0), 41))
    best = min(grid, key=lambda t: _nll(head, z, y, t))
    fine = best * np.exp(np.linspace(-0.1, 0.1, 21))
    return float(min(fine, key=lambda t: _nll(head, z, y, t)))


def best_f1_threshold(
    p: np.ndarray, y: np.ndarray, lo: float, hi: float, plateau: float = 0.0
) -> float:
    """The grid threshold in [lo, hi] (steps of 0.02) with the best dev F1; ties go to the
    one closest to 0.5 (least surprising).

    ``plateau`` > 0: the highest threshold whose F1 is within ``plateau`` of the best. Why:
    the F1 curve of a label is flat over a wide range, so its arg-max is noise (over 200
    bootstrap resamples of dev each label's moves with a standard deviation of 0.10, stop
    57), while the held-out turns that name no action are what a low threshold costs:
    the shipped folder refit on the same logits by the arg-max rule failed the release gate
    on event false positives (home_assistant 0.059 -> 0.100, context 0.137 -> 0.163).

    Example:
        >>> p = np.array([0.1, 0.35, 0.45, 0.6, 0.9]); y = np.array([0, 1, 0, 1, 1])
        >>> round(best_f1_threshold(p, y, 0.2, 0.8), 2)  # F1 0.86 up to 0.34
        0.34
        >>> round(best_f1_threshold(p, y, 0.2, 0.8, plateau=0.1), 2)  # 0.80 up to 0.58
        0.58
    """
    grid = np.linspace(lo, hi, int(round((hi - lo) / 0.02)) + 1)
    scores = []
    for t in grid:
        pred = p >= t
        tp = float((pred & (y == 1)).sum())
        prec = tp / max(1.0, float(pred.sum()))
        rec = tp / max(1.0, float((y == 1).sum()))
        scores.append(0.0 if tp == 0 else 2 * prec * rec / (prec + rec))
    best = max(scores)
    if plateau > 0:
        return float(max(t for t, s in zip(grid, scores, strict=True) if s >= best - plateau))
    cands = [t for t, s in zip(grid, scores, strict=True) if s == best]
    return float(min(cands, key=lambda t: abs(t - 0.5)))


def safety_threshold(
    p_safety: np.ndarray, is_safety: np.ndarray, target_recall: float, min_precision: float
) -> float:
    """The safety threshold for the policy's "safety wins above this probability" rule.

    Among thresholds whose dev precision is at least ``min_precision``, the one with the
    highest recall (the highest threshold among equals), stopping at ``target_recall``;
    if none is that precise, the one with the best F2 (recall weighs double). Never above
    0.5: above it, safety wins as the argmax anyway. The first gate-small run used the
    recall target alone and got a threshold of 0.02: 0.90 recall at 0.30 precision on
    test, greetings routed to safety.
    """
    pos = int(is_safety.sum())
    if pos == 0:
        return 0.5
    grid = np.round(np.linspace(0.02, 0.5, 49), 4)
    best_ok: tuple[float, float] | None = None  # (recall, threshold)
    best_f2: tuple[float, float] = (-1.0, 0.5)
    for t in grid:
        pred = p_safety >= t
        tp = float((pred & is_safety).sum())
        prec = tp / max(1.0, float(pred.sum()))
        rec = tp / pos
        f2 = 0.0 if tp == 0 else 5 * prec * rec / (4 * prec + rec)
        if f2 > best_f2[0]:
            best_f2 = (f2, float(t))
        if prec >= min_precision and (best_ok is None or min(rec, target_recall) >= best_ok[0]):
            best_ok = (min(rec, target_recall), float(t))
    return best_ok[1] if best_ok is not None else best_f2[1]


def languages(exs: list[Example]) -> np.ndarray:
    """The language the runtime will see for each example: ``detect`` of its message, not
    the record's ``lang`` label (a code-switched zh turn the runtime reads as en gets en's
    thresholds there, so it is fitted with en's here)."""
    return np.array([detect(e.record["input"]["user_message"]) for e in exs])


def recall_precision(pred: np.ndarray, gold: np.ndarray) -> tuple[float, float]:
    tp = float((pred & gold).sum())
    return tp / max(1.0, float(gold.sum())), tp / max(1.0, float(pred.sum()))


def _rule_score(pred: np.ndarray, gold: np.ndarray, cfg: CalibrationConfig) -> tuple[int, float]:
    """:func:`safety_threshold`'s order on one cut: precise enough first, then recall up to
    the target (precise) or F2 (not precise)."""
    rec, prec = recall_precision(pred, gold)
    if prec >= cfg.safety_min_precision:
        return (1, min(rec, cfg.safety_recall))
    return (0, 0.0 if rec == 0 else 5 * prec * rec / (4 * prec + rec))


def language_safety_thresholds(
    p_safety: np.ndarray,
    is_safety: np.ndarray,
    languages: np.ndarray,
    pooled: float,
    cfg: CalibrationConfig,
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Per-language safety thresholds, each shrunk toward ``pooled``, and a dev report.

    A language with fewer than ``cfg.lang_min_positives`` dev safety turns keeps the pooled
    threshold. Otherwise its own fit ``t`` (same rule as :func:`safety_threshold`) enters as
    ``(n * t + k * pooled) / (n + k)``, ``n`` its safety turns and ``k`` =
    ``cfg.lang_prior_positives``: with 45 positives and k = 30, the language's fit weighs 0.6.
    It is adopted only when it scores better than the pooled threshold on that language's
    dev turns (:func:`_rule_score`); only adopted thresholds are returned.
    """
    out: dict[str, float] = {}
    report: dict[str, dict[str, float]] = {}
    for lang in sorted(set(languages.tolist())):
        m = languages == lang
        n = int(is_safety[m].sum())
        t = pooled
        if n >= cfg.lang_min_positives:
            own = safety_threshold(
                p_safety[m], is_safety[m], cfg.safety_recall, cfg.safety_min_precision
            )
            k = cfg.lang_prior_positives
            shrunk = round((n * own + k * pooled) / (n + k), 4)
            # Adopted only where it beats the pooled threshold on the language's own dev
            # turns by the rule's criterion: 1.2.2's fr fit fell back to F2 and lowered the
            # bar, losing precision (0.75 -> 0.71) for no recall.
            if _rule_score(p_safety[m] >= shrunk, is_safety[m], cfg) > _rule_score(
                p_safety[m] >= pooled, is_safety[m], cfg
            ):
                t = out[str(lang)] = shrunk
        rec, prec = recall_precision(p_safety[m] >= t, is_safety[m])
        rec0, prec0 = recall_precision(p_safety[m] >= pooled, is_safety[m])
        report[str(lang)] = {
            "safety_turns": n, "threshold": t, "recall": round(rec, 4),
            "precision": round(prec, 4), "pooled_recall": round(rec0, 4),
            "pooled_precision": round(prec0, 4),
        }  # fmt: skip
    return out, report


def calibrate(
    heads: list[HeadDef],
    logits: dict[str, np.ndarray],
    targets: dict[str, np.ndarray],
    known: dict[str, np.ndarray],
    cfg: CalibrationConfig,
    languages: np.ndarray | None = None,
) -> Calibration:
    """Fit every head on the dev rows it is known for; ``languages`` (one code per row)
    adds per-language safety thresholds when ``cfg.per_language`` is on."""
    cal = Calibration()
    for h in heads:
        m = known[h.name]
        z, y = logits[h.name][m], targets[h.name][m]
        t = fit_temperature(h, z, y)
        cal.temperatures[h.name] = t
        cal.thresholds[h.name] = {}
        if h.multilabel:
            p = sigmoid(z, t)
            for j, lab in enumerate(h.labels):
                if int(y[:, j].sum()) >= cfg.min_label_support:
                    cal.thresholds[h.name][lab] = round(
                        best_f1_threshold(
                            p[:, j],
                            y[:, j],
                            cfg.threshold_floor,
                            cfg.threshold_ceiling,
                            cfg.threshold_plateau,
                        ),
                        4,
                    )
        elif "safety" in h.labels:
            p = softmax(z, t)
            j = h.labels.index("safety")
            pooled = round(
                safety_threshold(p[:, j], y == j, cfg.safety_recall, cfg.safety_min_precision), 4
            )
            cal.thresholds[h.name]["safety"] = pooled
            cal.report["decision_ece"] = expected_calibration_error(p, y)
            if languages is not None and cfg.per_language:
                by_lang, rep = language_safety_thresholds(
                    p[:, j], y == j, np.asarray(languages)[m], pooled, cfg
                )
                cal.thresholds_by_lang[h.name] = {
                    lang: {"safety": t} for lang, t in by_lang.items()
                }
                cal.report["safety_by_language"] = rep
    return cal


def expected_calibration_error(p: np.ndarray, y: np.ndarray) -> float:
    """Top-label ECE of softmax probabilities ``p`` against class indices ``y`` (the same
    measure as ``gatecli eval``'s ``ece``)."""
    return float(ece(p.max(axis=1), p.argmax(axis=1) == y)["ece"])
