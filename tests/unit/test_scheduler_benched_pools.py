"""The scheduler gives no slot to a pool no store hears: one that says it is cut off
from the stores, or one a store declared lost, until a store hears it again."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core import transport
from taskyard.scheduler.pools import Pool, PoolRegistry

pytestmark = pytest.mark.asyncio

MAX_BYTES = 1 << 20


async def _no_report(pool: Pool, report: dispatch_pb2.PoolReport) -> None:
    raise AssertionError("no pool reports in these tests")


def _learn(registry: PoolRegistry, address: str, **kwargs: object) -> Pool:
    pool = registry.upsert(pool_id="pool-1", pair_address=address, names=["add"], capacity=4, **kwargs)  # type: ignore[arg-type]
    assert pool is not None
    return pool


async def test_a_pool_declared_lost_is_benched_until_heard_even_across_a_new_link(tmp_path: Path) -> None:
    address = f"ipc://{tmp_path}/pool.pair"
    pool_side = transport.open_pair(max_message_bytes=MAX_BYTES, listen=address)
    changes: list[None] = []
    registry = PoolRegistry(
        max_message_bytes=MAX_BYTES, on_report=_no_report, on_change=lambda: changes.append(None)
    )
    try:
        pool = _learn(registry, address, registered=True)
        assert pool.free == 4

        assert registry.learn_states({"pool-1": "STOPPED"}) is True  # news: lost
        assert pool.free == 0
        assert registry.learn_states({"pool-1": "STOPPED"}) is False  # already known

        # Its link is made anew (it registers again): still benched, nothing heard it.
        registry.remove("pool-1")
        again = _learn(registry, address, registered=True)
        assert again.lost and again.free == 0

        before = len(changes)
        assert registry.heard("pool-1") is True  # pool.registered: a store heard it
        assert again.free == 4 and len(changes) > before  # and the dispatcher is woken

        registry.declare_lost("pool-1")
        registry.learn_states({"pool-1": "RUNNING"})  # the registry read says it beats
        assert again.free == 4

        # A pool.lost of a pool never known here, then gone from the stores' registry too.
        registry.declare_lost("pool-gone")
        registry.learn_states({"pool-1": "RUNNING"})
        assert registry.unheard == set()
    finally:
        registry.close()
        pool_side.close()


async def test_a_pool_that_says_it_is_cut_off_gets_no_slot_until_it_says_otherwise(tmp_path: Path) -> None:
    address = f"ipc://{tmp_path}/pool.pair"
    pool_side = transport.open_pair(max_message_bytes=MAX_BYTES, listen=address)
    registry = PoolRegistry(max_message_bytes=MAX_BYTES, on_report=_no_report, on_change=lambda: None)
    try:
        pool = _learn(registry, address, registered=True)
        _learn(registry, address, state="RUNNING", cut_off=True)  # its survey answer
        assert pool.free == 0
        _learn(registry, address, state="RUNNING")  # an announcement says nothing of it
        assert pool.free == 0
        _learn(registry, address, state="RUNNING", cut_off=False)
        assert pool.free == 4
    finally:
        registry.close()
        pool_side.close()


async def test_a_survey_answer_sent_while_starting_does_not_unready_a_registered_pool(tmp_path: Path) -> None:
    address = f"ipc://{tmp_path}/pool.pair"
    pool_side = transport.open_pair(max_message_bytes=MAX_BYTES, listen=address)
    registry = PoolRegistry(max_message_bytes=MAX_BYTES, on_report=_no_report, on_change=lambda: None)
    try:
        pool = _learn(registry, address, state="STARTING")  # it answers surveys before it registers
        assert pool.free == 0
        _learn(registry, address, registered=True)
        assert pool.free == 4
        # The answer it sent while starting, read after it registered (survey answers
        # are read when the survey ends): it stays ready.
        _learn(registry, address, state="STARTING")
        assert pool.free == 4
        _learn(registry, address, state="DRAINING")
        assert pool.free == 0
    finally:
        registry.close()
        pool_side.close()
