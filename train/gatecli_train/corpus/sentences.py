"""Sentences of ordinary turns, alone: what the segment rule asks the model about.

Why (2026-12-03): the segment rule (``cli/gatecli/segments.py``) scores every sentence of a
multi-sentence turn on its own, but the model had only ever been trained on whole turns. On
sentences cut out of ordinary text it was confidently wrong: on gate-small 1.2.9 "Il en
boit aussi un avant d'aller se coucher." alone is ``safety`` 0.87 and "Jenna a ramassé deux
fois moins de pommes que sa mère." 0.96, so one sentence of a word problem, a persona chat
or a booking blocked or routed the whole turn (99 of 750 MGSM problems with the turn's
floors). :func:`vary` adds, for *train* turns of ordinary sources whose gold decision is
``execute``, each of their sentences alone (as :func:`gatecli.segments.split_segments` cuts
them), as ``execute``, with the source ``sentence:<the turn's source>`` (so the training
sampler's cap per source and decision applies per origin, not to all sentences at once).

The label rests on one rule: a sentence of an ordinary turn that needs no refusal is not a
reason to refuse either. Only sources of chit-chat, questions and writing requests are used
(:data:`SOURCES`), because a sentence of a task-oriented dialogue ("How about a unisex
one?") may be an ``ask`` on its own, and no source whose turns quote or discuss harm (the
boundary pairs, passages, safety data), where a quoted threat alone *is* risky. Events are
``[]`` when the turn has none (a sentence cannot add an action) and unknown otherwise; tags
and slots are unknown. Each sentence keeps its turn's group, so it stays in its split.
"""

from __future__ import annotations

from typing import Any

from gatecli.segments import split_segments
from gatecli_train.corpus.draws import bottom_k
from gatecli_train.corpus.records import make_record

Record = dict[str, Any]
# Ordinary sources whose execute turns are chit-chat, questions or writing requests.
SOURCES = ("xpersona", "authored:wordproblems", "authored:longreq", "chinese_medical_qa",
           "oasst1_zh", "authored:knowledge", "authored:closings", "piaf", "cmrc2018")  # fmt: skip
# At most this many sentences per language, a seeded sample when there are more.
PER_LANG = 1500


def vary(records: list[Record], seed: int = 13) -> list[Record]:
    """The sentences of train-split ordinary execute turns, alone, labelled ``execute``.

    Example:
        >>> base = {"id": "xpersona:train:1", "source": "xpersona", "lang": "en",
        ...         "split": "train", "group": "g1", "input": {"user_message":
        ...         "I have two cats. Do you like cats?"},
        ...         "labels": {"decision": "execute", "events": []}}
        >>> [(r["source"], r["input"]["user_message"]) for r in vary([base])]
        [('sentence:xpersona', 'I have two cats.'), ('sentence:xpersona', 'Do you like cats?')]
    """
    by_lang: dict[str, list[Record]] = {}
    for r in sorted(records, key=lambda r: r["id"]):
        if (
            r["split"] != "train"
            or r["source"] not in SOURCES
            or r["labels"].get("decision") != "execute"
        ):
            continue
        events: list[str] | None = [] if r["labels"].get("events") == [] else None
        for k, sent in enumerate(split_segments(r["input"].get("user_message", ""))):
            by_lang.setdefault(r["lang"], []).append(
                make_record(
                    rid=f"sentence:train:{r['id']}.{k}",
                    source=f"sentence:{r['source']}",
                    lang=r["lang"],
                    message=sent,
                    decision="execute",
                    events=events,
                    tags=None,
                    slots=None,
                    group=r["group"],
                    split="train",
                    provenance="augmented",
                    note=f"sentence {k + 1} of {r['id']} alone (the segment rule's view): "
                    "a sentence of an ordinary execute turn is no reason to refuse",
                )
            )
    out: list[Record] = []
    for lang in sorted(by_lang):
        rows = by_lang[lang]
        out += rows if len(rows) <= PER_LANG else bottom_k(rows, PER_LANG, f"sentences:{seed}")
    return out
