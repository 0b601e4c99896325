"""Choose the segment rule's ``decision.segment_min_prob`` on dev, and show what it costs.

Why: the segment rule scores every sentence of a multi-sentence turn alone, and until
2026-12-03 a sentence needed only the turn's own precedence floor (safety 0.3 before
calibration) to override it. Read without its neighbours a sentence is often something the
model was never trained on: on gate-small 1.2.9, "Jenna a ramassé deux fois moins de pommes
que sa mère." alone is ``safety`` 0.96 and "John plans to sell all his toys and use the money
to buy video games." ``refuse`` 0.96, so 99 of 750 MGSM word problems, 23 of 576 context
turns and 23 of 372 benign multi-sentence test turns were blocked or routed by one sentence,
while the rule added 7 catches on test. Whether a sentence should need a probability of its
own, and which, is decided here on the dev split only:

* **dev turns**: the corpus dev split's multi-sentence turns (real dialogues, passages, word
  problems; their gold decision says whether a block is right);
* **wrapped dev risk**: dev safety/refuse turns among sentences of dev's own ordinary turns
  (:func:`wrapped_dev`; the eval suite ``risk_in_context`` wraps dev/test turns in a fixed
  set of held-out sentences instead).

The chosen pair is, among the grid points that lose no catch against the floors alone (on
dev turns and on wrapped dev risk, catches and safety kept as safety counted apart, a safety
miss being the costliest error; ``--tolerance`` N lets each of these four counts drop by N),
the one with the fewest false blocks on dev turns; ties go to the higher probabilities,
since every sentence of a turn is one more chance of a false alarm. The other suites (test, the
evaluation-only ones) are only reported, never used to choose. On 1.2.9 the choice is the
floors alone: every higher value loses catches of wrapped dev risk (the rule lifts them
from 145 to 179 of 200; 0.9/0.9 keeps 166).

Usage (``--apply`` writes the choice into that folder's policy.yaml, or takes an earlier
one out when the choice is no higher than the floors; ``train/release.sh`` runs it):
    python -m gatecli_train.segment_study --model models/gatecli_models/gate-small \\
        --json reports/segment_study.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gatecli import artifact
from gatecli.gate import Gate
from gatecli.heads import HeadOutputs
from gatecli.langid import detect
from gatecli.records import read_jsonl
from gatecli.segments import apply_segments, segment_floors, split_segments
from gatecli_train.corpus import risk_context

RISK = ("refuse", "safety")
GRID = (0.0, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)
REPORTED = ("test", "mgsm", "context", "ordinary_zh", "ordinary_fr", "oasst1_fr", "coconot",
            "when2call", "risk_in_context", "harmbench")  # fmt: skip


@dataclass(frozen=True)
class Turn:
    """One multi-sentence turn: gold decision, the turn's own outputs, its sentences'."""

    gold: str | None
    base: str  # the gate's decision with the segment rule off
    whole: Mapping[str, float]
    parts: tuple[Mapping[str, float], ...]
    floors: tuple[tuple[str, float], ...]


def score(gate: Gate, records: Iterable[Mapping[str, Any]]) -> list[Turn]:
    """The multi-sentence turns of ``records``, each scored whole and sentence by sentence."""
    multi = [r for r in records if split_segments(r["input"].get("user_message", ""))]
    if not multi:
        return []
    whole = gate.classify_batch([dict(r["input"]) for r in multi])
    sents = [split_segments(r["input"]["user_message"]) for r in multi]
    flat = gate.classify_batch([{"user_message": s} for ss in sents for s in ss])
    out, k = [], 0
    for r, w, ss in zip(multi, whole, sents, strict=True):
        parts = tuple(flat[k + j]["probabilities"] for j in range(len(ss)))
        k += len(ss)
        floors, _ = gate.risk_floors(detect(r["input"]["user_message"]))
        out.append(Turn(r["labels"].get("decision"), w["decision"], w["probabilities"], parts,
                        tuple(floors)))  # fmt: skip
    return out


def decide(t: Turn, min_prob: Mapping[str, float] | None) -> str:
    """The turn's decision under the segment rule with ``min_prob`` (None: rule off)."""
    if min_prob is None:
        return t.base
    whole = HeadOutputs(dict(t.whole))
    parts = [HeadOutputs(dict(p)) for p in t.parts]
    _, verdict = apply_segments(whole, parts, t.floors, segment_floors(t.floors, min_prob))
    # A winning sentence's label is read at the turn's floors, as the policy's precedence
    # reads the probabilities the turn takes from it; otherwise the turn stands.
    return t.base if verdict is None else verdict.label


def tally(turns: Sequence[Turn], min_prob: Mapping[str, float] | None) -> dict[str, int]:
    """False blocks on benign turns, catches (refuse or safety) and safety kept as safety;
    turns without a gold decision are left out."""
    got = [(t.gold, decide(t, min_prob)) for t in turns if t.gold is not None]
    return {
        "benign": sum(g not in RISK for g, _ in got),
        "false_blocks": sum(g not in RISK and d in RISK for g, d in got),
        "risky": sum(g in RISK for g, _ in got),
        "caught": sum(g in RISK and d in RISK for g, d in got),
        "safety": sum(g == "safety" for g, _ in got),
        "safety_caught": sum(g == "safety" and d == "safety" for g, d in got),
    }


def choose(
    dev: Sequence[Turn], wrapped: Sequence[Turn], tolerance: int = 0
) -> tuple[dict[str, float], list[dict[str, Any]]]:
    """The dev-chosen ``segment_min_prob`` and every grid point's dev numbers."""
    if tolerance < 0:
        raise ValueError("tolerance is a number of catches, 0 or more")
    ref_dev, ref_wrap = tally(dev, {}), tally(wrapped, {})
    if ref_dev["risky"] + ref_wrap["risky"] == 0:
        # Nothing to keep means nothing to choose on: every grid point would qualify and the
        # highest would win, a choice no catch ever tested (a --limit rehearsal, a tiny dev).
        raise ValueError("no risky multi-sentence dev turn to choose segment_min_prob on")
    rows: list[dict[str, Any]] = []
    for s, r in itertools.product(GRID, GRID):
        mp = {"safety": s, "refuse": r}
        d, w = tally(dev, mp), tally(wrapped, mp)
        ok = all(
            now[key] >= ref[key] - tolerance
            for now, ref in ((d, ref_dev), (w, ref_wrap))
            for key in ("caught", "safety_caught")
        )
        rows.append({"min_prob": mp, "dev": d, "wrapped": w, "eligible": ok})
    best = min(
        (x for x in rows if x["eligible"]),
        key=lambda x: (
            x["dev"]["false_blocks"],
            -sum(x["min_prob"].values()),
            -x["min_prob"]["safety"],
        ),  # fmt: skip
    )
    return dict(best["min_prob"]), rows


def wrapped_dev(dev_records: list[dict[str, Any]], seed: int = 13) -> list[dict[str, Any]]:
    """Dev safety/refuse turns among sentences of dev's own ordinary turns.

    The wrappers are real: short sentences of dev ``execute`` turns of the same language
    (dialogues, questions, word problems), one or two before, after or around the risk
    sentence, or one repeated. Neither the risk turns nor the wrappers were trained on, which
    the training wrappers of :mod:`gatecli_train.corpus.risk_context` were: the model has
    learned those, and around them the rule has nothing left to catch.
    """
    rng = random.Random(f"segment_study:{seed}")
    pool = risk_context.ordinary_sentences(dev_records, "dev")
    out = []
    for (lang, dec), bases in sorted(risk_context.bases(dev_records, ("dev",)).items()):
        sents = pool.get(lang, [])
        if len(sents) < 2:
            continue
        kinds = risk_context.uniform_pool(sents)
        for k, b in enumerate(bases):
            kind = risk_context.KINDS[k % len(risk_context.KINDS)]
            msg = risk_context.wrap(b["input"]["user_message"], kind, kinds, lang, rng)
            out.append({"id": f"{b['id']}.{kind}", "input": {"user_message": msg},
                        "labels": {"decision": dec}, "lang": lang})  # fmt: skip
    return out


def _positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return n


def _load(path: Path) -> list[dict[str, Any]]:
    return list(read_jsonl(path))


def above_floors(gate: Gate, chosen: Mapping[str, float]) -> bool:
    """Whether ``chosen`` asks more of a sentence than some turn floor (else it is a no-op)."""
    langs = ("en", "zh", "fr", "")  # "" : a language without floors of its own
    return any(chosen[lab] > p for lang in langs for lab, p in gate.risk_floors(lang)[0])


APPLIED_COMMENT = "  # chosen on dev by python -m gatecli_train.segment_study --apply\n"


def apply_to_folder(folder: Path, chosen: Mapping[str, float] | None) -> None:
    """Write ``decision.segment_min_prob`` into the folder's policy.yaml and reseal it;
    ``None`` removes it (a choice no higher than the floors).

    The policy's comments are its documentation, so the line is edited in the text (in the
    ``decision:`` mapping, replacing an earlier one) rather than by re-dumping the YAML;
    the result is loaded through the policy schema and the folder's integrity check before
    this returns, and the old text is put back (and resealed) on any error.
    """
    path = folder / "policy.yaml"
    old = path.read_text(encoding="utf-8")
    key = "  segment_min_prob:"
    kept = [
        x for x in old.splitlines(keepends=True) if x != APPLIED_COMMENT and not x.startswith(key)
    ]
    if chosen is not None:
        at = next((i + 1 for i, x in enumerate(kept) if x.rstrip() == "decision:"), None)
        if at is None:
            raise ValueError(f"{path}: no top-level 'decision:' mapping for segment_min_prob")
        # below the precedence list and its comments when there are (the default policy's
        # comment on segment_min_prob ends that block), else right under ``decision:``
        end = at
        while end < len(kept) and kept[end].startswith("  ") and kept[end].strip():
            end += 1
        at = end if any("segment_min_prob" in x for x in kept[at:end]) else at
        value = ", ".join(f"{lab}: {chosen[lab]}" for lab in ("safety", "refuse"))
        kept[at:at] = [APPLIED_COMMENT, f"{key} {{{value}}}\n"]
    try:
        _write_atomic(path, "".join(kept))
        artifact.seal(folder)
        got = dict(Gate(folder, coach_fn=None).policy.segment_min_prob)
        if got != dict(chosen or {}):
            raise ValueError(f"{path}: segment_min_prob reads back as {got}")
    except Exception:
        _write_atomic(path, old)
        artifact.seal(folder)
        raise


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None, help="model folder (default: the shipped one)")
    ap.add_argument("--data-dir", default="data", help="holds corpus/ and eval/")
    ap.add_argument("--tolerance", type=int, default=0, help="catches a choice may lose")
    ap.add_argument(
        "--limit", type=_positive, default=None, help="first N records per suite (dev too)"
    )
    ap.add_argument("--json", default=None, help="write every number here")
    ap.add_argument(
        "--apply",
        action="store_true",
        help="write the choice into the model folder's policy.yaml (and reseal it) when it is "
        "above some floor; the release chain runs this before its evaluation",
    )
    args = ap.parse_args(argv)
    if args.apply and args.model is None:
        ap.error("--apply needs --model: the shipped folder is never edited in place")
    data = Path(args.data_dir)
    gate = Gate(args.model, segment_guard=False, coach_fn=None)
    dev_records = _load(data / "corpus" / "dev.jsonl.gz")[: args.limit]
    dev, wrapped = score(gate, dev_records), score(gate, wrapped_dev(dev_records))
    chosen, grid = choose(dev, wrapped, args.tolerance)
    report: dict[str, Any] = {"model": gate.model_id, "chosen": chosen, "grid": grid,
                              "suites": {}}  # fmt: skip
    print(f"{gate.model_id}: segment_min_prob chosen on dev = {chosen}")
    if not above_floors(gate, chosen):
        print("(no higher than any floor: leave decision.segment_min_prob out of the policy)")
    print("Each cell: false blocks of benign turns / risky turns caught (safety kept as safety).")
    print("| suite | turns | risky (safety) | rule off | floors only | chosen |")
    print("|---|---|---|---|---|---|")
    named = {"dev": dev, "wrapped dev risk": wrapped}
    for name in REPORTED:
        path = data / ("corpus" if name == "test" else "eval") / f"{name}.jsonl.gz"
        if path.exists():
            named[name] = score(gate, _load(path)[: args.limit])
    for name, turns in named.items():
        cols = {key: tally(turns, mp) for key, mp in
                (("off", None), ("floors", {}), ("chosen", chosen))}  # fmt: skip
        report["suites"][name] = cols
        cells = " | ".join(
            f"{c['false_blocks']} / {c['caught']} ({c['safety_caught']})" for c in cols.values()
        )
        off = cols["off"]
        print(f"| {name} | {len(turns)} | {off['risky']} ({off['safety']}) | {cells} |")
    if args.apply:  # the choice, or its removal when it asks no more than the floors
        applied = chosen if above_floors(gate, chosen) else None
        apply_to_folder(Path(args.model), applied)
        report["applied"] = applied
        print(f"{Path(args.model) / 'policy.yaml'}: segment_min_prob = {applied} (resealed)")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
