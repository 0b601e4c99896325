"""gatecli benchmarks: latency, throughput, memory/cold start, kernels and quality per ms.

One script, one run (``all``) so that ratios between rows hold on a noisy shared machine:
the new model and ``--previous`` (the release before it) are measured side by side on the
same turns, and the tables show new/previous. ``all`` also prints issue 14's release
targets (value, met or not) and, with ``--fp32-model``, the int8 kernel comparison.
Prints tables and writes JSON; ``--write-readme`` regenerates the results section of
benchmarks/README.md. Not a test: it asserts nothing and takes minutes at full size.

    python benchmarks/bench.py all --model models/gatecli_models/gate-small \
      --previous /tmp/gs110/models/gate-small --fp32-model artifacts/gate-small-fp32
    python benchmarks/bench.py latency --model /tmp/tiny --n 200      # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _bench_inputs import make_turns, pct, tfidf_baseline, timed, turns_of_tokens
from _bench_kernels import bench_kernels
from _bench_report import markdown, ratios, targets, write_readme

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "data" / "corpus"


def roles(args: argparse.Namespace) -> dict[str, str]:
    """``new`` (always) and ``previous`` (with --previous) -> model folder."""
    return {"new": args.model, **({"previous": args.previous} if args.previous else {})}


def model_info(path: str) -> dict[str, Any]:
    """Name, version, template version, model.onnx size and the export's int8 parity."""
    from gatecli import artifact

    folder = artifact.load_model_folder(path, verify_hash=False)
    cfg = folder.config
    parity = cfg.extra.get("parity") or {}
    decision = (parity.get("heads") or {}).get("decision") or {}
    # The target is agreement with fp32; a quantisation-aware run's export gates on agreement
    # with its fake-quantised model instead (int8_reference), reported beside it.
    return {"path": path, "name": cfg.name, "version": cfg.version,
            "template_version": int(cfg.template.get("version", 1)),
            "model_mb": round(folder.model_path.stat().st_size / 1e6, 2),
            "int8_agreement": decision.get("int8_argmax_agreement",
                                           parity.get("int8_decision_agreement")),
            "int8_reference": parity.get("int8_reference", "fp32"),
            "int8_qat_agreement": decision.get("int8_qat_agreement"),
            "n_parity_texts": parity.get("n_parity_texts")}  # fmt: skip


# --- latency ---------------------------------------------------------------------------


def bare_session(model_dir: str) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    return ort.InferenceSession(str(Path(model_dir) / "model.onnx"), opts,
                                providers=["CPUExecutionProvider"])  # fmt: skip


def bare_feed(session: Any, ids: list[int]) -> dict[str, np.ndarray]:
    a = np.asarray([ids], dtype=np.int64)
    names = {"input_ids": a, "attention_mask": np.ones_like(a)}
    return {i.name: names.get(i.name, np.zeros_like(a)) for i in session.get_inputs()}


def latency_ms(gate: Any, session: Any, turns: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """``Gate.classify`` one turn at a time vs bare ``session.run`` on the same ids (ms each),
    and each turn's token count."""
    seqs, _ = gate._encode(turns)  # pre-tokenised ids, exactly what Gate feeds the model
    feeds = [bare_feed(session, s) for s in seqs]
    return {"tokens": [len(s) for s in seqs], "gatecli": timed(gate.classify, turns),
            "bare_ort": timed(lambda f: session.run(None, f), feeds)}  # fmt: skip


def latency_row(ms: dict[str, list[Any]]) -> dict[str, Any]:
    """Percentiles of :func:`latency_ms` lists (of one model, possibly several passes)."""
    row: dict[str, Any] = {"mean_tokens": round(float(np.mean(ms["tokens"])), 1)}
    row["gatecli"], row["bare_ort"] = pct(ms["gatecli"]), pct(ms["bare_ort"])
    row["overhead_ratio_p50"] = round(row["gatecli"]["p50"] / row["bare_ort"]["p50"], 2)
    return row


def abba(roles: list[str], timing: Callable[[str, int], dict[str, list[Any]]]) -> dict[str, Any]:
    """Each role's :func:`latency_ms` over two halves of its turns, timed A B B A (new,
    previous on the first half; previous, new on the second), merged per role.

    Why: timing the new model first in every pair read gate-small 1.2.51 1.12x slower than
    1.2.49 on the same graph (6.75 against 6.55 ms interleaved by hand): whatever drifts
    (CPU clock, caches, the OS) must hit both models alike.
    """
    merged: dict[str, dict[str, list[Any]]] = {r: {} for r in roles}
    for half, order in ((0, roles), (1, roles[::-1])):
        for r in order:
            for key, vals in timing(r, half).items():
                merged[r].setdefault(key, []).extend(vals)
    return {r: latency_row(ms) for r, ms in merged.items()}


def bench_latency(args: argparse.Namespace, notes: list[str]) -> dict[str, Any]:
    """Both models on the same ~20-word turns (each with its own template, so token counts
    differ), and on turns of 64 tokens under each model's own template (equal sequence
    length: the kernels and architecture alone). Comparisons for the new model only."""
    from gatecli.gate import Gate

    gates = {r: Gate(p, intra_op_threads=1, batch_size=1) for r, p in roles(args).items()}
    sessions = {r: bare_session(p) for r, p in roles(args).items()}
    short = make_turns(args.n, seed=2)
    sets: dict[str, dict[str, list[Any]]] = {
        r: {"short_20w": short, "tok64": turns_of_tokens(g, args.n, 64)} for r, g in gates.items()
    }
    fp32 = Gate(args.fp32_model, intra_op_threads=1, batch_size=1) if args.fp32_model else None
    if fp32 is None:
        notes.append("ONNX fp32 skipped: pass --fp32-model DIR")
    torch_model = load_torch(args.torch_checkpoint, notes)
    clf = tfidf_baseline(args.corpus, notes)
    res: dict[str, Any] = {r: {} for r in gates}
    for name in ("short_20w", "tok64"):

        def timing(r: str, half: int, name: str = name) -> dict[str, list[Any]]:
            turns = sets[r][name]
            part = turns[: len(turns) // 2] if half == 0 else turns[len(turns) // 2 :]
            return latency_ms(gates[r], sessions[r], part)

        for r, row in abba(list(gates), timing).items():
            res[r][name] = row
        turns, row = sets["new"][name], res["new"][name]
        if fp32 is not None:
            row["onnx_fp32"] = pct(timed(fp32.classify, turns))
        if torch_model is not None:
            import torch

            def run_torch(s: list[int]) -> Any:
                with torch.inference_mode():
                    t = torch.tensor([s])
                    return torch_model(t, torch.ones_like(t))

            row["torch_eager"] = pct(timed(run_torch, gates["new"]._encode(turns)[0]))
        if clf is not None:
            row["tfidf_lr"] = pct(timed(lambda r: clf.predict_proba([r["user_message"]]), turns))
    return res


def load_torch(path: str | None, notes: list[str]) -> Any:
    if not path:
        notes.append("torch eager skipped: pass --torch-checkpoint (a torch.save'd GateModel)")
        return None
    import torch

    torch.set_num_threads(1)
    model = torch.load(path, map_location="cpu", weights_only=False)
    return model.eval()


# --- throughput, memory, cold start ----------------------------------------------------


def label_command(model: str, src: Path, out: Path, workers: int, batch: int) -> list[str]:
    """The ``gatecli label`` command line; ``--no-llm`` where this gatecli has it, so an
    escalation configured in the environment never enters the timing."""
    base = [sys.executable, "-m", "gatecli.main", "label"]
    help_text = subprocess.run([*base, "--help"], capture_output=True, text=True).stdout
    return [*base, str(src), "-o", str(out), "--model", model, "--workers", str(workers),
            "--batch-size", str(batch), "--review-size", "1", "--json",
            *(["--no-llm"] if "--no-llm" in help_text else [])]  # fmt: skip


def label_rate(model: str, src: Path, out: Path, workers: int, batch: int) -> float:
    """turns/s that ``gatecli label`` reports (pool start and model loads included)."""
    cmd = label_command(model, src, out, workers, batch)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["rows_per_s"])


def bench_throughput(args: argparse.Namespace) -> dict[str, Any]:
    """`gatecli label` with each worker count for both models at ``--batch-size``, the new
    model also at each ``--sweep`` batch size; the in-process loop at ``--batch-size``."""
    from gatecli.gate import Gate

    turns = make_turns(args.turns, seed=3)
    plan = [("new", b) for b in sorted({*args.sweep, args.batch_size})]
    plan += [("previous", args.batch_size)] if args.previous else []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "turns.jsonl"
        with open(src, "w", encoding="utf-8") as f:
            for rec in turns:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        for role, batch in plan:
            model = roles(args)[role]
            row: dict[str, Any] = {"model": role, "batch_size": batch, "bare_loop_1proc": None}
            if batch == args.batch_size:  # the bare loop: one process, no files
                gate = Gate(model, intra_op_threads=1, batch_size=batch)
                t = time.perf_counter()
                for k in range(0, len(turns), 2048):
                    gate.classify_batch(turns[k : k + 2048])
                row["bare_loop_1proc"] = round(len(turns) / (time.perf_counter() - t), 1)
            for w in args.workers:
                out = Path(tmp) / f"{role}-b{batch}-w{w}.jsonl"
                row[f"label_{w}w"] = round(label_rate(model, src, out, w, batch), 1)
            rows.append(row)
    return {"n": args.turns, "batch_size": args.batch_size, "rows": rows}


CHILD = """
import sys, time, json
from gatecli.gate import Gate
g = Gate(sys.argv[1], intra_op_threads=1)
g.classify({"user_message": "turn the volume up to 90"})
t = time.time()
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
print(json.dumps({"t": t, "rss_kb": int(hwm)}))
"""


def bench_process(args: argparse.Namespace) -> dict[str, Any]:
    """Cold start (process start -> first record) and peak RSS of one inference process
    (what one ``label`` worker is), read from /proc, median (and quartiles) of ``--repeats``
    runs per model (the models alternate)."""
    starts: dict[str, list[float]] = {r: [] for r in roles(args)}
    rss: dict[str, list[float]] = {r: [] for r in roles(args)}
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    for _ in range(args.repeats):
        for role, model in roles(args).items():
            t0 = time.time()
            out = subprocess.run([sys.executable, "-c", CHILD, model], capture_output=True,
                                 text=True, check=True, env=env)  # fmt: skip
            info = json.loads(out.stdout.strip().splitlines()[-1])
            starts[role].append(info["t"] - t0)
            rss[role].append(info["rss_kb"] / 1024)
    return {r: {"cold_start_s_median": round(float(np.median(starts[r])), 3),
                "cold_start_s_p25_p75": [round(float(np.percentile(starts[r], q)), 3)
                                         for q in (25, 75)],
                "peak_rss_mb_per_worker": round(float(np.median(rss[r])), 1)}
            for r in starts}  # fmt: skip


# --- quality per millisecond -----------------------------------------------------------


def bench_quality(evals: list[str]) -> list[dict[str, Any]]:
    """Rows of NAME=FILE `gatecli eval --json` outputs: quality, p50 and F1 per ms."""

    def r3(x: Any) -> Any:
        return round(x, 3) if isinstance(x, float) else x

    rows = []
    for spec in evals:
        name, _, path = spec.partition("=") if "=" in spec else (Path(spec).stem, "", spec)
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        for suite, entry in data.get("suites", {}).items():
            ov = entry["model"]["overall"]
            dec, ev = ov.get("decision", {}), ov.get("events", {})
            p50 = ov.get("latency_ms", {}).get("p50") or 0.0
            f1 = dec.get("macro_f1")
            rows.append({"model": name, "suite": suite, "n": entry.get("n"),
                         "decision_macro_f1": r3(f1), "safety_recall": r3(dec.get("safety_recall")),
                         "events_micro_f1": r3(ev.get("micro_f1")), "p50_ms": r3(p50),
                         "f1_per_ms": round(f1 / p50, 3) if f1 and p50 else None})  # fmt: skip
    return rows


# --- run -------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {"python": platform.python_version(), "cpus": os.cpu_count()}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        keep = ("Model name", "Architecture", "CPU(s)", "Thread(s) per core", "L2 cache",
                "L3 cache", "Flags")  # fmt: skip
        for line in out.splitlines():
            key, _, val = line.partition(":")
            if key.strip() in keep:
                val = val.strip()
                if key.strip() == "Flags":
                    val = " ".join(
                        f for f in val.split() if f.startswith(("avx512", "avx2", "amx"))
                    )
                info[key.strip()] = val
    except OSError:
        pass
    import onnxruntime

    info["onnxruntime"] = onnxruntime.__version__
    return info


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("what", choices=["all", "latency", "throughput", "process", "kernels",
                                    "quality"])  # fmt: skip
    p.add_argument("--model", default=str(ROOT / "models" / "gatecli_models" / "gate-small"))
    p.add_argument("--previous", help="the previous release's model folder, measured alongside")
    p.add_argument("--fp32-model", help="model folder of the same model exported in fp32")
    p.add_argument("--torch-checkpoint", help="torch.save'd GateModel (teacher or student)")
    p.add_argument(
        "--corpus",
        nargs="*",
        default=[str(CORPUS / "train.jsonl.gz")],
        help="§6 JSONL globs to train the TF-IDF+LR baseline on (train rows)",
    )
    p.add_argument(
        "--kernel-corpus",
        nargs="*",
        default=[str(CORPUS / "test.jsonl.gz")],
        help="§6 JSONL globs the kernel comparison samples its turns from",
    )
    p.add_argument("--kernel-texts", type=int, default=3000, help="turns for kernel agreement")
    p.add_argument(
        "--smooth-alpha",
        type=float,
        default=0.7,
        help="kernels: dynamic_smooth's migration strength (0: no such variant)",
    )
    p.add_argument(
        "--smooth-corpus",
        nargs="*",
        default=[str(CORPUS / "dev.jsonl.gz")],
        help="§6 JSONL globs dynamic_smooth calibrates on (never the test turns)",
    )
    p.add_argument("--n", type=int, default=1000, help="turns per latency set")
    p.add_argument("--turns", type=int, default=20_000, help="turns for throughput")
    p.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    p.add_argument("--batch-size", type=int, default=32, help="label batch for both models")
    p.add_argument(
        "--sweep",
        type=int,
        nargs="*",
        default=[1, 8, 32],
        help="label batch sizes per worker for the new model",
    )
    # 15, not 5: on this 2-core machine cold start moves by ~0.1 s from one hour to the next
    # and by 20-50 ms between neighbouring starts (benchmarks/README.md, cold start), the size
    # of the margin the 0.3 s target is read at.
    p.add_argument("--repeats", type=int, default=15, help="cold starts to take the median of")
    p.add_argument("--eval", nargs="*", default=[], help="NAME=FILE of `gatecli eval --json`")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "results.json"))
    p.add_argument("--write-readme", action="store_true")
    return p.parse_args(argv)  # fmt: skip


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    notes: list[str] = []
    what = args.what
    res: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "machine": machine(),
                           "models": {r: model_info(p) for r, p in roles(args).items()},
                           "notes": notes}  # fmt: skip
    if not args.previous:
        notes.append("no new/previous ratios: pass --previous DIR")
    if what in ("all", "latency"):
        res["latency"] = bench_latency(args, notes)
    if what in ("all", "throughput"):
        res["throughput"] = bench_throughput(args)
    if what in ("all", "process"):
        res["process"] = bench_process(args)
    if what == "kernels" or (what == "all" and args.fp32_model):
        if not args.fp32_model:
            raise SystemExit("kernels needs --fp32-model DIR (an fp32 export of --model)")
        res["kernels"] = bench_kernels(args.fp32_model, args.kernel_corpus, args.kernel_texts,
                                       args.n, notes, args.smooth_corpus,
                                       args.smooth_alpha)  # fmt: skip
    if what in ("all", "quality") and args.eval:
        res["quality"] = bench_quality(args.eval)
    res["ratios"] = ratios(res)
    if what == "all":
        res["targets"] = targets(res)
    text = markdown(res)
    print(text)
    Path(args.out).write_text(json.dumps(res, ensure_ascii=False, indent=1) + "\n",
                              encoding="utf-8")  # fmt: skip
    if args.write_readme:
        write_readme(text)
    return res


if __name__ == "__main__":
    main()
