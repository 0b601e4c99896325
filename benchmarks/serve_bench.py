"""`gatecli serve` over loopback vs the gate in-process, in one run so the ratios hold.

Measures, on the same turns and the same machine:

- in-process, just before each service phase (so a shared machine's drifting load hits
  both alike): ``Gate.classify`` one turn at a time (p50) and the bare ``classify_batch``
  loop on as many threads as the server has workers; once, ``gatecli label --workers W``
  (the batch path the service is held to);
- the service (a real ``gatecli serve`` process per worker count) with 1, 8 and 64
  closed-loop clients sending one turn per request: p50/p99 latency, throughput, errors;
- past saturation: an open-loop load at a multiple of the measured capacity against a
  small queue: the share of 503s, p99 of the answered requests, requests lost (none may be).

The client is a minimal HTTP/1.1 keep-alive client on asyncio streams (a few tens of µs a
request), so on a small machine it takes as little CPU from the server as possible.
Loopback only; every phase is bounded in count and in time.

    nice python benchmarks/serve_bench.py --model models/gatecli_models/gate-small \
        --out benchmarks/serve_results.json --write-readme
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
README = Path(__file__).resolve().parent / "README.md"
BEGIN, END = "<!-- serve:begin -->", "<!-- serve:end -->"
PHRASES = {
    "en": ["turn the volume up a bit", "what's the weather tomorrow in Paris",
           "remind me to call mom", "book a table for two tonight", "can you play some jazz",
           "send an email to Sam about the meeting", "how do I reset my password"],
    "zh": ["声音调到90", "明天天气怎么样", "提醒我开会", "帮我订一张去上海的机票", "放点音乐",
           "把客厅的灯关掉", "你能调音量吗"],
    "fr": ["rappelle-moi d'appeler maman", "quel temps fera-t-il demain",
           "mets de la musique douce", "envoie un message à Paul", "réserve une table ce soir",
           "baisse le volume", "tu peux m'aider à écrire un mail"],
}  # fmt: skip


def make_turns(n: int, seed: int = 7) -> list[dict[str, Any]]:
    """Short en/zh/fr turns (one or two phrases), some with tools or accounts."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        lang = ("en", "zh", "fr")[i % 3]
        text = rng.choice(PHRASES[lang])
        if rng.random() < 0.4:
            text += ("，" if lang == "zh" else ", ") + rng.choice(PHRASES[lang])
        rec: dict[str, Any] = {"id": f"t{i}", "user_message": text}
        if rng.random() < 0.3:
            rec["available_tools"] = ["device.volume.adjust", "knowledge.web.search"]
        if rng.random() < 0.2:
            rec["connected_accounts"] = ["google_calendar"]
        out.append(rec)
    return out


def pct(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50": float("nan"), "p99": float("nan")}
    s = sorted(values)
    return {"p50": s[len(s) // 2], "p99": s[min(len(s) - 1, int(len(s) * 0.99))]}


# --- in-process ---------------------------------------------------------------------------


def inproc_latency(gate: Any, turns: list[dict[str, Any]]) -> dict[str, float]:
    """``Gate.classify`` one turn at a time, ms."""
    lat = []
    for rec in turns:
        t = time.perf_counter()
        gate.classify(rec)
        lat.append((time.perf_counter() - t) * 1000.0)
    return pct(lat)


def inproc_loop(gate: Any, turns: list[dict[str, Any]], threads: int) -> float:
    """turns/s of the bare ``classify_batch`` loop (batches of 32) on ``threads`` threads."""
    parts = [turns[i::threads] for i in range(threads)]

    def loop(part: list[dict[str, Any]]) -> None:
        for k in range(0, len(part), 32):
            gate.classify_batch(part[k : k + 32])

    pool = [threading.Thread(target=loop, args=(p,)) for p in parts]
    t = time.perf_counter()
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    return len(turns) / (time.perf_counter() - t)


def label_rate(model: str, turns: list[dict[str, Any]], workers: int) -> float:
    """turns/s that ``gatecli label`` reports (its pool start and model loads included)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "turns.jsonl"
        src.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in turns), "utf-8")
        cmd = [sys.executable, "-m", "gatecli.main", "label", str(src), "-o",
               str(Path(tmp) / "out.jsonl"), "--model", model, "--workers", str(workers),
               "--review-size", "1", "--json"]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode:
            raise RuntimeError(f"label failed: {done.stderr[-2000:]}")
        return float(json.loads(done.stdout.strip().splitlines()[-1])["rows_per_s"])


# --- the service ----------------------------------------------------------------------------


class Server:
    def __init__(self, model: str, workers: int, *extra: str) -> None:
        self.log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)  # noqa: SIM115
        cmd = [sys.executable, "-m", "gatecli.main", "serve", "--model", model, "--port", "0",
               "--workers", str(workers), *extra]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if not k.startswith("GATECLI_LLM")}
        env.pop("GATECLI_API_KEY", None)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.log, env=env)
        self.port = self._port(timeout_s=120)

    def _port(self, timeout_s: float) -> int:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(Path(self.log.name).read_text(encoding="utf-8"))
            for line in Path(self.log.name).read_text(encoding="utf-8").splitlines():
                if '"listening"' in line:
                    port = int(json.loads(line)["port"])
                    if "startup complete" in Path(self.log.name).read_text(encoding="utf-8"):
                        return port
            time.sleep(0.1)
        raise RuntimeError("server did not start")

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return -9
        finally:
            os.unlink(self.log.name)


class Conn:
    """One keep-alive HTTP/1.1 connection: POST a prepared body, read status and body."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()  # fmt: skip
        self.writer.write(head + body)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = dict(ln.lower().split(": ", 1) for ln in lines[1:] if ": " in ln)
        data = await self.reader.readexactly(int(headers.get("content-length", "0")))
        if headers.get("connection") == "close":
            self.writer.close()
            self.reader = self.writer = None
        return status, data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def bodies(turns: list[dict[str, Any]]) -> list[bytes]:
    return [json.dumps(t, ensure_ascii=False).encode("utf-8") for t in turns]


async def closed_loop(port: int, payloads: list[bytes], clients: int, limit_s: float) -> dict:
    """``clients`` connections, each sending its next request when the last one answered."""
    lat: list[float] = []
    codes: dict[str, int] = {}
    nxt = iter(range(len(payloads)))
    stop_at = time.perf_counter() + limit_s

    async def client() -> None:
        conn = Conn(port)
        try:
            for i in nxt:
                if time.perf_counter() > stop_at:
                    return
                t = time.perf_counter()
                try:
                    status, _ = await conn.post("/v1/classify", payloads[i])
                except (OSError, asyncio.IncompleteReadError):
                    status, conn = -1, Conn(port)
                lat.append((time.perf_counter() - t) * 1000.0)
                codes[str(status)] = codes.get(str(status), 0) + 1
        finally:
            conn.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    wall = time.perf_counter() - t0
    ok = codes.get("200", 0)
    return {"clients": clients, "requests": len(lat), "codes": codes, "rps": ok / wall,
            "latency_ms": pct(lat), "wall_s": wall}  # fmt: skip


async def open_loop(port: int, payloads: list[bytes], rate: float, seconds: float) -> dict:
    """Requests started at a fixed rate whatever the answers (a load past capacity);
    latency counts from the scheduled start, so client-side waiting is included."""
    pool: list[Conn] = []
    lat_ok: list[float] = []
    lat_all: list[float] = []
    codes: dict[str, int] = {}

    async def one(i: int, due: float) -> None:
        conn = pool.pop() if pool else Conn(port)
        try:
            status, _ = await conn.post("/v1/classify", payloads[i % len(payloads)])
            pool.append(conn)
        except (OSError, asyncio.IncompleteReadError):
            status = -1
            conn.close()
        ms = (time.perf_counter() - due) * 1000.0
        lat_all.append(ms)
        if status == 200:
            lat_ok.append(ms)
        codes[str(status)] = codes.get(str(status), 0) + 1

    tasks = []
    t0 = time.perf_counter()
    n = int(rate * seconds)
    for i in range(n):
        due = t0 + i / rate
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        tasks.append(asyncio.create_task(one(i, due)))
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=120)
    wall = time.perf_counter() - t0
    for c in pool:
        c.close()
    rejected = codes.get("503", 0) + codes.get("504", 0)
    return {"rate": rate, "requests": n, "codes": codes, "error_rate": rejected / max(1, n),
            "lost": codes.get("-1", 0), "ok_rps": codes.get("200", 0) / wall,
            "latency_ok_ms": pct(lat_ok), "latency_all_ms": pct(lat_all)}  # fmt: skip


def bench_service(
    gate: Any, model: str, turns: list[dict[str, Any]], args: argparse.Namespace
) -> dict:
    """Each phase is paired with its in-process reference measured just before it, while
    the server idles: on a shared machine the load drifts between phases, not within."""
    payloads = bodies(turns)
    out: dict[str, Any] = {}
    for w in args.workers:
        srv = Server(model, w)  # default logging: a line per request, as deployed
        try:
            asyncio.run(closed_loop(srv.port, payloads[:20], 1, 30))  # warm-up
            rows = []
            for clients, n in zip(args.clients, args.requests, strict=True):
                ref = {"inproc_latency_ms": inproc_latency(gate, turns[: args.latency_n]),
                       "inproc_loop_rps": inproc_loop(gate, turns[: args.batch_n], w)}  # fmt: skip
                row = asyncio.run(closed_loop(srv.port, payloads[:n], clients, args.limit_s))
                rows.append({**row, **ref})
            out[f"{w}w"] = rows
        finally:
            out[f"{w}w_exit"] = srv.stop()
    w = max(args.workers)
    capacity = max(r["rps"] for r in out[f"{w}w"])
    out["saturation"], out["saturation_workers"], out["saturation_queue"] = [], w, args.sat_queue
    if not args.sat_multiples:
        return out
    srv = Server(model, w, "--queue-size", str(args.sat_queue), "--max-records", "1")
    try:
        out["saturation"] = [
            asyncio.run(open_loop(srv.port, payloads, capacity * m, args.sat_seconds))
            for m in args.sat_multiples
        ]
    finally:
        out["saturation_exit"] = srv.stop()
    return out


# --- report ---------------------------------------------------------------------------------


def table(res: dict[str, Any]) -> str:
    lines = [
        f"Machine: {res['machine']}; model `{res['model']}`; {res['date']}; one turn per "
        "request; each row's in-process references were measured just before it.",
        "",
        "| workers | clients | requests | p50 ms | p99 ms | turns/s | in-process p50 ms "
        "| HTTP p50 − in-process | ÷ in-process loop | ÷ `label` | non-200 |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, rows in res["service"].items():
        if not key.endswith("w") or not isinstance(rows, list):
            continue
        w = int(key[:-1])
        lab = res["label"].get(f"{w}w")
        for r in rows:
            bad = {k: v for k, v in r["codes"].items() if k != "200"}
            base = r["inproc_latency_ms"]["p50"]
            lines.append(
                f"| {w} | {r['clients']} | {r['requests']} | {r['latency_ms']['p50']:.2f} | "
                f"{r['latency_ms']['p99']:.2f} | {r['rps']:.1f} | {base:.2f} | "
                f"{r['latency_ms']['p50'] - base:+.2f} ms ({r['latency_ms']['p50'] / base:.2f}x) | "
                f"{r['rps'] / r['inproc_loop_rps']:.2f} | "
                f"{(r['rps'] / lab if lab else float('nan')):.2f} | {bad or 0} |"
            )
    refs = ", ".join(f"{k}: {v:.1f}" for k, v in res["label"].items())
    sv = res["service"]
    lines += [
        "",
        f"`÷ in-process loop`: throughput over the bare `classify_batch` loop on as many "
        f"threads as workers; `÷ label`: over `gatecli label --workers N` (turns/s: {refs}, "
        "measured once, before the service phases).",
    ]
    if sv["saturation"]:
        lines += [
            "",
            f"Past saturation ({sv['saturation_workers']} workers, --queue-size "
            f"{sv['saturation_queue']}, open-loop load at a multiple of the best closed-loop "
            "throughput; latency counted from each request's scheduled start):",
            "",
            "| offered req/s | requests | answered 200/s | 503+504 share | p50 ms (200s) "
            "| p99 ms (200s) | p99 ms (all) | lost |",
            "|---|---|---|---|---|---|---|---|",
        ]
    for s in sv["saturation"]:
        lines.append(
            f"| {s['rate']:.0f} | {s['requests']} | {s['ok_rps']:.1f} | {s['error_rate']:.1%} | "
            f"{s['latency_ok_ms']['p50']:.1f} | {s['latency_ok_ms']['p99']:.1f} | "
            f"{s['latency_all_ms']['p99']:.1f} | {s['lost']} |"
        )
    exits = {k: v for k, v in sv.items() if k.endswith("exit")}
    lines += [
        "",
        f"Server exit codes after SIGTERM: {exits}; bench wall time {res['wall_s']:.0f} s.",
    ]
    return "\n".join(lines)


def write_readme(text: str) -> None:
    readme = README.read_text(encoding="utf-8")
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in readme and END in readme:
        head, rest = readme.split(BEGIN, 1)
        readme = head + block + rest.split(END, 1)[1]
    else:
        readme = readme.rstrip("\n") + "\n\n## serve\n\n" + block + "\n"
    README.write_text(readme, encoding="utf-8")


def machine() -> str:
    import onnxruntime

    cpu = platform.processor() or platform.machine()
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        names = [ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")]
    cpu = names[0] if names else cpu
    return f"{cpu}, {os.cpu_count()} CPUs, onnxruntime {onnxruntime.__version__}, " \
        f"Python {platform.python_version()}"  # fmt: skip


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=str(ROOT / "models" / "gatecli_models" / "gate-small"))
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--clients", type=int, nargs="+", default=[1, 8, 64])
    p.add_argument("--requests", type=int, nargs="+", default=[120, 300, 800],
                   help="requests per client count (same order as --clients)")  # fmt: skip
    p.add_argument("--limit-s", type=float, default=15.0, help="time bound of one phase")
    p.add_argument("--latency-n", type=int, default=60, help="turns per in-process latency ref")
    p.add_argument("--batch-n", type=int, default=192, help="turns per in-process loop ref")
    p.add_argument("--label-n", type=int, default=800)
    p.add_argument(
        "--sat-multiples",
        type=float,
        nargs="*",
        default=[1.5, 3.0],
        help="offered load past saturation, as multiples of the measured capacity",
    )
    p.add_argument("--sat-seconds", type=float, default=3.0)
    p.add_argument("--sat-queue", type=int, default=64)
    p.add_argument("--out", default=None, help="write the results JSON here")
    p.add_argument("--write-readme", action="store_true")
    args = p.parse_args(argv)
    if len(args.requests) != len(args.clients):
        p.error("--requests needs one count per --clients value")
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    t0, load0 = time.perf_counter(), os.getloadavg()[0]
    n = max(args.latency_n, args.batch_n, args.label_n, *args.requests)
    turns = make_turns(n)
    res: dict[str, Any] = {"model": os.path.relpath(args.model, ROOT), "machine": machine(),
                           "date": time.strftime("%Y-%m-%d")}  # fmt: skip
    from gatecli.gate import Gate

    gate = Gate(args.model, intra_op_threads=1, batch_size=32)
    for rec in turns[:20]:
        gate.classify(rec)
    res["label"] = {f"{w}w": label_rate(args.model, turns[: args.label_n], w) for w in args.workers}
    res["service"] = bench_service(gate, args.model, turns, args)
    res["wall_s"] = time.perf_counter() - t0
    res["load"] = [load0, os.getloadavg()[0]]
    text = table(res)
    print(text)
    if args.out:
        Path(args.out).write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    if args.write_readme:
        write_readme(text)
    return res


if __name__ == "__main__":
    main()
