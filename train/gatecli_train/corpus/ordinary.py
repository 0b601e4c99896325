"""Ordinary questions and chit-chat in zh, fr and en: the turns a gate must simply answer.

Why: the Chinese ``refuse`` turns of the corpus are mostly question-shaped while its Chinese
``execute`` turns are travel dialogues and device commands, so the model learnt "a Chinese
question is a refusal" (issue 13). These sources add real users' ordinary questions and small
talk (OpenAssistant zh, CMRC 2018, Chinese health questions, PIAF, XPersona fr/zh), all
``execute``. Each source is cut in two by a hash of its group: a held-out part that becomes the
eval-only suites ``ordinary_zh`` / ``ordinary_fr`` and a pool from which a bounded,
deterministic sample goes to the corpus (the model trains on two CPU cores). Everything mapped
goes through the keyword screen of :mod:`ordinary_screen` first.

The mappers live in :mod:`ordinary_zh`, :mod:`ordinary_fr`, :mod:`ordinary_chat` and
:mod:`ordinary_en`; this module holds what they share and the two entry points the build
uses: :func:`loaders` (training pools) and :func:`suites` (eval-only suites).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gatecli_train.corpus.ordinary_screen import screen
from gatecli_train.corpus.records import normalise

SEARCH = "knowledge.web.search"
Record = dict[str, Any]
# Training turns per source (after the screen and the hold-out); zh ~2,450, fr ~2,200 in all.
PER_SOURCE = {
    "oasst1_zh": 560,
    "cmrc2018": 650,
    "chinese_medical_qa": 650,
    "xpersona.zh": 650,
    "piaf": 1100,
    "xpersona.fr": 1100,
}
# Share of each source's groups held out for the eval-only suites (xpersona: its test file).
HELDOUT_SHARE = {"oasst1_zh": 0.15, "cmrc2018": 0.05, "chinese_medical_qa": 0.02, "piaf": 0.12}
SUITE_CAP = {"oasst1_zh": 100, "cmrc2018": 120, "chinese_medical_qa": 120, "piaf": 220}


def bucket(key: str) -> float:
    """A stable number in [0, 1) from a key: the same key always lands on the same side.

    Example:
        >>> 0.0 <= bucket("piaf:Paris") < 1.0
        True
    """
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:12], 16) % 100_000 / 100_000


def is_heldout(source: str, group: str) -> bool:
    """True when a group of ``source`` belongs to the eval-only part."""
    return bucket(f"heldout:{group}") < HELDOUT_SHARE[source]


def sample(records: list[Record], n: int, seed: str) -> list[Record]:
    """The ``n`` records with the smallest hash of (seed, id): deterministic, order-free.

    Example:
        >>> len(sample([{"id": str(i)} for i in range(10)], 3, "s"))
        3
    """
    return sorted(records, key=lambda r: bucket(f"{seed}:{r['id']}"))[:n]


# Fresh facts (spec §2.2 knowledge.web.search: weather, news, stocks, exchange rates, traffic):
# a query word next to a thing that changes by the day. A hypothetical ("假设今天17度") or
# small talk about the weather ("今天天气不错") has no query word and stays masked.
_FRESH = {
    "zh": re.compile(
        r"(查一?下|查询|搜一?下|帮我查).{0,12}(天气|气温|航班|机票|火车票|新闻|股价|汇率)"
        r"|(天气|气温|温度)(怎么样|咋样|如何|预报|多少度)|天气预报"
        r"|(今天|今日|明天|最新|现在|当前|目前)的?.{0,2}(新闻|股价|汇率|油价|金价|比分)"
        r"|现任.{0,8}(总统|总理|主席|首相)"
    ),
    "fr": re.compile(
        r"\bquel temps (fait-il|il fait|va-t-il faire|fera-t-il)\b"
        r"|\b(météo|prévisions?)\b.{0,30}\b(aujourd'hui|demain|ce week-end|ce soir)\b"
        r"|\b(cours|taux de change|prix) (actuel|du jour|aujourd'hui)"
        r"|\b(dernières nouvelles|actualités? du jour)\b",
        re.I,
    ),
    "en": re.compile(
        r"\b(weather|forecast)\b.{0,30}\b(today|tomorrow|tonight|this week)\b"
        r"|\b(latest|today's) (news|headlines)\b|\bstock price\b|\bexchange rate\b",
        re.I,
    ),
}
_HYPOTHETICAL = re.compile(r"假设|如果|假如|\bsi\b|\bsuppose|\bif\b", re.I)


def fresh_facts(text: str, lang: str) -> bool:
    """The knowledge-search rule: a query for something that changes by the day.

    Example:
        >>> fresh_facts("查一下纽约今天的天气", "zh"), fresh_facts("今天天气不错", "zh")
        (True, False)
    """
    pat = _FRESH.get(lang)
    return bool(pat and pat.search(text)) and not _HYPOTHETICAL.search(text)


def events_for(text: str, lang: str) -> list[str] | None:
    """``[knowledge.web.search]`` for a fresh-facts query, else masked (``None``)."""
    return [SEARCH] if fresh_facts(text, lang) else None


_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-zÀ-ÿ]{2,}")


def looks_like(text: str, lang: str) -> bool:
    """A cheap language check: a zh turn has Han characters, an en/fr turn none.

    Example:
        >>> looks_like("Guten Morgen!", "zh"), looks_like("你好", "zh")
        (False, True)
    """
    if lang == "zh":
        return bool(_CJK.search(text))
    return not _CJK.search(text) and bool(_LATIN_WORD.search(text))


def loaders() -> dict[str, Callable[[Path], list[Record]]]:
    """Training pools by source name, for ``build.loaders()``."""
    from gatecli_train.corpus import ordinary_chat, ordinary_fr, ordinary_zh

    return {
        "oasst1_zh": lambda raw: _pool(ordinary_zh.oasst1_zh(raw), "oasst1_zh"),
        "cmrc2018": lambda raw: _pool(ordinary_zh.cmrc2018(raw), "cmrc2018"),
        "chinese_medical_qa": lambda raw: _pool(
            ordinary_zh.chinese_medical_qa(raw), "chinese_medical_qa"
        ),
        "piaf": lambda raw: _pool(ordinary_fr.piaf(raw), "piaf"),
        "xpersona": lambda raw: (
            _pool(ordinary_chat.xpersona(raw, "zh"), "xpersona.zh")
            + _pool(ordinary_chat.xpersona(raw, "fr"), "xpersona.fr")
        ),
    }


def _pool(parts: tuple[list[Record], list[Record]], name: str) -> list[Record]:
    """The training sample; a text that also occurs on the held-out side ("谢谢。", "salut !
    ça va ?") stays out, so the eval-only suites never lose a turn to the build's leak filter."""
    pool, held = parts
    held_msgs = {normalise(r["input"]["user_message"]) for r in held}
    pool = [r for r in pool if normalise(r["input"]["user_message"]) not in held_msgs]
    return sample(screen(pool), PER_SOURCE[name], f"pool:{name}")


def _held(parts: tuple[list[Record], list[Record]], name: str, cap: int) -> list[Record]:
    _, held = parts
    out = sample(screen(held), cap, f"held:{name}")
    for r in out:
        r["split"] = "eval_only"
    return out


def suites(raw: Path) -> dict[str, list[Record]]:
    """The eval-only suites of issue 13 by name (files ``data/eval/<name>.jsonl.gz``)."""
    from gatecli_train.corpus import ordinary_chat, ordinary_en, ordinary_fr, ordinary_zh

    zh = (
        _held(ordinary_zh.oasst1_zh(raw), "oasst1_zh", SUITE_CAP["oasst1_zh"])
        + _held(ordinary_zh.cmrc2018(raw), "cmrc2018", SUITE_CAP["cmrc2018"])
        + _held(
            ordinary_zh.chinese_medical_qa(raw),
            "chinese_medical_qa",
            SUITE_CAP["chinese_medical_qa"],
        )
        + _held(ordinary_chat.xpersona(raw, "zh"), "xpersona.zh", 120)
    )
    fr = _held(ordinary_fr.piaf(raw), "piaf", SUITE_CAP["piaf"]) + _held(
        ordinary_chat.xpersona(raw, "fr"), "xpersona.fr", 220
    )
    return {
        "ordinary_zh": zh,
        "ordinary_fr": fr,
        "ordinary_en": screen(ordinary_en.ordinary_en(raw)),
        "oasst1_fr": screen(ordinary_fr.oasst1_fr(raw)),
        "mgsm": screen(ordinary_en.mgsm(raw)),
    }
