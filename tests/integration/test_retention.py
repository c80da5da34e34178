"""Retention purge in the store, with an injected clock (real PostgreSQL)."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from taskyard.bus.v1 import queues_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import ids
from taskyard.core.clock import ManualClock
from taskyard.result_store.retention import DAY_US, Purger

pytestmark = pytest.mark.asyncio

NOW = 1_900_000_000.0


async def make(conn: asyncpg.Connection, state: str, finished_days_ago: float | None) -> str:
    tid = ids.new_task_id()
    finished = None if finished_days_ago is None else int(NOW * 1e6 - finished_days_ago * DAY_US)
    await conn.execute(
        "INSERT INTO tasks (id, name, state, finished_at) VALUES ($1, 'add', $2::task_state, ty_ts($3))",
        tid,
        state,
        finished,
    )
    await conn.execute("INSERT INTO task_logs (task_id, seq, message) VALUES ($1, 0, 'x')", tid)
    return tid


async def test_only_final_tasks_older_than_the_window_go(store_settings: Any) -> None:
    conn = await asyncpg.connect(store_settings.database_url)
    pool = await asyncpg.create_pool(store_settings.database_url, min_size=1, max_size=2)
    assert pool is not None
    try:
        old = [await make(conn, s, 31) for s in ("SUCCESS", "FAILURE", "CANCELLED")]
        young = [await make(conn, s, 29) for s in ("SUCCESS", "FAILURE", "CANCELLED")]
        # Not final: never purged, whatever their dates say.
        alive = [await make(conn, s, 100) for s in ("QUEUED", "RUNNING", "RETRYING", "PENDING")]
        forgotten: list[str] = []
        purger = Purger(pool, ManualClock(NOW), retention_days=30, on_purged=forgotten.extend, chunk=2)
        assert await purger.purge() == 3  # in chunks of 2
        assert sorted(forgotten) == sorted(old)
        left = {r["id"] for r in await conn.fetch("SELECT id::text AS id FROM tasks")}
        assert left == set(young) | set(alive)
        assert await conn.fetchval("SELECT count(*) FROM task_logs") == len(young) + len(alive)
        # Two days later the young ones are past the window too.
        purger.clock = ManualClock(NOW + 2 * 86_400)
        assert await purger.purge() == 3
        assert await purger.purge(older_than_us=0) == 0  # only non-final rows left
    finally:
        await pool.close()
        await conn.close()


async def test_purge_through_the_store_invalidates_the_cache(result_store: Any) -> None:
    tid = ids.new_task_id()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[tr.TaskRecord(id=tid, name="add")]))
    async with result_store.pool.acquire() as conn:
        await conn.execute(
            "UPDATE tasks SET state = 'CANCELLED', finished_at = now() - interval '2 hours' WHERE id = $1",
            tid,
        )
    assert len((await result_store.get(tasks_pb2.GetTasksRequest(ids=[tid]))).tasks) == 1  # now cached
    reply = await result_store.ops.queue_op(
        queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_PURGE, older_than_us=3600 * 1_000_000)
    )
    assert reply.count == 1
    assert len((await result_store.get(tasks_pb2.GetTasksRequest(ids=[tid]))).tasks) == 0
