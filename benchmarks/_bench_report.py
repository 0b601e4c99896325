"""Markdown tables of a bench.py run, issue 14's release targets, and the README section.

Everything here reads the result dict that bench.py also writes as JSON, so the tables can
be regenerated from ``results.json`` without measuring again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parent / "README.md"
MARK_BEGIN, MARK_END = "<!-- results:begin -->", "<!-- results:end -->"
COMPARE = ("onnx_fp32", "torch_eager", "tfidf_lr")  # measured for the new model only


def _get(res: Any, *keys: Any) -> Any:
    """``res[k1][k2]...`` or None where any step is missing."""
    for k in keys:
        if not isinstance(res, dict) or k not in res:
            return None
        res = res[k]
    return res


def main_throughput(res: dict[str, Any], role: str) -> dict[str, Any] | None:
    """The throughput row of ``role`` at the run's main batch size (the one both models get)."""
    t = res.get("throughput") or {}
    rows = [r for r in t.get("rows", []) if r["model"] == role]
    return next((r for r in rows if r["batch_size"] == t.get("batch_size")), None)


def ratio(new: float | None, prev: float | None, digits: int = 2) -> float | None:
    return round(new / prev, digits) if new is not None and prev else None


def ratios(res: dict[str, Any]) -> dict[str, Any]:
    """new / previous for every measure both models got (< 1 is better for times and memory,
    > 1 for throughput)."""
    out: dict[str, Any] = {}
    for name in _get(res, "latency", "new") or {}:
        for q in ("p50", "p99"):
            new = _get(res, "latency", "new", name, "gatecli", q)
            prev = _get(res, "latency", "previous", name, "gatecli", q)
            out[f"latency_{q}_{name}"] = ratio(new, prev)
    tn, tp = main_throughput(res, "new"), main_throughput(res, "previous")
    for key in [k for k in (tn or {}) if k.startswith(("label_", "bare_"))]:
        out[f"throughput_{key}"] = ratio(_get(tn, key), _get(tp, key))
    for key in ("cold_start_s_median", "peak_rss_mb_per_worker"):
        out[key] = ratio(_get(res, "process", "new", key), _get(res, "process", "previous", key))
    out["model_mb"] = ratio(_get(res, "models", "new", "model_mb"),
                            _get(res, "models", "previous", "model_mb"))  # fmt: skip
    return {k: v for k, v in out.items() if v is not None}


# (what, goal, value from the result dict, met?, digits shown)
Check = tuple[str, str, Callable[[dict[str, Any]], Any], Callable[[float], bool], int]


def _label_2w(res: dict[str, Any]) -> Any:
    return _get(main_throughput(res, "new") or {}, "label_2w")


TARGETS: list[Check] = [
    ("p50, ~20-word turn, no context, 1 thread (ms)", "<= 2.0",
     lambda r: _get(r, "latency", "new", "short_20w", "gatecli", "p50"), lambda v: v <= 2.0, 2),
    ("p99, ~20-word turn, no context, 1 thread (ms)", "<= 4",
     lambda r: _get(r, "latency", "new", "short_20w", "gatecli", "p99"), lambda v: v <= 4.0, 2),
    ("`label` throughput, 2 workers (turns/s)", ">= 1,000", _label_2w, lambda v: v >= 1000, 0),
    ("peak RSS per worker (MB)", "<= 150",
     lambda r: _get(r, "process", "new", "peak_rss_mb_per_worker"), lambda v: v <= 150, 1),
    ("cold start, process start -> first record (s)", "<= 0.3",
     lambda r: _get(r, "process", "new", "cold_start_s_median"), lambda v: v <= 0.3, 3),
    ("model.onnx size (MB)", "<= 25",
     lambda r: _get(r, "models", "new", "model_mb"), lambda v: v <= 25.0, 2),
    ("int8/fp32 decision agreement (gatecli.json extra.parity)", ">= 0.995",
     lambda r: _get(r, "models", "new", "int8_agreement"), lambda v: v >= 0.995, 4),
]  # fmt: skip


def targets(res: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 14's speed and size targets for the new model: value, and met or not (None:
    not measured in this run)."""
    out = []
    n = _get(res, "throughput", "n")
    for name, goal, value_of, ok, digits in TARGETS:
        value = value_of(res)
        if name.startswith("`label`") and n is not None:
            name += f", {n:,} turns" + ("" if n == 20_000 else " (target: on 20,000)")
        if name.startswith("int8") and value is not None:
            name += f", {_get(res, 'models', 'new', 'n_parity_texts')} texts"
        out.append({"target": name, "goal": goal, "value": value, "digits": digits,
                    "met": None if value is None else bool(ok(float(value)))})  # fmt: skip
    return out


def _p(row: dict[str, Any] | None) -> str:
    if not row:
        return "-"
    return "/".join(f"{row[k]:.2f}" for k in ("p50", "p90", "p99"))


def _x(value: Any) -> str:
    return "-" if value is None else f"{value}x"


def _n(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|---" * len(head) + "|",
            *("| " + " | ".join(r) + " |" for r in rows), ""]  # fmt: skip


def _models_line(res: dict[str, Any]) -> str:
    parts = []
    for role in ("new", "previous"):
        m = _get(res, "models", role)
        if m:
            parts.append(f"{role} `{m['path']}` ({m['name']} {m['version']}, "
                         f"template v{m['template_version']})")  # fmt: skip
    return "Models: " + "; ".join(parts) + "."


def _latency(res: dict[str, Any]) -> list[str]:
    rows = []
    lat, r = res["latency"], res.get("ratios", {})
    for name in lat.get("new", {}):
        for role in ("new", "previous"):
            row = _get(lat, role, name)
            if row is None:
                continue
            new = role == "new"
            rows.append([role, name, str(row["mean_tokens"]), _p(row["gatecli"]),
                         _p(row["bare_ort"]), f"{row['overhead_ratio_p50']}x",
                         *(_p(row.get(c)) if new else "-" for c in COMPARE),
                         _x(r.get(f"latency_p50_{name}")) if new else "",
                         _x(r.get(f"latency_p99_{name}")) if new else ""])  # fmt: skip
    head = ["model", "turns", "tokens", "gatecli p50/p90/p99 ms", "bare ort p50/p90/p99 ms",
            "gatecli/bare", *(f"{c} p50/p90/p99 ms" for c in COMPARE), "new/prev p50",
            "new/prev p99"]  # fmt: skip
    return _table(head, rows)


def _throughput(res: dict[str, Any]) -> list[str]:
    t, r = res["throughput"], res.get("ratios", {})
    workers = [k for k in t["rows"][0] if k.startswith("label_")]
    rows = []
    for row in t["rows"]:
        main = row["model"] == "new" and row["batch_size"] == t["batch_size"]
        rows.append([row["model"], str(row["batch_size"]), _n(row.get("bare_loop_1proc"), 1),
                     *(_n(row.get(w), 1) for w in workers),
                     *(_x(r.get(f"throughput_{w}")) if main else "" for w in workers)])  # fmt: skip
    names = [w.removeprefix("label_") for w in workers]
    head = ["model", "batch/worker", "in-process loop", *(f"label {w}" for w in names),
            *(f"new/prev {w}" for w in names)]  # fmt: skip
    return [f"Throughput, turns/s, on {t['n']:,} synthetic ~20-word turns:", "",
            *_table(head, rows)]  # fmt: skip


def _process(res: dict[str, Any]) -> list[str]:
    p, r = res["process"], res.get("ratios", {})
    rows = []
    for role in ("new", "previous"):
        if role in p:
            m = _get(res, "models", role) or {}
            q = p[role].get("cold_start_s_p25_p75")
            rows.append([role, _n(m.get("model_mb"), 2), _n(p[role]["cold_start_s_median"]),
                         "-" if not q else f"{q[0]:.3f}-{q[1]:.3f}",
                         _n(p[role]["peak_rss_mb_per_worker"], 1)])  # fmt: skip
    if "previous" in p:
        rows.append(["new/prev", _x(r.get("model_mb")), _x(r.get("cold_start_s_median")), "",
                     _x(r.get("peak_rss_mb_per_worker"))])  # fmt: skip
    head = ["model", "model.onnx MB", "cold start s (median)", "(quartiles)",
            "peak RSS MB per worker"]  # fmt: skip
    return _table(head, rows)


def _kernels(res: dict[str, Any]) -> list[str]:
    k = res["kernels"]
    rows = [[name, _n(v["mb"], 2), v["ops"], _p(v["latency_ms"]), _n(v["batch_turns_per_s"], 1),
             _n(v["agreement"], 4), _n(v.get("agreement_1"), 4)]
            for name, v in k["variants"].items()]  # fmt: skip
    head = ["variant", "MB", "ops", "1 turn p50/p90/p99 ms", "batch-32 turns/s",
            "decision agreement vs fp32 (batches)", "(single turns)"]  # fmt: skip
    return [f"Kernels, from `{k['fp32_model']}`: {k['n_texts']} corpus test turns "
            f"({k['n_single']} timed one by one), mean {k['mean_tokens']} tokens with the "
            "model's template, one thread:", "", *_table(head, rows),
            f"Verdict: {k['verdict']}.", ""]  # fmt: skip


def _quality(res: dict[str, Any]) -> list[str]:
    keys = ("model", "suite", "n", "decision_macro_f1", "safety_recall", "events_micro_f1",
            "p50_ms", "f1_per_ms")  # fmt: skip
    head = ["model", "suite", "n", "decision macro-F1", "safety recall", "events micro-F1",
            "p50 ms", "F1 per ms"]  # fmt: skip
    return _table(head, [[_n(q[k]) for k in keys] for q in res["quality"]])


def markdown(res: dict[str, Any]) -> str:
    m = res["machine"]
    lines = [f"Machine: {m.get('Model name', '?')}, {m.get('CPU(s)', m['cpus'])} CPUs, "
             f"onnxruntime {m['onnxruntime']}, Python {m['python']}; {res['date']}.",
             "", _models_line(res), ""]  # fmt: skip
    if res.get("targets"):
        rows = [[t["target"], t["goal"], _n(t["value"], t["digits"]),
                 {True: "met", False: "not met", None: "not measured"}[t["met"]]]
                for t in res["targets"]]  # fmt: skip
        lines += ["Issue 14 targets (new model):", "",
                  *_table(["target", "goal", "value", "met"], rows)]  # fmt: skip
    if "latency" in res:
        lines += _latency(res)
    if "throughput" in res:
        lines += _throughput(res)
    if "process" in res:
        lines += _process(res)
    if "kernels" in res:
        lines += _kernels(res)
    if res.get("quality"):
        lines += _quality(res)
    lines += [f"Notes: {'; '.join(res['notes'])}." if res["notes"] else ""]
    return "\n".join(lines).rstrip() + "\n"


def write_readme(text: str) -> None:
    """Replace the results section of benchmarks/README.md with ``text``."""
    body = README.read_text(encoding="utf-8")
    head, _, rest = body.partition(MARK_BEGIN)
    _, _, tail = rest.partition(MARK_END)
    README.write_text(f"{head}{MARK_BEGIN}\n{text}{MARK_END}{tail}", encoding="utf-8")
