"""Context-true training data: records whose label depends on accounts or on earlier turns.

Why (issue 12): the model followed surface forms. ``connected_accounts`` only ever held three
aliases, so ``["calendar"]`` or ``["Google Calendar"]`` read as "not connected"; an answer to
the assistant's own question ("at 6:15") had no event; risk leaked across turns. Built here,
after split assignment (every record keeps the split of the record it came from):

- :func:`alias_variants`: the same turn with its accounts written as the catalog system name,
  another alias or display form of the same system, a re-cased spelling, or with unrelated
  accounts added (and, for ``connect`` turns, accounts of *other* systems); label unchanged,
  each variant checked against the catalog (an alias that would change what is connected is
  never used);
- :func:`slot_answers`: the authored ``ask`` pairs (``data/authored/ask.*.jsonl``: a request
  lacking one slot and its twin with the slot) become a two-turn dialogue, the request and an
  assistant question as context, the slot phrase alone as the turn -> the twin's labels;
- :func:`risk_across_turns`: a safety turn after benign turns stays ``safety``; a plain thanks
  after a safety turn is judged on itself (execute, no event, tags masked).

Turns quoted in issue 12 are test probes: :func:`uses_probe` keeps them out of the records
built here and out of the mapped dialogue turns.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from typing import Any

from gatecli.catalog import Catalog
from gatecli_train.corpus.context_text import (
    DISPLAY,
    QUESTIONS,
    SUPPORT,
    UNRELATED_ACCOUNTS,
    question_for,
)
from gatecli_train.corpus.draws import (
    bottom_k,
    digest,
    interleave,
    own_rng,
    pick,
    ranked,
    record_id,
    weighted_pick,
)
from gatecli_train.corpus.records import event_requires, normalise

Record = dict[str, Any]
ALIAS_N = 2000
RISK_N = 60  # per language and kind
PROBES = {
    normalise(s)
    for s in (
        "six fifteen", "wake me up tomorrow", "What time should I set it for?",
        "merci, bonne soirée !", "ok thanks, see you", "louder", "skip this one",
        "and tomorrow?", "再大声一点", "et demain ?", "six heures et quart",
        "set up a call with Omar on Thursday at 11", "声音调到90",
    )
}  # fmt: skip


def uses_probe(rec: Record) -> bool:
    """True when the turn or one of its earlier turns is a probe string of issue 12."""
    ctx = rec["input"].get("conversation_context")
    texts = [rec["input"]["user_message"]]
    if isinstance(ctx, list):
        texts += [str(t.get("content", "")) for t in ctx if isinstance(t, dict)]
    return any(normalise(t) in PROBES for t in texts)


def _needs(rec: Record) -> set[str]:
    return {s for e in rec["labels"]["events"] or [] for s in event_requires(e)}


def _variant(rec: Record, kind: str, **inp: Any) -> Record:
    v = {**rec, "id": f"augmented:{kind}:{rec['id']}", "provenance": "augmented"}
    v["input"] = {k: val for k, val in {**rec["input"], **inp}.items() if val is not None}
    v["labels"] = dict(rec["labels"])
    v["note"] = f"{rec['note']} (rule {kind} on {rec['id']}: label unchanged)"
    return v


def account_forms(system: str, cat: Catalog, lang: str) -> list[str]:
    """Spellings users write for ``system`` that satisfy it and no other system."""
    names = [system, *cat.systems[system]]
    names += [d for a in names for d in DISPLAY.get(a, [])]
    ok = [n for n in dict.fromkeys(names) if cat.systems_for_account(n) == {system}]
    cjk = [n for n in ok if re.search(r"[\u4e00-\u9fff]", n)]
    latin = [n for n in ok if n not in cjk]
    return cjk * 2 + latin if lang == "zh" else latin  # zh users mostly write 飞书日历, QQ邮箱


def _recase(name: str, rng: random.Random) -> str:
    parts = re.split(r"[_\s\-.]+", name)
    style = rng.randrange(4)
    if style == 0:
        return "_".join(parts).upper()
    if style == 1:
        return "-".join(p.capitalize() for p in parts)
    if style == 2:
        return " ".join(p.capitalize() for p in parts)
    return " ".join(parts).title().swapcase()


def _alias_candidates(rec: Record, cat: Catalog, rng: random.Random) -> list[Record]:
    acc = list(rec["input"].get("connected_accounts") or [])
    need = _needs(rec)
    dec = rec["labels"]["decision"]
    have = cat.connected_systems(acc)
    out = []
    for i, a in enumerate(acc):
        systems = cat.systems_for_account(a)
        if len(systems) != 1:
            continue
        (sys_,) = systems
        forms = [f for f in account_forms(sys_, cat, rec["lang"]) if normalise(f) != normalise(a)]
        swaps = {"alias.system_name": sys_}
        recased = _recase(a, rng)
        if recased != a:
            swaps["alias.recased"] = recased
        if forms:
            swaps["alias.other_form"] = rng.choice(forms)
        for kind, new in swaps.items():
            out.append(_variant(rec, kind, connected_accounts=acc[:i] + [new] + acc[i + 1 :]))
    extra = rng.sample(UNRELATED_ACCOUNTS, rng.randint(1, 3))
    out.append(_variant(rec, "alias.extra_unrelated", connected_accounts=acc + extra))
    if dec == "connect" and need and not need <= have:
        others = sorted(set(cat.systems) - need)
        if others:
            other = rng.choice(others)
            wrong = rng.choice(account_forms(other, cat, rec["lang"]) or [other])
            out.append(_variant(rec, "alias.other_system", connected_accounts=acc + [wrong]))
    return [v for v in out if _still_true(rec, v, cat)]


def _still_true(base: Record, var: Record, cat: Catalog) -> bool:
    """The variant connects exactly what the base connects, as far as the label depends on it."""
    need = _needs(base)
    before = need <= cat.connected_systems(base["input"].get("connected_accounts"))
    after = need <= cat.connected_systems(var["input"].get("connected_accounts"))
    return before == after and not (var["labels"]["decision"] == "execute" and not after)


def alias_variants(records: list[Record], n: int = ALIAS_N, seed: int = 12) -> list[Record]:
    """Account-spelling variants of records with accounts, or ``connect`` turns that need one.

    Bases are sampled round-robin over language and decision so that zh/fr and ``connect``
    turns are not crowded out by the many English calendar turns.

    Example:
        >>> alias_variants([])
        []
    """
    cat = Catalog.default()
    pools: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for r in sorted(records, key=lambda r: r["id"]):
        lab = r["labels"]
        if lab["events"] is None or lab["decision"] not in ("execute", "ask", "connect"):
            continue
        if r["input"].get("connected_accounts") or (lab["decision"] == "connect" and _needs(r)):
            pools[(r["lang"], lab["decision"])].append(r)
    salt = f"{seed}:alias"
    queues = [ranked(v, salt)[::-1] for _, v in sorted(pools.items())]
    taken: list[list[Record]] = []  # the first n records (round-robin) with a candidate
    for rec in interleave(queues, sum(map(len, queues))):
        if len(taken) == n:
            break
        if cands := _alias_candidates(rec, cat, own_rng(salt, rec["id"])):
            taken.append(cands)
    # Every kind well represented: a record picks a kind with probability inverse to how
    # many records offer it (weighted rendezvous), decided by its own id, so an added record
    # does not change what the others picked (a running "rarest so far" count did).
    offered = Counter(k for cands in taken for k in {_kind(v) for v in cands})
    out = [weighted_pick(c, salt, record_id, lambda v: 1 / offered[_kind(v)]) for c in taken]
    return out


def _kind(rec: Record) -> str:
    return str(rec["id"]).split(":")[1]


def _inserted(short: str, long: str, lang: str, slot: str) -> str | None:
    """The one contiguous span that ``long`` adds to ``short`` (the slot phrase), if any."""
    a, b = (list(short), list(long)) if lang == "zh" else (short.split(), long.split())
    i = 0
    while i < len(a) and i < len(b) and a[i] == b[i]:
        i += 1
    j = 0
    while j < len(a) - i and j < len(b) - i and a[-1 - j] == b[-1 - j]:
        j += 1
    if i + j != len(a) or len(b) <= len(a):
        return None
    mid = b[i : len(b) - j]
    text = ("".join(mid) if lang == "zh" else " ".join(mid)).strip(" ,，。.!?？")
    if lang == "zh":
        text = re.sub(r"^(在|于|给|跟|和|把)|的$", "", text)
    elif lang == "fr":
        text = re.sub(r"^(de|d')\s*(?=\d)", "", text)
    elif slot in ("item", "target"):
        text = re.sub(r"^(for|of) ", "", text)
    return text if 1 <= len(text) <= 60 else None


def slot_answers(records: list[Record], seed: int = 12) -> list[Record]:
    """Two-turn dialogues from authored ask/execute twins (see module doc)."""
    groups: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        if r["source"] == "authored:ask" and not r["input"].get("conversation_context"):
            groups[r["group"]].append(r)
    out = []
    for _, recs in sorted(groups.items()):
        asks = [r for r in recs if r["labels"]["decision"] == "ask"]
        twins = [r for r in recs if r["labels"]["decision"] == "execute" and r["labels"]["events"]]
        if len(asks) != 1 or len(twins) != 1 or len(asks[0]["labels"]["missing_slots"] or []) != 1:
            continue
        ask, twin = asks[0], twins[0]
        lang, slot = ask["lang"], ask["labels"]["missing_slots"][0]
        answer = _inserted(ask["input"]["user_message"], twin["input"]["user_message"], lang, slot)
        if answer is None or lang not in QUESTIONS:
            continue
        ctx = [
            {"role": "user", "content": ask["input"]["user_message"]},
            {
                "role": "assistant",
                "content": question_for(
                    slot,
                    twin["labels"]["events"],
                    lang,
                    own_rng(f"{seed}:answer", ask["id"]),
                    ask["input"]["user_message"],
                ),
            },
        ]
        rec = {**twin, "id": f"augmented:answer:{ask['id']}", "provenance": "augmented"}
        rec["input"] = {**twin["input"], "user_message": answer, "conversation_context": ctx}
        tags = twin["labels"]["scenario_tags"]
        rec["labels"] = {**twin["labels"], "scenario_tags": sorted({*(tags or []), "follow_up"})}
        rec["note"] = (
            f"slot answer: the {slot} phrase that {twin['id']} adds to {ask['id']}, after the "
            f"assistant asks for it -> the twin's labels ({twin['labels']['events']})"
        )
        out.append(rec)
    return out


def _exchanges(records: list[Record]) -> dict[tuple[str, str], list[list[dict[str, str]]]]:
    """Benign earlier exchanges (split, lang) -> contexts, from the authored follow-ups."""
    out: dict[tuple[str, str], list[list[dict[str, str]]]] = defaultdict(list)
    for r in sorted(records, key=lambda r: r["id"]):
        ctx = r["input"].get("conversation_context")
        if r["source"] == "authored:followups" and isinstance(ctx, list) and len(ctx) >= 2:
            out[(r["split"], r["lang"])].append(ctx[-2:])
    return out


def risk_across_turns(records: list[Record], n: int = RISK_N, seed: int = 12) -> list[Record]:
    """Safety after benign turns (stays safety); a plain thanks after a safety turn (execute,
    no event, tags masked). Up to ``n`` of each per language, fewer for dev/test."""
    benign = _exchanges(records)
    safety = defaultdict(list)
    thanks = defaultdict(list)
    for r in sorted(records, key=lambda r: r["id"]):
        lab, ctx = r["labels"], r["input"].get("conversation_context")
        if lab["decision"] == "safety" and r["provenance"] == "authored" and not ctx:
            safety[(r["split"], r["lang"])].append(r)
        if r["source"] == "authored:closings" and "plain thanks" in r["note"]:
            thanks[(r["split"], r["lang"])].append(r)
    out = []
    salt = f"{seed}:risk"  # hash ranks and rendezvous picks: see gatecli_train.corpus.draws
    for key in sorted(safety):
        share = 1.0 if key[0] == "train" else 0.15
        cell = f"{salt}:{key[0]}.{key[1]}"
        for r in sorted(bottom_k(safety[key], int(n * share), cell), key=lambda r: r["id"]):
            if benign[key]:
                earlier = pick(benign[key], f"{cell}:{r['id']}", str)
                # the partner's hash in the id: a new partner is a new record, not an edit
                kind = f"risk.after_benign.{digest(str(earlier))[:8]}"
                v = _variant(r, kind, conversation_context=earlier)
                v["note"] = f"{r['note']}; benign earlier turns do not lower the risk"
                out.append(v)
        for k in range(int(n * share) if thanks[key] else 0):
            t = pick(thanks[key], f"{cell}:thanks.{k}", record_id)
            s = pick(safety[key], f"{cell}:safety.{k}", record_id)
            support = own_rng(cell, f"support.{k}").choice(SUPPORT[key[1]])
            ctx = [{"role": "user", "content": s["input"]["user_message"]},
                   {"role": "assistant", "content": support}]  # fmt: skip
            kind = f"risk.thanks_after_safety.{k}.{digest(s['id'])[:8]}"
            v = _variant(t, kind, conversation_context=ctx)
            v["labels"] = {"decision": "execute", "events": [], "scenario_tags": None,
                           "missing_slots": []}  # fmt: skip
            v["note"] = f"thanks after the safety turn {s['id']}: judged on the later turn"
            out.append(v)
    return out


def consistent(new: list[Record], records: list[Record]) -> list[Record]:
    """Drop built records whose message already sits in another split (leak rule), or that
    use a probe; the first record (by id) of a new message fixes its split."""
    where = {normalise(r["input"]["user_message"]): r["split"] for r in records}
    out = []
    for r in sorted(new, key=lambda r: r["id"]):
        key = normalise(r["input"]["user_message"])
        if where.setdefault(key, r["split"]) == r["split"] and not uses_probe(r):
            out.append(r)
    return out


def augment(records: list[Record]) -> list[Record]:
    """Everything this module builds from split-assigned records (see the module doc)."""
    new = alias_variants(records) + slot_answers(records) + risk_across_turns(records)
    return consistent(new, records)
