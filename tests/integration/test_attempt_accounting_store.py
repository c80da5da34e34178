# mypy: disable-error-code="comparison-overlap,list-item,arg-type"
"""Attempt accounting in the store against a real PostgreSQL (in-process store).

Every run of a task body has its own attempt number: an attempt that ends with
no outcome the store can charge (never confirmed started, drained, orphaned by a
scheduler restart) is followed by a new, uncharged attempt. The retry budget
counts charged attempts only (attempt - uncharged_attempts). An outcome of a
superseded attempt is refused by fencing, counted in ``late_completions`` and
noted on the task (``late_reports``, ``late_attempt``), in GetTask too.
"""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest
from support.records import task

from taskyard.bus.v1 import lanes_pb2, leases_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core.states import TaskState as S
from taskyard.v1 import task_pb2

pytestmark = pytest.mark.asyncio


def ref(t: str, attempt: int, token: str) -> tr.AttemptRef:
    return tr.AttemptRef(task_id=t, attempt=attempt, lease_token=token, worker_id="pool-1/w0:1")


async def lease(store: Any, t: str, token: str) -> tr.TaskRecord:
    reply = await store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id="pool-1", lease_ms=30_000, leases=[leases_pb2.Lease(task_id=t, lease_token=token)]
        )
    )
    (rec,) = reply.tasks
    return rec


async def get(store: Any, t: str) -> tr.TaskRecord:
    (rec,) = (await store.get(tasks_pb2.GetTasksRequest(ids=[t]))).tasks
    return rec


def failure(t: str, attempt: int, token: str) -> leases_pb2.Completion:
    return leases_pb2.Completion(
        ref=ref(t, attempt, token),
        success=False,
        retryable=True,
        failure={"type": "ValueError", "message": "boom"},
    )


def success(t: str, attempt: int, token: str, result: bytes = b"1") -> leases_pb2.Completion:
    return leases_pb2.Completion(ref=ref(t, attempt, token), success=True, result_json=result)


async def late_completions(database_url: str) -> int:
    conn = await asyncpg.connect(database_url)
    try:
        value = await conn.fetchval("SELECT value FROM taskyard_counters WHERE name = 'late_completions'")
    finally:
        await conn.close()
    return int(value or 0)


async def test_an_unconfirmed_attempt_is_followed_by_a_new_one_that_spends_no_retry(
    result_store: Any,
) -> None:
    a = task(max_retries=1)
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[a]))
    assert (await lease(result_store, a.id, "t1")).attempt == 1
    # The pool died before its start notice: the body may have run, unseen.
    await result_store.report(leases_pb2.ReportRequest(died=[leases_pb2.Death(ref=ref(a.id, 1, "t1"))]))
    second = await lease(result_store, a.id, "t2")
    assert second.attempt == 2 and second.uncharged_attempts == 1
    # Fencing stays strict: the old attempt, or the new attempt with the old token, is refused.
    r = await result_store.report(leases_pb2.ReportRequest(started=[ref(a.id, 1, "t1"), ref(a.id, 2, "t1")]))
    assert not r.started
    # One retry left: attempt 2 is the first charged one, so its failure is retried ...
    r = await result_store.report(leases_pb2.ReportRequest(completed=[failure(a.id, 2, "t2")]))
    assert list(r.completed) == [a.id]
    rec = await get(result_store, a.id)
    assert rec.state == S.RETRYING and rec.attempt == 3 and rec.uncharged_attempts == 1
    # ... (no backoff asked: due at once) and attempt 3, the second charged one,
    # spends the budget.
    await result_store.promote_due(lanes_pb2.PromoteDueRequest())
    await lease(result_store, a.id, "t3")
    await result_store.report(leases_pb2.ReportRequest(completed=[failure(a.id, 3, "t3")]))
    rec = await get(result_store, a.id)
    assert rec.state == S.FAILURE and rec.attempt == 3 and rec.failure.attempt == 3


async def test_a_late_outcome_of_a_superseded_attempt_is_counted_on_the_task(
    result_store: Any, database_url: str
) -> None:
    a, b = task(), task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[a, b]))
    for t in (a, b):
        await lease(result_store, t.id, "old")
        # Lease lapsed unseen: the store saw no start, so the row goes back to QUEUED.
        await result_store.report(leases_pb2.ReportRequest(died=[leases_pb2.Death(ref=ref(t.id, 1, "old"))]))
        await lease(result_store, t.id, "new")
    # a: the re-run finishes first, then the frozen pool's attempt 1 reports.
    await result_store.report(leases_pb2.ReportRequest(completed=[success(a.id, 2, "new", b"2")]))
    assert (await get(result_store, a.id)).state == S.SUCCESS  # cached now
    r = await result_store.report(leases_pb2.ReportRequest(completed=[success(a.id, 1, "old", b"1")]))
    assert r.refused == 1 and not r.completed
    # b: the late outcome arrives while attempt 2 still runs; attempt 2 is untouched.
    r = await result_store.report(leases_pb2.ReportRequest(completed=[failure(b.id, 1, "old")]))
    assert r.refused == 1
    assert await late_completions(database_url) == 2
    ra, rb = await get(result_store, a.id), await get(result_store, b.id)
    assert ra.state == S.SUCCESS and ra.attempt == 2 and ra.result_json == b"2"
    assert ra.late_reports == 1 and ra.late_attempt == 1  # the cached record shows it too
    assert rb.state == S.ASSIGNED and rb.attempt == 2 and rb.lease_token == "new"
    assert rb.late_reports == 1 and rb.late_attempt == 1
    # A re-sent copy of an outcome that committed is a duplicate, not late.
    r = await result_store.report(leases_pb2.ReportRequest(completed=[success(a.id, 2, "new", b"2")]))
    assert r.refused == 1
    assert await late_completions(database_url) == 2
    assert (await get(result_store, a.id)).late_reports == 1


async def test_drained_and_released_attempts_spend_no_retry(result_store: Any) -> None:
    drained, cancelled = task(max_retries=0), task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[drained, cancelled]))
    for t in (drained, cancelled):
        await lease(result_store, t.id, "t1")
        await result_store.report(leases_pb2.ReportRequest(started=[ref(t.id, 1, "t1")]))
    await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[cancelled.id], reason="test"))
    r = await result_store.report(
        leases_pb2.ReportRequest(
            released=[
                leases_pb2.Release(ref=ref(t.id, 1, "t1"), resume_requested=True)
                for t in (drained, cancelled)
            ]
        )
    )
    assert sorted(r.released) == sorted([drained.id, cancelled.id])
    rd, rc = await get(result_store, drained.id), await get(result_store, cancelled.id)
    assert rd.state == S.QUEUED and rd.attempt == 2 and rd.uncharged_attempts == 1 and rd.resume_requested
    # A cancelled one ends there: no new attempt.
    assert rc.state == S.CANCELLED and rc.attempt == 1 and rc.uncharged_attempts == 0
    # No retries at all, yet the re-run gets its one charged attempt.
    await lease(result_store, drained.id, "t2")
    await result_store.report(leases_pb2.ReportRequest(completed=[failure(drained.id, 2, "t2")]))
    rd = await get(result_store, drained.id)
    assert rd.state == S.FAILURE and rd.attempt == 2


async def test_an_outcome_of_a_run_cancelled_as_not_started_is_counted(
    result_store: Any, database_url: str
) -> None:
    a = task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[a]))
    await lease(result_store, a.id, "t1")
    # Cancelled while the store still saw it ASSIGNED: only the flag ...
    await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[a.id], reason="test"))
    rec = await get(result_store, a.id)
    assert (rec.state, rec.cancel_requested) == (S.ASSIGNED, True)
    # ... and its pool says it never started it: CANCELLED, "not started" ...
    unstarted = leases_pb2.Completion(ref=ref(a.id, 1, "t1"), cancel_step=task_pb2.CANCEL_STEP_NOT_STARTED)
    await result_store.report(leases_pb2.ReportRequest(completed=[unstarted]))
    rec = await get(result_store, a.id)
    assert (rec.state, rec.attempt, rec.cancel_step) == (S.CANCELLED, 1, task_pb2.CANCEL_STEP_NOT_STARTED)
    # ... so an outcome of that attempt, were one to come, is refused, and counted.
    r = await result_store.report(leases_pb2.ReportRequest(completed=[success(a.id, 1, "t1")]))
    assert r.refused == 1
    assert await late_completions(database_url) == 1
    rec = await get(result_store, a.id)
    assert rec.state == S.CANCELLED and rec.late_reports == 1 and rec.late_attempt == 1
    assert not rec.result_json


async def test_an_outcome_its_sender_revoked_is_never_applied(result_store: Any, database_url: str) -> None:
    """A worker stream's gateway timed an attempt out (its failure) and then got the
    worker's outcome (late, revoked): both in one request, the failure stands."""
    t = task(max_retries=0)
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[t]))
    await lease(result_store, t.id, "t1")
    timed_out = leases_pb2.Completion(
        ref=ref(t.id, 1, "t1"),
        success=False,
        failure={"type": "TimeoutError", "message": "timed out after 1s"},
    )
    late = leases_pb2.Completion(ref=ref(t.id, 1, "t1"), success=True, result_json=b"1", revoked=True)
    r = await result_store.report(leases_pb2.ReportRequest(completed=[timed_out, late]))
    assert r.refused == 1
    rec = await get(result_store, t.id)
    assert rec.state == S.FAILURE and rec.failure.type == "TimeoutError"
    assert rec.late_reports == 1 and await late_completions(database_url) == 1
