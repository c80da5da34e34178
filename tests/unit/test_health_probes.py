"""``/livez`` and ``/readyz`` on a real ops port (core/ops.py), against a real event loop:
live while the loop runs callbacks, not while it is stuck; ready once marked,
while a followed dependency answers, and not once a stop signal came."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Iterator

import pytest
from support.ports import http_status
from support.waiting import wait_until_async

from taskyard.core import health, lifecycle, ops


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
    server = ops.OpsServer("127.0.0.1", 0, token="s3cret")
    try:
        assert http_status(server.port, "/livez") == 200
        assert http_status(server.port, "/readyz") == 503  # not said ready yet
        health.mark_ready()
        assert http_status(server.port, "/readyz") == 200
        stuck = threading.Event()
        unstuck = threading.Event()

        def blocking_call() -> None:
            stuck.set()
            unstuck.wait(10)  # the loop is blocked until the probes have answered

        loop.call_soon_threadsafe(blocking_call)
        assert stuck.wait(5)
        try:
            assert http_status(server.port, "/livez") == 503
            assert http_status(server.port, "/readyz") == 503
            assert http_status(server.port, "/metrics") == 401  # the token guards /metrics alone
        finally:
            unstuck.set()
    finally:
        server.close()


def test_no_loop_is_not_live() -> None:
    health.attach_loop(None)
    assert not health.live(0.1)


async def test_readiness_follows_a_dependency() -> None:
    health.mark_ready()
    answers = True
    checks = asyncio.Event()

    async def check() -> None:
        checks.set()
        if not answers:
            raise ConnectionError("refused")

    stop = asyncio.Event()
    following = asyncio.create_task(health.follow(check, "the thing", stop, interval=0.01, failures=2))
    try:
        await asyncio.wait_for(checks.wait(), 5)
        assert health.ready()
        answers = False
        await wait_until_async(lambda: not health.ready(), 5, "unready once it stops answering")
        answers = True
        await wait_until_async(health.ready, 5, "ready again once it answers")
        # A check that hangs is a failure too (each gets one interval).
        hang = asyncio.Event()

        async def hanging() -> None:
            await hang.wait()

        stop.set()
        await asyncio.wait_for(following, 5)
        following = asyncio.create_task(health.follow(hanging, "the thing", asyncio.Event(), interval=0.01))
        await wait_until_async(lambda: not health.ready(), 5, "unready while it hangs")
    finally:
        following.cancel()
        health.mark_ready(False)


async def test_one_failure_is_not_an_outage() -> None:
    health.mark_ready()
    calls = 0
    stop = asyncio.Event()

    async def flaky() -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ConnectionError("one slow answer")
        if calls == 3:
            stop.set()

    try:
        await asyncio.wait_for(health.follow(flaky, "the thing", stop, interval=0.01, failures=2), 5)
        assert health.ready() and calls == 3
    finally:
        health.mark_ready(False)


async def test_a_stop_signal_withdraws_readiness() -> None:
    health.mark_ready()
    stop = lifecycle.stop_event_on_signals(signal.SIGUSR1)
    try:
        os.kill(os.getpid(), signal.SIGUSR1)
        await asyncio.wait_for(stop.wait(), 5)
        assert not health.ready()
    finally:
        asyncio.get_running_loop().remove_signal_handler(signal.SIGUSR1)
        health.mark_ready(False)
