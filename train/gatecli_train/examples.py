"""Corpus records -> tokenised training examples with per-head targets and masks.

A head whose label is ``null`` in a record is masked for that record (spec §6), so a
safety set that says nothing about events does not teach "no event". Sampling caps the
big mapped sources per (source, decision) and repeats minority decisions, with a seed.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gatecli.template import serialize
from gatecli_train.model import HeadDef


@dataclass
class Example:
    ids: list[int]
    targets: dict[str, Any]  # int (single) or list[int] 0/1 (multi)
    known: dict[str, bool]
    record: dict[str, Any]


def hash_ids(h: Any, exs: Iterable[Example]) -> None:
    """Feed every example's token ids, in order, to the hashlib object ``h``: the part of the
    teacher-logit cache key and of a checkpoint's fingerprint that says which inputs."""
    for ex in exs:
        h.update(np.asarray(ex.ids, dtype=np.int64).tobytes())
        h.update(b"|")


def sample_train(
    records: list[dict],
    cap: int,
    min_share: float,
    seed: int,
    repeat: Mapping[str, float] | None = None,
    balance: Mapping[str, str] | None = None,
    repeat_variants: Mapping[str, float] | None = None,
) -> list[dict]:
    """Cap each (source, language, decision) cell, repeat the sources named in ``repeat``
    (source -> factor), repeat decisions below ``min_share`` of the largest decision, top
    up each augmentation variant named in ``balance`` to its partner's count
    (:func:`balance_variants`), then repeat the variants named in ``repeat_variants``
    (variant -> factor >= 1, as ``repeat`` does for sources). Deterministic for a seed.

    Why a per-source repeat: a few hundred authored boundary turns (why-shaped questions,
    homonyms, crisis statements) among 61k rows are each seen once in an epoch, which moved
    none of their shapes in a 0.6-epoch continuation (gate-small-tools-1.2.23). A factor of
    2.5 keeps every row twice and half of them, drawn by seed, a third time."""
    rng = random.Random(seed)
    repeat = repeat or {}
    cells: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for r in records:
        key = (r.get("source", "?"), r.get("lang", "?"), str(r["labels"].get("decision")))
        cells[key].append(r)
    if unknown := sorted(set(repeat) - {source for source, _, _ in cells}):
        raise ValueError(f"[data] repeat names sources with no training record: {unknown}")
    kept: list[dict] = []
    for key in sorted(cells):
        rows = cells[key]
        if cap and len(rows) > cap:
            rows = rng.sample(rows, cap)
        kept.extend(_copies(rows, repeat.get(key[0], 1.0), rng))
    by_decision: dict[str, list[dict]] = defaultdict(list)
    for r in kept:
        by_decision[str(r["labels"].get("decision"))].append(r)
    largest = max((len(v) for k, v in by_decision.items() if k != "None"), default=0)
    out = list(kept)
    for dec, rows in sorted(by_decision.items()):
        want = int(largest * min_share)
        if dec != "None" and 0 < len(rows) < want:
            out.extend(rng.choice(rows) for _ in range(want - len(rows)))
    out.extend(balance_variants(records, out, balance or {}, rng))
    out.extend(_repeat_variants(out, repeat_variants or {}, rng))
    rng.shuffle(out)
    return out


def _repeat_variants(
    rows: list[dict], factors: Mapping[str, float], rng: random.Random
) -> list[dict]:
    """Extra copies of each named variant's rows: factor 2.5 adds one copy of every row and
    a second of half of them (drawn by seed); applied after balancing, so a balanced pair
    stays balanced."""
    by: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        if (v := variant(r)) is not None and v in factors:
            by[v].append(r)
    if unknown := sorted(set(factors) - set(by)):
        raise ValueError(f"[data] repeat_variants names variants with no training row: {unknown}")
    return [r for v, factor in sorted(factors.items()) for r in _copies(by[v], factor - 1, rng)]


def _copies(rows: list[dict], factor: float, rng: random.Random) -> list[dict]:
    """``rows`` ``int(factor)`` times, plus a seeded sample of the fraction: 2.5 is every row
    twice and half of them a third time, 0.5 a half."""
    whole, part = int(factor), factor - int(factor)
    out = rows * whole
    if part:
        out.extend(rng.sample(rows, round(len(rows) * part)))
    return out


def variant(record: Mapping[str, Any]) -> str | None:
    """The augmentation rule an augmented record's id names (``augmented:<rule>:<of>``)."""
    rid = str(record.get("id", ""))
    if not rid.startswith("augmented:"):
        return None
    return rid.split(":", 2)[1]


def balance_variants(
    records: list[dict], kept: list[dict], balance: Mapping[str, str], rng: random.Random
) -> list[dict]:
    """Rows to add to ``kept`` so that each variant in ``balance`` is as many as its partner:
    first the variant's rows of ``records`` that the cap left out, then repeats, by seed.

    Why: a tool-list pair (the same request with the tool it needs, ``tools.offered`` ->
    execute, and without it, ``tools.missing`` -> connect) keeps its source's cells, so the
    per-cell cap drops offered variants of the big execute cells while every missing one
    (a small connect cell, then topped up as a minority decision) stays: gate-small 1.2.36
    trained on 1,702 offered against 2,763 missing turns and said ``connect`` on 35% of the
    train turns whose list offers the tool. Only ever adds rows.
    """
    have: dict[str, list[dict]] = defaultdict(list)
    for r in kept:
        if (v := variant(r)) is not None:
            have[v].append(r)
    if unknown := sorted({*balance, *balance.values()} - set(have)):
        raise ValueError(f"[data] balance_variants names variants with no training row: {unknown}")
    extra: list[dict] = []
    for small, big in sorted(balance.items()):
        need = len(have[big]) - len(have[small])
        if need <= 0:
            continue
        seen = {id(r) for r in have[small]}
        left = [r for r in records if variant(r) == small and id(r) not in seen]
        fresh = rng.sample(left, min(need, len(left)))
        extra.extend(fresh)
        pool = have[small] + fresh
        extra.extend(rng.choice(pool) for _ in range(need - len(fresh)))
    return extra


def encode_targets(labels: dict[str, Any], heads: list[HeadDef]) -> tuple[dict, dict]:
    targets: dict[str, Any] = {}
    known: dict[str, bool] = {}
    for h in heads:
        value = labels.get(h.name)
        if value is None:
            known[h.name] = False
            targets[h.name] = [0] * len(h.labels) if h.multilabel else 0
        elif h.multilabel:
            want = set(value)
            known[h.name] = want <= set(h.labels)
            targets[h.name] = [int(lab in want) for lab in h.labels]
        else:
            known[h.name] = value in h.labels
            targets[h.name] = h.labels.index(value) if value in h.labels else 0
    return targets, known


def build_examples(
    records: Iterable[dict], heads: list[HeadDef], tokenizer: Any, template: dict, max_length: int
) -> list[Example]:
    """Serialise with the artifact template (the runtime's exact function) and tokenise."""

    def count(text: str) -> int:
        return len(tokenizer.encode(text).ids)

    out: list[Example] = []
    for r in records:
        text = serialize(r["input"], template, count_tokens=count, max_length=max_length)
        ids = tokenizer.encode(text).ids[:max_length]
        targets, known = encode_targets(r["labels"], heads)
        out.append(Example(ids, targets, known, r))
    return out


def arrays(exs: list[Example], heads: list[HeadDef]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Targets and known-masks of ``exs`` per head, as arrays (what calibration and the
    quick metrics read)."""
    targets = {h.name: np.array([e.targets[h.name] for e in exs]) for h in heads}
    known = {h.name: np.array([e.known[h.name] for e in exs], dtype=bool) for h in heads}
    return targets, known


def batches(
    examples: list[Example],
    batch_size: int,
    heads: list[HeadDef],
    *,
    shuffle: bool,
    seed: int = 0,
    pad_id: int = 1,
) -> Iterator[dict[str, np.ndarray]]:
    """Length-bucketed batches (less padding on CPU): sort within chunks of 50 batches."""
    order = list(range(len(examples)))
    if shuffle:
        random.Random(seed).shuffle(order)
    chunk = batch_size * 50
    groups: list[list[int]] = []
    for start in range(0, len(order), chunk):
        part = sorted(order[start : start + chunk], key=lambda i: len(examples[i].ids))
        groups.extend(part[i : i + batch_size] for i in range(0, len(part), batch_size))
    if shuffle:
        random.Random(seed + 1).shuffle(groups)
    for idx in groups:
        rows = [examples[i] for i in idx]
        width = max(len(r.ids) for r in rows)
        ids = np.full((len(rows), width), pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for j, r in enumerate(rows):
            ids[j, : len(r.ids)] = r.ids
            mask[j, : len(r.ids)] = 1
        batch: dict[str, np.ndarray] = {
            "input_ids": ids,
            "attention_mask": mask,
            "index": np.array(idx),
        }
        for h in heads:
            batch[f"y:{h.name}"] = np.array([r.targets[h.name] for r in rows])
            batch[f"m:{h.name}"] = np.array([r.known[h.name] for r in rows], dtype=bool)
        yield batch


def label_counts(records: Iterable[dict]) -> dict[str, Counter]:
    c: dict[str, Counter] = defaultdict(Counter)
    for r in records:
        lab = r["labels"]
        c["decision"][str(lab.get("decision"))] += 1
        c["lang"][r.get("lang", "?")] += 1
        for head in ("events", "scenario_tags", "missing_slots"):
            for v in lab.get(head) or []:
                c[head][v] += 1
    return c
