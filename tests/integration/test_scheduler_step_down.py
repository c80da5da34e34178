"""A scheduler process (service.serve, in this process) against a real store: it
leads once elected, and when its leadership is taken from it (the row, changed
behind its back, as a standby that found it expired would) it steps down in the
process: its listeners close, and it stands by until the row is free again,
then leads a new term on the same addresses."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pynng
import pytest
from prometheus_client import REGISTRY
from support.waiting import wait_until_async

from taskyard.core.priority import Priority
from taskyard.result_store import service as store_service
from taskyard.scheduler import service as scheduler_service

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]

TTL = 0.4


@pytest.fixture
async def store_running(store_settings: Any) -> AsyncIterator[None]:
    stop = asyncio.Event()
    served = asyncio.create_task(store_service.serve(store_settings, stop))
    try:
        yield
    finally:
        stop.set()
        await asyncio.wait_for(served, 30)


def listened(address: str) -> bool:
    """Whether something listens on ``address`` (it cannot be listened on again)."""
    try:
        sock = pynng.Rep0(listen=address)
    except pynng.AddressInUse:
        return True
    sock.close()
    return False


async def row(database_url: str) -> dict[str, Any]:
    conn = await asyncpg.connect(database_url)
    try:
        found = await conn.fetchrow("SELECT term, holder, expires_at > now() AS live FROM scheduler_leader")
        assert found is not None
        return dict(found)
    finally:
        await conn.close()


def term_gauge() -> float | None:
    return REGISTRY.get_sample_value("taskyard_scheduler_term")


async def test_a_deposed_leader_closes_its_listeners_and_leads_a_new_term_later(
    store_running: None, store_settings: Any, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="taskyard.scheduler")
    settings = dataclasses.replace(store_settings, leader_ttl=TTL)
    lane = settings.lane_listen_address(Priority.NORMAL)
    stop = asyncio.Event()
    scheduler = asyncio.create_task(scheduler_service.serve(settings, stop))
    try:
        await wait_until_async(lambda: listened(lane), 30, "the leader's lanes")
        first = await row(database_url)
        # Not whether its lease is live at this instant: that is its renewal keeping up
        # with a 0.4 s ttl on a loaded machine (CI saw it lag once).
        assert first["term"] == 1 and first["holder"].startswith("scheduler-")
        assert term_gauge() == 1

        conn = await asyncpg.connect(database_url)
        try:  # another scheduler's term, for a second
            await conn.execute(
                "UPDATE scheduler_leader SET term = term + 1, holder = 'usurper', "
                "expires_at = now() + interval '1 second'"
            )
        finally:
            await conn.close()
        await wait_until_async(lambda: not listened(lane), 10, "the deposed leader to close its lanes")
        assert "deposed: the leadership is usurper's (term 2), not ours (term 1)" in caplog.text
        assert term_gauge() == 0 and not scheduler.done()

        await wait_until_async(lambda: listened(lane), 10, "the lanes of its next term")
        again = await row(database_url)
        assert again["term"] == 3 and again["holder"] == first["holder"]
        # Listening comes first, then the lanes are loaded and it says it is ready.
        await wait_until_async(lambda: "scheduler ready (term 3" in caplog.text, 10, "term 3 ready")
    finally:
        stop.set()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(scheduler, 30)
    assert not listened(lane)
    last = await row(database_url)
    assert last["term"] == 3 and not last["live"]  # released at the stop
    assert "released the leadership (term 3)" in caplog.text
