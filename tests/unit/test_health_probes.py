"""``/livez`` and ``/readyz`` on a real HTTP server, against a real event loop:
live while the loop runs callbacks, not while it is stuck; ready once marked."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest
from support.ports import http_status

from taskyard.core import health


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    running = asyncio.new_event_loop()
    thread = threading.Thread(target=running.run_forever, daemon=True)
    thread.start()
    health.attach_loop(running)
    health.mark_ready(False)
    yield running
    health.attach_loop(None)
    health.mark_ready(False)
    running.call_soon_threadsafe(running.stop)
    thread.join(timeout=5)
    running.close()


def test_live_while_the_loop_runs_not_while_it_is_stuck(
    loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(health, "LIVENESS_TIMEOUT", 0.3)
    server = health.HealthServer("127.0.0.1", 0)
    try:
        assert http_status(server.port, "/livez") == 200
        assert http_status(server.port, "/readyz") == 503  # not said ready yet
        health.mark_ready()
        assert http_status(server.port, "/readyz") == 200
        stuck = threading.Event()

        def blocking_call() -> None:
            stuck.set()
            time.sleep(1.5)

        loop.call_soon_threadsafe(blocking_call)
        assert stuck.wait(5)
        assert http_status(server.port, "/livez") == 503
        assert http_status(server.port, "/readyz") == 503
        assert http_status(server.port, "/metrics") == 404
    finally:
        server.close()


def test_no_loop_is_not_live() -> None:
    health.attach_loop(None)
    assert not health.live(0.1)
