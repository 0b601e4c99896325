"""XPersona French and Chinese small talk: the first speaker's turns of each dialogue.

Both sides of an XPersona dialogue are people chatting (persona chat), so every turn is
``execute`` with no event (spec §2.1: greetings and small talk); an explicit goodbye is
``session.terminate``. The valid file feeds the corpus; the test file (kept out of training by
the datasets README) feeds the eval-only suites. Half of the later turns (by a hash) carry up
to four earlier turns as ``conversation_context``, so the model sees small talk both alone and
in a dialogue.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from gatecli_train.corpus.ordinary import bucket, looks_like
from gatecli_train.corpus.records import make_record

Record = dict[str, Any]
FILES = {"fr": "Fr_persona_split_{}_human_annotated.json",
         "zh": "Zh_persona_split_{}_human_annotated.json"}  # fmt: skip
CONTEXT_SHARE = 0.5
_BYE = {
    "fr": re.compile(r"\b(au revoir|bye|à bientôt|à plus tard|bonne soirée à toi)\b", re.I),
    "zh": re.compile(r"再见|拜拜|回头见"),
}
# A turn that asks for something (a purchase, a recommendation) could be read as a request to
# the assistant: events masked there instead of "none".
_REQUEST = {
    "fr": re.compile(
        r"\b(pouvez-vous|peux-tu|pourriez-vous|pourrais-tu|recommand\w*|conseill\w*)"
        r"\b",
        re.I,
    ),  # fmt: skip
    "zh": re.compile(r"帮我|推荐|能不能给|可以给我"),
}
_GREETING = {
    "fr": re.compile(r"^\W*(salut|bonjour|bonsoir|coucou|hey|hello|allô|yo)\b", re.I),
    "zh": re.compile(r"^\W*(你好|您好|嗨|哈喽|嘿|早上好|晚上好)"),
}
_SECOND_PERSON = {
    "fr": re.compile(r"\b(tu|toi|te|t'|ton|ta|tes|vous|votre|vos)\b|-(tu|vous)\b", re.I),
    "zh": re.compile(r"你|您"),
}


def tidy(text: str, lang: str) -> str:
    """Undo the source's tokenisation: "génial . dans" -> "génial. dans", "很好 。和" -> "很好。和".

    Example:
        >>> tidy("je le fais bien . juste", "fr"), tidy("我很好 。和 我", "zh")
        ('je le fais bien. juste', '我很好。和我')
    """
    if lang == "zh":
        text = re.sub(r"\s*([。，！？、；：…])\s*", r"\1", text)
        text = re.sub(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])", "", text)
        return re.sub(r"([。.])(\s*\1)+", r"\1", text).strip()
    text = re.sub(r"\s+([.,])", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def _labels(text: str, lang: str, has_ctx: bool) -> tuple[list[str] | None, list[str] | None, str]:
    if _BYE[lang].search(text):
        return ["session.terminate"], None, "explicit goodbye -> session.terminate"
    events: list[str] | None = None if _REQUEST[lang].search(text) else []
    why = "small talk" + ("; asks for something: events masked" if events is None else "")
    chat = _GREETING[lang].search(text) or (
        ("?" in text or "？" in text) and _SECOND_PERSON[lang].search(text)
    )
    tags = ["chitchat"] if chat and not has_ctx else None
    return events, tags, why


def xpersona(raw: Path, lang: str) -> tuple[list[Record], list[Record]]:
    """``(pool from valid, held from test)`` for one language (fr or zh)."""
    parts: list[list[Record]] = []
    for fsplit in ("valid", "test"):
        path = raw / "xpersona" / FILES[lang].format(fsplit)
        out: list[Record] = []
        for d, dlg in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            pairs = [(tidy(a, lang), tidy(b, lang)) for a, b in dlg["dialogue"]]
            for i, (text, _) in enumerate(pairs):
                if len(text) < 2 or not looks_like(text, lang):
                    continue
                rid = f"xpersona:{fsplit}:{lang}.{d}.{i}"
                ctx = None
                if i and bucket(f"ctx:{rid}") < CONTEXT_SHARE:
                    ctx = []
                    for a, b in pairs[max(0, i - 2) : i]:
                        ctx += [{"role": "user", "content": a}, {"role": "assistant", "content": b}]
                events, tags, why = _labels(text, lang, ctx is not None)
                out.append(
                    make_record(
                        rid=rid,
                        source="xpersona",
                        lang=lang,
                        message=text,
                        decision="execute",
                        events=events,
                        tags=tags,
                        slots=[],
                        context=ctx,
                        split="eval_only" if fsplit == "test" else None,
                        group=f"xpersona:{fsplit}:{lang}.{d}",
                        note=f"XPersona {fsplit} first-speaker turn -> execute ({why})",
                    )
                )
        parts.append(out)
    return parts[0], parts[1]
