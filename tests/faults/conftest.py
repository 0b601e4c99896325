"""Fixtures of the fault suite (the helpers live in :mod:`faultkit`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from faultkit import StubLLM


@pytest.fixture
def llm() -> Iterator[StubLLM]:
    server = StubLLM()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield server
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()
