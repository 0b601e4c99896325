"""Mappers for the intent-classification sources: HWU64, CLINC150, SNIPS, SLURP, xSID.

Only their training/dev portions are read here; their test splits stay out of training
(xSID test becomes an eval suite in :mod:`eval_suites`).
"""

from __future__ import annotations

import csv
import json
import random
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from gatecli_train.corpus import intent_maps as M
from gatecli_train.corpus.label_rules import refine
from gatecli_train.corpus.records import ACCOUNT_FOR_SYSTEM, event_requires, make_record

_SLOT_RE = re.compile(r"\[\s*([a-z_]+)\s*:\s*([^\]]*?)\s*\]")
_FILLER = {"for", "at", "to", "on", "in", "the", "a", "an", "of", "by", "this", "next", "me", "my"}
_BAD_END = {
    "for",
    "at",
    "to",
    "on",
    "in",
    "the",
    "a",
    "an",
    "of",
    "by",
    "my",
    "and",
    "with",
    "from",
    "about",
}


def slot_types(annotation: str) -> set[str]:
    """Slot types in a bracket annotation like ``wake me at [time : seven]``."""
    return {m.group(1) for m in _SLOT_RE.finditer(annotation)}


def remove_slot(annotation: str, types: set[str]) -> str | None:
    """Drop a trailing slot phrase when the rest stays a natural request, else ``None``.

    Conservative on purpose: the removed tail may hold only the slot spans and filler words
    (prepositions, articles), and what remains must have >= 3 words and not end on one.

    Example:
        >>> remove_slot("set an alarm for [time : seven am]", {"time"})
        'set an alarm'
        >>> remove_slot("email [person : john] about lunch", {"person"}) is None
        True
    """
    spans = list(_SLOT_RE.finditer(annotation))
    idx = [i for i, m in enumerate(spans) if m.group(1) in types]
    if not idx:
        return None
    first = spans[idx[0]]
    tail_spans = spans[idx[0] :]
    if any(m.group(1) not in types for m in tail_spans):
        return None
    tail_text = _SLOT_RE.sub(" ", annotation[first.start() :])
    if any(w not in _FILLER for w in tail_text.lower().split()):
        return None
    head = annotation[: first.start()].split()
    while head and head[-1].lower() in _FILLER:
        head.pop()
    if len(head) < 3 or head[-1].lower() in _BAD_END or "[" in " ".join(head):
        return None
    return " ".join(head)


def label_variants(rule: M.Rule, present: dict[str, bool] | None, intent: str) -> list[dict]:
    """Turn one mapping rule into record label sets (original, connect variant, or ask).

    ``present`` maps a required slot to whether the utterance carries it (None: unknown).
    """
    events, mode, tags = rule
    base = f"intent {intent}"
    if mode == "skip":
        return []
    if mode == "mask":
        return [dict(sfx="", d="execute", e=None, t=tags, s=None, note=f"{base}: events unknown")]
    if mode.startswith("ask_"):
        slot = mode[4:]
        return [dict(sfx="", d="ask", e=[], t=tags, s=[slot], note=f"{base}: ask {slot}")]
    if mode == "connect":
        return [dict(sfx="", d="connect", e=[], t=tags, s=[], note=f"{base}: private account")]
    for ev in events:
        if ev in M.REQUIRED_SLOT_TYPES:
            slot = M.REQUIRED_SLOT_TYPES[ev][0]
            if present is not None and present.get(slot) is False:
                note = f"{base} -> {ev} but no {slot} in the utterance: ask"
                return [dict(sfx="", d="ask", e=[], t=tags, s=[slot], note=note)]
    systems = sorted({s for ev in events for s in event_requires(ev)})
    if not systems:
        return [dict(sfx="", d="execute", e=events, t=tags, s=[], note=f"{base} -> {events}")]
    accounts = [ACCOUNT_FOR_SYSTEM[s] for s in systems]
    ctags = sorted(set(tags or []) | {"private_data"})
    return [
        dict(
            sfx="",
            d="execute",
            e=events,
            t=ctags,
            s=[],
            acc=accounts,
            note=f"{base} -> {events}; {accounts} connected",
        ),
        dict(
            sfx="-connect",
            d="connect",
            e=events,
            t=ctags,
            s=[],
            note=f"{base} -> {events}; no {systems} account connected: connect",
        ),
    ]


def _refined(
    intent: str, text: str, types: set[str] | None, rule: M.Rule, lang: str = "en"
) -> tuple[M.Rule | None, str]:
    """:func:`label_rules.refine` on the cleaned text; ``why`` goes into the record note."""
    new, why = refine(intent, " ".join(text.split()), types, rule, lang)
    return new, f"; {why}" if why else ""


def _noted(variants: list[dict], why: str) -> list[dict]:
    for v in variants:
        v["note"] += why
    return variants


def _emit(
    out: list,
    source: str,
    split: str,
    n: int | str,
    lang: str,
    text: str,
    group: str,
    variants: list[dict],
) -> None:
    for v in variants:
        out.append(
            make_record(
                rid=f"{source}:{split}:{n}{v['sfx']}",
                source=source,
                lang=lang,
                message=text,
                decision=v["d"],
                events=v["e"],
                tags=v["t"],
                slots=v["s"],
                note=v["note"],
                group=group,
                accounts=v.get("acc"),
            )
        )


def _annotated(
    out: list,
    source: str,
    split: str,
    n: int | str,
    lang: str,
    text: str,
    ann: str,
    intent: str,
    group: str,
) -> None:
    """Label an utterance with bracket slots; also derive slot-removal ask variants."""
    types = slot_types(ann)
    rule, why = _refined(intent, text, types, M.HWU_SLURP.get(intent, ([], "skip", None)))
    if rule is None:
        return
    present = {slot: bool(types & ts) for slot, ts in M.REQUIRED_SLOT_TYPES.values()}
    _emit(
        out, source, split, n, lang, text, group, _noted(label_variants(rule, present, intent), why)
    )
    for ev in rule[0]:
        if ev in M.REQUIRED_SLOT_TYPES and rule[1] == "execute":
            slot, ts = M.REQUIRED_SLOT_TYPES[ev]
            if types & ts:
                reduced = remove_slot(ann, ts)
                if reduced:
                    note = f"intent {intent} -> {ev}; {slot} span removed: ask"
                    _emit(
                        out,
                        source,
                        split,
                        n,
                        lang,
                        reduced,
                        group,
                        [dict(sfx="-noslot", d="ask", e=[], t=rule[2], s=[slot], note=note)],
                    )


def load_hwu64(raw: Path) -> list[dict[str, Any]]:
    out: list[dict] = []
    files = sorted((raw / "hwu64/KFold_1/trainset").glob("*.csv"))
    for f in files:
        with f.open(encoding="utf-8") as fh:
            for i, row in enumerate(csv.DictReader(fh, delimiter=";")):
                intent = f"{row['scenario']}_{row['intent']}"
                n = f"{f.stem}.{i}"
                _annotated(
                    out,
                    "hwu64",
                    "train",
                    n,
                    "en",
                    row["answer_from_anno"],
                    row["answer_annotation"],
                    intent,
                    f"hwu64:{n}",
                )
    return out


def load_slurp(raw: Path) -> list[dict[str, Any]]:
    out: list[dict] = []
    with (raw / "slurp/slurp/devel.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            n = row["slurp_id"]
            _annotated(
                out,
                "slurp",
                "devel",
                n,
                "en",
                row["sentence"],
                row["sentence_annotation"],
                row["intent"],
                f"slurp:{n}",
            )
    return out


def _cap(items: list, cap: int | None, seed: str) -> list:
    if cap is None or len(items) <= cap:
        return items
    return sorted(random.Random(seed).sample(items, cap), key=items.index)


def load_clinc(raw: Path, per_intent: int = 60) -> list[dict[str, Any]]:
    data = json.loads((raw / "clinc150_oos/data/data_full.json").read_text(encoding="utf-8"))
    by_intent: dict[str, list] = defaultdict(list)
    for split in ("train", "oos_train", "oos_val"):
        for i, (text, intent) in enumerate(data[split]):
            by_intent[intent].append((split, i, text))
    out: list[dict] = []
    for intent in sorted(by_intent):
        if intent in M.CLINC_SKIP:
            continue
        for split, i, text in _cap(by_intent[intent], per_intent, f"clinc:{intent}"):
            rule, why = _refined(intent, text, None, M.CLINC.get(intent, ([], "execute", [])))
            if rule is None:
                continue
            present = {"time": bool(M.TIME_RE.search(text)), "place": bool(M.PLACE_RE.search(text))}
            _emit(
                out,
                "clinc150_oos",
                split,
                i,
                "en",
                text,
                f"clinc:{split}:{i}",
                _noted(label_variants(rule, present, intent), why),
            )
    return out


def load_snips(raw: Path, per_intent: int = 700) -> list[dict[str, Any]]:
    out: list[dict] = []
    for intent in sorted(M.SNIPS):
        f = raw / f"snips_2017/{intent}/train_{intent}_full.json"
        blob = f.read_bytes()
        try:
            rows = json.loads(blob.decode("utf-8"))[intent]
        except UnicodeDecodeError:  # a few SNIPS files are Latin-1
            rows = json.loads(blob.decode("latin-1"))[intent]
        indexed = list(enumerate(rows))
        for i, row in _cap(indexed, per_intent, f"snips:{intent}"):
            text = "".join(p["text"] for p in row["data"])
            rule, why = _refined(intent, text, None, M.SNIPS[intent])
            if rule is None:
                continue
            _emit(
                out,
                "snips_2017",
                "train",
                f"{intent}.{i}",
                "en",
                text,
                f"snips:{intent}:{i}",
                _noted(label_variants(rule, None, intent), why),
            )
    return out
