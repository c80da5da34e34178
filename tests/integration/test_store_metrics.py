"""The store's task counters against a real PostgreSQL (in-process store): a task
is counted finished once, when the transition to its final state commits; a late
outcome the store refuses is counted apart (``taskyard_late_completions``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest
from prometheus_client.registry import REGISTRY
from support.records import task

from taskyard.bus.v1 import leases_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import ids
from taskyard.core import metrics as core_metrics
from taskyard.v1 import task_pb2

pytestmark = pytest.mark.asyncio


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The store counts as it does while it serves /metrics (no port opened here)."""
    monkeypatch.setattr(core_metrics, "_serving", True)
    yield


def finished(queue: str, state: str) -> float:
    value = REGISTRY.get_sample_value(
        "taskyard_tasks_finished_total", {"queue": queue, "name": "add", "state": state}
    )
    return value or 0.0


def ref(t: str, attempt: int, token: str) -> tr.AttemptRef:
    return tr.AttemptRef(task_id=t, attempt=attempt, lease_token=token, worker_id="pool-1/w0:1")


async def lease(store: Any, t: str, token: str) -> None:
    reply = await store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id="pool-1", lease_ms=30_000, leases=[leases_pb2.Lease(task_id=t, lease_token=token)]
        )
    )
    assert [r.id for r in reply.tasks] == [t]


async def get(store: Any, t: str) -> tr.TaskRecord:
    (rec,) = (await store.get(tasks_pb2.GetTasksRequest(ids=[t]))).tasks
    return rec


async def test_a_refused_late_outcome_is_not_another_finish(
    result_store: Any, database_url: str, counting: None
) -> None:
    # A queue of its own: the counters are the process's, shared with other tests.
    queue = f"counted-{ids.new_task_id()[:8]}"
    cancelled, succeeded = task(queue=queue), task(queue=queue)
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[cancelled, succeeded]))
    # A lease lapsed unseen (the store saw no start): a new attempt runs, is
    # cancelled while running and stops at its flag; then the first attempt's body,
    # which did run, reports late.
    await lease(result_store, cancelled.id, "old")
    await result_store.report(
        leases_pb2.ReportRequest(died=[leases_pb2.Death(ref=ref(cancelled.id, 1, "old"))])
    )
    await lease(result_store, cancelled.id, "new")
    await result_store.report(leases_pb2.ReportRequest(started=[ref(cancelled.id, 2, "new")]))
    await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[cancelled.id], reason="test"))
    stopped = leases_pb2.Completion(
        ref=ref(cancelled.id, 2, "new"),
        success=False,
        cancel_step=task_pb2.CANCEL_STEP_FLAG,
        failure={"type": "Cancelled", "message": "stopped at its flag"},
    )
    await result_store.report(leases_pb2.ReportRequest(completed=[stopped]))
    assert (await get(result_store, cancelled.id)).state == task_pb2.TASK_STATE_CANCELLED
    assert finished(queue, "CANCELLED") == 1
    late = leases_pb2.Completion(ref=ref(cancelled.id, 1, "old"), success=True, result_json=b"3")
    r = await result_store.report(leases_pb2.ReportRequest(completed=[late]))
    assert r.refused == 1
    rec = await get(result_store, cancelled.id)
    # Noted on the row (and the cached record).
    assert rec.state == task_pb2.TASK_STATE_CANCELLED and rec.late_reports == 1
    assert finished(queue, "CANCELLED") == 1

    # A superseded attempt's outcome after the re-run succeeded: one SUCCESS.
    await lease(result_store, succeeded.id, "old")
    await result_store.report(
        leases_pb2.ReportRequest(died=[leases_pb2.Death(ref=ref(succeeded.id, 1, "old"))])
    )
    await lease(result_store, succeeded.id, "new")
    done = leases_pb2.Completion(ref=ref(succeeded.id, 2, "new"), success=True, result_json=b"3")
    await result_store.report(leases_pb2.ReportRequest(completed=[done]))
    assert finished(queue, "SUCCESS") == 1
    stale = leases_pb2.Completion(ref=ref(succeeded.id, 1, "old"), success=True, result_json=b"3")
    r = await result_store.report(leases_pb2.ReportRequest(completed=[stale]))
    assert r.refused == 1
    assert (await get(result_store, succeeded.id)).late_reports == 1
    assert finished(queue, "SUCCESS") == 1
    assert finished(queue, "CANCELLED") == 1
    # The refusals have their own counter, kept in the database (taskyard_late_completions).
    conn = await asyncpg.connect(database_url)
    try:
        late_total = await conn.fetchval(
            "SELECT value FROM taskyard_counters WHERE name = 'late_completions'"
        )
    finally:
        await conn.close()
    assert late_total == 2
