"""Build data/corpus/{train,dev,test}.jsonl.gz and data/eval/<suite>.jsonl.gz from raw sources.

Deterministic: the same inputs give byte-identical files (sorted records, sorted keys, gzip
mtime 0), so a rebuild shows in git only when the data really changed.
"""

from __future__ import annotations

import gzip
import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gatecli.catalog import Catalog
from gatecli_train.corpus import (
    augment,
    context,
    dialogue,
    eval_suites,
    home_assistant,
    intents,
    invariance_train,
    multiwoz_zh,
    ordinary,
    risk_context,
    sentences,
    tools_catalog,
    tools_home_assistant,
    tools_unseen,
    tools_variation,
    xsid,
)
from gatecli_train.corpus import safety_sets as S
from gatecli_train.corpus.records import normalise, validate
from gatecli_train.corpus.split import assign_splits, check_leaks, dedup

# Defaults are relative to the working directory (a checkout's root), never to this file:
# an installed package has no data/ beside it.
AUTHORED_DIR = Path("data/authored")
SEED_FILE = Path("data/suites/seeds.jsonl")


def loaders() -> dict[str, Callable[[Path], list[dict[str, Any]]]]:
    return {
        "hwu64": intents.load_hwu64,
        "clinc150_oos": intents.load_clinc,
        "snips_2017": intents.load_snips,
        "slurp": intents.load_slurp,
        "xsid": xsid.load_xsid_dev,
        "home_assistant_intents": home_assistant.load_templates,
        "sgd_subset": dialogue.load_sgd,
        "crosswoz": dialogue.load_crosswoz,
        "multiwoz_zh": multiwoz_zh.load_val,  # issue 12: zh slot-filling answers, closings
        "advbench": S.load_advbench,
        "harmbench": S.load_harmbench_val,
        "multijail": S.load_multijail,
        "coconot": S.load_coconot_pref,
        "flames": S.load_flames,
        "qulac": S.load_qulac,
        "banking77": S.load_banking77,
        "nlupp": S.load_nlupp,
        **ordinary.loaders(),  # issue 13: ordinary zh/fr questions and small talk
    }


def read_jsonl_records(path: Path, provenance: str = "authored") -> list[dict[str, Any]]:
    """Authored or user JSONL (spec §6 records with a ``group``); split is ours to assign."""
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        r = json.loads(line)
        r.setdefault("id", f"{path.stem}:authored:{i}")
        r.setdefault("source", path.stem)
        r.setdefault("group", r["id"])
        r.setdefault("note", f"authored in {path.name}")
        r["provenance"] = r.get("provenance") or provenance
        r["split"] = None
        out.append(r)
    return out


def write_jsonl_gz(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as gz:
        for r in sorted(records, key=lambda r: r["id"]):
            gz.write((json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"))
    path.write_bytes(buf.getvalue())


def build(
    raw: Path,
    out: Path,
    limit_per_source: int | None = None,
    extra: list[Path] | None = None,
    authored_dir: Path | None = None,
    seed_file: Path | None = None,
    card: Path | None = None,
) -> dict[str, Any]:
    """Run the whole pipeline; returns counts. Raises LeakError on a leak.

    Example:
        >>> build(Path("../shared/datasets"), Path("/tmp/c"), limit_per_source=30)  # doctest: +SKIP
    """
    t0 = time.time()
    authored_dir = authored_dir or AUTHORED_DIR
    seed_file = seed_file or SEED_FILE
    if not Path(raw).is_dir():
        raise FileNotFoundError(f"{raw}: not a folder of raw datasets")
    records: list[dict[str, Any]] = []
    for load in loaders().values():
        recs = load(raw)
        if limit_per_source:
            recs = sorted(recs, key=lambda r: r["id"])[:limit_per_source]
        records += recs
    files = sorted(authored_dir.glob("*.jsonl")) if authored_dir.exists() else []
    invalid_authored: list[str] = []
    for f in files + list(extra or []):
        recs = read_jsonl_records(f)
        recs = recs[:limit_per_source] if limit_per_source else recs
        for r in recs:  # other people's rows: report and drop a bad one, never fail the build
            r["split"] = "train"
            errs = validate(r)
            r["split"] = None
            if errs:
                invalid_authored.append(f"{f.name}:{r.get('id')}: {errs[0]}")
            else:
                records.append(r)
    evals = eval_suites.all_suites(raw, seed_file)
    if limit_per_source:
        evals = {k: sorted(v, key=lambda r: r["id"])[:limit_per_source] for k, v in evals.items()}
    eval_msgs = {normalise(r["input"]["user_message"]) for v in evals.values() for r in v}
    before = len(records)
    records = [r for r in records if normalise(r["input"]["user_message"]) not in eval_msgs]
    dropped_eval = before - len(records)
    records, dropped_dup = dedup(records)
    assign_splits(records)
    # issue 13: the eval-only risk_in_context suite wraps held-out (dev/test) risk turns.
    evals["risk_in_context"] = risk_context.eval_suite(records)
    eval_msgs |= {normalise(r["input"]["user_message"]) for r in evals["risk_in_context"]}
    aug = augment.augment(records) + tools_variation.vary(records) + risk_context.vary(records)
    aug += risk_context.passage_tails(records)  # a crisis after a pasted passage
    aug += context.augment(records)  # issue 12: account spellings, slot answers, risk in turns
    aug += invariance_train.vary(records)  # issue 14: unrelated tools, an opening exchange
    aug += sentences.vary(records)  # the segment rule's view: ordinary sentences alone
    catalog_events = Catalog.default().event_names
    aug += tools_catalog.vary(records, catalog_events)  # closed tool lists
    msg_split = {normalise(r["input"]["user_message"]): r["split"] for r in records}
    aug = [
        a
        for a in aug
        if msg_split.get(normalise(a["input"]["user_message"]), a["split"]) == a["split"]
        and normalise(a["input"]["user_message"]) not in eval_msgs
    ]
    aug, _ = dedup(aug)
    records += aug
    later = eval_suites.after_split(raw, records, seed_file)  # issue 12: invariance, context
    later["tools_unseen"] = tools_unseen.suite(evals, records)  # issue 14: agents' tool lists
    later["tools_catalog"] = tools_catalog.suite(records, catalog_events)
    later["tools_home_assistant"] = tools_home_assistant.suite(evals["home_assistant"])
    evals |= {k: sorted(v, key=lambda r: r["id"])[:limit_per_source] if limit_per_source else v
              for k, v in later.items()}  # fmt: skip
    bad = [
        (r["id"], e) for r in records + [x for v in evals.values() for x in v] for e in validate(r)
    ]
    if bad:
        raise ValueError(f"{len(bad)} invalid records, e.g. {bad[:5]}")
    corpus = {s: [r for r in records if r["split"] == s] for s in ("train", "dev", "test")}
    check_leaks(corpus, evals)
    for s, recs in corpus.items():
        write_jsonl_gz(out / "corpus" / f"{s}.jsonl.gz", recs)
    for name, recs in evals.items():
        if recs:
            write_jsonl_gz(out / "eval" / f"{name}.jsonl.gz", recs)
    stats = {
        "seconds": round(time.time() - t0, 1),
        "dropped_duplicates": dropped_dup,
        "dropped_in_eval": dropped_eval,
        "augmented": len(aug),
        "authored_files": [f.name for f in files],
        "invalid_authored": invalid_authored,
        "counts": {s: len(v) for s, v in corpus.items()},
        "eval": {k: len(v) for k, v in evals.items()},
    }
    if card is not None:
        from gatecli_train.corpus.card import write_card

        write_card(card, corpus, evals, stats)
    return stats
