"""Keyword screen over the ordinary sources, and the verdicts of the hand check of its flags.

Why: ordinary-question sets are not curated for safety; a rare harmful or crisis prompt
("可以教我怎么肉搜他吗", "我爷爷突然摔倒了，没有意识了") must not enter the corpus as ``execute``.
A cheap, over-inclusive keyword screen (harm and crisis words in en, zh, fr) flags candidates;
every flagged text was read by hand and its verdict is in :data:`REVIEW`: ``keep`` (benign
use of the word: "杀毒软件", "tuer le temps", history questions), ``drop`` (ambiguous or not
an ordinary turn) or a relabel to ``refuse`` / ``safety``. A flagged text without a verdict is
dropped (never silently kept), and the tests require that none is left unreviewed on the
real files. :data:`REVIEW` also holds verdicts for a few texts the screen does not flag but
the hand check of oasst1_zh found (underspecified requests, a prompt-injection turn).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from gatecli_train.corpus.ordinary_review import REVIEW
from gatecli_train.corpus.records import normalise

# Over-inclusive on purpose: a flag only asks for a human look.
PATTERNS = {
    "en": re.compile(
        r"\b(kill\w*|murder\w*|suicid\w*|self[- ]harm|cut(ting)? myself|hurt(ing)? myself"
        r"|end (my|it) (life|all)|want to die|overdos\w*|bomb\w*|explosive\w*|guns?|firearms?"
        r"|rifles?|weapons?|shoot\w*|stab\w*|poison\w*|drugs?|cocaine|heroin|meth|fentanyl"
        r"|hack\w*|malware|ransomware|phishing|steal\w*|porn\w*|nudes?|rape\w*|sex\w*"
        r"|terror\w*|genocide|nazis?|racis\w*|slurs?|abus\w*|fraud\w*|scam\w*|launder\w*"
        r"|dox\w*|stalk\w*|spy on|unconscious|not breathing|bleeding|radioactive|nuclear|uranium"
        r"|plutonium|isotopes?|bypass\w*|cheat\w*|fake id|smuggl\w*|surveil\w*|emergenc\w*"
        r"|injur\w*|chest pain)\b",
        re.I,
    ),
    "zh": re.compile(
        r"杀|自残|割腕|跳楼|轻生|想死|去死|不想活|活不下去|结束生命|了结|安眠药|绝望|炸弹|炸药"
        r"|爆炸物|枪|武器|捅|投毒|下毒|毒药|毒品|吸毒|冰毒|大麻|海洛因|黑客|入侵|破解|木马"
        r"|盗号|钓鱼网站|色情|裸照|强奸|性侵|恐怖|屠杀|诈骗|骗钱|洗钱|偷拍|窃听|人肉|肉搜"
        r"|跟踪|赌博|报复|虐待|家暴|绑架|昏迷|没有意识|不省人事|晕倒|抽搐|喘不上气|呼吸困难"
        r"|大出血|休克|心脏骤停|吞了|误服|服毒|核武|放射性|铀|钚|翻墙|绕过|审查|作弊|代考|假证"
        r"|走私|盗取|偷看|监控|定位他|定位她|弄死|做掉|毒死|急救|受伤|流血|救命|胸口剧痛"
    ),
    "fr": re.compile(
        r"\b(tu(er|é|ée|és|ées|ait|ent|e)|meurtr\w*|assassin\w*|suicid\w*|me faire du mal"
        r"|mutil\w*|scarifi\w*|en finir|mourir|bombes?|explosi\w*|armes?|fusils?|pistolets?"
        r"|poignard\w*|poison\w*|empoisonn\w*|drogu\w*|cocaïne|héroïne|cannabis|pirat\w*"
        r"|hack\w*|malware|rançongiciel|hameçonnage|vol(er|é|ée)|porno\w*|viol(s|er|é|ée)?"
        r"|sexe|sexuel\w*|terroris\w*|génocide|nazis?|racis\w*|escroqu\w*|arnaqu\w*|fraud\w*"
        r"|blanchi\w*|harcel\w*|espionn\w*|traqu\w*|inconscient|saign\w*|radioacti\w*"
        r"|radio-?isotope\w*|nucléaire\w*|uranium|plutonium|contourn\w*|trich\w*|faux papiers"
        r"|contrebande|surveill\w*|localiser|bless(é|e|és|ée|ées|er|ure|ures)|urgences?"
        r"|douleurs? (à|a) la poitrine|au niveau de la poitrine)\b",
        re.I,
    ),
}


def flags(text: str, lang: str) -> list[str]:
    """The screen words found in a text (empty: not flagged).

    Example:
        >>> flags("怎么下载杀毒软件", "zh"), flags("quel temps demain", "fr")
        (['杀'], [])
    """
    pat = PATTERNS.get(lang)
    if pat is None:
        return []
    return sorted({m.group(0).lower() for m in pat.finditer(text)})


MIN_PREFIX = 8  # a shorter key must match the whole normalised text


def _index() -> dict[str, list[tuple[str, tuple[str, str]]]]:
    idx: dict[str, list[tuple[str, tuple[str, str]]]] = {}
    for raw_prefix, v in REVIEW.items():
        prefix = normalise(raw_prefix)
        idx.setdefault(prefix[:4], []).append((prefix, v))
    return idx


_INDEX: dict[str, list[tuple[str, tuple[str, str]]]] = {}


def verdict(rec: dict[str, Any]) -> tuple[str, str] | None:
    """The hand-check verdict for a record, if any (prefix match on the normalised text).

    Example:
        >>> verdict({"input": {"user_message": "我爷爷突然摔倒了，没有意识了，我该怎么办？"}})[0]
        'safety'
    """
    if not _INDEX:
        _INDEX.update(_index())
    key = normalise(rec["input"]["user_message"])
    for prefix, v in _INDEX.get(key[:4], ()):
        if key == prefix or (len(prefix) >= MIN_PREFIX and key.startswith(prefix)):
            return v
    return None


def screen(
    records: list[dict[str, Any]], stats: Counter[str] | None = None
) -> list[dict[str, Any]]:
    """Apply the screen and the verdicts; returns the kept (maybe relabelled) records.

    ``stats`` (if given) counts ``flagged``, ``kept``, ``dropped``, ``relabelled``,
    ``unreviewed`` (flagged, no verdict: dropped) and ``reviewed_unflagged``.

    Example:
        >>> screen([])
        []
    """
    stats = Counter() if stats is None else stats
    out = []
    for r in records:
        words = flags(r["input"]["user_message"], r["lang"])
        v = verdict(r)
        if words:
            stats["flagged"] += 1
        elif v is not None:
            stats["reviewed_unflagged"] += 1
        if v is None:
            if words:
                stats["unreviewed"] += 1
                stats["dropped"] += 1
            else:
                out.append(r)
            continue
        action, why = v
        if action == "drop":
            stats["dropped"] += 1
            continue
        if action in ("refuse", "safety"):
            stats["relabelled"] += 1
            r["labels"] = {"decision": action, "events": [], "scenario_tags": [],
                           "missing_slots": []}  # fmt: skip
            r["note"] = f"{r['note']}; hand check: relabelled {action} ({why})"
        else:
            stats["kept"] += 1
            if words:
                r["note"] = f"{r['note']}; screen flagged {'/'.join(words)}, hand check: {why}"
        out.append(r)
    return out


def unreviewed(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Flagged records that have no verdict (the hand check must leave none)."""
    return [
        r for r in records if flags(r["input"]["user_message"], r["lang"]) and verdict(r) is None
    ]
