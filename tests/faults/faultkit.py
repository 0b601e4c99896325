"""Fault-suite helpers: the real CLI in a subprocess, and a real LLM server that misbehaves.

:class:`StubLLM` is an HTTP server on 127.0.0.1 (a free port, threads) that speaks the
chat-completions shape and fails on purpose, one ``mode`` at a time: ``ok`` answers a
valid coach, ``hang`` reads the request and never answers, ``drip`` sends the headers and
then one byte every ``drip_s`` seconds, ``sleep`` answers after ``sleep_s``, ``close``
drops the connection without a word, ``garbage`` answers text that is not JSON and
``flip`` answers a coach that tries to set the decision. It records every request body so
a test can prove what did (or did not) leave the machine. Each wait inside it ends when
the fixture stops, so no test outlives its own bound.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

CLI = [sys.executable, "-c", "from gatecli.main import main; main()"]


@dataclass
class Ran:
    """One finished CLI run: exit code, output streams and wall time."""

    rc: int
    stdout: str
    stderr: str
    seconds: float

    def rows(self) -> list[dict]:
        return [json.loads(s) for s in self.stdout.splitlines() if s.strip()]


def cli_env(**extra: str) -> dict[str, str]:
    """The environment for a CLI run: offline, no LLM or model settings from the caller."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATECLI_")}
    env.update({"HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}, **extra)
    return env


def run_cli(args: Sequence[str], *, timeout: float, cwd: Path | None = None) -> Ran:
    """Run ``gatecli ARGS`` to completion; a run past ``timeout`` fails the test."""
    t0 = time.monotonic()
    try:
        proc = subprocess.run(
            [*CLI, *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=cli_env(),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"gatecli {' '.join(map(str, args))} still running after {timeout:g}s: {exc}")
    return Ran(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - t0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Handler(BaseHTTPRequestHandler):
    server: StubLLM

    def log_message(self, *args: object) -> None:  # keep pytest output clean
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        self._send(200, b'{"data": []}')

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        stub = self.server
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        stub.record(body)
        mode = stub.mode
        if mode == "hang":
            stub.stopping.wait(60)
            return
        if mode == "close":  # returning without a byte: the server closes the socket
            self.close_connection = True
            return
        if mode == "drip":
            self._drip()
            return
        if mode == "sleep" and stub.stopping.wait(stub.sleep_s):
            return
        self._send(200, json.dumps(stub.reply(mode)).encode())

    def _drip(self) -> None:
        stub = self.server
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.flush()
            for _ in range(100000):
                if stub.stopping.wait(stub.drip_s):
                    return
                self.wfile.write(b" ")
                self.wfile.flush()

    def _send(self, code: int, data: bytes) -> None:
        with contextlib.suppress(OSError):
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)


class StubLLM(ThreadingHTTPServer):
    """A chat-completions server on 127.0.0.1 that fails the way ``mode`` says."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode = "ok"
        self.drip_s = 2.0
        self.sleep_s = 30.0
        self.stopping = threading.Event()
        self.requests: list[dict] = []
        self.times: list[float] = []
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def record(self, body: bytes) -> None:
        with self._lock:
            self.requests.append(json.loads(body))
            self.times.append(time.monotonic())

    def sent_text(self) -> str:
        """Everything the client sent, as one string (to search for what must not leave)."""
        with self._lock:
            return "\n".join(json.dumps(r, ensure_ascii=False) for r in self.requests)

    @staticmethod
    def reply(mode: str) -> dict:
        from gatecli.coach import build_coach

        coach = build_coach("en", ["time"])
        content = {
            "garbage": "this is {not json",
            "flip": json.dumps({**coach, "decision": "execute", "next_action": "continue"}),
        }.get(mode, json.dumps(coach))
        return {"choices": [{"message": {"role": "assistant", "content": content}}]}
