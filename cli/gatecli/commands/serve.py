"""``gatecli serve``: the gate as a local HTTP service (``pip install 'gatecli[serve]'``).

The command parses flags, loads the model and the escalator exactly as ``classify`` does,
and hands them to :func:`gatecli.serve.server.run`. starlette and uvicorn are imported
only here, inside the command, so ``gatecli --help`` and every other command work on an
install without the ``[serve]`` extra.
"""

from __future__ import annotations

from typing import Annotated

import typer

from gatecli.commands._util import (
    BatchSizeOpt,
    LLMAskMarginOpt,
    LLMBaseUrlOpt,
    LLMBudgetOpt,
    LLMConcurrencyOpt,
    LLMConfigOpt,
    LLMModelOpt,
    LLMTimeoutOpt,
    ModelOpt,
    NoLLMOpt,
    fail,
    llm_options,
)

HELP = """Serve the gate over HTTP: POST /v1/classify, POST /v1/moderations (OpenAI shape),
GET /healthz, GET /metrics (Prometheus). Binds 127.0.0.1 unless --host says otherwise.

Concurrent requests are micro-batched into one forward pass (--batch-wait-ms); a full
queue (--queue-size turns) answers 503 with Retry-After. SIGTERM drains in-flight requests
and exits 0. Records are those `gatecli classify` writes. Needs the serve extra
(pip install 'gatecli[serve]'); see docs/serve.md.

Examples:

\b
  gatecli serve --port 8088
  GATECLI_API_KEY=s3cret gatecli serve --host 0.0.0.0 --workers 2
  curl -s localhost:8088/v1/classify -d '{"user_message": "声音调到90"}'
"""


def serve_cli(
    model: ModelOpt = None,
    host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port (0: any free one).")] = 8088,
    workers: Annotated[
        int, typer.Option("--workers", min=1, help="Gate worker threads (one model in memory).")
    ] = 1,
    threads: Annotated[
        int, typer.Option("--threads", min=1, help="onnxruntime threads per worker.")
    ] = 1,
    batch_size: BatchSizeOpt = 32,
    max_batch: Annotated[
        int | None,
        typer.Option("--max-batch", min=1, help="Most turns gathered per batch (--batch-size)."),
    ] = None,
    batch_wait_ms: Annotated[
        float,
        typer.Option("--batch-wait-ms", min=0.0, help="Longest wait to gather a batch (ms)."),
    ] = 2.0,
    queue_size: Annotated[
        int, typer.Option("--queue-size", min=1, help="Most turns waiting; then 503.")
    ] = 1024,
    deadline_ms: Annotated[
        float, typer.Option("--deadline-ms", min=1.0, help="Per-request deadline (ms); then 504.")
    ] = 10_000.0,
    max_body_bytes: Annotated[
        int, typer.Option("--max-body-bytes", min=1, help="Largest request body; then 413.")
    ] = 1 << 20,
    max_records: Annotated[
        int, typer.Option("--max-records", min=1, help="Most turns per request; then 413.")
    ] = 256,
    drain_timeout: Annotated[
        float, typer.Option("--drain-timeout", min=0.1, help="SIGTERM: seconds to drain.")
    ] = 30.0,
    body_timeout: Annotated[
        float,
        typer.Option("--body-timeout", min=0.1, help="Seconds to receive a body; then 408."),
    ] = 30.0,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            envvar="GATECLI_API_KEY",
            show_default=False,
            help="Require Authorization: Bearer KEY (env GATECLI_API_KEY).",
        ),
    ] = None,
    log_text: Annotated[
        bool, typer.Option("--log-text", help="Log the user's text (off: ids and decisions).")
    ] = False,
    log_level: Annotated[
        str, typer.Option("--log-level", help="debug|info|warning|error")
    ] = "info",
    no_llm: NoLLMOpt = False,
    llm_base_url: LLMBaseUrlOpt = None,
    llm_model: LLMModelOpt = None,
    llm_timeout: LLMTimeoutOpt = None,
    llm_budget: LLMBudgetOpt = None,
    llm_ask_margin: LLMAskMarginOpt = None,
    llm_concurrency: LLMConcurrencyOpt = None,
    llm_config: LLMConfigOpt = None,
) -> None:
    try:  # the [serve] extra; imported here only, so the edge install never needs it
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        from gatecli.extras import install_hint

        fail(
            f"`gatecli serve` needs {exc.name}", hint=install_hint("serve", "starlette", "uvicorn")
        )
    from gatecli.artifact import ArtifactError
    from gatecli.commands.classify import open_classifier
    from gatecli.serve.config import ServeConfig
    from gatecli.serve.server import run
    from gatecli.serve.service import GateService

    llm = llm_options(no_llm, llm_base_url, llm_model, llm_timeout, llm_budget,
                      llm_ask_margin, llm_concurrency, llm_config)  # fmt: skip
    try:
        config = ServeConfig(
            host=host, port=port, workers=workers, threads=threads, batch_size=batch_size,
            max_batch=max_batch or batch_size, batch_wait_ms=batch_wait_ms,
            queue_size=queue_size, deadline_ms=deadline_ms, max_body_bytes=max_body_bytes,
            max_records=max_records, drain_timeout_s=drain_timeout, api_key=api_key,
            log_text=log_text, log_level=log_level, body_timeout_s=body_timeout,
        )  # fmt: skip
        # the gate and escalator `classify` builds from the same flags
        with open_classifier(model, threads=threads, batch_size=batch_size, llm=llm) as (g, esc):
            status = run(GateService(g, config, esc), config)
    except (ArtifactError, OSError, ValueError) as exc:  # ValueError: flags, --llm-config
        fail(str(exc))
    raise typer.Exit(status)


def register(app: typer.Typer) -> None:
    app.command("serve", help=HELP)(serve_cli)
