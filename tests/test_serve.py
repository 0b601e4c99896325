"""`gatecli serve`: the real server process on a free loopback port, called over real HTTP.

Each server is `python -m gatecli.main serve --port 0` on the tiny model; the test reads the
bound port from the JSON `listening` log line. The slow tests load the server on purpose
(queue overflow, a drain with requests in flight, the deadline) or need the OpenAI SDK.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from gatecli.commands.classify import classify  # noqa: E402
from gatecli.main import app  # noqa: E402
from gatecli.serve.batcher import MicroBatcher, QueueFull  # noqa: E402
from gatecli.serve.metrics import Registry  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "data" / "examples"
LONG = "turn the volume up a little and then tell me the weather for tomorrow please " * 8
CLEAN_ENV = ("GATECLI_API_KEY", "GATECLI_LLM_BASE_URL", "GATECLI_LLM_MODEL", "GATECLI_LLM_CONFIG")


class Server:
    """A `gatecli serve` child process; stderr (its JSON log) goes to a file."""

    def __init__(self, model: Path, log: Path, *args: str, env: dict[str, str] | None = None):
        base = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV}
        cmd = [sys.executable, "-m", "gatecli.main", "serve", "--model", str(model)]
        self.log = log
        self._err = open(log, "w", encoding="utf-8")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [*cmd, "--port", "0", *args],
            stdout=subprocess.DEVNULL,
            stderr=self._err,
            env={**base, "HF_HUB_OFFLINE": "1", **(env or {})},
        )
        self.url = self._wait_ready(timeout_s=90)

    def _wait_ready(self, timeout_s: float) -> str:
        end = time.monotonic() + timeout_s
        url = ""
        while time.monotonic() < end:
            assert self.proc.poll() is None, self.log.read_text(encoding="utf-8")
            if not url:
                for event in self.events():
                    if event.get("event") == "listening":
                        url = event["url"]
            if url:
                try:
                    if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                        return url
                except httpx.TransportError:
                    pass
            time.sleep(0.1)
        raise AssertionError(f"server not ready: {self.log.read_text(encoding='utf-8')}")

    def events(self) -> list[dict[str, Any]]:
        lines = self.log.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.startswith("{")]

    def stop(self, timeout_s: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(10)
        self._err.close()
        return code


@pytest.fixture(scope="module")
def server(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    log = tmp_path_factory.mktemp("serve") / "server.log"
    srv = Server(tiny_model_dir, log, "--max-body-bytes", "65536", "--max-records", "64")
    yield srv
    assert srv.stop() == 0


def strip_latency(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "latency_ms"} for r in rows]


def classify_lines(lines: list[Any], model: Path, tmp_path: Path) -> list[dict[str, Any]]:
    """What `classify` writes for these JSONL lines, with the escalator the CLI builds."""
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    saved = {k: os.environ.pop(k) for k in CLEAN_ENV if k in os.environ}
    try:  # the server runs with these unset too
        return classify(src, model=model)
    finally:
        os.environ.update(saved)


MIXED: list[Any] = [
    *[json.loads(line) for line in (EXAMPLES / "gate-input.jsonl").read_text("utf-8").splitlines()],
    {"id": "bad-1", "user_message": ""},
    7,
    {"id": "chat", "messages": [{"role": "user", "content": "rappelle-moi demain"},
                                {"role": "assistant", "content": "à quelle heure ?"},
                                {"role": "user", "content": "à 9h"}]},
    {"id": "bad-2", "user_message": "x", "connected_accounts": 3},
]  # fmt: skip


def test_batch_equals_classify(server: Server, tiny_model_dir: Path, tmp_path: Path) -> None:
    res = httpx.post(f"{server.url}/v1/classify", json={"records": MIXED}, timeout=30)
    assert res.status_code == 200, res.text
    body = res.json()
    expected = classify_lines(MIXED, tiny_model_dir, tmp_path)
    assert strip_latency(body["records"]) == strip_latency(expected)
    assert [r["line"] for r in body["records"]][-5:] == [6, 7, 8, 8, 9]
    assert body["model"] == "tiny-test@0.0.0" and res.headers["x-request-id"]
    nd = httpx.post(
        f"{server.url}/v1/classify",
        json={"records": MIXED},
        headers={"Accept": "application/x-ndjson"},
        timeout=30,
    )
    assert nd.headers["content-type"].startswith("application/x-ndjson")
    assert strip_latency([json.loads(x) for x in nd.text.splitlines()]) == strip_latency(expected)


def test_single_record_and_its_error(server: Server, tiny_model_dir: Path, tmp_path: Path) -> None:
    rec = {"id": "one", "user_message": "声音调到90", "available_tools": ["device.volume.adjust"]}
    res = httpx.post(f"{server.url}/v1/classify", json=rec, timeout=30)
    assert res.status_code == 200, res.text
    assert strip_latency([res.json()]) == strip_latency(
        classify_lines([rec], tiny_model_dir, tmp_path)
    )
    bad = httpx.post(f"{server.url}/v1/classify", json={"id": 5, "user_message": " "}, timeout=30)
    assert bad.status_code == 422
    assert bad.json() == {"id": 5, "line": 1, "error": "user_message is empty"}
    chat = {"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "louder"}]}
    last = httpx.post(f"{server.url}/v1/classify?last=true", json=chat, timeout=30).json()
    assert [r["turn_index"] for r in last["records"]] == [1]


def test_moderation_shape(server: Server, tiny_model_dir: Path, tmp_path: Path) -> None:
    texts = ["how do I hurt someone", "turn the lights off", "je veux mourir"]
    res = httpx.post(
        f"{server.url}/v1/moderations", json={"input": texts, "model": "x"}, timeout=30
    )
    assert res.status_code == 200, res.text
    body = res.json()
    assert body["id"].startswith("modr-") and body["model"] == "tiny-test@0.0.0"
    expected = classify_lines([{"user_message": t} for t in texts], tiny_model_dir, tmp_path)
    assert len(body["results"]) == 3
    for result, row in zip(body["results"], expected, strict=True):
        assert set(result) == {"flagged", "categories", "category_scores",
                               "category_applied_input_types", "gate"}  # fmt: skip
        assert result["flagged"] is (row["decision"] in ("refuse", "safety"))
        assert result["category_scores"]["gate/safety"] == row["probabilities"]["safety"]
        assert result["category_scores"]["gate/refuse"] == row["probabilities"]["refuse"]
        assert result["categories"]["gate/safety"] is (row["decision"] == "safety")
        assert (
            result["categories"]["self-harm"] is False
            and result["gate"]["decision"] == row["decision"]
        )
        assert result["gate"]["fallback"]["status"] == "not_needed"
    one = httpx.post(f"{server.url}/v1/moderations", json={"input": "hello"}, timeout=30).json()
    assert len(one["results"]) == 1
    parts = {"input": [{"type": "text", "text": "hello"}, {"type": "text", "text": "there"}]}
    assert len(httpx.post(f"{server.url}/v1/moderations", json=parts).json()["results"]) == 1
    for bad in ({"input": ""}, {"input": [{"type": "image_url", "image_url": {}}]}, {"x": 1}):
        err = httpx.post(f"{server.url}/v1/moderations", json=bad, timeout=30)
        assert err.status_code == 400 and err.json()["error"]["type"] == "invalid_request_error"


def test_bad_requests_are_json_4xx(server: Server) -> None:
    url = f"{server.url}/v1/classify"
    cases = [
        (httpx.post(url, content=b"{oops"), 400, "bad_json"),
        (httpx.post(url, content=b""), 400, "bad_json"),
        (httpx.post(url, content=b"\xff\xfe{}"), 400, "bad_json"),
        (httpx.post(url, json=[{"user_message": "hi"}]), 400, "bad_shape"),
        (httpx.post(url, json={"records": {"user_message": "hi"}}), 400, "bad_shape"),
        (httpx.post(url, json={"records": [{"user_message": "a"}] * 65}), 413, "too_many_records"),
        (httpx.post(url, content=b"x" * 70_000), 413, "body_too_large"),
        (httpx.post(url, content=iter([b'{"user_message": "', b"y" * 70_000, b'"}'])), 413,
         "body_too_large"),
        (httpx.post(url, content=b'{"user_message": "x", "id": ' + b"9" * 5000 + b"}"), 400,
         "bad_json"),
        (httpx.post(url, content=b"[" * 30_000 + b"]" * 30_000), 400, "bad_json"),
        (httpx.get(url), 405, "method_not_allowed"),
        (httpx.get(f"{server.url}/v2/nothing"), 404, "not_found"),
    ]  # fmt: skip
    for res, status, code in cases:
        assert res.status_code == status, (code, res.text)
        err = res.json()["error"]
        assert err["code"] == code and err["message"] and "Traceback" not in res.text
    assert "malformed JSON" in cases[0][0].json()["error"]["message"]
    # a record that cannot be written back (a lone surrogate, NaN) is its own error row
    for body, why in ((b'{"user_message": "hi", "id": "\\ud800"}', "invalid Unicode"),
                      (b'{"user_message": "hi", "turn_index": NaN}', "turn_index")):  # fmt: skip
        res = httpx.post(url, content=body)
        assert res.status_code == 422 and why in res.json()["error"], res.text
    many = b'{"records": [{"user_message": "hi", "id": "\\ud800"}, {"user_message": "yo"}]}'
    rows = httpx.post(url, content=many).json()["records"]
    assert rows[0]["id"] == "\ufffd" and "error" in rows[0] and "error" not in rows[1]


def test_a_stalled_body_is_answered_408(tiny_model_dir: Path, tmp_path: Path) -> None:
    """Headers, then 16 of 1,000 promised bytes and silence: the connection used to stay
    open (a slot held) forever (runtime review, stop 61)."""
    from urllib.parse import urlparse

    srv = Server(tiny_model_dir, tmp_path / "b.log", "--body-timeout", "1")
    try:
        where = urlparse(srv.url)
        with socket.create_connection((where.hostname, where.port), timeout=10) as sock:
            sock.sendall(b"POST /v1/classify HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                         b'{"user_message":')  # fmt: skip
            start = time.monotonic()
            answer = sock.recv(65536).decode("utf-8", "replace")
            took = time.monotonic() - start
        assert answer.startswith("HTTP/1.1 408"), answer[:300]
        assert '"code": "timeout"' in answer or '"code":"timeout"' in answer, answer[-300:]
        assert 0.5 < took < 8
    finally:
        assert srv.stop() == 0


def metric_samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Samples of a Prometheus text page: prometheus_client's parser when installed, else a
    strict regex over every line (a line that is neither a comment nor a sample fails)."""
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        return _regex_samples(text)
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    }


LABEL = r'([a-zA-Z_]\w*)="((?:[^"\\\n]|\\[\\"n])*)"'
PAIR = LABEL.replace("(", "(?:").replace("(?:?:", "(?:")  # the same, without groups
SAMPLE = re.compile(rf"([a-zA-Z_:][\w:]*)(?:\{{((?:{PAIR},?)*)\}})? (\S+)")
UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


def _regex_samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for line in text.splitlines():
        if line.startswith(("# HELP ", "# TYPE ")):
            continue
        m = SAMPLE.fullmatch(line)
        assert m, f"not a Prometheus sample: {line!r}"
        labels = [
            (k, re.sub(r"\\[\\\"n]", lambda e: UNESCAPE[e.group(0)], v))
            for k, v in re.findall(LABEL, m.group(2) or "")
        ]
        out[(m.group(1), tuple(sorted(labels)))] = float(m.group(3))
    return out


def test_metrics_text_parses_and_counts(server: Server) -> None:
    before = metric_samples(httpx.get(f"{server.url}/metrics").text)
    rows = [{"user_message": "turn it up"}, {"user_message": "hello"}, {"user_message": ""}]
    out = httpx.post(f"{server.url}/v1/classify", json={"records": rows}).json()["records"]
    httpx.post(f"{server.url}/v1/classify", content=b"{nope")
    page = httpx.get(f"{server.url}/metrics")
    assert page.headers["content-type"].startswith("text/plain; version=0.0.4")
    after = metric_samples(page.text)
    assert _regex_samples(page.text) == after  # every line is a well-formed sample

    def delta(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    decided = [r["decision"] for r in out if "decision" in r]
    assert sum(delta("gatecli_decisions_total", decision=d) for d in set(decided)) == 2
    assert delta("gatecli_row_errors_total") == 1
    assert delta("gatecli_requests_total", endpoint="classify", code="200") == 1
    assert delta("gatecli_requests_total", endpoint="classify", code="400") == 1
    assert delta("gatecli_rejected_total", reason="bad_json") == 1
    assert delta("gatecli_request_duration_seconds_count", endpoint="classify") == 2
    assert after[("gatecli_queue_capacity", ())] == 1024
    assert ("gatecli_queue_depth", ()) in after and ("gatecli_workers_busy", ()) in after
    assert after[("gatecli_model_info", (("gatecli", "0.1.0"), ("model", "tiny-test@0.0.0")))] == 1
    statuses = {r["fallback"]["status"] for r in out if "fallback" in r}
    assert sum(delta("gatecli_fallback_total", status=s) for s in statuses) == 2


def test_logs_carry_ids_not_text(server: Server) -> None:
    secret = "my very private message 4711"
    rid = "req-log-test-1"
    httpx.post(f"{server.url}/v1/classify", json={"id": "log-me", "user_message": secret},
               headers={"X-Request-Id": rid})  # fmt: skip
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        mine = [e for e in server.events() if e.get("request_id") == rid]
        if mine:
            break
        time.sleep(0.05)
    assert mine and mine[0]["ids"] == ["log-me"] and mine[0]["turns"] == 1
    assert set(mine[0]["decisions"].values()) == {1} and mine[0]["gate_ms"] >= 0
    assert secret not in server.log.read_text(encoding="utf-8")


def test_auth_with_api_key_flag(tiny_model_dir: Path, tmp_path: Path) -> None:
    srv = Server(tiny_model_dir, tmp_path / "auth.log", "--api-key", "k-123", "--log-text")
    try:
        url = f"{srv.url}/v1/classify"
        rec = {"user_message": "what can you do"}
        missing = httpx.post(url, json=rec)
        assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
        assert missing.json()["error"]["code"] == "invalid_api_key"
        assert (
            httpx.post(url, json=rec, headers={"Authorization": "Bearer nope"}).status_code == 401
        )
        assert httpx.get(f"{srv.url}/metrics").status_code == 401
        ok = httpx.post(url, json=rec, headers={"Authorization": "Bearer k-123"})
        assert ok.status_code == 200 and ok.json()["decision"]
        assert httpx.get(f"{srv.url}/healthz").status_code == 200  # probes need no key
    finally:
        assert srv.stop() == 0
    assert "what can you do" in srv.log.read_text(encoding="utf-8")  # --log-text


@pytest.mark.slow
def test_auth_with_env_key(tiny_model_dir: Path, tmp_path: Path) -> None:
    srv = Server(tiny_model_dir, tmp_path / "env.log", env={"GATECLI_API_KEY": "from-env"})
    try:
        url = f"{srv.url}/v1/moderations"
        assert httpx.post(url, json={"input": "hi"}).status_code == 401
        good = httpx.post(url, json={"input": "hi"}, headers={"Authorization": "Bearer from-env"})
        assert good.status_code == 200
    finally:
        assert srv.stop() == 0


async def _many(
    url: str, bodies: list[Any], timeout_s: float = 120
) -> list[httpx.Response | Exception]:
    limits = httpx.Limits(max_connections=len(bodies), max_keepalive_connections=len(bodies))
    async with httpx.AsyncClient(limits=limits, timeout=timeout_s) as client:
        calls = [client.post(url, json=b) for b in bodies]
        return await asyncio.gather(*calls, return_exceptions=True)


@pytest.mark.slow
def test_queue_full_answers_503_with_retry_after(tiny_model_dir: Path, tmp_path: Path) -> None:
    args = ("--queue-size", "4", "--max-records", "4", "--max-batch", "4", "--batch-wait-ms", "0")
    srv = Server(tiny_model_dir, tmp_path / "q.log", *args)
    try:
        body = {"records": [{"user_message": f"{LONG} {i}"} for i in range(4)]}
        out = asyncio.run(_many(f"{srv.url}/v1/classify", [body] * 48))
        statuses = [r.status_code for r in out if isinstance(r, httpx.Response)]
        assert len(statuses) == 48, [r for r in out if not isinstance(r, httpx.Response)]
        assert set(statuses) <= {200, 503} and statuses.count(503) > 0 and statuses.count(200) > 0
        for r in out:
            assert isinstance(r, httpx.Response)
            if r.status_code == 503:
                assert (
                    int(r.headers["retry-after"]) >= 1 and r.json()["error"]["code"] == "queue_full"
                )
            else:
                assert len(r.json()["records"]) == 4
        rejected = metric_samples(httpx.get(f"{srv.url}/metrics").text)
        assert rejected[("gatecli_rejected_total", (("reason", "queue_full"),))] == statuses.count(
            503
        )
    finally:
        assert srv.stop() == 0


@pytest.mark.slow
def test_deadline_answers_504(tiny_model_dir: Path, tmp_path: Path) -> None:
    srv = Server(tiny_model_dir, tmp_path / "d.log", "--deadline-ms", "1", "--batch-size", "4")
    try:
        body = {"records": [{"user_message": f"{LONG} {i}"} for i in range(64)]}
        res = httpx.post(f"{srv.url}/v1/classify", json=body, timeout=60)
        assert res.status_code == 504 and res.json()["error"]["code"] == "deadline"
    finally:
        assert srv.stop() == 0


@pytest.mark.slow
def test_sigterm_drains_requests_in_flight(tiny_model_dir: Path, tmp_path: Path) -> None:
    srv = Server(tiny_model_dir, tmp_path / "drain.log", "--queue-size", "4096")
    n = 8
    body = {"records": [{"id": i, "user_message": f"{LONG} {i}"} for i in range(64)]}

    async def scenario() -> list[httpx.Response | Exception]:
        calls = asyncio.create_task(_many(f"{srv.url}/v1/classify", [body] * n))
        async with httpx.AsyncClient(timeout=10) as probe:
            for _ in range(400):  # until all n are inside the server (the probe is one more)
                page = metric_samples((await probe.get(f"{srv.url}/metrics")).text)
                if page[("gatecli_requests_in_flight", ())] >= n + 1:
                    break
                await asyncio.sleep(0.02)
            assert page[("gatecli_queue_depth", ())] > 0  # work is still waiting
        srv.proc.send_signal(signal.SIGTERM)
        return await calls

    try:
        out = asyncio.run(scenario())
        assert srv.proc.wait(60) == 0
    finally:
        srv.stop()
    assert all(isinstance(r, httpx.Response) and r.status_code == 200 for r in out), out
    for r in out:
        assert isinstance(r, httpx.Response)
        assert [row["id"] for row in r.json()["records"]] == list(range(64))
    events = [e["event"] for e in srv.events()]
    assert events[-1] == "stopped" and events.count("request") >= n + 1


@pytest.mark.slow
def test_llm_escalation_wired_like_classify(tiny_model_dir: Path, tmp_path: Path) -> None:
    """With an LLM endpoint that refuses connections, in-band turns say so in `fallback`,
    safety/refuse turns never try, and every row is still the local gate's row."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # closed again: nothing listens there
    llm = ["--llm-base-url", f"http://127.0.0.1:{dead}/v1", "--llm-model", "coach",
           "--llm-ask-margin", "1", "--llm-budget", "1", "--llm-timeout", "2"]  # fmt: skip
    srv = Server(tiny_model_dir, tmp_path / "llm.log", *llm)
    try:
        recs = [
            {"id": i, "user_message": m}
            for i, m in enumerate(
                ["remind me", "book a table", "声音调到90", "rappelle-moi", "help", "play music"]
            )
        ]
        res = httpx.post(f"{srv.url}/v1/classify", json={"records": recs}, timeout=60)
        assert res.status_code == 200, res.text
        rows = res.json()["records"]
        page = metric_samples(httpx.get(f"{srv.url}/metrics").text)
    finally:
        assert srv.stop() == 0
    local = classify_lines(recs, tiny_model_dir, tmp_path)
    called = 0
    for row, base in zip(rows, local, strict=True):
        status = row["fallback"]["status"]
        top = max(row["probabilities"], key=row["probabilities"].get)
        if row["decision"] in ("safety", "refuse") or top in ("safety", "refuse"):
            assert status == "not_needed"
        else:
            assert status in ("error", "timeout", "circuit_open"), row["fallback"]
            called += status != "circuit_open"
        assert row["source"] == "local"
        drop = ("latency_ms", "fallback")
        assert {k: v for k, v in row.items() if k not in drop} == {
            k: v for k, v in base.items() if k not in drop
        }
    assert called and sum(v for (name, _), v in page.items() if name == "gatecli_escalations_total")


@pytest.mark.slow
def test_openai_sdk_moderation_call(server: Server) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
    res = client.moderations.create(input=["turn it up", "how do I make a bomb"], model="gate")
    assert res.model == "tiny-test@0.0.0" and len(res.results) == 2
    first = res.results[0]
    assert isinstance(first.flagged, bool) and first.categories.self_harm is False
    assert first.model_extra["gate"]["decision"] in (
        "execute",
        "ask",
        "connect",
        "refuse",
        "safety",
    )


# --- in-process: the command's registration, the batcher and the metrics text ---------


def test_serve_help_and_light_import() -> None:
    res = CliRunner().invoke(app, ["serve", "--help"])
    assert res.exit_code == 0 and "--queue-size" in res.stdout and "--api-key" in res.stdout
    code = (
        "import sys, gatecli, gatecli.main; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('starlette', 'uvicorn')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


def test_serve_without_the_extra_names_the_install() -> None:
    code = ("import sys; sys.modules['starlette'] = None; from gatecli.main import app; "
            "app(['serve'])")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "gatecli[serve]" in out.stderr and "starlette" in out.stderr


def test_batcher_gathers_arriving_requests_into_one_batch() -> None:
    sizes: list[int] = []
    b = MicroBatcher(lambda recs: [{"n": i} for i, _ in enumerate(recs)], workers=1,
                     max_batch=64, wait_s=2.0, on_batch=lambda n, s: sizes.append(n))  # fmt: skip

    async def scenario() -> list[list[dict[str, Any]]]:
        arrivals = [b.arrive() for _ in range(5)]
        jobs = []
        for i, arrival in enumerate(arrivals):
            jobs.append(b.submit([{"user_message": "x"}] * (i + 1), timeout_s=10, arrival=arrival))
            await asyncio.sleep(0.01)
        first = await asyncio.gather(*(b.result(j) for j in jobs))
        t0 = time.perf_counter()
        alone = await b.result(b.submit([{"user_message": "y"}], timeout_s=10))
        assert time.perf_counter() - t0 < 1.0  # nobody arriving: no 2 s gathering wait
        return [*first, alone]

    b.start()
    try:
        out = asyncio.run(scenario())
    finally:
        b.close(timeout_s=10)
    assert sizes == [15, 1]  # 1+2+3+4+5 turns in one batch, then the lone request
    assert [len(o) for o in out] == [1, 2, 3, 4, 5, 1] and out[1] == [{"n": 1}, {"n": 2}]


def test_batcher_refuses_past_capacity_and_skips_expired_jobs() -> None:
    ran: list[int] = []
    b = MicroBatcher(lambda recs: ran.append(len(recs)) or [{} for _ in recs], queue_size=3)

    async def scenario() -> None:
        b.submit([{}] * 3, timeout_s=0.05)  # no worker yet: stays queued past its deadline
        with pytest.raises(QueueFull) as info:
            b.submit([{}], timeout_s=10)
        assert info.value.retry_after_s >= 1
        await asyncio.sleep(0.1)
        b.start()
        assert len(await b.result(b.submit([{}], timeout_s=10))) == 1

    try:
        asyncio.run(scenario())
    finally:
        b.close(timeout_s=10)
    assert ran == [1]  # the expired job was never computed


def test_metrics_text_escapes_labels() -> None:
    reg = Registry()
    reg.counter("demo_total", "Demo.", ["path"]).inc('a"b\\c\nd')
    reg.histogram("demo_seconds", "Demo.", [], (0.1, 1.0)).observe(0.5)
    samples = metric_samples(reg.render())
    assert _regex_samples(reg.render()) == samples  # the strict regex agrees with the parser
    assert samples[("demo_total", (("path", 'a"b\\c\nd'),))] == 1
    assert samples[("demo_seconds_bucket", (("le", "1"),))] == 1
    assert samples[("demo_seconds_count", ())] == 1
