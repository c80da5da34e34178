"""Circuit breakers in the store (real PostgreSQL, in-process store): a throttled
attempt (RetryAfter) spends no retry and waits its Retry-After; the leading
scheduler's breaker opens and closes are logged as EVENT_KIND_BREAKER events."""

from __future__ import annotations

import time
from typing import Any

import pytest
from support.records import task
from support.waiting import wait_until_async

from taskyard.bus.v1 import event_log_pb2, flow_pb2, leases_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import errors
from taskyard.core.states import TaskState as S
from taskyard.v1 import event_service_pb2 as pub

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


def failed(t: str, attempt: int, token: str, *, throttled_ms: int | None) -> leases_pb2.Completion:
    c = leases_pb2.Completion(
        ref=ref(t, attempt, token), success=False, retryable=True, max_retries=0, retry_delay_ms=10
    )
    if throttled_ms is None:
        c.failure.type, c.failure.message = "ValueError", "boom"
    else:
        c.failure.type, c.failure.message, c.failure.throttled = "RetryAfter", "HTTP 503", True
        c.failure.retry_after.FromMilliseconds(throttled_ms)
        c.retry_delay_ms = throttled_ms
    return c


async def test_a_throttled_attempt_spends_no_retry_and_waits_its_retry_after(result_store: Any) -> None:
    a = task(max_retries=0)  # no retry at all: an ordinary failure is final
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[a]))
    await lease(result_store, a.id, "t1")
    before_us = time.time_ns() // 1000
    reply = await result_store.report(
        leases_pb2.ReportRequest(completed=[failed(a.id, 1, "t1", throttled_ms=2000)])
    )
    assert list(reply.completed) == [a.id]
    rec = await get(result_store, a.id)
    assert rec.state == S.RETRYING.value and rec.attempt == 2 and rec.uncharged_attempts == 1
    assert rec.run_at_us >= before_us + 2_000_000
    assert rec.failure.type == "RetryAfter"

    # Throttled again: still no retry spent.
    await result_store.pool.execute("UPDATE tasks SET state = 'QUEUED', run_at = now() WHERE id = $1", a.id)
    await lease(result_store, a.id, "t2")
    await result_store.report(leases_pb2.ReportRequest(completed=[failed(a.id, 2, "t2", throttled_ms=500)]))
    rec = await get(result_store, a.id)
    assert rec.state == S.RETRYING.value and rec.uncharged_attempts == 2

    # An ordinary failure spends the (empty) budget: FAILURE.
    await result_store.pool.execute("UPDATE tasks SET state = 'QUEUED', run_at = now() WHERE id = $1", a.id)
    await lease(result_store, a.id, "t3")
    await result_store.report(leases_pb2.ReportRequest(completed=[failed(a.id, 3, "t3", throttled_ms=None)]))
    assert (await get(result_store, a.id)).state == S.FAILURE.value


async def read_from(store: Any, after: str) -> list[pub.Event]:
    """Every event after ``after``, once this test's transactions are below the watermark."""
    mark = int(await store.pool.fetchval("SELECT pg_current_xact_id()::text"))

    async def passed() -> bool:
        xmin = await store.pool.fetchval("SELECT pg_snapshot_xmin(pg_current_snapshot())::text")
        return int(xmin) > mark

    await wait_until_async(passed, 30, "the watermark to pass this test's transactions")
    events: list[pub.Event] = []
    req = event_log_pb2.ReadEventsRequest(after=after, limit=100)
    while True:
        reply = await store._read_events(req)
        if not reply.events:
            return events
        events.extend(reply.events)
        req = event_log_pb2.ReadEventsRequest(after=reply.cursor, limit=100)


TERM = 7


async def lead(store: Any, term: int = TERM) -> None:
    await store.pool.execute(
        "UPDATE scheduler_leader SET term = $1, holder = 'sched-a', expires_at = now() + interval '1 h'",
        term,
    )


async def test_breaker_opens_and_closes_are_logged_as_breaker_events(result_store: Any) -> None:
    await lead(result_store)
    start = await result_store._read_events(event_log_pb2.ReadEventsRequest())
    request = flow_pb2.BreakerEventsRequest(term=TERM)
    request.changes.add(
        limit="payments",
        key="payments-api",
        change="opened",
        failures=5,
        next_probe_at_us=1_800_000_000_000_000,
    )
    request.changes.add(limit="payments", key="payments-api", change="closed")
    request.changes.add(limit="payments", key="x", change="exploded")  # not a change: dropped
    reply = await result_store.limits.breaker_events(request)
    assert reply.logged == 2
    events = await read_from(result_store, start.cursor)
    breaker = [e for e in events if e.kind == pub.EVENT_KIND_BREAKER]
    assert [e.type for e in breaker] == ["breaker.opened", "breaker.closed"]
    opened = breaker[0]
    assert dict(opened.attributes) == {
        "limit": "payments",
        "key": "payments-api",
        "failures": "5",
        "next_probe_at": "2027-01-15T08:00:00.000Z",
    }
    assert dict(breaker[1].attributes) == {"limit": "payments", "key": "payments-api"}


async def test_a_deposed_leaders_breaker_events_are_refused_and_log_nothing(result_store: Any) -> None:
    await lead(result_store)
    start = await result_store._read_events(event_log_pb2.ReadEventsRequest())
    for term in (TERM - 1, 0):
        request = flow_pb2.BreakerEventsRequest(term=term)
        request.changes.add(limit="payments", key="payments-api", change="opened", failures=5)
        with pytest.raises(errors.TaskyardError) as caught:
            await result_store.limits.breaker_events(request)
        assert caught.value.code == (
            errors.Code.FAILED_PRECONDITION if term else errors.Code.INVALID_ARGUMENT
        ), caught.value
    # The leader's own term is taken, and only its event is in the log.
    request = flow_pb2.BreakerEventsRequest(term=TERM)
    request.changes.add(limit="payments", key="payments-api", change="closed")
    assert (await result_store.limits.breaker_events(request)).logged == 1
    events = await read_from(result_store, start.cursor)
    assert [e.type for e in events if e.kind == pub.EVENT_KIND_BREAKER] == ["breaker.closed"]
