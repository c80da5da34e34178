"""Restart reconciliation, store side (real PostgreSQL, in-process store): which
ASSIGNED leases ``release_orphaned_leases`` hands back and which it must keep."""

from __future__ import annotations

from typing import Any

import pytest

from taskyard.bus.v1 import leases_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import contract, ids
from taskyard.core.states import TaskState as S

pytestmark = pytest.mark.asyncio


async def _queued(store: Any, n: int, *, queue: str = "default") -> list[str]:
    records = [
        tr.TaskRecord(id=ids.new_task_id(), name="add", args_json=b"[1, 2]", queue=queue) for _ in range(n)
    ]
    reply = await store.insert(tasks_pb2.InsertTasksRequest(tasks=records))
    return [t.id for t in reply.tasks]


async def _lease(store: Any, task_id: str, token: str, pool: str) -> None:
    reply = await store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id=pool, lease_ms=30_000, leases=[leases_pb2.Lease(task_id=task_id, lease_token=token)]
        )
    )
    assert [t.id for t in reply.tasks] == [task_id]


async def _age(store: Any, task_ids: list[str], seconds: float) -> None:
    """Pretend these leases were issued ``seconds`` ago (by the database clock)."""
    await store.pool.execute(
        "UPDATE tasks SET updated_at = now() - $2::float8 * interval '1 second' WHERE id = ANY($1::uuid[])",
        task_ids,
        seconds,
    )


async def _reconcile(store: Any, req: leases_pb2.ReconcileRequest) -> leases_pb2.ReconcileReply:
    reply: leases_pb2.ReconcileReply = await store.committer.submit(contract.STORE_RECONCILE, req, 1)
    return reply


async def _rows(store: Any, task_ids: list[str]) -> dict[str, Any]:
    rows = await store.pool.fetch(
        "SELECT id::text AS id, state::text AS state, attempt, lease_token, pool_id, lease_expires_at "
        "FROM tasks WHERE id = ANY($1::uuid[])",
        task_ids,
    )
    return {r["id"]: r for r in rows}


async def test_only_unheld_old_assigned_leases_of_answering_pools_are_released(result_store: Any) -> None:
    store = result_store
    held, orphan, started, young, silent, stale, other_queue, ours = await _queued(store, 8)
    for t in (held, orphan, started, young, stale, other_queue):
        await _lease(store, t, f"tok-{t}", "pool-1")
    await _lease(store, ours, f"me.{ours}", "pool-1")  # the asking scheduler's own, in flight
    await _lease(store, silent, f"tok-{silent}", "pool-2")
    # `started` is RUNNING: the pool reported its start (and then forgot it).
    r = await store.report(
        leases_pb2.ReportRequest(
            started=[tr.AttemptRef(task_id=started, attempt=1, lease_token=f"tok-{started}", worker_id="w")]
        )
    )
    assert list(r.started) == [started]
    await _age(store, [held, orphan, started, silent, stale, other_queue, ours], 10.0)
    await _age(store, [young], 1.0)

    reply = await _reconcile(
        store,
        leases_pb2.ReconcileRequest(
            pool_ids=["pool-1"],
            # `stale`: the pool holds an older token of the task, not this lease.
            held_tokens=[f"tok-{held}", "tok-older-attempt"],
            issued_before_ms_ago=5_000,
            own_token_prefix="me.",
        ),
    )
    assert sorted(t.id for t in reply.released) == sorted([orphan, stale, other_queue])
    ref = next(t for t in reply.released if t.id == orphan)
    assert ref.name == "add" and ref.queue == "default" and ref.created_at_us > 0

    rows = await _rows(store, [held, orphan, started, young, silent, stale, other_queue, ours])
    for t in (orphan, stale, other_queue):
        assert rows[t]["state"] == S.QUEUED.name
        assert rows[t]["attempt"] == 2  # a new attempt, no retry burned
        assert (
            rows[t]["lease_token"] == "" and rows[t]["pool_id"] == "" and rows[t]["lease_expires_at"] is None
        )
    assert rows[held]["state"] == S.ASSIGNED.name  # the pool holds it
    assert rows[started]["state"] == S.RUNNING.name  # started: never touched
    assert rows[young]["state"] == S.ASSIGNED.name  # newer than the cutoff
    assert rows[silent]["state"] == S.ASSIGNED.name  # pool-2 did not answer
    assert rows[silent]["lease_token"] == f"tok-{silent}"
    assert rows[ours]["state"] == S.ASSIGNED.name  # issued by the asking scheduler

    # Released rows are ordinary QUEUED rows again: leased anew as attempt 2.
    await _lease(store, orphan, "tok-again", "pool-1")
    assert (await _rows(store, [orphan]))[orphan]["attempt"] == 2


async def test_no_pool_no_release_and_a_second_round_finds_nothing(result_store: Any) -> None:
    store = result_store
    (t,) = await _queued(store, 1)
    await _lease(store, t, "tok-1", "pool-1")
    await _age(store, [t], 10.0)
    reply = await _reconcile(store, leases_pb2.ReconcileRequest(pool_ids=[], issued_before_ms_ago=0))
    assert not reply.released
    reply = await _reconcile(
        store, leases_pb2.ReconcileRequest(pool_ids=["pool-1"], issued_before_ms_ago=5_000)
    )
    assert [r.id for r in reply.released] == [t]
    reply = await _reconcile(
        store, leases_pb2.ReconcileRequest(pool_ids=["pool-1"], issued_before_ms_ago=5_000)
    )
    assert not reply.released
