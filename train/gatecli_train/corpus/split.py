"""Dedup, deterministic grouped split and the leakage check.

Groups that share a normalised message are merged (union-find) before hashing, so a sentence
that occurs in two sources cannot land in train and test at once.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from gatecli_train.corpus.records import normalise


class LeakError(RuntimeError):
    """A train message (normalised) also occurs in dev, test or an eval suite."""


def _h(key: str) -> int:
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:12], 16)


def split_of(group: str) -> str:
    """~85/7.5/7.5 by a hash of the group key.

    Example:
        >>> split_of("hwu64:1") in ("train", "dev", "test")
        True
    """
    b = _h(group) % 1000
    return "train" if b < 850 else "dev" if b < 925 else "test"


def dedup_key(rec: dict[str, Any]) -> tuple:
    inp = rec["input"]
    ctx = inp.get("conversation_context")
    ctx_s = normalise(json.dumps(ctx, ensure_ascii=False, sort_keys=True)) if ctx else ""
    return (
        normalise(inp["user_message"]),
        ctx_s,
        tuple(inp.get("connected_accounts", [])),
        tuple(inp.get("available_tools", [])),
    )


def dedup(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Keep the first record (by id) per normalised message + context + accounts."""
    seen: set[tuple] = set()
    out = []
    for r in sorted(records, key=lambda r: r["id"]):
        k = dedup_key(r)
        if k in seen or not k[0]:
            continue
        seen.add(k)
        out.append(r)
    return out, len(records) - len(out)


def assign_splits(records: list[dict[str, Any]]) -> None:
    """Set ``split`` in place: one split per connected component of groups."""
    parent: dict[str, str] = {}

    def find(a: str) -> str:
        while parent.setdefault(a, a) != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    first_group: dict[str, str] = {}
    for r in records:
        g = r["group"]
        find(g)
        m = normalise(r["input"]["user_message"])
        if m in first_group:
            ra, rb = find(first_group[m]), find(g)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
        else:
            first_group[m] = g
    for r in records:
        r["split"] = split_of(find(r["group"]))


def check_leaks(
    corpus: dict[str, list[dict[str, Any]]], evals: dict[str, list[dict[str, Any]]]
) -> None:
    """Raise :class:`LeakError` if a train message appears in dev, test or any eval suite.

    Example:
        >>> check_leaks({"train": [], "dev": [], "test": []}, {})
    """
    train = {normalise(r["input"]["user_message"]) for r in corpus["train"]}
    leaks = []
    held = [(f"corpus/{s}", corpus[s]) for s in ("dev", "test")]
    held += [(f"eval/{k}", v) for k, v in evals.items()]
    for name, recs in held:
        for r in recs:
            if normalise(r["input"]["user_message"]) in train:
                leaks.append(f"{name}:{r['id']}")
    if leaks:
        raise LeakError(f"{len(leaks)} train messages leak into held-out data: {leaks[:10]}")
