"""The service's settings, validated once so the request path never re-checks them.

The defaults are sized for the shipped model on a small CPU: a forward pass of 32 turns
takes ~0.2 s there, so 1,024 queued turns bound the queueing delay to ~6 s per worker,
under the 10 s deadline; a 1 MiB body holds 256 turns with a few kB of context each.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_PORT = 8088
LOG_LEVELS = ("debug", "info", "warning", "error")


@dataclass(frozen=True)
class ServeConfig:
    """Everything ``gatecli serve`` was told, minus the model and the LLM (those are objects).

    Example:
        >>> ServeConfig(queue_size=8, max_records=16)
        Traceback (most recent call last):
        ...
        ValueError: --max-records (16) must not exceed --queue-size (8)
    """

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    workers: int = 1
    threads: int = 1
    batch_size: int = 32
    max_batch: int = 32
    batch_wait_ms: float = 2.0
    queue_size: int = 1024
    deadline_ms: float = 10_000.0
    max_body_bytes: int = 1 << 20
    max_records: int = 256
    drain_timeout_s: float = 30.0
    body_timeout_s: float = 30.0  # a body that has not all arrived by then: 408
    api_key: str | None = None
    log_text: bool = False
    log_level: str = "info"

    def __post_init__(self) -> None:
        positive = {
            "--workers": self.workers,
            "--threads": self.threads,
            "--batch-size": self.batch_size,
            "--max-batch": self.max_batch,
            "--queue-size": self.queue_size,
            "--deadline-ms": self.deadline_ms,
            "--max-body-bytes": self.max_body_bytes,
            "--max-records": self.max_records,
            "--drain-timeout": self.drain_timeout_s,
            "--body-timeout": self.body_timeout_s,
        }
        for flag, value in positive.items():
            if value <= 0:
                raise ValueError(f"{flag} must be positive, got {value}")
        if self.batch_wait_ms < 0:
            raise ValueError(f"--batch-wait-ms must be >= 0, got {self.batch_wait_ms}")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"--port must be 0..65535, got {self.port}")
        if self.max_records > self.queue_size:  # else a full-size request could never enter
            raise ValueError(
                f"--max-records ({self.max_records}) must not exceed --queue-size "
                f"({self.queue_size})"
            )
        if self.log_level.lower() not in LOG_LEVELS:
            raise ValueError(f"--log-level must be one of {', '.join(LOG_LEVELS)}")
        if self.api_key is not None and not self.api_key.strip():
            raise ValueError("--api-key / GATECLI_API_KEY is empty")
