"""French ordinary turns: PIAF questions (training and held out) and oasst1 fr (eval only).

PIAF questions were written against a Wikipedia paragraph; many presuppose it ("Que
proposent-ils ?", "Quel nom porte cette pratique ?"). Only questions that stand alone are
used: they name the article, or they carry a proper noun or a year and neither open on a bare
pronoun nor point at "ce/cette/ces" something.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from gatecli_train.corpus.ordinary import events_for, is_heldout, looks_like
from gatecli_train.corpus.records import make_record, normalise

Record = dict[str, Any]
_DEICTIC = re.compile(
    r"\b(ce|cet|cette|ces|celui|celle|ceux|celles|ci-dessus|ledit|ladite)\b"
    r"|^\s*(il|elle|ils|elles|on|lui|leur)\b|-t-(il|elle|ils|elles)\b(?!.*[A-Z])"
    r"|\b(le texte|le paragraphe|l'article|l'auteur|ce dernier)\b",
    re.I,
)
_PROPER = re.compile(r"(?<!^)(?<![.?!]\s)\b[A-ZÀ-Ý][a-zà-ÿ]{2,}|\b1\d{3}\b|\b20\d{2}\b")


def _core(title: str) -> str:
    title = re.sub(r"<[^>]+>", "", title)
    return re.sub(r"\s*\(.*?\)", "", title.replace("_", " ")).strip()


def standalone(question: str, title: str) -> tuple[bool, bool]:
    """``(usable, names_title)`` for a PIAF question.

    Example:
        >>> standalone("A quelle altitude se situe Minneapolis ?", "Minneapolis")
        (True, True)
        >>> standalone("Que proposent-ils?", "France")
        (False, False)
    """
    core = _core(title).lower()
    names = bool(core) and core in question.lower()
    if _DEICTIC.search(question) and not names:
        return False, False
    return names or bool(_PROPER.search(question.strip())), names


def piaf(raw: Path) -> tuple[list[Record], list[Record]]:
    """Stand-alone PIAF questions -> execute; an article (title) is one group."""
    data = json.loads((raw / "piaf/piaf-v1.0.json").read_text(encoding="utf-8"))
    seen: set[str] = set()
    out: list[Record] = []
    for art in data["data"]:
        for para in art["paragraphs"]:
            for q in para["qas"]:
                text = q["question"].strip()
                ok, names = standalone(text, art["title"])
                key = normalise(text)
                if not ok or key in seen or len(text) < 8 or not looks_like(text, "fr"):
                    continue
                seen.add(key)
                out.append(
                    make_record(
                        rid=f"piaf:v1:{q['id']}",
                        source="piaf",
                        lang="fr",
                        message=text,
                        decision="execute",
                        events=None,
                        tags=None,
                        slots=[] if names else None,
                        group=f"piaf:{_core(art['title'])}",
                        note="PIAF question that stands alone -> execute"
                        + ("" if names else " (names no article title: slots masked)"),
                    )
                )
    held = [r for r in out if is_heldout("piaf", r["group"])]
    return [r for r in out if not is_heldout("piaf", r["group"])], held


def oasst1_fr(raw: Path) -> list[Record]:
    """Every oasst1 fr user turn with up to 4 earlier turns -> execute; EVAL ONLY.

    The file sits under Vigogne's CC BY-NC 4.0 DATA_LICENSE (PROVENANCE.md), so it is an
    eval suite and never training data until it is re-derived from oasst1 itself.
    """
    out: list[Record] = []
    path = raw / "oasst1_fr/oasst_20230412_fr_top1.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        conv = json.loads(line)
        msgs = conv["messages"]
        for i, m in enumerate(msgs):
            if m["role"] != "user" or not looks_like(m["content"], "fr"):
                continue
            ctx = [{"role": x["role"], "content": x["content"].strip()[:400]} for x in msgs[:i]]
            text = m["content"]
            out.append(
                make_record(
                    rid=f"oasst1_fr:top1:{conv['id']}.{i}",
                    source="oasst1_fr",
                    lang="fr",
                    message=text,
                    decision="execute",
                    events=events_for(text, "fr"),
                    tags=None,
                    slots=None,
                    context=ctx[-4:] or None,
                    split="eval_only",
                    group=f"oasst1_fr:{conv['id']}",
                    note="oasst1 fr user turn -> execute (eval only: CC BY-NC 4.0 packaging)",
                )
            )
    return out
