"""The result-store's loops go on through what a database that is away raises: a
connection killed mid-statement can surface as asyncpg's InternalClientError about its
protocol state (seen when a database stopped accepting connections), not only as a
PostgresError or an InterfaceError. Such a loop used to end there, silently; in the
supervised set it would end the store."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest

from taskyard.result_store import arrivals as arrivals_mod
from taskyard.result_store.arrivals import Arrivals

pytestmark = pytest.mark.asyncio


async def test_arrivals_go_on_after_a_protocol_state_error(
    result_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arrivals_mod, "RETRY_AFTER", 0.01)
    arrivals = Arrivals(result_store.pool, result_store.publisher)
    calls = 0
    again = asyncio.Event()

    async def catch_up() -> float | None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise asyncpg.InternalClientError(
                "cannot switch to state 11; another operation (2) is in progress"
            )
        again.set()
        return None

    # On this instance alone: the running store's own Arrivals goes on reading for real
    # (its listener may connect after this patch, and its reads must not count here).
    monkeypatch.setattr(arrivals, "_catch_up", catch_up)
    running = asyncio.create_task(arrivals.run())
    try:
        await arrivals.notified()
        await asyncio.wait(
            {running, asyncio.ensure_future(again.wait())}, timeout=10, return_when=asyncio.FIRST_COMPLETED
        )
        assert not running.done(), running.exception()
        assert again.is_set() and calls == 2
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
