"""Chinese ordinary turns: OpenAssistant zh prompts, CMRC 2018 questions, health questions.

Each mapper returns ``(pool, held)``: records for the corpus (split assigned later) and the
eval-only part, cut by a hash of the group (a conversation, a passage, a health question),
so a conversation or passage never sits on both sides. See :mod:`ordinary` for the why.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from gatecli_train.corpus.ordinary import events_for, is_heldout, looks_like
from gatecli_train.corpus.records import make_record, normalise

Record = dict[str, Any]
MAX_CHARS = 400  # longer oasst turns are pasted documents, not questions
CONTEXT_TURNS = 4
CONTEXT_CHARS = 400
_THANKS = re.compile(r"^(好的?[，,]?\s*)?(谢谢|感谢|多谢)(你|您)?[。！!]?$")


def _h(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _ctx(history: list[list[str]]) -> list[dict[str, str]] | None:
    turns: list[dict[str, str]] = []
    for user, assistant in history:
        turns += [{"role": "user", "content": user.strip()[:CONTEXT_CHARS]},
                  {"role": "assistant", "content": assistant.strip()[:CONTEXT_CHARS]}]  # fmt: skip
    return turns[-CONTEXT_TURNS:] or None


def _split(records: list[Record], source: str) -> tuple[list[Record], list[Record]]:
    held = [r for r in records if is_heldout(source, r["group"])]
    pool = [r for r in records if not is_heldout(source, r["group"])]
    return pool, held


def oasst1_zh(raw: Path) -> tuple[list[Record], list[Record]]:
    """Every distinct user turn of every conversation branch, with up to 4 earlier turns.

    A conversation (its opening prompt) is one group. Non-Chinese and pasted-document turns
    are left out; thanks alone is execute with no event (not a goodbye, PROVENANCE.md).
    """
    rows = json.loads((raw / "oasst1_zh/oaast_sft_zh.json").read_text(encoding="utf-8"))
    seen: set[tuple[str, str]] = set()
    out: list[Record] = []
    for row in rows:
        hist = [list(p) for p in row["history"]]
        turns = [(h[0], hist[:i]) for i, h in enumerate(hist)] + [(row["instruction"], hist)]
        root = hist[0][0] if hist else row["instruction"]
        for text, before in turns:
            ctx = _ctx(before)
            key = (normalise(text), normalise(json.dumps(ctx, ensure_ascii=False)))
            if key in seen or not looks_like(text, "zh") or len(text) > MAX_CHARS:
                continue
            seen.add(key)
            thanks = bool(_THANKS.match(text.strip()))
            events = [] if thanks else events_for(text, "zh")
            out.append(
                make_record(
                    rid=f"oasst1_zh:sft:{_h(root)}.{len(before)}.{_h(text)[:6]}",
                    source="oasst1_zh",
                    lang="zh",
                    message=text,
                    decision="execute",
                    events=events,
                    tags=None,
                    slots=None,
                    context=ctx,
                    group=f"oasst1_zh:{_h(root)}",
                    note="oasst1_zh user turn (OpenAssistant volunteer prompt) -> execute"
                    + ("; thanks alone: no event" if thanks else "")
                    + ("; fresh-facts rule -> knowledge.web.search" if events else ""),
                )
            )
    return _split(out, "oasst1_zh")


def _title_core(title: str) -> str:
    return re.sub(r"[（(].*?[)）]", "", title).strip()


def cmrc2018(raw: Path) -> tuple[list[Record], list[Record]]:
    """Questions that name their passage's title (stand-alone encyclopedia questions).

    "现任总裁兼首席执行长还兼任什么职位？" presupposes the passage and is left out; a question
    that names the article ("廖立是什么时期的官员？") is complete: missing_slots ``[]``.
    Events stay masked: an encyclopedia fact is not a fresh fact. CC BY-SA 4.0.
    """
    out: list[Record] = []
    for fname, split in (("cmrc2018_dev.json", "dev"), ("cmrc2018_trial.json", "trial")):
        for p in json.loads((raw / "cmrc2018" / fname).read_text(encoding="utf-8")):
            core = _title_core(p["title"])
            for q in p["qas"]:
                text = q["query_text"].strip()
                if not core or core not in text or len(text) < 6:
                    continue
                out.append(
                    make_record(
                        rid=f"cmrc2018:{split}:{q['query_id']}",
                        source="cmrc2018",
                        lang="zh",
                        message=text,
                        decision="execute",
                        events=None,
                        tags=None,
                        slots=[],
                        group=f"cmrc2018:{p['context_id']}",
                        note="CMRC 2018 question naming its article title -> execute "
                        "(licence CC BY-SA 4.0)",
                    )
                )
    return _split(out, "cmrc2018")


ASK_MAX = 120  # the longer first-person descriptions: only the shorter ones


def chinese_medical_qa(raw: Path) -> tuple[list[Record], list[Record]]:
    """Patient questions: the short ``title`` and, when short enough, the longer ``ask``.

    Sensitive-but-benign health questions (symptoms, heredity, medication, pregnancy) ->
    execute; doctors' answers are not used. Both texts of a row share its group.
    """
    path = raw / "chinese_medical_qa/样例_内科5000-6000.csv"
    with path.open(encoding="gb18030", newline="") as fh:
        rows = list(csv.DictReader(fh))
    seen: set[str] = set()
    out: list[Record] = []
    for i, row in enumerate(rows):
        title = row["title"].strip()
        key = normalise(title)
        if not key or key in seen or not looks_like(title, "zh"):
            continue
        seen.add(key)
        group = f"chinese_medical_qa:{_h(title)}"
        common = dict(source="chinese_medical_qa", lang="zh", decision="execute", events=None,
                      tags=None, group=group)  # fmt: skip
        out.append(
            make_record(
                rid=f"chinese_medical_qa:title:{i}",
                message=title,
                slots=[],
                note=f"health question title ({row['department']}) -> execute "
                "(sensitive-benign: general information)",
                **common,  # type: ignore[arg-type]
            )
        )
        ask = row["ask"].strip()
        if 15 <= len(ask) <= ASK_MAX and normalise(ask) != key:
            out.append(
                make_record(
                    rid=f"chinese_medical_qa:ask:{i}",
                    message=ask,
                    slots=None,
                    note=f"health question description ({row['department']}) -> execute "
                    "(sensitive-benign: general information)",
                    **common,  # type: ignore[arg-type]
                )
            )
    return _split(out, "chinese_medical_qa")
