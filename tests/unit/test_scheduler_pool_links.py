"""The scheduler's account of pools across a dropped PAIR link, on real NNG sockets."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.waiting import wait_until_async

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core import transport
from taskyard.scheduler.pools import Pool, PoolRegistry

pytestmark = pytest.mark.asyncio

MAX_BYTES = 1 << 20


async def _no_report(pool: Pool, report: dispatch_pb2.PoolReport) -> None:
    raise AssertionError("no pool reports in these tests")


def _learn(registry: PoolRegistry, address: str, *, registered: bool = False) -> Pool | None:
    return registry.upsert(
        pool_id="pool-1", pair_address=address, names=["add"], capacity=4, registered=registered
    )


async def test_a_pool_whose_link_dropped_comes_back_only_by_registering(tmp_path: Path) -> None:
    address = f"ipc://{tmp_path}/pool.pair"
    pool_side = transport.open_pair(max_message_bytes=MAX_BYTES, listen=address)
    registry = PoolRegistry(max_message_bytes=MAX_BYTES, on_report=_no_report, on_change=lambda: None)
    try:
        assert _learn(registry, address, registered=True) is not None
        await wait_until_async(lambda: len(pool_side.pipes) == 1, 5, "the scheduler to dial the pool")

        pool_side.close()  # the pool dies
        await wait_until_async(lambda: "pool-1" not in registry.pools, 5, "the link loss")

        # A survey reply or an announcement it sent before it died arrives late.
        assert _learn(registry, address) is None
        assert "pool-1" not in registry.pools

        # A pool alive again registers, and is dispatched to again.
        pool_side = transport.open_pair(max_message_bytes=MAX_BYTES, listen=address)
        back = _learn(registry, address, registered=True)
        assert back is not None and registry.pools["pool-1"] is back
        await wait_until_async(lambda: len(pool_side.pipes) == 1, 5, "the scheduler to dial the pool")
        # Its later survey replies are taken as usual.
        assert _learn(registry, address) is back
    finally:
        registry.close()
        pool_side.close()


async def test_a_pool_dropped_for_missed_surveys_is_taken_back_by_a_survey_reply(tmp_path: Path) -> None:
    address = f"ipc://{tmp_path}/pool.pair"
    pool_side = transport.open_pair(max_message_bytes=MAX_BYTES, listen=address)
    registry = PoolRegistry(max_message_bytes=MAX_BYTES, on_report=_no_report, on_change=lambda: None)
    try:
        assert _learn(registry, address) is not None
        registry.remove("pool-1")  # silent for a few surveys: its link never dropped
        assert _learn(registry, address) is not None
    finally:
        registry.close()
        pool_side.close()
