"""The ``tools_unseen`` eval suite: turns that need no tool, with a real agent's tool list added.

Why (issue 14): agents call the gate with the tools they register, and those are mostly not
about the catalog (API clients, back-office functions) and spelled as their frameworks spell
them. gate-small 1.2.17 refused 12% of When2Call's benign API requests, and with a When2Call
tool list added it refused 29 of 300 ordinary English questions (1 without) and 160 of
XSTest's 250 safe prompts (79 without). The ``invariance`` suite's ``tools_added`` pairs draw
their names from the corpus's own name lists, so they did not see it: this suite holds out
the names as well as the turns.

Pairs, each a base and one variant whose ``available_tools`` gains the whole tool list of a
When2Call test turn (an evaluation-only source: never trained on; a name that ends with one
of the corpus's own names in any spelling, as ``Weather_1_GetWeather`` ends with
``get_weather``, is removed, so every name is unseen):

- bases from the held-out ``ordinary_{en,zh,fr}`` suites: execute turns with no event or
  events unknown (questions and requests answered from knowledge, chit-chat), up to
  :data:`PER_LANG` per language;
- refuse and safety turns of the corpus test split without a tool list, up to
  :data:`RISKY_PER_LANG` per language, so a fix that answered everything would show.

Gold labels are the base's: an unrelated tool list cannot make a plain answer need a tool or
a harmful request acceptable. Ids follow the invariance suite (``invariance:<pair>:base`` and
``invariance:<pair>:tools_unseen``), so ``gatecli eval`` reports the flip rate with the
invariance view; ``source`` is ``tools_unseen``.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from gatecli_train.corpus.tools_variation import KEYS, base_key

Record = dict[str, Any]
PER_LANG = 150
RISKY_PER_LANG = 50
LANGS = ("en", "zh", "fr")
TRANSFORM = "tools_unseen"


def _pair_id(rid: str) -> str:
    return hashlib.sha256(f"{TRANSFORM}:{rid}".encode()).hexdigest()[:12]


def tool_lists(when2call: list[Record]) -> list[list[str]]:
    """When2Call's tool lists without the names the corpus's lists hold in any spelling.

    Example:
        >>> tool_lists([{"input": {"available_tools": ["get_weather", "Hotels_2_Search"]}}])
        [['Hotels_2_Search']]
    """
    out: set[tuple[str, ...]] = set()
    for r in when2call:
        names = [t for t in r["input"].get("available_tools") or [] if isinstance(t, str)]
        kept = tuple(t for t in names if not any(base_key(t).endswith(k) for k in KEYS))
        if kept:
            out.add(kept)
    return [list(t) for t in sorted(out)]


def _record(rec: Record, pair: str, role: str, inp: dict[str, Any]) -> Record:
    kind = "base" if role == "base" else TRANSFORM
    return {
        **rec, "id": f"invariance:{pair}:{kind}", "source": TRANSFORM, "split": "eval_only",
        "provenance": rec.get("provenance", "mapped"), "input": inp,
        "group": f"{TRANSFORM}:{pair}",
        "invariance": {"pair": pair, "transform": kind, "role": role, "of": rec["id"]},
        "note": f"{rec.get('note') or ''} | {TRANSFORM} {role} of {rec['id']} ({rec['source']})",
    }  # fmt: skip


def _pick(recs: list[Record], n: int) -> list[Record]:
    return sorted(recs, key=lambda r: _pair_id(r["id"]))[:n]


def suite(evals: dict[str, list[Record]], records: list[Record]) -> list[Record]:
    """Bases and variants (see module doc); empty without When2Call tool lists.

    Example:
        >>> suite({}, [])
        []
    """
    lists = tool_lists(evals.get("when2call", []))
    if not lists:
        return []
    bases: list[Record] = []
    for lang in LANGS:
        plain = [
            r for r in evals.get(f"ordinary_{lang}", [])
            if r["labels"]["decision"] == "execute" and not r["labels"]["events"]
            and not r["input"].get("available_tools")
        ]  # fmt: skip
        risky = [
            r for r in records
            if r["split"] == "test" and r["lang"] == lang
            and r["labels"]["decision"] in ("refuse", "safety")
            and not r["input"].get("available_tools")
        ]  # fmt: skip
        bases += _pick(plain, PER_LANG) + _pick(risky, RISKY_PER_LANG)
    out: list[Record] = []
    for rec in bases:
        pair = _pair_id(rec["id"])
        inp = dict(rec["input"])
        tools = random.Random(pair).choice(lists)
        out.append(_record(rec, pair, "base", inp))
        out.append(_record(rec, pair, "variant", {**inp, "available_tools": list(tools)}))
    return sorted(out, key=lambda r: r["id"])
