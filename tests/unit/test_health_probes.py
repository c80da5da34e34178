"""``/livez`` and ``/readyz`` on a real HTTP server, against a real event loop:
live while the loop runs callbacks, not while it is stuck; ready once marked."""

from __future__ import annotations

import asyncio
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from taskyard.core import health


def status(port: int, path: str) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as err:
        return err.code


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
        assert status(server.port, "/livez") == 200
        assert status(server.port, "/readyz") == 503  # not said ready yet
        health.mark_ready()
        assert status(server.port, "/readyz") == 200
        stuck = threading.Event()

        def blocking_call() -> None:
            stuck.set()
            time.sleep(1.5)

        loop.call_soon_threadsafe(blocking_call)
        assert stuck.wait(5)
        assert status(server.port, "/livez") == 503
        assert status(server.port, "/readyz") == 503
        assert status(server.port, "/metrics") == 404
    finally:
        server.close()


def test_no_loop_is_not_live() -> None:
    health.attach_loop(None)
    assert not health.live(0.1)
