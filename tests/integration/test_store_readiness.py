"""A result-store's readiness on a real database (result_store/readiness.py): a
commit on the writer's pool, and its clock against the database's."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest
from support.waiting import wait_until_async

from taskyard.bus.v1 import pools_pb2
from taskyard.core import contract, errors
from taskyard.result_store.store import ResultStore

pytestmark = pytest.mark.asyncio

OFFSET = 45.0  # seconds: past the default tolerance (the seal's window, 30 s)


class OffsetClock:
    """The system's clock, ``offset`` seconds off (this process's clock is left alone)."""

    def __init__(self, offset: float) -> None:
        self.offset = offset

    def now(self) -> float:
        return time.time() + self.offset

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


async def _following(store: ResultStore) -> tuple[asyncio.Event, asyncio.Task[None]]:
    stop = asyncio.Event()
    return stop, asyncio.create_task(store.readiness.follow(stop))


async def test_a_store_whose_clock_is_off_says_so_and_is_not_ready(
    store_settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    clock = OffsetClock(OFFSET)
    store = await ResultStore.open(store_settings, clock=clock)
    stop, following = await _following(store)
    try:
        await wait_until_async(lambda: not store.readiness.ready, 30, "the store to withdraw its readiness")
        assert store.readiness.skew == pytest.approx(OFFSET, abs=1.0)
        lines = [r.getMessage() for r in caplog.records if "clock is" in r.getMessage()]
        assert len(lines) == 1, lines
        assert "not ready: this result-store's clock is +45." in lines[0]
        assert "off the database's (more than 30 s, the seal's window" in lines[0]
        # What a gateway probes a store with is refused at once: it is not SERVING.
        with pytest.raises(errors.TaskyardError) as refused:
            await store.task_names(pools_pb2.TaskNamesRequest(max_age_ms=60_000))
        assert refused.value.code is errors.Code.UNAVAILABLE
        assert refused.value.reason == contract.STORE_NOT_READY  # a refusal, not a slow answer

        clock.offset = 0.0  # the clock is fixed (NTP)
        await wait_until_async(lambda: store.readiness.ready, 30, "the store to be ready again")
        await store.task_names(pools_pb2.TaskNamesRequest(max_age_ms=60_000))
    finally:
        stop.set()
        await following
        await store.close()


async def test_a_store_in_step_with_its_database_commits_its_check(store_settings: Any) -> None:
    store = await ResultStore.open(store_settings)
    try:
        before = (await store.pool.fetchrow("SELECT pg_current_xact_id()::text::bigint AS x"))["x"]
        await store.readiness.check()
        after = (await store.pool.fetchrow("SELECT pg_current_xact_id()::text::bigint AS x"))["x"]
        assert after - before >= 2  # the check took a transaction id of its own: it committed one
        assert abs(store.readiness.skew) < store.readiness.tolerance
    finally:
        await store.close()


async def test_a_gateways_probe_is_answered_without_a_read_per_probe(store_settings: Any) -> None:
    store = await ResultStore.open(store_settings)
    try:
        await store.pool.execute("INSERT INTO task_names (name) VALUES ('add') ON CONFLICT DO NOTHING")
        probe = pools_pb2.TaskNamesRequest(max_age_ms=contract.TASK_NAMES_HELD)
        first = await store.task_names(probe)  # the one read: nothing held yet
        assert "add" in first.names
        before = store.stats.statements
        for _ in range(3):
            assert "add" in (await store.task_names(probe)).names
        assert store.stats.statements == before
        # What a gateway asks for a name it misses still reads the table.
        await store.task_names(pools_pb2.TaskNamesRequest(max_age_ms=0))
        assert store.stats.statements == before + 1
    finally:
        await store.close()
