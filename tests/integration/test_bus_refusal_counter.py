"""The result-store's count of refused bus messages goes on through a database it
cannot reach: a failed flush waits for the next one (the loop used to end at the first,
and the store then counted nothing until restarted)."""

from __future__ import annotations

import asyncio
import logging

import asyncpg
import pytest

from taskyard.core import seal
from taskyard.result_store import counters

pytestmark = pytest.mark.integration


class _Heard(logging.Handler):
    def __init__(self, needle: str) -> None:
        super().__init__(logging.DEBUG)
        self.needle = needle
        self.heard = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.needle in record.getMessage():
            self.heard.set()


async def test_a_failed_flush_leaves_the_count_running(database_url: str) -> None:
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=1)
    await pool.close()  # every acquire now fails, as while PostgreSQL restarts
    refusals = seal.Refusals()
    refusals.add("bad_mac", "tcp://127.0.0.1:1")
    heard = _Heard("counting refused bus messages failed")
    logger = logging.getLogger(counters.__name__)
    logger.addHandler(heard)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    counting = asyncio.create_task(counters.record_bus_refusals(pool, refusals, interval=0))
    try:
        for _ in range(2):  # a second failed flush: the loop outlived the first
            heard.heard.clear()
            said = asyncio.ensure_future(heard.heard.wait())
            await asyncio.wait({said, counting}, return_when=asyncio.FIRST_COMPLETED)
            said.cancel()
            assert not counting.done(), counting.exception()
    finally:
        logger.removeHandler(heard)
        logger.setLevel(level)
        counting.cancel()
        await asyncio.gather(counting, return_exceptions=True)
