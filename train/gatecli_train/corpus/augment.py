"""Wrap real requests into capability questions, hypotheticals, follow-ups and multi-intent turns.

Why: the intent sets teach "request -> event"; spec §2.1 needs the same request inside "can
you ...?" or "if I asked you to ..." to be execute with *no* event. Every wrapper has an id; a
hash of it holds out ~25% of wrappers for dev/test only, so dev/test measure unseen phrasings.
"""

from __future__ import annotations

import hashlib
import random
import re
from typing import Any

from gatecli_train.corpus.records import make_record
from gatecli_train.corpus.wrappers import DONE, PER_KIND, W

# Capability wrappers take imperative verb phrases only (hand-check 2026, pattern 1): a
# wh-question or a statement inside "can you …?" is broken text, and "please" makes a request.
_EN_VERB_WORDS = (
    "set turn play wake remind add put find search show check look give get book call order "
    "start stop pause resume skip increase decrease lower raise mute unmute dim brighten switch "
    "make open close cancel delete remove create schedule send read list change adjust shut "
    "activate enable disable update take buy reserve rate recommend tell clean vacuum brew "
    "boost reduce lock unlock snooze reset repeat shuffle go continue clear email text post "
    "tweet save note plan arrange locate navigate display dial begin end mark"
)
_EN_VERBS = frozenset(_EN_VERB_WORDS.split())
_POLITE = re.compile(r"\b(please|pls|plz)\b|s'il (te|vous) pla[iî]t|\bstp\b|请", re.I)
_FR_INF = re.compile(r"^[a-zàâçéèêëîïôûùüÿœ-]+(er|ir|oir)$")
_FR_RE_VERBS = {"mettre", "remettre", "éteindre", "reprendre", "prendre", "faire", "lire", "dire"}
_FR_BAD = re.compile(
    r"\b[ldj]'(?=[^aeéèêiîoôuyhâ])|\b(de|à) (les|le)\b|\bdes les?\b|\b(le|la) [aeéèêiîoôuy]",
    re.I,
)
_ZH_VERB = re.compile(
    r"^(帮我|给我)?(打开|开启|关闭|关掉|关上|关|开|设置|设定|设|调高|调低|调大|调小|调到|调|把|将|"
    r"播放|放|暂停|继续|停止|停|删除|删掉|取消|添加|加|提醒|告诉|查询|查找|查看|查|搜索|找|显示|"
    r"启动|增加|减少|降低|提高|订|预订|叫|切换|跳过|静音|清除|列出|创建|新建|开始|让)"
)
_ZH_QUESTION = re.compile(r"什么|怎么|怎样|吗|呢|多少|几[点个号时]|哪|谁|是否|是不是|有没有|？|\?")
_CJK = r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]"
_ZH_SPACE = re.compile(rf"(?<={_CJK})\s+|\s+(?={_CJK})")


def heldout(wid: str) -> bool:
    """A wrapper is dev/test-only when its id hashes into the last quarter."""
    return int(hashlib.sha256(wid.encode()).hexdigest(), 16) % 4 == 0


def _strip(text: str, lang: str) -> str:
    text = text.strip().rstrip("?.!？。！")
    if lang == "zh":  # xSID zh is tokenised with spaces ("天气 预报 怎么样")
        text = _ZH_SPACE.sub("", text)
    if lang in ("en", "fr") and text[:1].isupper() and not text[:2].isupper():
        text = text[0].lower() + text[1:]
    return text


def imperative(text: str, lang: str) -> bool:
    """A base a capability wrapper may take: an imperative (en, zh) or infinitive (fr) phrase.

    Example:
        >>> imperative("turn on the lights", "en"), imperative("what is the forecast", "en")
        (True, False)
    """
    if _POLITE.search(text) or "?" in text or "？" in text:
        return False
    if lang == "zh":
        return bool(_ZH_VERB.match(text)) and not _ZH_QUESTION.search(text)
    words = text.split()
    if not words or len(words) > 14:
        return False
    if lang == "fr":
        first = words[0].lower()
        return bool(_FR_INF.match(first) or first in _FR_RE_VERBS) and not _FR_BAD.search(text)
    return words[0].lower() in _EN_VERBS


def grammatical(message: str, lang: str) -> bool:
    """Cheap last check on a wrapper's output: no leftover slot brackets, sane length.

    Example:
        >>> grammatical("can you turn on the lights?", "en")
        True
    """
    if re.search(r"[\[\]{}]", message):
        return False
    if lang == "zh":
        return len(message) <= 60 and not re.search(r"[A-Za-z]{3,}", message)
    if lang == "fr" and _FR_BAD.search(message):
        return False
    return len(message.split()) <= 30


def _fr_elide(message: str) -> str:
    """French elision after a template's "de": "de éclairer" -> "d'éclairer"."""
    return re.sub(r"\bde ([aeéèêiîoôuy])", r"d'\1", message)


def _bases(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Plain mapped requests with exactly one account-free event and known tags/slots."""
    out = []
    for r in records:
        lab = r["labels"]
        if (
            r["provenance"] == "mapped"
            and lab["decision"] == "execute"
            and lab["events"]
            and len(lab["events"]) == 1
            and lab["scenario_tags"] == []
            and lab["missing_slots"] == []
            and set(r["input"]) == {"user_message"}
            and r["lang"] in ("en", "fr", "zh")
        ):
            out.append(r)
    return out


def augment(records: list[dict[str, Any]], seed: int = 7) -> list[dict[str, Any]]:
    """Build augmented records from split-assigned bases; each inherits a consistent split."""
    bases = _bases(records)
    out: list[dict[str, Any]] = []
    for kind, by_lang in sorted(W.items()):
        for lang, wrappers in sorted(by_lang.items()):
            pool = sorted((b for b in bases if b["lang"] == lang), key=lambda b: b["id"])
            if kind == "capability":
                pool = [
                    b for b in pool if imperative(_strip(b["input"]["user_message"], lang), lang)
                ]
            rng = random.Random(f"{seed}:{kind}:{lang}")
            for k in range(min(PER_KIND[lang], len(pool))):
                wi = rng.randrange(len(wrappers))
                wid = f"{kind}.{lang}.{wi}"
                hold = heldout(wid)
                cands = [
                    b
                    for b in rng.sample(pool, min(8, len(pool)))
                    if (b["split"] == "train") != hold
                ]
                if not cands:
                    continue
                b = cands[0]
                rec = _wrap(kind, lang, wid, wrappers[wi], b, pool, rng, k)
                if rec is not None:
                    out.append(rec)
    return out


def _wrap(
    kind: str, lang: str, wid: str, tpl: str, b: dict, pool: list, rng: random.Random, k: int
) -> dict[str, Any] | None:
    x = _strip(b["input"]["user_message"], lang)
    ev = b["labels"]["events"]
    common = dict(
        source=b["source"],
        lang=lang,
        provenance="augmented",
        group=b["group"],
        split=b["split"],
        slots=[],
    )
    rid = f"augmented:{wid}:{k}"
    if kind == "capability":
        msg = _fr_elide(tpl.format(x=x)) if lang == "fr" else tpl.format(x=x)
        if not grammatical(msg, lang):
            return None
        return make_record(
            rid=rid,
            message=msg,
            decision="execute",
            events=[],
            tags=["capability_question"],
            note=f"wrapper {wid} on {b['id']}",
            **common,
        )
    if kind == "hypothetical":
        return make_record(
            rid=rid,
            message=tpl.format(x=x),
            decision="execute",
            events=[],
            tags=["hypothetical"],
            note=f"wrapper {wid} on {b['id']}",
            **common,
        )
    same = [
        o
        for o in rng.sample(pool, min(12, len(pool)))
        if o["split"] == b["split"] and o["labels"]["events"] != ev
    ]
    if not same:
        return None
    o = same[0]
    if kind == "follow_up":
        ctx = [
            {"role": "user", "content": o["input"]["user_message"]},
            {"role": "assistant", "content": DONE[lang]},
        ]
        return make_record(
            rid=rid,
            message=tpl.format(x=x),
            decision="execute",
            events=ev,
            tags=["follow_up"],
            context=ctx,
            note=f"wrapper {wid} on {b['id']} after {o['id']}",
            **common,
        )
    y = _strip(o["input"]["user_message"], lang)
    return make_record(
        rid=rid,
        message=tpl.format(x=x, y=y),
        decision="execute",
        events=ev + o["labels"]["events"],
        tags=["multi_intent"],
        note=f"wrapper {wid} joins {b['id']} + {o['id']}",
        **common,
    )
