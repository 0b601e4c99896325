"""Inputs and timing helpers for bench.py: synthetic turns, corpus texts, percentiles, TF-IDF.

Synthetic turns are the same for every model in a run (so ratios compare equal text);
corpus texts are read from the §6 JSONL(.gz) files of ``data/``.
"""

from __future__ import annotations

import glob
import gzip
import json
import random
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

# ~20-word turns are cut from these, one language in three (zh counts characters).
SENTENCES = {
    "en": "please turn the volume up a bit and then tell me what the weather will be like "
    "tomorrow morning in Paris because I need to decide whether to take an umbrella",
    "zh": "请把音量调高一点然后告诉我明天早上巴黎的天气怎么样因为我要决定带不带伞",
    "fr": "monte un peu le son puis dis-moi quel temps il fera demain matin à Paris car je "
    "dois décider si je prends un parapluie",
}
WORDS = {k: list(v) if k == "zh" else v.split() for k, v in SENTENCES.items()}


def pct(values: list[float]) -> dict[str, float]:
    a = np.asarray(values, dtype=np.float64)
    return {f"p{q}": round(float(np.percentile(a, q)), 4) for q in (50, 90, 99)}


def make_turns(n: int, *, seed: int = 0, words: int = 20) -> list[dict[str, Any]]:
    """Synthetic en/zh/fr turns of about ``words`` words (characters for zh), no context."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        lang = ("en", "zh", "fr")[i % 3]
        w = WORDS[lang]
        k = max(3, int(rng.gauss(words, words / 4)))
        start = rng.randrange(len(w))
        toks = [w[(start + j) % len(w)] for j in range(k)]
        out.append({"id": f"b{i}", "user_message": ("" if lang == "zh" else " ").join(toks)})
    return out


def turns_of_tokens(gate: Any, n: int, tokens: int, seed: int = 1) -> list[dict[str, Any]]:
    """Turns whose model input is about ``tokens`` tokens long under ``gate``'s own template
    and tokenizer (so two models get different texts of the same length). A model whose
    budget is under ``tokens`` gets turns as long as its template lets through.

    Why the growth check: a template that fits a long message to the budget (head_tail keeps
    its beginning and end around " ... ") never serialises to the budget exactly, so "grow
    until ``tokens``" doubled the text until memory ran out (the smoke folder, 64 tokens).
    """

    def size(msg: str) -> int:
        return len(gate._encode([{"user_message": msg}])[0][0])

    out = []
    for rec in make_turns(n, seed=seed, words=8):
        msg = rec["user_message"]
        have = size(msg)
        while have < tokens:
            msg += " " + msg
            grown = size(msg)
            if grown <= have:  # the template's budget, not the text, sets the length now
                break
            have = grown
        while size(msg) > tokens and len(msg) > 4:
            msg = msg[: max(4, int(len(msg) * 0.95))]
        out.append({"id": rec["id"], "user_message": msg})
    return out


def timed(fn: Callable[[Any], Any], items: list[Any], warmup: int = 20) -> list[float]:
    """Milliseconds per call of ``fn`` on each item, after ``warmup`` untimed calls."""
    for it in items[:warmup]:
        fn(it)
    ms = []
    for it in items:
        t = time.perf_counter()
        fn(it)
        ms.append((time.perf_counter() - t) * 1000.0)
    return ms


def read_records(patterns: list[str]) -> Iterator[dict[str, Any]]:
    """Every record of the JSONL(.gz) files matching ``patterns``, in file order."""
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            opener: Any = gzip.open if path.endswith(".gz") else open
            with opener(path, "rt", encoding="utf-8") as f:
                for line in f:
                    if line.strip():
                        yield json.loads(line)


def sample_inputs(patterns: list[str], n: int, seed: int = 0) -> list[dict[str, Any]]:
    """A seeded sample of ``n`` gate inputs (the ``input`` of each record) from the corpus:
    the files are sorted by source, so the first ``n`` would be one source only."""
    inputs = [r["input"] for r in read_records(patterns) if r.get("input", {}).get("user_message")]
    rng = random.Random(seed)
    return rng.sample(inputs, min(n, len(inputs)))


def tfidf_baseline(corpus: list[str], notes: list[str]) -> Any:
    """TF-IDF(char 1-4)+LogisticRegression on the decision labels of the corpus train rows:
    the latency floor a learned model is compared with. None (with a note) if it cannot."""
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
    except ImportError:
        notes.append("TF-IDF+LR skipped: scikit-learn not installed")
        return None
    texts, labels = [], []
    for rec in read_records(corpus):
        if rec.get("split") in ("eval_only", "test", "dev"):
            continue
        d = (rec.get("labels") or {}).get("decision")
        if d and rec.get("input", {}).get("user_message"):
            texts.append(rec["input"]["user_message"])
            labels.append(d)
    if len(set(labels)) < 2:
        notes.append("TF-IDF+LR skipped: no labeled train turns found (--corpus)")
        return None
    clf = make_pipeline(TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4), min_df=1),
                        LogisticRegression(max_iter=300))  # fmt: skip
    clf.fit(texts, labels)
    notes.append(f"TF-IDF(char 1-4)+LR trained inline on {len(texts)} decision labels")
    return clf
