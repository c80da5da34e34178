"""A task's failed attempts stay readable however many there are (real PostgreSQL).

A downstream throttling for hours gives a task thousands of uncharged attempts,
each a failure. They are written without a traceback past the first, and GetTask
and ExplainTask read the last 100 and counts, never all of them.
"""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest
from support.records import task

from taskyard.bus.v1 import leases_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.result_store.reads.failures import MAX_FAILURES_PER_TASK, get_failures

pytestmark = pytest.mark.asyncio

GRPC_MAX_MESSAGE = 4 * 1024 * 1024
TRACEBACK = (
    "Traceback (most recent call last):\n"
    + '  File "/app/venv/lib/python3.11/site-packages/app/payments.py", line 300, in charge\n'
    "    result = await client.post(url, json=body)\n"
    * 12
    + "taskyard.worker_pool.throttle.RetryAfter: HTTP 503: retry after 2s\n"
)


async def read(store: Any, tid: str, *, counts_only: bool = False) -> tasks_pb2.GetFailuresReply:
    return await get_failures(
        store.pool, store.stats, tasks_pb2.GetFailuresRequest(task_ids=[tid], counts_only=counts_only)
    )


async def throttled_attempt(store: Any, tid: str, attempt: int, traceback: str) -> None:
    """One attempt leased and failed with a throttling answer (the task made due again first)."""
    await store.pool.execute(
        "UPDATE tasks SET state = 'QUEUED', run_at = now() WHERE id = $1 AND state = 'RETRYING'", tid
    )
    token = f"t{attempt}"
    leased = await store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id="pool-1", lease_ms=30_000, leases=[leases_pb2.Lease(task_id=tid, lease_token=token)]
        )
    )
    assert [t.attempt for t in leased.tasks] == [attempt]
    c = leases_pb2.Completion(
        ref=tr.AttemptRef(task_id=tid, attempt=attempt, lease_token=token, worker_id="pool-1/w0:1"),
        success=False,
        retryable=True,
        retry_delay_ms=10,
    )
    c.failure.type, c.failure.message, c.failure.traceback = "RetryAfter", "HTTP 503", traceback
    c.failure.throttled = True
    assert list((await store.report(leases_pb2.ReportRequest(completed=[c]))).completed) == [tid]


async def test_throttled_failures_keep_the_first_traceback_and_show_the_latest(result_store: Any) -> None:
    rec = task(max_retries=0)
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[rec]))
    for attempt in (1, 2, 3):
        await throttled_attempt(result_store, rec.id, attempt, f"{TRACEBACK}#{attempt}")
    stored = await result_store.pool.fetch(
        "SELECT traceback FROM task_failures WHERE task_id = $1 ORDER BY attempt", rec.id
    )
    assert [r["traceback"] for r in stored] == [f"{TRACEBACK}#1", "", ""]
    (item,) = (await read(result_store, rec.id)).tasks
    # The latest's own, from the task's row.
    assert [(f.attempt, f.type, f.traceback) for f in item.failures] == [
        (1, "RetryAfter", f"{TRACEBACK}#1"),
        (2, "RetryAfter", ""),
        (3, "RetryAfter", f"{TRACEBACK}#3"),
    ]
    assert (item.earlier, item.refunded) == (0, 0)


async def test_a_tasks_failures_are_read_as_its_last_100_and_counts(
    result_store: Any, database_url: str
) -> None:
    rec = task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[rec]))
    conn = await asyncpg.connect(database_url)
    try:
        # As many as the cap on uncharged attempts lets a task have, a few refunded.
        await conn.execute(
            """
            INSERT INTO task_failures (task_id, attempt, type, message, traceback, worker_id, charged,
                                       refunded_at)
            SELECT $1::uuid, g, 'RetryAfter', 'HTTP 503: retry after 2s', $2, 'p/w0:1', g > 40,
                   CASE WHEN g > 40 AND g <= 80 THEN now() END
            FROM generate_series(1, 3000) g
            """,
            rec.id,
            TRACEBACK,
        )
    finally:
        await conn.close()

    reply = await read(result_store, rec.id)
    (item,) = reply.tasks
    assert [f.attempt for f in item.failures] == list(range(3000 - MAX_FAILURES_PER_TASK + 1, 3001))
    assert (item.earlier, item.refunded) == (3000 - MAX_FAILURES_PER_TASK, 40)
    assert reply.ByteSize() < GRPC_MAX_MESSAGE // 10

    (counted,) = (await read(result_store, rec.id, counts_only=True)).tasks
    assert (list(counted.failures), counted.earlier, counted.refunded) == ([], 3000, 40)
    # A task without a failure has no entry.
    other = task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[other]))
    assert list((await read(result_store, other.id, counts_only=True)).tasks) == []
