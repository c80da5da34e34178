# mypy: disable-error-code="arg-type"
"""The store's timing reads against a real PostgreSQL: ExplainTask's facts,
the due heap's window, and every failed attempt with its retry time."""

from __future__ import annotations

from typing import Any

import pytest
from support.records import task

from taskyard.bus.v1 import lanes_pb2, leases_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import ids
from taskyard.core.clock import to_us
from taskyard.core.states import TaskState as S
from taskyard.result_store.reads import explain, failures
from taskyard.result_store.writes import promotions

pytestmark = pytest.mark.asyncio


async def insert(store: Any, *records: tr.TaskRecord) -> None:
    await store.insert(tasks_pb2.InsertTasksRequest(tasks=records))


async def facts(store: Any, task_id: str) -> tasks_pb2.ExplainFactsReply:
    return await explain.explain_facts(
        store.pool, store.stats, tasks_pb2.ExplainFactsRequest(task_id=task_id)
    )


async def add_pool(
    store: Any, pool_id: str, names: list[str], capacity: int, running: int, age_s: float = 0
) -> None:
    await store.pool.execute(
        "INSERT INTO workers (pool_id, task_names, capacity, running, is_running, last_heartbeat) "
        "VALUES ($1, $2, $3, $4, true, now() - $5 * interval '1 second')",
        pool_id,
        names,
        capacity,
        running,
        age_s,
    )


async def test_explain_facts_for_queued_tasks(result_store: Any) -> None:
    old, mine, other_name, critical = (
        task(created_at_us=1_000),
        task(created_at_us=2_000),
        task(name="noop", created_at_us=1_500),
        task(priority=1, created_at_us=3_000),
    )
    await insert(result_store, old, mine, other_name, critical)
    f = await facts(result_store, mine.id)
    assert f.found and not f.queue_paused
    assert (f.pools, f.capacity, f.running) == (0, 0, 0)

    # A stale pool does not count; live ones that serve "add" do, with their capacity.
    await add_pool(result_store, "stale", ["add"], 8, 0, age_s=3600)
    await add_pool(result_store, "p1", ["add", "noop"], 4, 4)
    await add_pool(result_store, "p2", ["add"], 2, 1)
    await add_pool(result_store, "p3", ["other"], 16, 0)
    f = await facts(result_store, mine.id)
    assert (f.pools, f.capacity, f.running) == (2, 6, 5)
    # Ahead of it: the CRITICAL one, the older "add", and "noop" (served by p1).
    assert f.depth_ahead == 3

    await result_store.pool.execute("INSERT INTO queues (name, paused) VALUES ('default', true)")
    assert (await facts(result_store, mine.id)).queue_paused

    assert not (await facts(result_store, ids.new_task_id())).found


async def test_explain_facts_lists_unfinished_dependencies(result_store: Any) -> None:
    done, running = task(), task()
    await insert(result_store, done, running)
    await result_store.pool.execute("UPDATE tasks SET state = 'ASSIGNED' WHERE id = $1", done.id)
    await result_store.pool.execute("UPDATE tasks SET state = 'SUCCESS' WHERE id = $1", done.id)
    dependent = task(state=int(S.PENDING), depends_on=[done.id, running.id])
    await insert(result_store, dependent)
    await result_store.pool.execute(
        "UPDATE tasks SET depends_on = $2::uuid[] WHERE id = $1", dependent.id, [done.id, running.id]
    )
    f = await facts(result_store, dependent.id)
    assert list(f.waiting_on) == [running.id]


async def test_load_due_window(result_store: Any) -> None:
    now = to_us(__import__("time").time())
    soon = task(state=int(S.SCHEDULED), run_at_us=now + 5_000_000)
    later = task(state=int(S.SCHEDULED), run_at_us=now + 120_000_000)
    queued = task()
    await insert(result_store, soon, later, queued)
    reply = await promotions.load_due(
        result_store.pool, result_store.stats, lanes_pb2.LoadDueRequest(window_ms=60_000)
    )
    assert [(t.id, t.run_at_us) for t in reply.tasks] == [(soon.id, soon.run_at_us)]
    assert abs(reply.now_us - now) < 5_000_000 and not reply.truncated
    reply = await promotions.load_due(
        result_store.pool, result_store.stats, lanes_pb2.LoadDueRequest(window_ms=600_000, limit=1)
    )
    assert [t.id for t in reply.tasks] == [soon.id] and reply.truncated


async def test_failures_keep_each_attempt_with_its_retry_time(result_store: Any) -> None:
    t = task(max_retries=1)
    await insert(result_store, t)
    for attempt, delay in ((1, 250), (2, 0)):
        token = f"tok{attempt}"
        await result_store.lease(
            leases_pb2.LeaseTasksRequest(
                pool_id="p", lease_ms=30_000, leases=[leases_pb2.Lease(task_id=t.id, lease_token=token)]
            )
        )
        if attempt == 2:  # due now: promote it first
            await result_store.pool.execute("UPDATE tasks SET run_at = now() WHERE id = $1", t.id)
            await result_store.promote_due(lanes_pb2.PromoteDueRequest(limit=10))
            await result_store.lease(
                leases_pb2.LeaseTasksRequest(
                    pool_id="p", lease_ms=30_000, leases=[leases_pb2.Lease(task_id=t.id, lease_token=token)]
                )
            )
        await result_store.report(
            leases_pb2.ReportRequest(
                completed=[
                    leases_pb2.Completion(
                        ref=tr.AttemptRef(task_id=t.id, attempt=attempt, lease_token=token),
                        success=False,
                        failure={"type": "RuntimeError", "message": f"boom {attempt}", "attempt": attempt},
                        retryable=True,
                        retry_delay_ms=delay,
                        max_retries=1,
                    )
                ]
            )
        )
    reply = await failures.get_failures(
        result_store.pool, result_store.stats, tasks_pb2.GetFailuresRequest(task_ids=[t.id, "not-a-uuid"])
    )
    (item,) = reply.tasks
    first, second = item.failures
    assert (first.attempt, first.message, second.attempt) == (1, "boom 1", 2)
    assert first.retry_at.ToMicroseconds() - first.failed_at.ToMicroseconds() == 250_000
    assert not second.HasField("retry_at")  # the last one: FAILURE
