"""Run the app on uvicorn in this process: JSON logs, the bound port, SIGTERM drain.

One process, one event loop, ``--workers`` gate threads (see :mod:`.batcher` for why
threads and not uvicorn worker processes). The socket is bound here so that ``--port 0``
works and the ``listening`` log line names the real port. On SIGTERM or SIGINT uvicorn
stops accepting connections, lets every request in flight finish (at most
``--drain-timeout`` seconds), then the lifespan stops the gate workers; the process then
exits 0, so a supervisor sees a clean stop rather than death by signal.
"""

from __future__ import annotations

import json
import logging
import signal
import socket
import sys
import time
from typing import Any

from gatecli.serve.config import ServeConfig
from gatecli.serve.service import GateService

log = logging.getLogger("gatecli.serve")
GIL_SWITCH_S = 0.0005


class JsonLines(logging.Formatter):
    """One JSON object per log line: ``ts``, ``level``, ``event`` and the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        out: dict[str, Any] = {
            "ts": f"{ts}.{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        out.update(getattr(record, "fields", None) or {})
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def setup_logging(level: str) -> None:
    """Send gatecli's and uvicorn's logs to stderr as JSON lines (uvicorn's access log is
    off: the service logs every request itself, with ids and timings)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines())
    for name in ("gatecli.serve", "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler] if name != "uvicorn.error" else []
        logger.setLevel(level.upper())
        logger.propagate = name == "uvicorn.error"


def run(service: GateService, config: ServeConfig) -> int:
    """Serve until SIGTERM/SIGINT, drain, and return the exit status (0 after a clean drain)."""
    import uvicorn

    from gatecli.serve.app import create_app

    setup_logging(config.log_level)
    # The event loop and the gate workers share the GIL. A worker leaves it for every
    # session.run and tokenizer call and must get it back; under a flood of requests the
    # loop never blocks, so each return waited out the 5 ms default switch interval:
    # answered turns/s at 2x capacity fell to 50-80% of the 0.5 ms figure (2 workers,
    # gate-small, 2 CPUs; benchmarks/README.md, serve).
    sys.setswitchinterval(GIL_SWITCH_S)
    ucfg = uvicorn.Config(
        create_app(service),
        host=config.host,
        port=config.port,
        lifespan="on",
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=int(config.drain_timeout_s) or 1,
        server_header=False,
    )
    server = uvicorn.Server(ucfg)
    sock = bind(config.host, config.port)
    host, port = sock.getsockname()[:2]
    for sig in (signal.SIGTERM, signal.SIGINT):  # uvicorn re-raises the signal after its
        signal.signal(sig, lambda signum, frame: None)  # drain: make that a no-op, exit 0
    log.info(
        "listening",
        extra={
            "fields": {
                "url": f"http://{host}:{port}",
                "host": host,
                "port": port,
                "model": service.model_id,
                "workers": config.workers,
                "auth": config.api_key is not None,
                "log_text": config.log_text,
                "llm": _llm_state(service),
            }
        },
    )
    server.run(sockets=[sock])
    log.info("stopped", extra={"fields": {"started": server.started}})
    return 0 if server.started else 1


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket (IPv6 when the host has a colon); OSError names the address."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say so, and without
    # it Nagle and delayed ACKs add ~40 ms to every keep-alive response
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    sock.set_inheritable(True)
    return sock


def _llm_state(service: GateService) -> str:
    esc = service.escalator
    if esc is None or esc.client is None:
        return "off" if esc is None else f"off ({esc.unconfigured_reason})"
    return f"on ({esc.client.config.model})"
