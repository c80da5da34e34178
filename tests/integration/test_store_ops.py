# mypy: disable-error-code="comparison-overlap,list-item,arg-type"
"""Result-store operations against a real PostgreSQL (in-process store)."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from support.records import task
from support.waiting import wait_until_async

from taskyard.bus.v1 import lanes_pb2, leases_pb2, pools_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import errors, ids
from taskyard.core.states import TaskState as S

pytestmark = pytest.mark.asyncio


async def insert(store: Any, *records: tr.TaskRecord) -> tasks_pb2.InsertTasksReply:
    reply: tasks_pb2.InsertTasksReply = await store.insert(tasks_pb2.InsertTasksRequest(tasks=records))
    return reply


async def lease(store: Any, *task_ids: str, token: str = "tok", pool: str = "pool-1") -> list[tr.TaskRecord]:
    reply = await store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id=pool,
            lease_ms=30_000,
            leases=[leases_pb2.Lease(task_id=t, lease_token=token) for t in task_ids],
        )
    )
    return list(reply.tasks)


def ref(t: str, attempt: int = 1, token: str = "tok") -> tr.AttemptRef:
    return tr.AttemptRef(task_id=t, attempt=attempt, lease_token=token, worker_id="w-1")


async def get(store: Any, t: str) -> tr.TaskRecord:
    reply = await store.get(tasks_pb2.GetTasksRequest(ids=[t]))
    assert len(reply.tasks) == 1
    rec: tr.TaskRecord = reply.tasks[0]
    return rec


async def start(store: Any, t: str, attempt: int = 1, token: str = "tok") -> None:
    r = await store.report(leases_pb2.ReportRequest(started=[ref(t, attempt, token)]))
    assert list(r.started) == [t] and r.refused == 0


async def running(store: Any, rec: tr.TaskRecord, token: str = "tok") -> None:
    """Insert ``rec``, lease it under ``token`` and start its first attempt."""
    await insert(store, rec)
    await lease(store, rec.id, token=token)
    await start(store, rec.id, 1, token)


def fail(t: str, attempt: int = 1, token: str = "tok", *, retryable: bool = True, delay: int = 0) -> Any:
    return leases_pb2.Completion(
        ref=ref(t, attempt, token),
        success=False,
        retryable=retryable,
        retry_delay_ms=delay,
        failure={"type": "ValueError", "message": "boom", "traceback": "tb"},
    )


# --- insert ---------------------------------------------------------------------
async def test_insert_returns_created_in_request_order(result_store: Any) -> None:
    recs = [task(priority=p) for p in (1, 2, 3, 4)]
    reply = await insert(result_store, *recs)
    assert [t.id for t in reply.tasks] == [r.id for r in recs]
    assert all(t.created and t.state == S.QUEUED for t in reply.tasks)
    assert [t.priority for t in reply.tasks] == [1, 2, 3, 4]
    rec = await get(result_store, recs[0].id)
    assert rec.args_json == b"[1, 2]" and rec.kwargs_json == b"{}" and rec.attempt == 1


async def test_same_request_id_twice_returns_the_first_task(result_store: Any) -> None:
    first = await insert(result_store, task(request_id="req-1"))
    again = await insert(result_store, task(request_id="req-1"))
    assert first.tasks[0].created and not again.tasks[0].created
    assert again.tasks[0].id == first.tasks[0].id
    assert again.tasks[0].state == S.QUEUED and again.tasks[0].name == "add"


async def test_duplicates_inside_one_batch(result_store: Any) -> None:
    a = task(request_id="dup")
    b = task(request_id="dup")
    c = task()
    reply = await insert(result_store, a, b, c, c)
    assert [t.created for t in reply.tasks] == [True, False, True, False]
    assert reply.tasks[1].id == a.id and reply.tasks[3].id == c.id


async def test_resend_of_same_id_is_not_a_new_task(result_store: Any) -> None:
    a = task()
    await insert(result_store, a)
    reply = await insert(result_store, a)
    assert not reply.tasks[0].created and reply.tasks[0].id == a.id


async def test_twenty_concurrent_submits_create_one_task(result_store: Any, database_url: str) -> None:
    replies = await asyncio.gather(*(insert(result_store, task(request_id="same")) for _ in range(20)))
    created = [r.tasks[0] for r in replies if r.tasks[0].created]
    assert len(created) == 1
    assert {r.tasks[0].id for r in replies} == {created[0].id}
    conn = await asyncpg.connect(database_url)
    try:
        assert await conn.fetchval("SELECT count(*) FROM tasks WHERE request_id = 'same'") == 1
    finally:
        await conn.close()


async def test_concurrent_submits_across_two_stores(store_settings: Any) -> None:
    from taskyard.result_store.store import ResultStore

    s1 = await ResultStore.open(store_settings, publish=False)
    s2 = await ResultStore.open(store_settings, publish=False)
    s1.start(listen=False)
    s2.start(listen=False)
    try:
        replies = await asyncio.gather(
            *(insert(s, task(request_id="x-store")) for s in (s1, s2) for _ in range(10))
        )
        assert sum(r.tasks[0].created for r in replies) == 1
        assert len({r.tasks[0].id for r in replies}) == 1
    finally:
        await s1.close()
        await s2.close()


async def test_invalid_records_are_refused_with_field_violations(result_store: Any) -> None:
    with pytest.raises(errors.TaskyardError) as ei:
        await insert(result_store, task(id="nope"), task(name=""), task(state=int(S.RUNNING)))
    err = ei.value
    assert err.code.name == "INVALID_ARGUMENT"
    fields = {v.field for v in err.violations}
    assert {"tasks[0].id", "tasks[1].name", "tasks[2].state"} <= fields


async def test_a_bad_request_fails_alone_in_its_group(result_store: Any) -> None:
    good = [task() for _ in range(5)]
    bad = task(args_json=b'["\\u0000"]')  # jsonb refuses NUL
    results = await asyncio.gather(
        *(insert(result_store, g) for g in good), insert(result_store, bad), return_exceptions=True
    )
    assert all(isinstance(r, tasks_pb2.InsertTasksReply) and r.tasks[0].created for r in results[:5])
    assert isinstance(results[5], errors.TaskyardError)
    assert results[5].code.name == "INVALID_ARGUMENT"


# --- group commit -----------------------------------------------------------------
async def test_group_commit_batches_concurrent_requests(result_store: Any) -> None:
    stats = result_store.stats
    before = (stats.statements, stats.transactions)
    n = 200
    replies = await asyncio.gather(*(insert(result_store, task()) for _ in range(n)))
    assert all(r.tasks[0].created for r in replies)
    statements = stats.statements - before[0]
    transactions = stats.transactions - before[1]
    assert transactions < n / 4, transactions
    assert statements < n / 4, statements


async def test_events_are_published_only_after_commit(result_store: Any, database_url: str) -> None:
    """When the committer publishes events, another connection already sees the change."""
    conn = await asyncpg.connect(database_url)
    seen: list[tuple[str, str | None]] = []
    original = result_store.committer._on_events

    async def checking_publish(events: list[Any]) -> None:
        for e in events:
            if e.task_id:
                state = await conn.fetchval("SELECT state::text FROM tasks WHERE id = $1::uuid", e.task_id)
                seen.append((e.type, state))
        await original(events)

    result_store.committer._on_events = checking_publish
    try:
        recs = [task() for _ in range(3)]
        await insert(result_store, *recs)
        await lease(result_store, recs[0].id)
        # Replies come first, events right after: wait for the last batch.
        await wait_until_async(lambda: len(seen) >= 4, 5, "the four events to be published")
    finally:
        await conn.close()
    assert seen == [("task.queued", "QUEUED")] * 3 + [("task.assigned", "ASSIGNED")]


# --- lease / report / fencing -------------------------------------------------------
async def test_lease_returns_full_records_and_only_queued(result_store: Any) -> None:
    a = task(kwargs_json=b'{"k": 1}', labels={"team": "x"}, trace_headers={"traceparent": "00-abc"})
    await insert(result_store, a)
    got = await lease(result_store, a.id, token="t1")
    assert len(got) == 1
    rec = got[0]
    assert rec.state == S.ASSIGNED and rec.lease_token == "t1" and rec.pool_id == "pool-1"
    assert rec.args_json == b"[1, 2]" and rec.kwargs_json == b'{"k": 1}'
    assert dict(rec.labels) == {"team": "x"} and dict(rec.trace_headers) == {"traceparent": "00-abc"}
    # Already leased: a second lease gets nothing.
    assert await lease(result_store, a.id, token="t2") == []


async def test_stale_token_is_refused_and_counted(result_store: Any) -> None:
    a = task()
    await insert(result_store, a)
    await lease(result_store, a.id, token="good")
    # A start notice is not applied with a stale token or attempt; starts are not
    # counted as refused (a start may legitimately arrive after its outcome).
    r = await result_store.report(leases_pb2.ReportRequest(started=[ref(a.id, 1, "stale")]))
    assert r.refused == 0 and not r.started
    r = await result_store.report(leases_pb2.ReportRequest(started=[ref(a.id, 2, "good")]))
    assert r.refused == 0 and not r.started
    await start(result_store, a.id, 1, "good")
    r = await result_store.report(
        leases_pb2.ReportRequest(completed=[leases_pb2.Completion(ref=ref(a.id, 1, "stale"), success=True)])
    )
    assert r.refused == 1
    assert (await get(result_store, a.id)).state == S.RUNNING
    assert result_store.stats.refused >= 1


async def test_success_is_final_and_never_overwritten(result_store: Any) -> None:
    a = task()
    await running(result_store, a)
    done = leases_pb2.Completion(ref=ref(a.id), success=True, result_json=b'{"sum": 3}')
    r = await result_store.report(leases_pb2.ReportRequest(completed=[done]))
    assert list(r.completed) == [a.id] and r.refused == 0
    # A duplicate completion and a late failure are refused.
    r = await result_store.report(leases_pb2.ReportRequest(completed=[done, fail(a.id)], died=[]))
    assert r.refused == 2
    r = await result_store.report(
        leases_pb2.ReportRequest(died=[leases_pb2.Death(ref=ref(a.id), started=True)])
    )
    assert r.refused == 1
    rec = await get(result_store, a.id)
    assert rec.state == S.SUCCESS and rec.result_json == b'{"sum": 3}' and rec.finished_at_us > 0
    # It came from the cache (the store finalized it itself).
    assert a.id in result_store.cache


async def test_retry_decision(result_store: Any, database_url: str) -> None:
    a = task(max_retries=1)
    await running(result_store, a, token="t1")
    r = await result_store.report(leases_pb2.ReportRequest(completed=[fail(a.id, 1, "t1", delay=60_000)]))
    assert list(r.completed) == [a.id]
    rec = await get(result_store, a.id)
    assert rec.state == S.RETRYING and rec.attempt == 2
    assert rec.failure.type == "ValueError" and rec.failure.attempt == 1
    assert rec.run_at_us - rec.updated_at_us >= 59_000_000
    # Not due yet.
    p = await result_store.promote_due(lanes_pb2.PromoteDueRequest())
    assert not p.tasks and p.next_due_us == rec.run_at_us
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("UPDATE tasks SET run_at = now() - interval '1 second' WHERE id = $1::uuid", a.id)
        p = await result_store.promote_due(lanes_pb2.PromoteDueRequest())
        assert [t.id for t in p.tasks] == [a.id] and p.next_due_us == 0
        # Second attempt fails: retries spent -> FAILURE.
        await lease(result_store, a.id, token="t2")
        await start(result_store, a.id, 2, "t2")
        await result_store.report(leases_pb2.ReportRequest(completed=[fail(a.id, 2, "t2")]))
        rec = await get(result_store, a.id)
        assert rec.state == S.FAILURE and rec.attempt == 2 and rec.failure.attempt == 2
        rows = await conn.fetch(
            "SELECT attempt, type FROM task_failures WHERE task_id = $1::uuid ORDER BY id", a.id
        )
        assert [(r["attempt"], r["type"]) for r in rows] == [(1, "ValueError"), (2, "ValueError")]
    finally:
        await conn.close()


async def test_non_retryable_failure_is_final(result_store: Any) -> None:
    a = task(max_retries=5)
    await running(result_store, a)
    await result_store.report(leases_pb2.ReportRequest(completed=[fail(a.id, retryable=False)]))
    rec = await get(result_store, a.id)
    assert rec.state == S.FAILURE and rec.attempt == 1


async def test_release_burns_no_retry(result_store: Any) -> None:
    a = task()
    await running(result_store, a)
    r = await result_store.report(
        leases_pb2.ReportRequest(released=[leases_pb2.Release(ref=ref(a.id), resume_requested=True)])
    )
    assert list(r.released) == [a.id]
    rec = await get(result_store, a.id)
    # Its body ran: the re-run is a new attempt, not charged to the retry budget.
    assert rec.state == S.QUEUED and rec.attempt == 2 and rec.uncharged_attempts == 1
    assert rec.resume_requested and rec.lease_token == ""


async def test_death_not_started_requeues_without_burning(result_store: Any) -> None:
    a = task(max_retries=0)
    await insert(result_store, a)
    await lease(result_store, a.id)
    r = await result_store.report(
        leases_pb2.ReportRequest(died=[leases_pb2.Death(ref=ref(a.id), started=False)])
    )
    assert list(r.died) == [a.id]
    rec = await get(result_store, a.id)
    # A new attempt number (the body may have run unseen), no retry burned.
    assert rec.state == S.QUEUED and rec.attempt == 2 and rec.uncharged_attempts == 1
    assert rec.rescues == 0


async def test_death_started_counts_as_a_retryable_failure(result_store: Any) -> None:
    a = task(max_retries=1)
    await insert(result_store, a)
    await lease(result_store, a.id, token="t1")
    r = await result_store.report(
        leases_pb2.ReportRequest(
            started=[ref(a.id, 1, "t1")], died=[leases_pb2.Death(ref=ref(a.id, 1, "t1"), started=True)]
        )
    )
    assert list(r.started) == [a.id] and list(r.died) == [a.id]
    rec = await get(result_store, a.id)
    assert rec.state == S.RETRYING and rec.attempt == 2 and rec.failure.type == "WorkerProcessDied"
    # The last attempt dies too: FAILURE.
    await result_store.promote_due(lanes_pb2.PromoteDueRequest())
    await lease(result_store, a.id, token="t2")
    await result_store.report(
        leases_pb2.ReportRequest(
            started=[ref(a.id, 2, "t2")], died=[leases_pb2.Death(ref=ref(a.id, 2, "t2"), started=True)]
        )
    )
    rec = await get(result_store, a.id)
    assert rec.state == S.FAILURE and rec.failure.type == "WorkerProcessDied"


async def test_rescue_uses_the_database_clock(result_store: Any, database_url: str) -> None:
    queued, running, last = task(), task(max_retries=2), task(max_retries=0)
    await insert(result_store, queued, running, last)
    await lease(result_store, queued.id, running.id, last.id)
    await start(result_store, running.id)
    await start(result_store, last.id)
    # Nothing lapsed yet.
    r = await result_store.rescue(leases_pb2.RescueRequest(limit=100))
    assert not r.requeued and not r.failed
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("UPDATE tasks SET lease_expires_at = now() - interval '1 second'")
    finally:
        await conn.close()
    r = await result_store.rescue(leases_pb2.RescueRequest(limit=100, retry_delay_ms=0))
    assert [t.id for t in r.requeued] == [queued.id]
    assert r.requeued[0].state == S.QUEUED and r.requeued[0].attempt == 2
    assert r.requeued[0].uncharged_attempts == 1
    by_id = {t.id: t for t in r.failed}
    assert by_id[running.id].state == S.RETRYING and by_id[running.id].attempt == 2
    assert by_id[last.id].state == S.FAILURE and by_id[last.id].failure.type == "WorkerProcessDied"


async def test_renew_extends_current_leases_and_reports_lost(result_store: Any, database_url: str) -> None:
    a, b = task(), task()
    await insert(result_store, a, b)
    await lease(result_store, a.id, b.id)
    r = await result_store.renew(
        leases_pb2.RenewLeasesRequest(refs=[ref(a.id), ref(b.id, token="other")], lease_ms=120_000)
    )
    assert list(r.lost) == [b.id]
    conn = await asyncpg.connect(database_url)
    try:
        left = await conn.fetchval(
            "SELECT extract(epoch FROM lease_expires_at - now()) FROM tasks WHERE id = $1::uuid", a.id
        )
    finally:
        await conn.close()
    assert float(left) > 100


# --- cancel ---------------------------------------------------------------------------
async def test_cancel_variants(result_store: Any) -> None:
    queued, assigned, running, done = task(), task(), task(), task()
    await insert(result_store, queued, assigned, running, done)
    await lease(result_store, assigned.id, running.id, done.id)
    await start(result_store, running.id)
    await start(result_store, done.id)
    await result_store.report(
        leases_pb2.ReportRequest(completed=[leases_pb2.Completion(ref=ref(done.id), success=True)])
    )
    unknown = ids.new_task_id()
    r = await result_store.cancel(
        tasks_pb2.CancelTasksRequest(
            ids=[queued.id, assigned.id, running.id, done.id, unknown, "not-a-uuid"], reason="user"
        )
    )
    o = r.outcomes
    assert o[0].cancelled
    # Leased (dispatched or running): only the flag; the pool reports how it stopped.
    assert o[1].flagged and not o[1].cancelled
    assert o[2].flagged and not o[2].cancelled
    assert o[3].already_final
    assert o[4].not_found and o[5].not_found
    assert (await get(result_store, queued.id)).state == S.CANCELLED
    for leased_id, state in ((assigned.id, S.ASSIGNED), (running.id, S.RUNNING)):
        rec = await get(result_store, leased_id)
        assert rec.state == state and rec.cancel_requested
    # Cancelling again: already final.
    r3 = await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[queued.id]))
    assert r3.outcomes[0].already_final


# --- reads ---------------------------------------------------------------------------
async def test_list_pagination_newest_first(result_store: Any) -> None:
    recs = [task(created_at_us=1_700_000_000_000_000 + i, name="a" if i % 2 else "b") for i in range(25)]
    await insert(result_store, *recs)
    seen: list[str] = []
    cursor = ""
    pages = 0
    while True:
        r = await result_store.list(tasks_pb2.ListTasksRequest(limit=10, cursor=cursor))
        seen.extend(t.id for t in r.tasks)
        pages += 1
        if not r.next_cursor:
            break
        cursor = r.next_cursor
    assert pages == 3
    assert seen == [r.id for r in reversed(recs)]
    only_a = await result_store.list(tasks_pb2.ListTasksRequest(name="a", limit=100))
    assert len(only_a.tasks) == 12 and not only_a.next_cursor
    queued = await result_store.list(tasks_pb2.ListTasksRequest(states=[int(S.QUEUED)], limit=5))
    assert len(queued.tasks) == 5 and queued.next_cursor


@pytest.mark.parametrize("cursor", ["garbage!!", "bDE6eHh4", "cTE6MTox"])
async def test_list_bad_cursor(result_store: Any, cursor: str) -> None:
    with pytest.raises(errors.TaskyardError) as ei:
        await result_store.list(tasks_pb2.ListTasksRequest(cursor=cursor))
    assert ei.value.code.name == "INVALID_ARGUMENT"
    assert ei.value.reason == "INVALID_PAGE_TOKEN"
    assert [v.field for v in ei.value.violations] == ["page_token"]


async def test_list_limit_bounds(result_store: Any) -> None:
    with pytest.raises(errors.TaskyardError):
        await result_store.list(tasks_pb2.ListTasksRequest(limit=1001))
    await result_store.list(tasks_pb2.ListTasksRequest(limit=1000))


async def test_load_queued_pages_in_dispatch_order(result_store: Any) -> None:
    recs = [task(priority=(i % 4) + 1, created_at_us=1_700_000_000_000_000 + i) for i in range(30)]
    await insert(result_store, *recs)
    await lease(result_store, recs[0].id)
    got: list[Any] = []
    cursor = ""
    while True:
        r = await result_store.load_queued(lanes_pb2.LoadQueuedRequest(limit=7, cursor=cursor))
        got.extend(r.tasks)
        if not r.next_cursor:
            break
        cursor = r.next_cursor
    assert len(got) == 29
    keys = [(t.priority, t.created_at_us, t.id) for t in got]
    assert keys == sorted(keys)
    assert recs[0].id not in {t.id for t in got}


async def test_scheduled_insert_and_promotion(result_store: Any, database_url: str) -> None:
    a = task(state=int(S.SCHEDULED), run_at_us=1)  # long due
    reply = await insert(result_store, a)
    assert reply.tasks[0].state == S.SCHEDULED
    p = await result_store.promote_due(lanes_pb2.PromoteDueRequest(limit=10))
    assert [t.id for t in p.tasks] == [a.id]
    assert (await get(result_store, a.id)).state == S.QUEUED


async def test_heartbeat_and_task_names(result_store: Any, database_url: str) -> None:
    await result_store.heartbeat(
        pools_pb2.HeartbeatRequest(pool_id="p1", server_name="h", is_running=True, task_names=["add", "mul"])
    )
    await result_store.heartbeat(
        pools_pb2.HeartbeatRequest(pool_id="p2", server_name="h", is_running=True, task_names=["add", "echo"])
    )
    await result_store.heartbeat(
        pools_pb2.HeartbeatRequest(pool_id="p3", is_running=True, task_names=["old"])
    )
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(
            "UPDATE workers SET last_heartbeat = now() - interval '1 hour' WHERE pool_id = 'p3'"
        )
    finally:
        await conn.close()
    r = await result_store.task_names(pools_pb2.TaskNamesRequest(max_age_ms=30_000))
    assert list(r.names) == ["add", "echo", "mul"]


async def test_an_outcome_may_overtake_its_start_notice(result_store: Any) -> None:
    a = task()
    await insert(result_store, a)
    await lease(result_store, a.id)
    started_us = 1_700_000_000_123_456
    done = leases_pb2.Completion(ref=ref(a.id), success=True, result_json=b"3", started_at_us=started_us)
    r = await result_store.report(leases_pb2.ReportRequest(completed=[done]))
    assert list(r.completed) == [a.id] and r.refused == 0
    rec = await get(result_store, a.id)
    assert rec.state == S.SUCCESS and rec.started_at_us == started_us
    # The late start notice changes nothing (SUCCESS is immutable) and is not "refused".
    late = await result_store.report(leases_pb2.ReportRequest(started=[ref(a.id)]))
    assert not late.started and late.refused == 0
    assert (await get(result_store, a.id)).state == S.SUCCESS


async def test_a_death_the_pool_says_started_burns_the_attempt_even_if_assigned(result_store: Any) -> None:
    a, b = task(max_retries=3), task(max_retries=3)
    await insert(result_store, a, b)
    await lease(result_store, a.id, b.id)
    r = await result_store.report(
        leases_pb2.ReportRequest(
            died=[
                leases_pb2.Death(ref=ref(a.id), started=True, retry_delay_ms=0),
                leases_pb2.Death(ref=ref(b.id), started=False),
            ]
        )
    )
    assert sorted(r.died) == sorted([a.id, b.id])
    ra, rb = await get(result_store, a.id), await get(result_store, b.id)
    assert ra.state == S.RETRYING and ra.attempt == 2 and ra.failure.type == "WorkerProcessDied"
    assert rb.state == S.QUEUED and rb.attempt == 2 and rb.uncharged_attempts == 1
    assert ra.uncharged_attempts == 0


async def test_insert_can_lease_new_tasks_in_the_same_statement(result_store: Any) -> None:
    a, b = task(request_id="fast-1"), task()
    reply: tasks_pb2.InsertTasksReply = await result_store.insert(
        tasks_pb2.InsertTasksRequest(
            tasks=[a, b],
            pool_id="pool-9",
            lease_ms=30_000,
            leases=[leases_pb2.Lease(task_id=a.id, lease_token="tok-a")],
        )
    )
    assert [t.created for t in reply.tasks] == [True, True]
    assert [t.state for t in reply.tasks] == [S.ASSIGNED, S.QUEUED]
    (leased,) = reply.leased
    assert leased.id == a.id and leased.lease_token == "tok-a" and leased.pool_id == "pool-9"
    assert leased.args_json == b"[1, 2]"
    assert (await get(result_store, b.id)).state == S.QUEUED
    # A duplicate (same request_id) is never leased: the first task keeps its lease.
    again = task(request_id="fast-1")
    dup: tasks_pb2.InsertTasksReply = await result_store.insert(
        tasks_pb2.InsertTasksRequest(
            tasks=[again],
            pool_id="pool-9",
            lease_ms=30_000,
            leases=[leases_pb2.Lease(task_id=again.id, lease_token="tok-x")],
        )
    )
    assert not dup.tasks[0].created and dup.tasks[0].id == a.id and not dup.leased
    assert (await get(result_store, a.id)).lease_token == "tok-a"
