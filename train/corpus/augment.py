"""Wrap real requests into capability questions, hypotheticals, follow-ups and multi-intent turns.

Why: the intent sets teach "request -> event"; spec §2.1 needs the same request inside "can
you ...?" or "if I asked you to ..." to be execute with *no* event. Every wrapper has an id; a
hash of it holds out ~25% of wrappers for dev/test only, so dev/test measure unseen phrasings.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from gatecli.train.corpus.records import make_record

W: dict[str, dict[str, list[str]]] = {
    "capability": {
        "en": [
            "can you {x}?",
            "could you {x}?",
            "are you able to {x}?",
            "is it possible for you to {x}?",
            "do you know how to {x}?",
            "can you actually {x}?",
            "would you be able to {x}?",
            "is {x} something you can do?",
            "are you capable of doing this: {x}?",
            "do you have the ability to {x}?",
            "just wondering, can you {x}?",
            "quick question: could you {x} if I wanted?",
            "is this assistant able to {x}?",
            "do you support requests like '{x}'?",
            "can this thing {x}?",
            "out of curiosity, are you able to {x}?",
            "could you ever {x}?",
            "does it work if I say '{x}'?",
        ],
        "fr": [
            "tu sais {x} ?",
            "tu peux {x} ?",
            "est-ce que tu peux {x} ?",
            "es-tu capable de {x} ?",
            "tu es capable de faire ça : {x} ?",
            "c'est possible pour toi de {x} ?",
            "est-ce que tu sais faire ça : {x} ?",
            "tu pourrais {x} ?",
            "sais-tu faire « {x} » ?",
            "est-il possible de te demander « {x} » ?",
            "juste pour savoir, tu peux {x} ?",
            "tu gères les demandes comme « {x} » ?",
            "est-ce que cet assistant peut {x} ?",
            "par curiosité, tu saurais {x} ?",
            "ça marche si je te dis « {x} » ?",
            "tu es en mesure de {x} ?",
            "tu as la possibilité de {x} ?",
        ],
        "zh": [
            "你能{x}吗",
            "你会{x}吗？",
            "你可以{x}吗？",
            "你有办法{x}吗？",
            "你能不能{x}？",
            "请问你支持“{x}”这种操作吗？",
            "你会不会{x}？",
            "“{x}”这个你做得到吗？",
            "我想问一下，你能{x}吗？",
            "你具备{x}的能力吗？",
            "好奇问一下，你可以{x}吗？",
            "你这个助手能{x}不？",
            "如果我说“{x}”，你能处理吗？",
            "你是否能够{x}？",
            "你有没有{x}的功能？",
            "你能帮人{x}吗？",
            "你会处理“{x}”这种请求吗？",
        ],
    },
    "hypothetical": {
        "en": [
            "if I asked you to {x}, would you do it?",
            "hypothetically, what would happen if I said '{x}'?",
            "suppose I told you '{x}', what then?",
            "imagine I said '{x}', how would you handle it?",
            "what if I asked you to {x}?",
            "if I were to say '{x}', what would you do?",
            "let's say I wanted you to {x}, would that work?",
            "in theory, if I said '{x}'?",
            "just hypothetically: {x}. would you?",
            "say I asked '{x}', what would you reply?",
            "if someone told you '{x}', how would you respond?",
            "pretend I said '{x}', what happens?",
            "would you {x} if I asked, in principle?",
            "assuming I said '{x}', would you act on it?",
            "what would you do if I told you to {x}?",
            "consider this: '{x}'. how would you react?",
        ],
        "fr": [
            "et si je te demandais de {x} ?",
            "si je te disais « {x} », tu ferais quoi ?",
            "imaginons que je dise « {x} », que se passerait-il ?",
            "supposons que je te demande « {x} » ?",
            "en théorie, si je disais « {x} » ?",
            "hypothétiquement, « {x} », tu le ferais ?",
            "si jamais je te disais « {x} », comment tu réagirais ?",
            "admettons que je dise « {x} » ?",
            "que ferais-tu si je te disais de {x} ?",
            "et si quelqu'un te disait « {x} » ?",
            "juste une hypothèse : « {x} ». tu ferais quoi ?",
            "mettons que je te demande de {x} ?",
            "imagine que je te dise « {x} »",
            "si je te demandais « {x} », tu répondrais quoi ?",
            "en principe, si je disais « {x} », ça marcherait ?",
            "dans l'hypothèse où je dirais « {x} » ?",
        ],
        "zh": [
            "假如我让你{x}，你会怎么做？",
            "如果我说“{x}”，会发生什么？",
            "假设我跟你说“{x}”呢？",
            "要是我让你{x}，你会照做吗？",
            "打个比方，我说“{x}”，你会怎么处理？",
            "万一我说“{x}”，你会怎样？",
            "如果有人对你说“{x}”，你会怎么回应？",
            "假设一下：{x}，你会做吗？",
            "设想我说了“{x}”，然后呢？",
            "理论上，如果我说“{x}”，你会执行吗？",
            "假如我对你说“{x}”会怎样？",
            "如果我真的让你{x}呢？",
            "我只是假设啊，“{x}”你会做吗？",
            "倘若我说“{x}”，你会如何反应？",
            "要是我哪天说“{x}”，你会怎么办？",
            "假如要你{x}，你会答应吗？",
        ],
    },
    "follow_up": {
        "en": [
            "and also {x}",
            "oh, and {x}",
            "one more thing: {x}",
            "also, {x}",
            "then {x}",
            "after that, {x}",
            "great, now {x}",
            "thanks. next, {x}",
            "ok and {x}",
            "perfect, {x} too",
            "next up: {x}",
            "while you're at it, {x}",
            "good. {x}",
            "now {x} please",
            "and then {x}",
            "alright, {x} as well",
        ],
        "fr": [
            "et aussi {x}",
            "ah, et {x}",
            "encore une chose : {x}",
            "ensuite {x}",
            "après ça, {x}",
            "super, maintenant {x}",
            "merci. {x}",
            "ok et {x}",
            "parfait, {x} aussi",
            "puis {x}",
            "tant que tu y es, {x}",
            "bien. {x}",
            "maintenant {x} s'il te plaît",
            "et ensuite {x}",
            "d'accord, {x} également",
            "au fait, {x}",
        ],
        "zh": [
            "还有，{x}",
            "对了，{x}",
            "另外{x}",
            "然后{x}",
            "接着{x}",
            "好的，再{x}",
            "谢谢。还要{x}",
            "行，那{x}",
            "顺便{x}",
            "好，下一个：{x}",
            "再帮我{x}",
            "嗯，{x}",
            "然后再{x}吧",
            "完了以后{x}",
            "对了对了，{x}",
            "好的，接下来{x}",
        ],
    },
    "multi": {
        "en": [
            "{x} and {y}",
            "{x}, then {y}",
            "{x} and after that {y}",
            "first {x}, then {y}",
            "{x}. also {y}",
            "{x} and also {y}",
            "{x}, and {y} too",
            "{x}; {y}",
            "please {x} and {y}",
            "{x}, plus {y}",
            "{x} and then {y}",
            "two things: {x}, and {y}",
            "{x}, oh and {y}",
            "{x}, afterwards {y}",
            "{x} as well as {y}",
            "can you {x} and {y}",
        ],
        "fr": [
            "{x} et {y}",
            "{x}, puis {y}",
            "{x} et ensuite {y}",
            "d'abord {x}, puis {y}",
            "{x}. aussi {y}",
            "{x} et aussi {y}",
            "{x}, et {y} également",
            "{x} ; {y}",
            "{x}, après {y}",
            "{x}, et puis {y}",
            "deux choses : {x}, et {y}",
            "{x}, ah et {y}",
            "{x} ainsi que {y}",
            "{x} et après ça {y}",
            "{x}, en plus {y}",
            "{x}, ensuite {y}",
        ],
        "zh": [
            "{x}，然后{y}",
            "{x}，再{y}",
            "先{x}，再{y}",
            "{x}，接着{y}",
            "{x}，还有{y}",
            "{x}，另外{y}",
            "{x}，顺便{y}",
            "{x}；{y}",
            "{x}，之后{y}",
            "两件事：{x}，还有{y}",
            "{x}，完了{y}",
            "{x}，同时{y}",
            "{x}，对了{y}",
            "{x}，然后再{y}",
            "{x}并且{y}",
            "{x}，再帮我{y}",
        ],
    },
}
DONE = {"en": "Done.", "fr": "C'est fait.", "zh": "好的，已经完成。"}
PER_KIND = {"en": 700, "fr": 400, "zh": 500}


def heldout(wid: str) -> bool:
    """A wrapper is dev/test-only when its id hashes into the last quarter."""
    return int(hashlib.sha256(wid.encode()).hexdigest(), 16) % 4 == 0


def _strip(text: str, lang: str) -> str:
    text = text.strip().rstrip("?.!？。！")
    if lang in ("en", "fr") and text[:1].isupper() and not text[:2].isupper():
        text = text[0].lower() + text[1:]
    return text


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
        return make_record(
            rid=rid,
            message=tpl.format(x=x),
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
