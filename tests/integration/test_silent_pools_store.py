"""Pools whose heartbeats stopped are declared lost by the store (silent_pools.py):
real PostgreSQL, the store's real committer and event log."""

from __future__ import annotations

import asyncio
import time
from typing import Any, TypeVar

import asyncpg
import pytest
from google.protobuf.message import Message
from support.waiting import wait_until_async

from taskyard.bus.v1 import pools_pb2
from taskyard.core import contract, errors
from taskyard.core.clock import ManualClock
from taskyard.result_store.queries import bind
from taskyard.result_store.silent_pools import LOSE_POOLS, SilentPools
from taskyard.result_store.writes.heartbeats import heartbeat_columns

R = TypeVar("R", bound=Message)

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


async def waiting_for(holder: asyncpg.Connection) -> None:
    """Until some session waits for ``holder``'s locks."""
    pid = holder.get_server_pid()
    await wait_until_async(
        lambda: holder.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", pid
        ),
        10,
        "a session to wait for the held row",
    )


def sweeper(store: Any, clock: ManualClock) -> SilentPools:
    return SilentPools(store.committer.submit, lost_after=LOST_AFTER, clock=clock)


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
    row = await store.pool.fetchrow(
        "SELECT state, is_running, running, active_workers, processes::text "
        "FROM workers WHERE pool_id = 'killed'"
    )
    assert tuple(row) == ("STOPPED", False, 0, 0, "[]")  # nothing of it counts any more
    # It was only cut off: its next heartbeat registers it again, its process anew.
    await store.heartbeat(beat("killed"))
    assert [e for e in await pool_events(store) if e[1] == "killed"] == [
        ("pool.registered", "killed"),
        ("pool.lost", "killed"),
        ("pool.registered", "killed"),
    ]
    started = await store.pool.fetchval(
        "SELECT count(*) FROM events WHERE type = 'worker.started' AND pool_id = 'killed'"
    )
    assert started == 2
    assert ("pool.lost", "alive") not in await pool_events(store)
    # A beat sent while a pool drained that arrives after its last one changes nothing.
    await store.heartbeat(beat("stopped", "STOPPING"))
    assert [e for e in await pool_events(store) if e[1] == "stopped"] == [
        ("pool.registered", "stopped"),
        ("pool.stopped", "stopped"),
    ]
    assert await store.pool.fetchval("SELECT state FROM workers WHERE pool_id = 'stopped'") == "STOPPED"
    assert await sweep.sweep() == []  # nor is it lost later: it stopped


async def test_a_sweep_that_waited_too_long_declares_nothing(result_store: Any) -> None:
    """Held up by the database past its interval, the sweep would find the pools
    whose heartbeats failed meanwhile: it is not applied, and the wait starts again."""
    store = result_store
    await store.heartbeat(beat("waited"))
    await silence(store, "waited", LOST_AFTER + 5)
    late = pools_pb2.LosePoolsRequest(
        silent_ms=int(LOST_AFTER * 1000),
        limit=10,
        requested_at_us=time.monotonic_ns() // 1000 - 10_000_000,
        valid_for_us=5_000_000,
    )
    reply = await store.committer.submit(LOSE_POOLS, late, 10)
    assert reply.late and not reply.pool_ids
    clock = ManualClock()
    sweep = sweeper(store, clock)
    clock.advance(LOST_AFTER)

    async def held_up(
        method: contract.Method[Any, R], request: Any, rows: int = 1, request_id: str = ""
    ) -> R:
        return await store.committer.submit(
            method,
            pools_pb2.LosePoolsRequest(
                silent_ms=request.silent_ms,
                limit=request.limit,
                requested_at_us=request.requested_at_us - 10_000_000,
                valid_for_us=request.valid_for_us,
            ),
            rows,
        )

    sweep._submit = held_up
    assert await sweep.sweep() == []
    sweep._submit = store.committer.submit
    clock.advance(LOST_AFTER - 1)
    assert await sweep.sweep() == []  # the wait started again
    clock.advance(1)
    assert await sweep.sweep() == ["waited"]


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

    async def unreachable(
        method: contract.Method[Any, R], request: Any, rows: int = 1, request_id: str = ""
    ) -> R:
        raise errors.unavailable("database unreachable")

    sweep._submit = unreachable
    with pytest.raises(errors.TaskyardError):
        await sweep.sweep()
    sweep._submit = real
    clock.advance(LOST_AFTER - 1)
    assert await sweep.sweep() == []
    clock.advance(1)
    assert await sweep.sweep() == ["quiet"]


async def test_a_heartbeat_waiting_on_a_sweep_sees_the_pool_lost(
    result_store: Any, store_settings: Any
) -> None:
    """Another store's sweep holds the row as the heartbeat's statements run (the
    committer's two, in one transaction of their own connection): they wait, then
    read the row as committed (STOPPED), so the pool registers again."""
    store = result_store
    await store.heartbeat(beat("racing"))
    columns = heartbeat_columns(beat("racing"))
    other = await asyncpg.connect(store_settings.database_url)
    beater = await asyncpg.connect(store_settings.database_url)
    try:
        sweeping = other.transaction()
        await sweeping.start()
        await other.execute("UPDATE workers SET state = 'STOPPED', processes = '[]' WHERE pool_id = 'racing'")

        async def beat_once() -> list[asyncpg.Record]:
            async with beater.transaction():
                assert await beater.fetch(*bind("register_workers", **columns)) == []
                return await beater.fetch(*bind("beat_workers", registered=[], **columns))

        beating = asyncio.create_task(beat_once())
        await waiting_for(other)
        await sweeping.commit()
        (row,) = await asyncio.wait_for(beating, 10)
    finally:
        await other.close()
        await beater.close()
    assert (row["prev_state"], row["prev_processes"]) == ("STOPPED", "[]")


async def test_a_first_heartbeat_racing_another_stores_sees_its_row(
    result_store: Any, store_settings: Any
) -> None:
    """Another store inserts the pool's row as this one's first heartbeat arrives:
    this one waits, then beats the row it finds (no second registration, and only
    the process the other did not list is new)."""
    store = result_store
    other = await asyncpg.connect(store_settings.database_url)
    try:
        inserting = other.transaction()
        await inserting.start()
        await other.execute(
            "INSERT INTO workers (pool_id, server_name, state, is_running, processes) "
            "VALUES ('twice', 's', 'RUNNING', true, '[{\"index\": 0, \"pid\": 10, \"state\": \"idle\"}]')"
        )
        both = beat("twice")
        both.processes.add(index=1, pid=11, state="idle")
        beating = asyncio.create_task(store.heartbeat(both))
        await waiting_for(other)
        await inserting.commit()
        await asyncio.wait_for(beating, 10)
    finally:
        await other.close()
    rows = await store.pool.fetch(
        "SELECT type, worker_id FROM events WHERE pool_id = 'twice' ORDER BY xid, id"
    )
    assert [(r["type"], r["worker_id"]) for r in rows] == [("worker.started", "twice/w1:11")]
