"""Stopping a service: stop signals held until a handler waits, and background tasks
that end even when a cancel is lost."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable
from typing import Any

import pynng
import pytest

from taskyard.core import lifecycle

pytestmark = pytest.mark.timeout(30)


async def _bus_pair() -> tuple[pynng.Bus0, pynng.Bus0]:
    """Two connected BUS sockets (discovery's kind), once their pipe is up."""
    address = f"ipc://{tempfile.gettempdir()}/ty-lc-{uuid.uuid4().hex[:8]}.sock"
    loop = asyncio.get_running_loop()
    connected = asyncio.Event()
    listener = pynng.Bus0()
    listener.add_post_pipe_connect_cb(lambda _pipe: loop.call_soon_threadsafe(connected.set))
    listener.listen(address)
    dialer = pynng.Bus0(dial=address)
    await asyncio.wait_for(connected.wait(), 5)
    return listener, dialer


async def _deliver_during_cancel(
    receiver: asyncio.Task[Any], sender: pynng.Bus0, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The message completes the pending receive on an NNG thread while the loop is
    held, then the cancel comes: both are waiting when the loop next runs."""
    loop = asyncio.get_running_loop()
    completed = threading.Event()
    wake = loop.call_soon_threadsafe

    def noting(callback: Callable[..., object], *args: Any, **kwargs: Any) -> asyncio.Handle:
        handle = wake(callback, *args, **kwargs)
        completed.set()
        return handle

    monkeypatch.setattr(loop, "call_soon_threadsafe", noting)
    sender.send(b"announcement")
    # Holds the loop on purpose until NNG has completed the receive (its callback asks
    # the loop to wake the receiver), so the cancel meets a finished receive.
    assert completed.wait(10)
    receiver.cancel()


async def test_a_pynng_receive_swallows_a_cancel_that_meets_its_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Why one cancel is not enough to stop a receive loop (see end_tasks)."""
    listener, dialer = await _bus_pair()
    try:
        receive = asyncio.create_task(listener.arecv())
        await asyncio.sleep(0)  # its first step: the receive is now pending in NNG
        await _deliver_during_cancel(receive, dialer, monkeypatch)
        assert await receive == b"announcement"  # returned, not cancelled
        assert receive.cancelling() == 1
    finally:
        dialer.close()
        listener.close()


async def test_end_tasks_ends_a_receive_loop_that_swallowed_its_cancel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    listener, dialer = await _bus_pair()
    received: list[bytes] = []
    took = asyncio.Event()

    async def receive_loop() -> None:
        while True:
            received.append(await listener.arecv())
            took.set()

    try:
        loop_task = asyncio.create_task(receive_loop(), name="receive-loop")
        await asyncio.sleep(0)  # its first step: the receive is now pending in NNG
        await _deliver_during_cancel(loop_task, dialer, monkeypatch)
        await asyncio.wait_for(took.wait(), 5)
        # The one cancel was spent: the loop took the message and waits for the next.
        assert not loop_task.done() and received == [b"announcement"]
        assert await lifecycle.end_tasks([loop_task], 2.0) == set()
        assert loop_task.cancelled()
    finally:
        dialer.close()
        listener.close()


async def test_end_tasks_reports_a_task_that_will_not_end() -> None:
    yielding = False

    async def stubborn() -> None:
        while True:
            try:
                await asyncio.Event().wait()  # never set: only a cancel ends the wait
            except asyncio.CancelledError:
                if yielding:
                    raise

    task = asyncio.create_task(stubborn(), name="stubborn")
    await asyncio.sleep(0)
    # Reported at all (not a hang): end_tasks gave up on it.
    assert await lifecycle.end_tasks([task], 0.3) == {task}
    yielding = True
    assert await lifecycle.end_tasks([task], 1.0) == set()


# A child that sleeps before installing its handler (a service still importing), then
# reports whether the stop event is set.
_CHILD = """
import asyncio, sys, time
from taskyard.core import lifecycle
time.sleep(float(sys.argv[1]))
async def main():
    stop = lifecycle.stop_event_on_signals()
    await asyncio.wait_for(stop.wait(), 5)
    print("stopped by the held signal", flush=True)
lifecycle.run(main())
"""


def test_a_stop_signal_held_at_start_reaches_the_handler_installed_later() -> None:
    with lifecycle.stop_signals_held():
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, "0.5"], stdout=subprocess.PIPE, env=dict(os.environ)
        )
    try:
        child.send_signal(signal.SIGTERM)  # long before its handler exists
        out, _ = child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0
    assert b"stopped by the held signal" in out


def test_stop_signals_held_restores_the_mask() -> None:
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    with lifecycle.stop_signals_held():
        assert {signal.SIGTERM, signal.SIGINT} <= signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before
