"""The supervised set of a component's background tasks (core.background): a loop's
early end is a failure the service exits on; an errand's failure is logged when it
happens; close ends everything without calling it a failure."""

from __future__ import annotations

import asyncio
import logging

import pytest

from taskyard.core.background import Background, LoopEnded, until_stopped


async def test_a_loop_that_fails_is_named_and_fails_the_set(caplog: pytest.LogCaptureFixture) -> None:
    background = Background("result-store")

    async def committer() -> None:
        raise RuntimeError("disk on fire")

    background.start(committer(), name="store-committer")
    await background.failed.wait()
    assert background.failure == (
        "result-store: store-committer failed: RuntimeError('disk on fire') while the service runs"
    )
    [record] = [r for r in caplog.records if r.levelno == logging.CRITICAL]
    assert record.exc_info is not None
    await background.close()


async def test_a_loop_that_returns_fails_the_set_too() -> None:
    background = Background("gateway")

    async def reader() -> None:
        return None

    background.start(reader(), name="gateway-events")
    await background.failed.wait()
    assert background.failure == "gateway: gateway-events returned while the service runs"


async def test_a_loop_cancelled_by_someone_else_fails_the_set() -> None:
    background = Background("gateway")
    task = background.start(asyncio.Event().wait(), name="gateway-discovery")
    await asyncio.sleep(0)
    task.cancel()
    await background.failed.wait()
    assert "gateway-discovery was cancelled" in background.failure


async def test_close_ends_loops_and_errands_without_a_failure() -> None:
    background = Background("scheduler")
    started = asyncio.Event()

    async def forever() -> None:
        started.set()
        await asyncio.Event().wait()

    background.start(forever(), name="loop")
    background.spawn(asyncio.Event().wait(), name="errand")
    await started.wait()
    assert len(background) == 2
    await background.close()
    assert len(background) == 0
    assert not background.failed.is_set()


async def test_an_errand_is_held_until_it_ends_and_its_failure_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    background = Background("gateway")
    go = asyncio.Event()

    async def send() -> None:
        await go.wait()
        raise ValueError("lane closed")

    background.spawn(send(), name="lane-send")
    assert background.errands == 1
    go.set()
    await background.drain()
    assert background.errands == 0
    assert not background.failed.is_set()
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.getMessage() == "gateway: lane-send failed" and record.exc_info is not None


async def test_a_service_waits_for_its_stop_or_a_loop_that_ends() -> None:
    stop = asyncio.Event()
    background = Background("gateway")
    stop.set()
    await until_stopped(stop, background)  # stopped: returns

    stop.clear()
    background.start(asyncio.sleep(0), name="gateway-events")
    with pytest.raises(LoopEnded, match="gateway-events returned"):
        await until_stopped(stop, background)


async def test_loops_may_end_once_the_component_is_stopping() -> None:
    background = Background("gateway")
    closed = asyncio.Event()

    async def tail() -> None:
        await closed.wait()  # returns when the component closes what it reads

    task = background.start(tail(), name="gateway-event-tail")
    background.stopping()
    closed.set()
    await task
    assert not background.failed.is_set()
