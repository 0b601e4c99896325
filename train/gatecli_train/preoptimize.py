"""Save a model folder's graph already optimised, so no process optimises it at load.

onnxruntime rewrites a graph when it builds a session (constant folding, biases fused into
``MatMulNBits``, GELU and the attention scale fused), and every ``classify`` process, every
``label`` worker and every ``serve`` start pays for it (issue 14: cold start <= 0.3 s). For
gate-small on 2 cores, measured 2026-12-04: a session built in 0.17-0.21 s with that pass and
in 0.05-0.07 s from the saved graph (busy machine); the median cold start fell by 20-30 ms
in interleaved starts on an idle one (0.372 -> 0.341 s, 0.323 -> 0.303 s;
benchmarks/README.md). Saved once after export (:func:`gatecli.session.save_optimized`, the
extended level for the CPU provider, which onnxruntime's docs allow offline), the folder
records it in ``gatecli.json`` ``onnx.optimized`` and the runtime builds its session with
optimisation off when it runs on those providers.

The optimised graph must compute what the original computes: before the folder takes it,
both are run on real turns (the corpus test split, serialised by the folder's own template,
batched as ``label`` batches them) and every head's logits are compared; any difference
above ``--tolerance`` or any changed decision leaves the folder as it was. The release
chain (``train/release.sh``) runs this after the segment study, before the evaluation, so
the evaluated folder is the shipped one. ``model.init_from`` still reads such a folder back
(:mod:`gatecli_train.from_onnx` knows the fused nodes of the blockwise and dynamic int8
graphs, smoothed or not; the check below refuses a graph whose weights do not read back
exactly). A dynamic int8 folder built its session in 0.086 s from the plain graph and in
0.032 s from the saved one (1.2.70, 2-core AVX2 machine under load, 2026-12-07; one-off).

    python -m gatecli_train.preoptimize --model /tmp/gatecli-release-1.2.18/model
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from gatecli import artifact
from gatecli.gate import Gate
from gatecli.records import read_jsonl
from gatecli.session import CPU, open_session, save_optimized


class OptimiseError(RuntimeError):
    """The optimised graph's outputs differ from the original's beyond the tolerance."""


def _logits(gate: Gate, seqs: list[list[int]], batch: int) -> dict[str, np.ndarray]:
    parts = [gate.logits_ids(seqs[i : i + batch]) for i in range(0, len(seqs), batch)]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def compare(gate: Gate, optimised: Path, records: list[dict[str, Any]], batch: int = 32) -> dict:
    """Largest logit difference per head and decision agreement, original vs ``optimised``,
    on ``records`` (length-sorted batches, as ``label`` runs them, and one at a time)."""
    seqs, bad = gate._encode(records)
    seqs = sorted((s for i, s in enumerate(seqs) if i not in bad), key=len)
    if not seqs:
        raise ValueError("no turn to compare the graphs on")
    original = gate.session
    ref = {b: _logits(gate, seqs, b) for b in (1, batch)}
    gate.session = open_session(optimised, optimized_for=list(CPU))
    try:
        new = {b: _logits(gate, seqs, b) for b in (1, batch)}
    finally:
        gate.session = original
    diff = {
        head: max(float(np.abs(ref[b][head] - new[b][head]).max()) for b in ref) for head in ref[1]
    }
    agree = min(
        float((ref[b]["decision"].argmax(-1) == new[b]["decision"].argmax(-1)).mean()) for b in ref
    )
    return {"n_texts": len(seqs), "max_abs_diff": diff, "decision_agreement": agree}


def _same_weights(original: Path, optimised: Path) -> None:
    """``model.init_from`` reads weights back from a folder's graph: the optimised graph
    must give exactly the original's (:mod:`gatecli_train.from_onnx`), or it is refused."""
    from gatecli_train.from_onnx import state_from_onnx

    want, want_facts = state_from_onnx(original)
    try:
        got, got_facts = state_from_onnx(optimised)
    except ValueError as exc:
        raise OptimiseError(
            f"the optimised graph cannot be read back for init_from: {exc}"
        ) from exc
    diff = sorted(set(got) ^ set(want)) or [k for k in want if not bool((got[k] == want[k]).all())]
    if diff or got_facts != want_facts:
        raise OptimiseError(
            f"the optimised graph reads back to other weights ({diff[:3]}, {got_facts})"
        )


def preoptimize_folder(
    folder: Path, records: list[dict[str, Any]], *, tolerance: float = 1e-4
) -> dict[str, Any]:
    """Replace ``folder``'s model.onnx by its optimised graph if it computes the same logits
    on ``records``; record ``onnx.optimized`` and the check in gatecli.json and reseal.

    Returns the check (``extra.preoptimize``). A folder already optimised is left alone
    (``{"skipped": ...}``). On any failure the folder is restored and the error raised.
    """
    gate = Gate(folder, coach_fn=None)
    config = gate.config
    if config.onnx_optimized:
        return {"skipped": f"already optimised ({config.onnx_optimized})"}
    model = folder / artifact.MODEL_FILE
    tmp = folder / "model.optimised.onnx.tmp"
    backup = folder / "model.onnx.orig"
    config_path = folder / artifact.CONFIG_FILE
    old_config = config_path.read_bytes()
    try:
        info = save_optimized(model, tmp)
        check = compare(gate, tmp, records)
        worst = max(check["max_abs_diff"].values())
        if worst > tolerance or check["decision_agreement"] < 1.0:
            raise OptimiseError(
                f"{folder}: the optimised graph differs (largest logit difference {worst:.3g}, "
                f"tolerance {tolerance}; decision agreement {check['decision_agreement']:.4f})"
            )
        _same_weights(model, tmp)
        os.replace(model, backup)
        os.replace(tmp, model)
        extra = {**config.extra, "preoptimize": {**check, **info}}
        artifact.write_config(
            folder,
            dataclasses.replace(
                config,
                onnx_optimized=info,
                model_sha256=artifact.sha256_file(model),
                extra=extra,
            ),
        )
        after = Gate(folder, coach_fn=None)  # integrity, and the session it will build
        if after.config.onnx_optimized != info:
            raise OptimiseError(f"{config_path}: onnx.optimized does not read back")
    except BaseException:
        if backup.exists():
            os.replace(backup, model)
        config_path.write_bytes(old_config)
        tmp.unlink(missing_ok=True)
        raise
    backup.unlink()
    return extra["preoptimize"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="model folder to optimise in place")
    ap.add_argument(
        "--data", default="data/corpus/test.jsonl.gz", help="records to compare the graphs on"
    )
    ap.add_argument("--texts", type=int, default=1000, help="first N records of --data")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="largest logit difference")
    args = ap.parse_args(argv)
    if args.texts < 1:
        ap.error("--texts must be positive")
    records = [r["input"] for r in read_jsonl(Path(args.data))][: args.texts]
    try:
        report = preoptimize_folder(Path(args.model), records, tolerance=args.tolerance)
    except (OptimiseError, artifact.ArtifactError, ValueError) as exc:
        print(f"preoptimize: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(report, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
