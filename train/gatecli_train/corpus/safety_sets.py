"""Single-head sources: refusal sets, connect (banking), ask (qulac), contrast (coconot_pref).

Each says something about one or two heads; the others stay ``None`` (masked). A refusal
carries ``events == []`` because spec §3 forbids events on refuse.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path
from typing import Any

from gatecli_train.corpus.records import make_record


def _csv(path: Path, **kw: Any) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh, **kw))


def load_advbench(raw: Path) -> list[dict[str, Any]]:
    rows = _csv(raw / "advbench/harmful_behaviors.csv")
    return [
        make_record(
            rid=f"advbench:behaviors:{i}",
            source="advbench",
            lang="en",
            message=r["goal"],
            decision="refuse",
            events=[],
            tags=None,
            slots=[],
            note="AdvBench harmful behavior -> refuse",
            group=f"advbench:{i}",
        )
        for i, r in enumerate(rows)
    ]


def load_harmbench_val(raw: Path) -> list[dict[str, Any]]:
    out = []
    for i, r in enumerate(_csv(raw / "harmbench/harmbench_behaviors_text_val.csv")):
        if r["FunctionalCategory"] == "contextual":
            continue  # the behavior refers to a context passage that is not the user turn
        out.append(
            make_record(
                rid=f"harmbench:val:{i}",
                source="harmbench",
                lang="en",
                message=r["Behavior"],
                decision="refuse",
                events=[],
                tags=None,
                slots=[],
                group=f"harmbench:{r['BehaviorID']}",
                note=f"HarmBench val {r['SemanticCategory']} -> refuse",
            )
        )
    return out


def load_multijail(raw: Path) -> list[dict[str, Any]]:
    """English and Chinese only; self-harm/substance prompts are left masked (maybe safety)."""
    out = []
    for r in _csv(raw / "multijail/MultiJail.csv"):
        unsure = "Self-harm" in r["tags"] or "self-harm" in r["tags"].lower()
        for lang in ("en", "zh"):
            out.append(
                make_record(
                    rid=f"multijail:all:{r['id']}.{lang}",
                    source="multijail",
                    lang=lang,
                    message=r[lang],
                    decision=None if unsure else "refuse",
                    events=[],
                    tags=None,
                    slots=None if unsure else [],
                    group=f"multijail:{r['id']}",
                    note=f"MultiJail {r['tags']} -> "
                    + ("masked (self-harm: safety?)" if unsure else "refuse"),
                )
            )
    return out


def load_coconot_pref(raw: Path) -> list[dict[str, Any]]:
    """coconot_pref holds the *contrast* prompts whose chosen answer complies: execute."""
    out = []
    for line in (raw / "coconot/coconot_pref.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        out.append(
            make_record(
                rid=f"coconot:pref:{r['id']}",
                source="coconot",
                lang="en",
                message=r["prompt"],
                decision="execute",
                events=None,
                tags=None,
                slots=[],
                group=f"coconot:{r['id']}",
                note=f"coconot_pref {r['subcategory']}: chosen answer complies -> execute",
            )
        )
    return out


def load_flames(raw: Path) -> list[dict[str, Any]]:
    """Only Non-anthropomorphism prompts (questions to the AI about itself): execute, no event.

    The other Flames prompts are mostly legitimate advice questions with a trap; whether to
    refuse is unclear per prompt, so they are not used (no reliable decision).
    """
    out = []
    for i, line in enumerate(
        (raw / "flames/Flames_1k_Chinese.jsonl").read_text("utf-8").splitlines()
    ):
        r = json.loads(line)
        if r["subcomponent"] != "Non-anthropomorphism":
            continue
        out.append(
            make_record(
                rid=f"flames:all:{i}",
                source="flames",
                lang="zh",
                message=r["prompt"],
                decision="execute",
                events=[],
                tags=None,
                slots=[],
                group=f"flames:{i}",
                note="Flames Non-anthropomorphism: a question about the AI itself -> execute",
            )
        )
    return out


def load_qulac(raw: Path) -> list[dict[str, Any]]:
    d = json.loads((raw / "qulac/qulac.json").read_text(encoding="utf-8"))
    topics: dict[str, tuple[Any, Any]] = {}
    for k, topic in d["topic"].items():
        topics.setdefault(topic, (d["topic_id"][k], d["topic_type"][k]))
    return [
        make_record(
            rid=f"qulac:all:{tid}",
            source="qulac",
            lang="en",
            message=topic,
            decision="ask",
            events=[],
            tags=None,
            slots=["content"],
            group=f"qulac:{tid}",
            note=f"Qulac {ttype} topic: which facet is meant is unknown -> ask content",
        )
        for topic, (tid, ttype) in sorted(topics.items(), key=lambda kv: kv[1][0])
    ]


def load_banking77(raw: Path, n: int = 600) -> list[dict[str, Any]]:
    rows = _csv(raw / "banking77/train.csv")
    idx = sorted(random.Random("banking77").sample(range(len(rows)), min(n, len(rows))))
    return [
        make_record(
            rid=f"banking77:train:{i}",
            source="banking77",
            lang="en",
            message=rows[i]["text"],
            decision="connect",
            events=[],
            tags=["private_data"],
            slots=[],
            group=f"banking77:{i}",
            note=f"BANKING77 {rows[i]['category']}: needs the user's bank account, "
            "none connected -> connect",
        )
        for i in idx
    ]


def load_nlupp(raw: Path) -> list[dict[str, Any]]:
    """NLU++ banking `why` questions: connect + private_data, and a hard negative for
    ads_diagnosis_intent (not an ads context). Hotels are not used (decision unclear).
    """
    out = []
    for fold in range(20):
        path = raw / f"nlupp/data/banking/fold{fold}.json"
        for i, r in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            if "why" not in r.get("intents", []):
                continue
            out.append(
                make_record(
                    rid=f"nlupp:banking:{fold}.{i}",
                    source="nlupp",
                    lang="en",
                    message=r["text"],
                    decision="connect",
                    events=[],
                    tags=["private_data"],
                    slots=[],
                    group=f"nlupp:{fold}.{i}",
                    note="NLU++ banking `why` -> connect, private_data; not ads_diagnosis_intent",
                )
            )
    return out
