"""Pools whose heartbeats stopped are declared lost by the store (silent_pools.py):
real PostgreSQL, the store's real committer and event log."""

from __future__ import annotations

from typing import Any

import pytest

from taskyard.bus.v1 import pools_pb2
from taskyard.core import errors
from taskyard.core.clock import ManualClock
from taskyard.result_store.silent_pools import SilentPools

pytestmark = pytest.mark.asyncio

LOST_AFTER = 30.0


def beat(pool_id: str, state: str = "RUNNING") -> pools_pb2.HeartbeatRequest:
    return pools_pb2.HeartbeatRequest(
        pool_id=pool_id,
        server_name="s",
        state=state,
        is_running=state == "RUNNING",
        processes=[pools_pb2.WorkerProcess(index=0, pid=10, state="idle")],
    )


async def silence(store: Any, pool_id: str, seconds: float) -> None:
    """Its last heartbeat ``seconds`` ago (by the database's clock)."""
    await store.pool.execute(
        "UPDATE workers SET last_heartbeat = now() - $2 * interval '1 second' WHERE pool_id = $1",
        pool_id,
        seconds,
    )


async def pool_events(store: Any) -> list[tuple[str, str]]:
    rows = await store.pool.fetch(
        "SELECT type, pool_id FROM events WHERE type LIKE 'pool.%' ORDER BY xid, id"
    )
    return [(r["type"], r["pool_id"]) for r in rows]


def sweeper(store: Any, clock: ManualClock) -> SilentPools:
    return SilentPools(
        lambda kind, req, rows: store.committer.submit(kind, req, rows), lost_after=LOST_AFTER, clock=clock
    )


async def test_a_silent_pool_is_lost_once_and_registers_again_when_it_beats(result_store: Any) -> None:
    store = result_store
    for pool_id in ("killed", "alive", "stopped"):
        await store.heartbeat(beat(pool_id))
    await store.heartbeat(beat("stopped", "STOPPED"))
    await silence(store, "killed", LOST_AFTER + 5)
    await silence(store, "stopped", LOST_AFTER + 5)  # stopped on purpose: not lost
    await silence(store, "alive", LOST_AFTER - 5)
    clock = ManualClock()
    sweep = sweeper(store, clock)
    clock.advance(LOST_AFTER)
    assert await sweep.sweep() == ["killed"]
    assert await sweep.sweep() == []  # once
    state = await store.pool.fetchrow("SELECT state, is_running FROM workers WHERE pool_id = 'killed'")
    assert (state["state"], state["is_running"]) == ("STOPPED", False)
    # It was only cut off: its next heartbeat registers it again.
    await store.heartbeat(beat("killed"))
    assert [e for e in await pool_events(store) if e[1] == "killed"] == [
        ("pool.registered", "killed"),
        ("pool.lost", "killed"),
        ("pool.registered", "killed"),
    ]
    assert ("pool.lost", "alive") not in await pool_events(store)


async def test_a_store_not_in_touch_for_as_long_declares_nothing(result_store: Any) -> None:
    store = result_store
    await store.heartbeat(beat("quiet"))
    await silence(store, "quiet", LOST_AFTER + 5)
    clock = ManualClock()
    sweep = sweeper(store, clock)
    assert await sweep.sweep() == []  # just started: heartbeats to it may have failed
    clock.advance(LOST_AFTER)
    # The database out of reach: the wait starts again.
    real = sweep._submit

    async def unreachable(*_: Any) -> Any:
        raise errors.unavailable("database unreachable")

    sweep._submit = unreachable
    with pytest.raises(errors.TaskyardError):
        await sweep.sweep()
    sweep._submit = real
    clock.advance(LOST_AFTER - 1)
    assert await sweep.sweep() == []
    clock.advance(1)
    assert await sweep.sweep() == ["quiet"]
