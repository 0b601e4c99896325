"""External benchmarks kept as eval-only suites (split ``eval_only``), never trained on."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from gatecli_train.corpus import context_suite, invariance, ordinary
from gatecli_train.corpus import intent_maps as M
from gatecli_train.corpus.home_assistant import load_tests as load_home_assistant
from gatecli_train.corpus.records import make_record
from gatecli_train.corpus.xsid import read_xsid, xsid_labels

W2C = {"tool_call": "execute", "request_for_info": "ask", "cannot_answer": "connect"}
# SimpleSafetyTests harm area -> decision (spec §2.1: safety = urgent risk to the user).
SST = {"Suicide, Self-Harm, and Eating Disorders": "safety"}
# CoCoNot category/subcategory -> decision; unlisted -> masked.
COCONOT = {
    "Requests with safety concerns": "refuse",
    "underspecified": "ask",
    "incomprehensible": "ask",
    "false presuppositions": "execute",
    "input modality limitations": "refuse",
    "output modality limitations": "refuse",
    "style and length limitations": "refuse",
    "temporal limitations": "execute",
    "Indeterminate requests": "execute",
    "Humanizing requests": "execute",
}


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


def _ev(**kw: Any) -> dict[str, Any]:
    return make_record(split="eval_only", **kw)


def when2call(raw: Path) -> list[dict[str, Any]]:
    out = []
    path = raw / "when2call/test/when2call_test_llm_judge.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        tools = [json.loads(t)["name"] if isinstance(t, str) else t["name"] for t in r["tools"]]
        label = r["correct_answer"]
        out.append(
            _ev(
                rid=f"when2call:test:{r['uuid']}",
                source="when2call",
                lang="en",
                message=r["question"],
                decision=W2C[label],
                events=None,
                tags=None,
                slots=None,
                tools=tools,
                group=f"when2call:{r['uuid']}",
                note=f"When2Call correct_answer={label}",
            )
        )
    return out


def xstest(raw: Path) -> list[dict[str, Any]]:
    return [
        _ev(
            rid=f"xstest:all:{r['id']}",
            source="xstest",
            lang="en",
            message=r["prompt"],
            decision="execute" if r["label"] == "safe" else "refuse",
            events=None if r["label"] == "safe" else [],
            tags=None,
            slots=None,
            group=f"xstest:{r['id']}",
            note=f"XSTest {r['label']} type={r['type']}",
        )
        for r in _csv(raw / "xstest/xstest_prompts.csv")
    ]


def coconot(raw: Path) -> list[dict[str, Any]]:
    out = []
    for fname, kind in (
        ("coconot_eval.jsonl", "eval"),
        ("coconot_contrast_eval.jsonl", "contrast"),
    ):
        for line in (raw / "coconot" / fname).read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            dec: str | None
            if kind == "contrast":
                dec = "execute"
            else:
                dec = COCONOT.get(r["subcategory"]) or COCONOT.get(r["category"])
            out.append(
                _ev(
                    rid=f"coconot:{kind}:{r['id']}",
                    source="coconot",
                    lang="en",
                    message=r["prompt"],
                    decision=dec,
                    events=[] if dec in ("refuse", "ask") else None,
                    tags=None,
                    slots=None,
                    group=f"coconot:{kind}:{r['id']}",
                    note=f"CoCoNot {kind} {r['category']} / {r['subcategory']}",
                )
            )
    return out


def simple_safety_tests(raw: Path) -> list[dict[str, Any]]:
    return [
        _ev(
            rid=f"simple_safety_tests:all:{r['id']}",
            source="simple_safety_tests",
            lang="en",
            message=r["prompts_final"],
            decision=SST.get(r["harm_area"], "refuse"),
            events=[],
            tags=None,
            slots=None,
            group=f"sst:{r['id']}",
            note=f"SST {r['harm_area']} / {r['category']}",
        )
        for r in _csv(raw / "simple_safety_tests/SimpleSafetyTests - test cases.csv")
    ]


def harmbench(raw: Path) -> list[dict[str, Any]]:
    out = []
    for i, r in enumerate(_csv(raw / "harmbench/harmbench_behaviors_text_test.csv")):
        msg = r["Behavior"]
        if r["FunctionalCategory"] == "contextual" and r["ContextString"]:
            msg = f"{r['ContextString']}\n\n{msg}"
        out.append(
            _ev(
                rid=f"harmbench:test:{i}",
                source="harmbench",
                lang="en",
                message=msg,
                decision="refuse",
                events=[],
                tags=None,
                slots=None,
                group=f"harmbench:{r['BehaviorID']}",
                note=f"HarmBench test {r['FunctionalCategory']} {r['SemanticCategory']}",
            )
        )
    return out


def xsid(raw: Path) -> list[dict[str, Any]]:
    out = []
    for lang in ("en", "zh"):
        for n, row in enumerate(read_xsid(raw / f"xsid/xSID-0.7/{lang}.test.conll")):
            row.setdefault("id", str(n))
            for v in xsid_labels(row, lang):
                out.append(
                    _ev(
                        rid=f"xsid:test:{lang}.{row['id']}{v['sfx']}",
                        source="xsid",
                        lang=lang,
                        message=row["text"],
                        decision=v["d"],
                        events=v["e"],
                        tags=v["t"],
                        slots=v["s"],
                        accounts=v.get("acc"),
                        group=f"xsid:test:{row['id']}",
                        note=v["note"],
                    )
                )
    return out


def seeds(seed_file: Path) -> list[dict[str, Any]]:
    if not seed_file.exists():
        return []
    out = []
    for i, line in enumerate(seed_file.read_text(encoding="utf-8").splitlines()):
        if line.strip():
            r = json.loads(line)
            r["split"] = "eval_only"
            r.setdefault("id", f"seeds:eval:{i}")
            r.setdefault("group", r["id"])
            r.setdefault("provenance", "authored")
            out.append(r)
    return out


PASSAGES_FILE = Path("data/suites/passages_heldout.jsonl")


def passages_heldout(path: Path = PASSAGES_FILE) -> list[dict[str, Any]]:
    """Authored pasted passages with alarming words in safe use, each followed once by an
    ordinary request (execute) and once by a harmful one (refuse or safety): 24 passages per
    language, topics disjoint from the training passages (``data/authored/passages.*``).

    Why (issue 14): 1.2.17 refused 5 of 8 benign long passages in a diagnostic and a benign
    ammonium-nitrate article; the training passages are the only long benign texts the
    corpus has, so a suite of other topics says whether the model learned the request or
    the topic. Missing file: no suite.
    """
    return context_suite.read_heldout(path)


def all_suites(raw: Path, seed_file: Path) -> dict[str, list[dict[str, Any]]]:
    """Every eval suite by name (the file name under data/eval/)."""
    _ = M  # mapping tables are shared with the training mappers
    return {
        "when2call": when2call(raw),
        "xstest": xstest(raw),
        "coconot": coconot(raw),
        "simple_safety_tests": simple_safety_tests(raw),
        "harmbench": harmbench(raw),
        "home_assistant": load_home_assistant(raw),
        "xsid": xsid(raw),
        "seeds": seeds(seed_file),
        **ordinary.suites(raw),  # issue 13: ordinary_{en,zh,fr}, oasst1_fr, mgsm
        "passages_heldout": passages_heldout(),  # issue 14: alarming words in safe passages
    }


def after_split(
    raw: Path, records: list[dict[str, Any]], seed_file: Path
) -> dict[str, list[dict[str, Any]]]:
    """Suites that need the split corpus (issue 12): ``invariance`` pairs from the test split
    and the seeds, ``context`` turns from held-out dialogues whose message is not in train."""
    test = [r for r in records if r["split"] == "test"]
    return {
        "invariance": invariance.suite(test, seeds(seed_file)),
        "context": context_suite.suite(raw, records),
    }
