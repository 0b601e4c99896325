"""The ``invariance`` eval suite: pairs of turns whose decision and events must not differ.

Why (issue 12): the gate followed surface forms (an account's spelling, an empty field, an
unrelated tool), so a pair that changes only such a form measures that directly, as a flip
rate per transformation (:mod:`gatecli.evaluation.context_views`). Built deterministically from
the corpus *test* split and the seed examples after splitting (the test split does not exist
before); evaluation only. Every base and variant carries ``invariance = {pair, transform,
role, of}``; the id ``invariance:<pair>:<transform>`` says the same, because the evaluation
keeps ids but not extra keys. Gold labels are the base's.

Transformations, each applied only where it cannot change the right answer:

- ``alias_swap``: one account rewritten as another spelling of the same single system;
- ``tools_added`` / ``tools_removed``: unrelated tools added to, or removed from, a tool list
  that already serves every event (or a turn that needs no tool: refuse, safety, chit-chat,
  capability questions, statements; or a ``connect`` turn whose tools are all unrelated);
- ``empty_fields``: ``available_tools: []``, ``connected_accounts: []``,
  ``conversation_context: ""``, ``user_profile: {}`` added when absent, removed when present;
- ``case`` / ``whitespace``: the message lower-cased (or capitalised), padded and re-spaced;
- ``benign_turn_added``: a greeting exchange put before the earlier turns;
- ``ask_tools``: an ``ask`` turn without a tool list given one: a held-out tool name for each
  event its missing slots may be for (``tools_variation.ask_events``) and 1-3 unrelated ones;
  a tool does not supply the missing detail (gate-small 1.2.28 read 182 of dev's 310 ask
  turns as connect once serving tools were listed).
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from typing import Any

from gatecli.catalog import Catalog
from gatecli_train.corpus import tools_variation
from gatecli_train.corpus.context import account_forms
from gatecli_train.corpus.records import event_names, normalise
from gatecli_train.corpus.tool_names import FAMILY, OTHER, SERVES

Record = dict[str, Any]
TRANSFORMS = (
    "alias_swap", "tools_added", "tools_removed", "empty_fields", "case", "whitespace",
    "benign_turn_added", "ask_tools",
)  # fmt: skip
PER_TRANSFORM_LANG = 150
NO_TOOL_TAGS = {"chitchat", "capability_question", "hypothetical", "statement", "complaint"}
EMPTY: dict[str, Any] = {
    "available_tools": [], "connected_accounts": [], "conversation_context": "",
    "user_profile": {},
}  # fmt: skip
BENIGN = {
    "en": [("hi", "Hi! How can I help?"), ("good morning", "Good morning! What can I do for you?"),
           ("hey there", "Hey! What do you need?")],
    "fr": [("salut", "Salut ! Je peux t'aider ?"),
           ("bonjour", "Bonjour ! Que puis-je faire pour vous ?")],
    "zh": [("你好", "你好！有什么可以帮你？"), ("在吗", "在的，请说。")],
}  # fmt: skip
_NAMES = {n: e for e, pats in SERVES.items() for _, names in pats for n in names}


def _pair_id(rid: str) -> str:
    return hashlib.sha256(rid.encode()).hexdigest()[:12]


def _tool_family(tool: Any) -> str | None:
    """The catalog family a tool name belongs to ("other" for a known generic tool)."""
    if not isinstance(tool, str):
        return None
    name = tool.strip().lower().replace("-", ".").replace("_", ".")
    if name in event_names():
        return FAMILY.get(name, name)
    if tool in _NAMES:
        return FAMILY[_NAMES[tool]]
    return "other" if tool in OTHER else None


def _unrelated_names(events: list[str]) -> list[str]:
    """Listed names (any split, as written) from no family of ``events``, and generic ones."""
    fams = {FAMILY.get(e) for e in events}
    return sorted({n for n, e in _NAMES.items() if FAMILY[e] not in fams} | set(OTHER))


def _serves(tool: Any, event: str) -> bool:
    if isinstance(tool, str) and tool.strip().lower() == event:
        return True
    return isinstance(tool, str) and _NAMES.get(tool) == event


def _unrelated_tools(rec: Record) -> list[Any]:
    fams = {FAMILY.get(e) for e in rec["labels"]["events"] or []}
    return [t for t in rec["input"].get("available_tools") or []
            if _tool_family(t) is not None and _tool_family(t) not in fams]  # fmt: skip


def _no_tool_needed(rec: Record) -> bool:
    lab = rec["labels"]
    if lab["decision"] in ("refuse", "safety"):
        return True
    tags = set(lab["scenario_tags"] or [])
    return lab["decision"] == "execute" and lab["events"] == [] and bool(tags & NO_TOOL_TAGS)


def tools_ok(rec: Record) -> bool:
    """The tool list can grow or shrink by unrelated tools without changing the answer."""
    lab, tools = rec["labels"], rec["input"].get("available_tools") or []
    if _no_tool_needed(rec):
        return True
    if lab["events"] is None:
        return False
    if lab["decision"] == "connect" and tools:
        return len(_unrelated_tools(rec)) == len(tools)
    return bool(tools and lab["events"]) and all(
        any(_serves(t, e) for t in tools) for e in lab["events"]
    )


def _variant(rec: Record, rng: random.Random, kind: str, cat: Catalog) -> dict[str, Any] | None:
    """The changed input for one transformation, or None where it does not apply."""
    inp = dict(rec["input"])
    msg, lang = inp["user_message"], rec["lang"]
    if kind == "alias_swap":
        accs = list(inp.get("connected_accounts") or [])
        for i, a in enumerate(accs):
            systems = cat.systems_for_account(a) if isinstance(a, str) else set()
            if len(systems) == 1:
                forms = [f for f in account_forms(next(iter(systems)), cat, lang)
                         if normalise(f) != normalise(a)]  # fmt: skip
                if forms:
                    return {
                        **inp,
                        "connected_accounts": [*accs[:i], rng.choice(forms), *accs[i + 1 :]],
                    }
        return None
    if kind == "tools_added":
        if not tools_ok(rec):
            return None
        pool = _unrelated_names(rec["labels"]["events"] or [])
        have = list(inp.get("available_tools") or [])
        extra = [t for t in rng.sample(pool, 3) if t not in have][: rng.randint(1, 3)]
        return {**inp, "available_tools": have + extra}
    if kind == "tools_removed":
        have = list(inp.get("available_tools") or [])
        drop = _unrelated_tools(rec)
        if len(have) < 2 or not drop or not tools_ok(rec):
            return None
        gone = set(rng.sample(drop, min(len(drop), len(have) - 1, rng.randint(1, 3))))
        return {**inp, "available_tools": [t for t in have if t not in gone]}
    if kind == "ask_tools":
        lab = rec["labels"]
        if lab["decision"] != "ask" or inp.get("available_tools"):
            return None
        events = tools_variation.ask_events(lab.get("missing_slots"))
        must = tools_variation.serving_picks(events, msg, "test", rng)
        if not must:
            return None
        tools = must + rng.sample(_unrelated_names(events), rng.randint(1, 3))
        rng.shuffle(tools)
        return {**inp, "available_tools": tools}
    if kind == "empty_fields":
        present = [k for k, v in EMPTY.items() if k in inp and inp[k] == v]
        if present:
            return {k: v for k, v in inp.items() if k not in present}
        return {**inp, **{k: v for k, v in EMPTY.items() if k not in inp}}
    if kind == "case":
        if lang == "zh" or not any(c.isalpha() for c in msg):
            return None
        new = msg.lower() if msg != msg.lower() else msg[:1].upper() + msg[1:]
        return {**inp, "user_message": new} if new != msg else None
    if kind == "whitespace":
        spaced = msg.replace(" ", "  ") if " " in msg else msg
        return {**inp, "user_message": f"  {spaced} \n"}
    ctx = inp.get("conversation_context")
    if ctx and not isinstance(ctx, list):
        return None
    user, assistant = rng.choice(BENIGN[lang])
    turns = [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    return {**inp, "conversation_context": turns + list(ctx or [])}


def _record(rec: Record, pair: str, kind: str, inp: dict[str, Any]) -> Record:
    role = "base" if kind == "base" else "variant"
    return {
        **rec, "id": f"invariance:{pair}:{kind}", "source": "invariance", "split": "eval_only",
        "input": inp, "group": f"invariance:{pair}",
        "invariance": {"pair": pair, "transform": kind, "role": role, "of": rec["id"]},
        "note": f"{rec['note']} | invariance {role} ({kind}) of {rec['id']} ({rec['source']})",
    }  # fmt: skip


def suite(test: list[Record], seeds: list[Record], per: int = PER_TRANSFORM_LANG) -> list[Record]:
    """Bases and variants from test-split records (``per`` pairs per transformation and
    language) and every seed example (all applicable transformations).

    Example:
        >>> suite([], [])
        []
    """
    cat = Catalog.default()
    bases = [r for r in test if r["labels"]["decision"] is not None and r["lang"] in BENIGN]
    seeds = [r for r in seeds if r["labels"]["decision"] is not None and r["lang"] in BENIGN]
    chosen: dict[str, Record] = {}
    variants: list[Record] = []
    count: dict[tuple[str, str], int] = defaultdict(int)
    ordered = sorted(seeds, key=lambda r: r["id"]) + sorted(bases, key=lambda r: _pair_id(r["id"]))
    seed_ids = {r["id"] for r in seeds}
    for rec in ordered:
        pair = _pair_id(rec["id"])
        for kind in TRANSFORMS:
            if rec["id"] not in seed_ids and count[(kind, rec["lang"])] >= per:
                continue
            # one generator per base and transformation: whether an earlier transformation
            # was full for this language must not change this one's draw (corpus 1.2.66)
            inp = _variant(rec, random.Random(f"{pair}:{kind}"), kind, cat)
            if inp is None or inp == rec["input"]:
                continue
            count[(kind, rec["lang"])] += 1
            chosen[pair] = rec
            variants.append(_record(rec, pair, kind, inp))
    out = [_record(r, p, "base", dict(r["input"])) for p, r in chosen.items()]
    return sorted(out + variants, key=lambda r: r["id"])
