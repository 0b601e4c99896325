"""gatecli benchmarks: latency, throughput, memory/cold start and quality per millisecond.

One script, one run (``all``) so that ratios between rows hold on a noisy shared machine.
Prints a table and writes JSON; ``--write-readme`` regenerates the results section of
benchmarks/README.md. Not a test: it asserts nothing and takes minutes at full size.

    python benchmarks/bench.py all --model models/gatecli_models/gate-small \
      --out benchmarks/results.json
    python benchmarks/bench.py latency --model /tmp/tiny --n 200      # a quick look
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
README = Path(__file__).resolve().parent / "README.md"
MARK_BEGIN, MARK_END = "<!-- results:begin -->", "<!-- results:end -->"
WORDS = {
    "en": [
        "please",
        "turn",
        "the",
        "volume",
        "up",
        "a",
        "bit",
        "and",
        "then",
        "tell",
        "me",
        "what",
        "the",
        "weather",
        "will",
        "be",
        "like",
        "tomorrow",
        "morning",
        "in",
        "Paris",
        "because",
        "I",
        "need",
        "to",
        "decide",
        "whether",
        "to",
        "take",
        "an",
        "umbrella",
    ],
    "zh": list("请把音量调高一点然后告诉我明天早上巴黎的天气怎么样因为我要决定带不带伞"),
    "fr": [
        "monte",
        "un",
        "peu",
        "le",
        "son",
        "puis",
        "dis-moi",
        "quel",
        "temps",
        "il",
        "fera",
        "demain",
        "matin",
        "à",
        "Paris",
        "car",
        "je",
        "dois",
        "décider",
        "si",
        "je",
        "prends",
        "un",
        "parapluie",
    ],
}


def pct(values: list[float]) -> dict[str, float]:
    a = np.asarray(values, dtype=np.float64)
    return {f"p{q}": round(float(np.percentile(a, q)), 4) for q in (50, 90, 99)}


def make_turns(n: int, *, seed: int = 0, words: int = 20) -> list[dict[str, Any]]:
    """Synthetic en/zh/fr turns of about ``words`` words (characters for zh)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        lang = ("en", "zh", "fr")[i % 3]
        w = WORDS[lang]
        k = max(3, int(rng.gauss(words, words / 4)))
        start = rng.randrange(len(w))
        toks = [w[(start + j) % len(w)] for j in range(k)]
        out.append({"id": f"b{i}", "user_message": ("" if lang == "zh" else " ").join(toks)})
    return out


def turns_of_tokens(gate: Any, n: int, tokens: int, seed: int = 1) -> list[dict[str, Any]]:
    """Turns whose model input (template included) is about ``tokens`` tokens long."""

    def size(msg: str) -> int:
        return len(gate._encode([{"user_message": msg}])[0][0])

    out = []
    for rec in make_turns(n, seed=seed, words=8):
        msg = rec["user_message"]
        while size(msg) < tokens:
            msg += " " + msg
        while size(msg) > tokens and len(msg) > 4:
            msg = msg[: max(4, int(len(msg) * 0.95))]
        out.append({"id": rec["id"], "user_message": msg})
    return out


def timed(fn: Any, items: list[Any], warmup: int = 20) -> list[float]:
    for it in items[:warmup]:
        fn(it)
    ms = []
    for it in items:
        t = time.perf_counter()
        fn(it)
        ms.append((time.perf_counter() - t) * 1000.0)
    return ms


# --- latency ---------------------------------------------------------------------------


def bare_session(model_dir: str) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    return ort.InferenceSession(str(Path(model_dir) / "model.onnx"), opts,
                                providers=["CPUExecutionProvider"])  # fmt: skip


def bare_feed(session: Any, ids: list[int]) -> dict[str, np.ndarray]:
    a = np.asarray([ids], dtype=np.int64)
    feed = {}
    for inp in session.get_inputs():
        feed[inp.name] = (
            a
            if inp.name == "input_ids"
            else (np.ones_like(a) if inp.name == "attention_mask" else np.zeros_like(a))
        )
    return feed


def tfidf_baseline(corpus: list[str], notes: list[str]) -> Any:
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
    except ImportError:
        notes.append("TF-IDF+LR skipped: scikit-learn not installed")
        return None
    texts, labels = [], []
    for pattern in corpus:
        for path in sorted(glob.glob(pattern)):
            opener = gzip.open if path.endswith(".gz") else open
            with opener(path, "rt", encoding="utf-8") as f:
                recs = [json.loads(line) for line in f if line.strip()]
            for rec in recs:
                if rec.get("split") in ("eval_only", "test", "dev"):
                    continue
                d = (rec.get("labels") or {}).get("decision")
                if d and rec.get("input", {}).get("user_message"):
                    texts.append(rec["input"]["user_message"])
                    labels.append(d)
    if len(set(labels)) < 2:
        notes.append("TF-IDF+LR skipped: no labeled train turns found (--corpus)")
        return None
    clf = make_pipeline(TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4), min_df=1),
                        LogisticRegression(max_iter=300))  # fmt: skip
    clf.fit(texts, labels)
    notes.append(f"TF-IDF(char 1-4)+LR trained inline on {len(texts)} decision labels")
    return clf


def bench_latency(args: argparse.Namespace, notes: list[str]) -> dict[str, Any]:
    from gatecli.gate import Gate

    gate = Gate(args.model, intra_op_threads=1, batch_size=1)
    session = bare_session(args.model)
    sets = {"short_20w": make_turns(args.n, seed=2), "tok64": turns_of_tokens(gate, args.n, 64)}
    fp32 = Gate(args.fp32_model, intra_op_threads=1, batch_size=1) if args.fp32_model else None
    if fp32 is None:
        notes.append("ONNX fp32 skipped: pass --fp32-model DIR")
    torch_model = load_torch(args.torch_checkpoint, notes)
    clf = tfidf_baseline(args.corpus, notes)
    res: dict[str, Any] = {}
    for name, turns in sets.items():
        seqs, _ = gate._encode(turns)  # pre-tokenised ids, exactly what Gate feeds the model
        row: dict[str, Any] = {"mean_tokens": round(float(np.mean([len(s) for s in seqs])), 1)}
        row["gatecli"] = pct(timed(gate.classify, turns))
        feeds = [bare_feed(session, s) for s in seqs]
        row["bare_ort"] = pct(timed(lambda f: session.run(None, f), feeds))
        row["overhead_ratio_p50"] = round(row["gatecli"]["p50"] / row["bare_ort"]["p50"], 2)
        if fp32 is not None:
            row["onnx_fp32"] = pct(timed(fp32.classify, turns))
        if torch_model is not None:
            import torch

            def run_torch(s: list[int]) -> Any:
                with torch.inference_mode():
                    t = torch.tensor([s])
                    return torch_model(t, torch.ones_like(t))

            row["torch_eager"] = pct(timed(run_torch, seqs))
        if clf is not None:
            row["tfidf_lr"] = pct(timed(lambda r: clf.predict_proba([r["user_message"]]), turns))
        res[name] = row
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


def bench_throughput(args: argparse.Namespace) -> dict[str, Any]:
    from gatecli.gate import Gate
    from gatecli.labeling.pipeline import label

    res: dict[str, Any] = {"n": args.turns}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "turns.jsonl"
        with open(src, "w", encoding="utf-8") as f:
            for rec in make_turns(args.turns, seed=3):
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        gate = Gate(args.model, intra_op_threads=1, batch_size=args.batch_size)
        turns = make_turns(args.turns, seed=3)
        t = time.perf_counter()
        for k in range(0, len(turns), 2048):  # the bare loop: one process, no files
            gate.classify_batch(turns[k : k + 2048])
        res["bare_loop_1proc"] = round(len(turns) / (time.perf_counter() - t), 1)
        for w in args.workers:
            s = label([src], Path(tmp) / f"out{w}.jsonl", model=args.model, workers=w,
                      batch_size=args.batch_size, review_size=0)  # fmt: skip
            res[f"label_{w}w"] = round(s.rows / s.seconds, 1)
    return res


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
    (what one ``label`` worker is), read from /proc, median of a few runs."""
    starts, rss = [], []
    for _ in range(args.repeats):
        t0 = time.time()
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        cmd = [sys.executable, "-c", CHILD, args.model]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
        info = json.loads(out.stdout.strip().splitlines()[-1])
        starts.append(info["t"] - t0)
        rss.append(info["rss_kb"] / 1024)
    return {"cold_start_s_median": round(float(np.median(starts)), 3),
            "peak_rss_mb_per_worker": round(float(np.median(rss)), 1)}  # fmt: skip


# --- quality per millisecond -----------------------------------------------------------


def bench_quality(evals: list[str], latency: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Rows of NAME=FILE `gatecli eval --json` outputs: quality, p50 and F1 per ms."""
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
                         "decision_macro_f1": f1, "safety_recall": dec.get("safety_recall"),
                         "events_micro_f1": ev.get("micro_f1"), "p50_ms": p50,
                         "f1_per_ms": round(f1 / p50, 4) if f1 and p50 else None})  # fmt: skip
    return rows


# --- reporting -------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    info = {"python": platform.python_version(), "cpus": os.cpu_count()}
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


def markdown(res: dict[str, Any]) -> str:
    m = res["machine"]
    lines = [f"Machine: {m.get('Model name', '?')}, {m.get('CPU(s)', m['cpus'])} CPUs, "
             f"onnxruntime {m['onnxruntime']}, Python {m['python']}; model `{res['model']}`; "
             f"{res['date']}.", ""]  # fmt: skip
    if "latency" in res:
        cols = ["gatecli", "bare_ort", "onnx_fp32", "torch_eager", "tfidf_lr"]
        lines += ["| turns | tokens | " + " | ".join(f"{c} p50/p90/p99 ms" for c in cols)
                  + " | gatecli/bare |", "|---" * (len(cols) + 3) + "|"]  # fmt: skip
        for name, row in res["latency"].items():
            cells = [("/".join(f"{row[c][k]:.2f}" for k in ("p50", "p90", "p99")) if c in row
                      else "skipped") for c in cols]  # fmt: skip
            lines.append(f"| {name} | {row['mean_tokens']} | " + " | ".join(cells)
                         + f" | {row['overhead_ratio_p50']}x |")  # fmt: skip
        lines.append("")
    if "throughput" in res:
        t = res["throughput"]
        lines += ["| throughput (turns/s) | " + " | ".join(k for k in t if k != "n") + " |",
                  "|---" * len(t) + "|",
                  f"| {t['n']} turns | " + " | ".join(str(v) for k, v in t.items() if k != "n")
                  + " |", ""]  # fmt: skip
    if "process" in res:
        p = res["process"]
        lines += [f"Cold start (process start -> first record): {p['cold_start_s_median']} s; "
                  f"peak RSS per worker: {p['peak_rss_mb_per_worker']} MB.", ""]  # fmt: skip
    if res.get("quality"):
        lines += ["| model | suite | n | decision macro-F1 | safety recall | events micro-F1 "
                  "| p50 ms | F1 per ms |", "|---" * 8 + "|"]  # fmt: skip
        for q in res["quality"]:
            lines.append("| " + " | ".join(str(q[k]) for k in ("model", "suite", "n",
                         "decision_macro_f1", "safety_recall", "events_micro_f1", "p50_ms",
                         "f1_per_ms")) + " |")  # fmt: skip
        lines.append("")
    lines += [f"Notes: {'; '.join(res['notes'])}." if res["notes"] else ""]
    return "\n".join(lines).rstrip() + "\n"


def write_readme(text: str) -> None:
    body = README.read_text(encoding="utf-8")
    head, _, rest = body.partition(MARK_BEGIN)
    _, _, tail = rest.partition(MARK_END)
    README.write_text(f"{head}{MARK_BEGIN}\n{text}{MARK_END}{tail}", encoding="utf-8")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=["all", "latency", "throughput", "process", "quality"])
    p.add_argument("--model", default=str(ROOT / "models" / "gatecli_models" / "gate-small"))
    p.add_argument("--fp32-model", help="model folder of the same model exported in fp32")
    p.add_argument("--torch-checkpoint", help="torch.save'd GateModel (teacher or student)")
    p.add_argument(
        "--corpus",
        nargs="*",
        default=[str(ROOT / "data" / "authored" / "*.jsonl")],
        help="§6 JSONL globs to train the TF-IDF+LR baseline on (train rows)",
    )
    p.add_argument("--n", type=int, default=1000, help="turns per latency set")
    p.add_argument("--turns", type=int, default=100_000, help="turns for throughput")
    p.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--repeats", type=int, default=5, help="cold starts to take the median of")
    p.add_argument("--eval", nargs="*", default=[], help="NAME=FILE of `gatecli eval --json`")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "results.json"))
    p.add_argument("--write-readme", action="store_true")
    args = p.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    notes: list[str] = []
    res: dict[str, Any] = {"model": args.model, "date": time.strftime("%Y-%m-%d"),
                           "machine": machine(), "notes": notes}  # fmt: skip
    if args.what in ("all", "latency"):
        res["latency"] = bench_latency(args, notes)
    if args.what in ("all", "throughput"):
        res["throughput"] = bench_throughput(args)
    if args.what in ("all", "process"):
        res["process"] = bench_process(args)
    if args.what in ("all", "quality") and args.eval:
        res["quality"] = bench_quality(args.eval, res.get("latency"))
    text = markdown(res)
    print(text)
    Path(args.out).write_text(
        json.dumps(res, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    if args.write_readme:
        write_readme(text)
    return res


if __name__ == "__main__":
    main()
