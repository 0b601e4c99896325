"""The ``context`` eval suite: turns whose earlier turns decide the answer, never trained on.

Sources (scored on decision and events, per language, by
:mod:`gatecli.evaluation.context_views`):

- en: the held-out fifth of the SGD test dialogues (:func:`dialogue.sgd_heldout`);
- zh: the held-out CrossWOZ test dialogues and MultiWOZ-zh ``test`` (eval only upstream);
- fr (and some en/zh): authored held-out dialogues, ``data/suites/context_heldout.jsonl``;
- every language: corpus *test*-split records with earlier turns from the context data
  (authored follow-ups and closings, slot answers, risk-in-context, dialogue turns).

Built after splitting, because a context turn is often short ("thanks", "at 7") and the leak
rule is by message: a turn whose message occurs in the train split is left out of the suite
(rather than the train records being dropped, which would remove every "thanks" from
training). Ids are ``context:<original id>``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gatecli_train.corpus import dialogue, multiwoz_zh
from gatecli_train.corpus.dialogue import sample
from gatecli_train.corpus.records import normalise
from gatecli_train.corpus.split import dedup_key

Record = dict[str, Any]
HELDOUT_FILE = Path("data/suites/context_heldout.jsonl")
CAPS = {"sgd_subset": 700, "crosswoz": 350, "multiwoz_zh": 450}
CONTEXT_SOURCES = {
    "authored:followups", "authored:closings", "authored:ask", "sgd_subset", "crosswoz",
    "multiwoz_zh",
}  # fmt: skip


def _has_context(r: Record) -> bool:
    ctx = r["input"].get("conversation_context")
    return isinstance(ctx, list) and bool(ctx)


def read_heldout(path: Path) -> list[Record]:
    """The authored held-out dialogues (missing file: none)."""
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def suite(raw: Path, records: list[Record], heldout_file: Path | None = None) -> list[Record]:
    """The context suite for a split-assigned corpus (see the module doc).

    Example:
        >>> suite(Path("../shared/datasets"), corpus_records)  # doctest: +SKIP
    """
    held = {
        "sgd_subset": dialogue.sgd_heldout(raw),
        "crosswoz": dialogue.crosswoz_heldout(raw),
        "multiwoz_zh": multiwoz_zh.load_test(raw),
    }
    cands = [r for k, v in held.items() for r in sample(v, CAPS[k], f"context:{k}")]
    cands += read_heldout(heldout_file or HELDOUT_FILE)
    cands += [
        r
        for r in records
        if r["split"] == "test" and _has_context(r) and r["source"] in CONTEXT_SOURCES
    ]
    train = {normalise(r["input"]["user_message"]) for r in records if r["split"] == "train"}
    seen: set[tuple] = set()
    out = []
    for r in sorted(cands, key=lambda r: r["id"]):
        key = dedup_key(r)
        if r["labels"]["decision"] is None or key in seen or key[0] in train:
            continue
        seen.add(key)
        out.append({**r, "id": f"context:{r['id']}", "split": "eval_only"})
    return out
