"""Metric functions over plain Python labels, computed with numpy only.

The runtime ships without scikit-learn, so the few metrics the evaluation needs live here
and are checked against hand-computed cases in ``tests/test_eval.py``. Every function takes
gold and predicted labels already filtered to the turns whose gold label is known (a
``None`` head label means "unknown" and is dropped by the caller, never scored as "none").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

ECE_BINS = 15


def _safe_div(num: float, den: float) -> float:
    return float(num) / float(den) if den else 0.0


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def single_label(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> dict[str, Any]:
    """Accuracy, macro-F1, per-class precision/recall/F1/support and the confusion matrix.

    Macro-F1 averages over the classes that occur in gold: the classes the suite is about.
    A turn predicted as a class the suite has no gold turn of still costs the recall of its
    gold class; it does not add a class of F1 0 to the mean. Averaging over predicted
    classes too (scikit-learn's default) let one turn move a 3-class suite's macro-F1 by
    0.2: ``risk_in_context`` read 0.617 -> 0.835 between gate-small 1.2.0 and 1.2.1 because
    1.2.0 answered ``ask`` on one of 582 turns, while each class's F1 moved by under 0.03.
    ``macro_f1_all`` keeps the old average for comparison with earlier reports.

    Example:
        >>> single_label(["a", "b"], ["a", "a"], ["a", "b"])["macro_f1"]
        0.3333333333333333
        >>> single_label(["a", "a"], ["a", "c"], ["a", "c"])["macro_f1"]
        0.6666666666666666
    """
    labels = list(labels) + sorted({*gold, *pred} - set(labels))
    index = {lab: i for i, lab in enumerate(labels)}
    cm = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for g, p in zip(gold, pred, strict=True):
        cm[index[g], index[p]] += 1
    tp = np.diag(cm)
    per_class: dict[str, dict[str, float]] = {}
    f1s, f1s_all = [], []
    for i, lab in enumerate(labels):
        prec = _safe_div(tp[i], cm[:, i].sum())
        rec = _safe_div(tp[i], cm[i, :].sum())
        f1 = _f1(prec, rec)
        per_class[lab] = {
            "precision": prec, "recall": rec, "f1": f1, "support": int(cm[i, :].sum()),
        }  # fmt: skip
        if cm[i, :].sum():
            f1s.append(f1)
        if cm[i, :].sum() or cm[:, i].sum():
            f1s_all.append(f1)
    return {
        "n": int(cm.sum()),
        "accuracy": _safe_div(tp.sum(), cm.sum()),
        "macro_f1": float(np.mean(f1s)) if f1s else 0.0,
        "macro_f1_all": float(np.mean(f1s_all)) if f1s_all else 0.0,
        "per_class": per_class,
        "labels": labels,
        "confusion": cm.tolist(),
    }


def multi_label(
    gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]], labels: Sequence[str]
) -> dict[str, Any]:
    """Micro/macro F1, recall on turns that have gold labels and the false positive rate.

    ``false_positive_rate`` is the share of turns whose gold set is empty that get at least
    one predicted label: for events, how often the gate acts when it should only answer.
    ``turn_recall`` is the share of gold labels found on turns that have any.
    ``gold_labels`` counts them: the support the release gate's ``min_support`` reads, since
    below 1/tolerance gold labels a single changed label moves micro-F1 past the tolerance.

    Example:
        >>> multi_label([["x"], []], [["x"], ["y"]], ["x", "y"])["false_positive_rate"]
        1.0
    """
    labels = list(labels) + sorted({x for s in [*gold, *pred] for x in s} - set(labels))
    tp = dict.fromkeys(labels, 0)
    fp = dict.fromkeys(labels, 0)
    fn = dict.fromkeys(labels, 0)
    empty = empty_fp = 0
    found = wanted = 0
    exact = 0
    for g, p in zip(gold, pred, strict=True):
        gs, ps = set(g), set(p)
        exact += gs == ps
        for lab in gs & ps:
            tp[lab] += 1
        for lab in ps - gs:
            fp[lab] += 1
        for lab in gs - ps:
            fn[lab] += 1
        if gs:
            wanted += len(gs)
            found += len(gs & ps)
        else:
            empty += 1
            empty_fp += bool(ps)
    TP, FP, FN = sum(tp.values()), sum(fp.values()), sum(fn.values())
    micro_p, micro_r = _safe_div(TP, TP + FP), _safe_div(TP, TP + FN)
    per_label: dict[str, dict[str, float]] = {}
    f1s = []
    for lab in labels:
        prec, rec = _safe_div(tp[lab], tp[lab] + fp[lab]), _safe_div(tp[lab], tp[lab] + fn[lab])
        per_label[lab] = {
            "precision": prec, "recall": rec, "f1": _f1(prec, rec), "support": tp[lab] + fn[lab],
        }  # fmt: skip
        if tp[lab] + fp[lab] + fn[lab]:
            f1s.append(per_label[lab]["f1"])
    n = len(gold)
    return {
        "n": n,
        "micro_precision": micro_p,
        "micro_recall": micro_r,
        "micro_f1": _f1(micro_p, micro_r),
        "macro_f1": float(np.mean(f1s)) if f1s else 0.0,
        "exact_match": _safe_div(exact, n),
        "turn_recall": _safe_div(found, wanted),
        "gold_labels": wanted,
        "n_empty": empty,
        "false_positive_rate": _safe_div(empty_fp, empty),
        "per_label": per_label,
    }


def ece(
    confidence: Sequence[float], correct: Sequence[bool], bins: int = ECE_BINS
) -> dict[str, Any]:
    """Top-label expected calibration error with equal-width bins, plus the reliability bins.

    Example:
        >>> round(ece([0.9, 0.9], [True, False])["ece"], 2)
        0.4
    """
    conf = np.asarray(confidence, dtype=np.float64)
    ok = np.asarray(correct, dtype=np.float64)
    edges = np.linspace(0.0, 1.0, bins + 1)
    # bin k holds (edges[k], edges[k+1]]; confidence 0 goes to the first bin
    idx = np.clip(np.searchsorted(edges, conf, side="left") - 1, 0, bins - 1)
    total, rows = 0.0, []
    for k in range(bins):
        m = idx == k
        cnt = int(m.sum())
        if cnt:
            acc, avg = float(ok[m].mean()), float(conf[m].mean())
            total += cnt / len(conf) * abs(acc - avg)
        else:
            acc = avg = 0.0
        rows.append({"lo": float(edges[k]), "hi": float(edges[k + 1]), "count": cnt,
                     "accuracy": acc, "confidence": avg})  # fmt: skip
    return {"ece": total if len(conf) else 0.0, "bins": rows}


def risk_coverage(
    confidence: Sequence[float], correct: Sequence[bool], points: int = 21
) -> dict[str, Any]:
    """Accuracy of the kept turns when the lowest-confidence share is escalated.

    Example:
        >>> risk_coverage([0.9, 0.2], [True, False], points=3)["accuracy"]
        [0.5, 1.0, 0.0]
    """
    conf = np.asarray(confidence, dtype=np.float64)
    ok = np.asarray(correct, dtype=np.float64)
    order = np.argsort(-conf, kind="stable")  # most confident first
    n = len(conf)
    escalated, accuracy = [], []
    for share in np.linspace(0.0, 1.0, points):
        keep = n - int(round(share * n))
        escalated.append(round(float(share), 4))
        accuracy.append(float(ok[order[:keep]].mean()) if keep else 0.0)
    aurc = float(np.mean([1 - a for a in accuracy[:-1]])) if n else 0.0
    return {"escalated_share": escalated, "accuracy": accuracy, "area_under_risk": aurc}


def auroc(positive: Sequence[float], negative: Sequence[float]) -> float | None:
    """Area under the ROC curve: the chance a positive outranks a negative (ties count half).

    Threshold-free, so two models at different operating points (one refuses more of
    everything) can still be compared on how well they *rank* the boundary.

    Example:
        >>> auroc([0.9, 0.4], [0.4, 0.1])
        0.875
    """
    if not len(positive) or not len(negative):
        return None
    pos = np.asarray(positive, dtype=np.float64)
    neg = np.sort(np.asarray(negative, dtype=np.float64))
    below = np.searchsorted(neg, pos, side="left")
    ties = np.searchsorted(neg, pos, side="right") - below
    return float((below + 0.5 * ties).sum() / (len(pos) * len(neg)))


def average_precision(positive: Sequence[float], negative: Sequence[float]) -> float | None:
    """Area under the precision-recall curve as a step sum, ``sum (R_k - R_{k-1}) P_k`` over
    the distinct scores from high to low (scikit-learn's ``average_precision_score``).

    Why beside :func:`auroc`: safety turns are 3% of a split, and AUROC barely moves when a
    model lets a few of them sink among thousands of benign turns; precision at the recall
    they need does. It says whether a lost safety recall is the calibrated threshold (same
    ranking, another cut) or the ranking (no threshold gets it back at the same precision).

    Example:
        >>> round(average_precision([0.9, 0.4], [0.4, 0.1]), 4)  # 1/2 * 1 + 1/2 * 2/3
        0.8333
    """
    if not len(positive):
        return None
    scores = np.concatenate([np.asarray(positive, np.float64), np.asarray(negative, np.float64)])
    gold = np.concatenate([np.ones(len(positive)), np.zeros(len(negative))])
    order = np.argsort(-scores, kind="mergesort")
    scores, gold = scores[order], gold[order]
    last = np.r_[np.flatnonzero(np.diff(scores)), len(scores) - 1]  # end of each tie block
    tp = np.cumsum(gold)[last]
    precision = tp / (last + 1)
    recall_step = np.diff(np.r_[0.0, tp]) / len(positive)
    return float((recall_step * precision).sum())


def fpr_at_tpr(positive: Sequence[float], negative: Sequence[float], tpr: float) -> float | None:
    """Share of negatives at or above the highest threshold that keeps ``tpr`` of positives.

    The over-refusal a model would have if its threshold were moved until it blocked that
    share of the harmful turns: two models compared at one operating point.

    Example:
        >>> fpr_at_tpr([0.9, 0.8, 0.3], [0.85, 0.5, 0.1], 2 / 3)
        0.3333333333333333
    """
    if not len(positive) or not len(negative):
        return None
    pos = np.sort(np.asarray(positive, dtype=np.float64))[::-1]
    k = max(1, int(np.ceil(tpr * len(pos) - 1e-9)))
    threshold = pos[min(k, len(pos)) - 1]
    return float(np.mean(np.asarray(negative, dtype=np.float64) >= threshold))


def percentiles(values: Sequence[float]) -> dict[str, float]:
    """Latency p50/p90/mean in milliseconds (zeros for an empty list)."""
    if not len(values):
        return {"p50": 0.0, "p90": 0.0, "mean": 0.0}
    arr = np.asarray(values, dtype=np.float64)
    return {"p50": float(np.percentile(arr, 50)), "p90": float(np.percentile(arr, 90)),
            "mean": float(arr.mean())}  # fmt: skip
