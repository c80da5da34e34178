"""Redrives in the store against a real PostgreSQL (in-process stores).

A redrive's set is fixed when it is accepted (its row and one item per matched
dead letter, in one transaction); the leading scheduler steps it, each step one
transaction in the store fenced by the leader's term, re-queueing a task only
while it is still a dead letter at the attempt its item took. So a stale leader
changes nothing and no task is re-queued twice, whoever steps.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import tempfile
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from support.bus_events import Subscriber
from support.records import task
from support.waiting import wait_until_async

from taskyard.bus.v1 import failures_pb2 as bus
from taskyard.bus.v1 import lanes_pb2, leases_pb2, queues_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import contract, errors, seal
from taskyard.core.config import Settings
from taskyard.result_store.reads.failures import get_failures
from taskyard.result_store.store import ResultStore
from taskyard.result_store.writes import redrives as redrive_writes
from taskyard.v1 import failure_service_pb2 as fs
from taskyard.v1 import task_pb2

pytestmark = pytest.mark.asyncio

FAILURE = task_pb2.TASK_STATE_FAILURE
QUEUED = task_pb2.TASK_STATE_QUEUED
RUNNING = fs.REDRIVE_STATE_RUNNING
PAUSED = fs.REDRIVE_STATE_PAUSED
DONE = fs.REDRIVE_STATE_DONE
CANCELLED = fs.REDRIVE_STATE_CANCELLED
PENDING = fs.REDRIVE_OUTCOME_PENDING
REQUEUED = fs.REDRIVE_OUTCOME_REQUEUED
SKIPPED = fs.REDRIVE_OUTCOME_SKIPPED
ITEM_CANCELLED = fs.REDRIVE_OUTCOME_CANCELLED
EXHAUSTED = task_pb2.DEAD_LETTER_REASON_RETRIES_EXHAUSTED
LOCK_WAITS = """SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock'"""


def _ref(t: str, attempt: int = 1, token: str = "t1") -> tr.AttemptRef:
    return tr.AttemptRef(task_id=t, attempt=attempt, lease_token=token, worker_id="pool-1/w0:1")


async def lease_and_fail(store: Any, ids: list[str], attempt: int = 1, message: str = "boom") -> None:
    token = f"t{attempt}"
    reply = await store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id="pool-1",
            lease_ms=60_000,
            leases=[leases_pb2.Lease(task_id=t, lease_token=token) for t in ids],
        )
    )
    assert len(reply.tasks) == len(ids)
    for t in ids:
        completion = leases_pb2.Completion(
            ref=_ref(t, attempt, token),
            success=False,
            retryable=True,
            failure=task_pb2.TaskFailure(type="ValueError", message=message),
        )
        assert list((await store.report(leases_pb2.ReportRequest(completed=[completion]))).completed) == [t]


async def dead(store: Any, n: int, **fields: Any) -> list[str]:
    """``n`` dead letters (their first attempt failed, no retry), oldest first."""
    recs = [task(max_retries=0, **fields) for _ in range(n)]
    await store.insert(tasks_pb2.InsertTasksRequest(tasks=recs))
    await lease_and_fail(store, [r.id for r in recs])
    return [r.id for r in recs]


async def get(store: Any, tid: str) -> tr.TaskRecord:
    (rec,) = (await store.get(tasks_pb2.GetTasksRequest(ids=[tid]))).tasks
    return rec


async def create(
    store: Any, *, rate: float = 100.0, dry_run: bool = False, note: str = "", request_id: str = "", **f: Any
) -> fs.RedriveResponse:
    req = bus.CreateRedriveRequest(
        request=fs.RedriveRequest(filter=fs.FailureFilter(**f), rate=rate, dry_run=dry_run, note=note),
        created_by="ops-token",
    )
    return (await store.failures.create_redrive(req, request_id)).response


async def step(store: Any, rid: str, limit: int, term: int = 0) -> bus.RedriveStepReply:
    reply: bus.RedriveStepReply = await store.failures.step(
        bus.RedriveStepRequest(id=rid, limit=limit, term=term)
    )
    return reply


async def control(store: Any, op: bus.RedriveOp, rid: str) -> fs.Redrive:
    return (await store.failures.control_redrive(bus.RedriveControlRequest(op=op, id=rid))).redrive


async def items(
    store: Any, rid: str, page_size: int = 0, page_token: str = ""
) -> fs.ListRedriveItemsResponse:
    req = bus.RedriveListRequest(
        items=fs.ListRedriveItemsRequest(id=rid, page_size=page_size, page_token=page_token)
    )
    return (await store.failures.list_redrives(req)).items


async def refused(call: Any) -> errors.TaskyardError:
    with pytest.raises(errors.TaskyardError) as caught:
        await call
    return caught.value


async def sql(database_url: str, query: str, *args: Any) -> Any:
    conn = await asyncpg.connect(database_url)
    try:
        return await conn.fetchval(query, *args)
    finally:
        await conn.close()


async def test_the_redrive_kinds_are_routed(result_store: Any) -> None:
    kinds = {route.method.kind for route in result_store.routes()}
    for method in (
        contract.STORE_REDRIVE_CREATE,
        contract.STORE_REDRIVE_CONTROL,
        contract.STORE_REDRIVE_LIST,
        contract.STORE_REDRIVE_STEP,
        contract.STORE_REDRIVES_ACTIVE,
    ):
        assert method.kind in kinds, method


async def test_a_dry_run_counts_and_samples_and_writes_nothing(result_store: Any, database_url: str) -> None:
    ids = await dead(result_store, 12, queue="q1")
    await dead(result_store, 2, queue="q2")
    answer = await create(result_store, dry_run=True, queue="q1")
    assert answer.matched == 12 and not answer.HasField("redrive")
    assert [d.task_id for d in answer.sample] == ids[::-1][:10]  # newest failure first
    assert await sql(database_url, "SELECT count(*) FROM redrives") == 0
    assert await sql(database_url, "SELECT count(*) FROM redrive_items") == 0
    assert await sql(database_url, "SELECT count(*) FROM bus_requests") == 0
    rec = await get(result_store, ids[0])
    assert (rec.state, rec.attempt, rec.dead_letter_reason) == (FAILURE, 1, EXHAUSTED)


async def test_a_redrive_is_recorded_with_its_items_and_audit(result_store: Any) -> None:
    ids = await dead(result_store, 3, queue="q1", labels={"tenant": "acme"})
    answer = await create(result_store, rate=50, note="after the fix", queue="q1", labels={"tenant": "acme"})
    r = answer.redrive
    assert (r.state, r.rate, r.note, r.created_by, r.matched, r.requeued, r.skipped) == (
        RUNNING,
        50,
        "after the fix",
        "ops-token",
        3,
        0,
        0,
    )
    assert (r.filter.queue, dict(r.filter.labels)) == ("q1", {"tenant": "acme"})
    assert r.created_at.ToMicroseconds() > 0 and not r.HasField("finished_at")
    assert answer.matched == 3 and len(answer.sample) == 3
    listed = await items(result_store, r.id)
    assert [(i.task_id, i.outcome, i.failed_attempt) for i in listed.items] == [(t, PENDING, 1) for t in ids]
    assert await control(result_store, bus.REDRIVE_OP_GET, r.id) == r
    active = await result_store.failures.active_redrives(bus.ActiveRedrivesRequest())
    assert [a.id for a in active.redrives] == [r.id]


async def test_bad_redrives_are_refused_and_change_nothing(
    result_store: Any, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead_ids = await dead(result_store, 3)
    live = task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[live]))
    for rate in (0.0, -1.0, 1e-9, 0.009, 10_001.0, float("nan")):
        err = await refused(create(result_store, rate=rate, all=True))
        assert (err.code, [v.field for v in err.violations]) == (errors.Code.INVALID_ARGUMENT, ["rate"])
    err = await refused(create(result_store))
    assert (err.code, [v.field for v in err.violations]) == (errors.Code.INVALID_ARGUMENT, ["filter"])
    err = await refused(create(result_store, task_ids=[dead_ids[0]] * 1001))
    assert err.violations[0].field == "filter.task_ids"
    # A task that is not a dead letter: named, nothing changed.
    err = await refused(create(result_store, task_ids=[dead_ids[0], live.id]))
    assert (err.code, err.reason) == (errors.Code.FAILED_PRECONDITION, "NOT_DEAD_LETTERS")
    assert live.id in err.message and dead_ids[0] not in err.message
    err = await refused(create(result_store, group_id="0123456789abcdef"))
    assert (err.code, err.reason) == (errors.Code.NOT_FOUND, "FAILURE_GROUP_NOT_FOUND")
    err = await refused(create(result_store, queue="empty"))
    assert (err.code, err.reason) == (errors.Code.FAILED_PRECONDITION, "NOTHING_TO_REDRIVE")
    monkeypatch.setattr(redrive_writes, "MAX_MATCHED", 2)
    err = await refused(create(result_store, all=True))
    assert (err.code, err.reason) == (errors.Code.FAILED_PRECONDITION, "TOO_MANY_MATCHED")
    assert await sql(database_url, "SELECT count(*) FROM redrives") == 0
    assert await sql(database_url, "SELECT count(*) FROM redrive_items") == 0


async def test_a_redrive_is_created_once_per_request(result_store: Any, database_url: str) -> None:
    await dead(result_store, 2)
    first = await create(result_store, all=True, request_id="5d1c7f7e-6f0b-4f3e-9d59-000000000001")
    with pytest.raises(seal.Replayed) as caught:
        await create(result_store, all=True, request_id="5d1c7f7e-6f0b-4f3e-9d59-000000000001")
    assert caught.value.reply is not None
    assert bus.CreateRedriveReply.FromString(caught.value.reply).response.redrive.id == first.redrive.id
    assert await sql(database_url, "SELECT count(*) FROM redrives") == 1


async def test_steps_requeue_each_task_as_a_new_attempt_linked_to_its_failure(
    result_store: Any, database_url: str
) -> None:
    ids = await dead(result_store, 3)
    rid = (await create(result_store, all=True)).redrive.id
    first = await step(result_store, rid, 2)
    assert (first.requeued, first.skipped, first.redrive.state, first.redrive.requeued) == (2, 0, RUNNING, 2)
    for t in ids[:2]:  # the oldest failures first
        rec = await get(result_store, t)
        assert (rec.state, rec.attempt, rec.dead_letter_reason) == (QUEUED, 2, 0)
        assert (rec.redrive_id, rec.redriven_from_attempt) == (rid, 1)
        reply = await get_failures(
            result_store.pool, result_store.stats, tasks_pb2.GetFailuresRequest(task_ids=[t])
        )
        (failure,) = reply.tasks[0].failures
        assert (failure.attempt, failure.redrive_id) == (1, rid)
    assert (await get(result_store, ids[2])).state == FAILURE
    last = await step(result_store, rid, 2)
    assert (last.requeued, last.redrive.state, last.redrive.requeued) == (1, DONE, 3)
    assert last.redrive.HasField("finished_at")
    listed = await items(result_store, rid)
    assert [(i.outcome, i.new_attempt) for i in listed.items] == [(REQUEUED, 2)] * 3
    assert all(i.at.ToMicroseconds() > 0 for i in listed.items)
    # DONE: a step takes nothing, and says so.
    after = await step(result_store, rid, 2)
    assert (after.requeued, after.redrive.state) == (0, DONE)
    assert not (await result_store.failures.active_redrives(bus.ActiveRedrivesRequest())).redrives
    # A redriven task that succeeds still says where its attempt came from (its
    # final record, cached by the write path, does not carry it).
    token = "t2"
    await result_store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id="pool-1", lease_ms=60_000, leases=[leases_pb2.Lease(task_id=ids[1], lease_token=token)]
        )
    )
    completion = leases_pb2.Completion(ref=_ref(ids[1], 2, token), success=True, result_json=b"3")
    assert list((await result_store.report(leases_pb2.ReportRequest(completed=[completion]))).completed) == [
        ids[1]
    ]
    assert result_store.cache.get(ids[1]) is not None
    rec = await get(result_store, ids[1])
    assert (rec.state, rec.redrive_id, rec.redriven_from_attempt) == (task_pb2.TASK_STATE_SUCCESS, rid, 1)
    # The redriven task fails again: a dead letter once more, redriven once before.
    await lease_and_fail(result_store, [ids[0]], attempt=2)
    req = fs.ListFailuresRequest(filter=fs.FailureFilter(task_ids=[ids[0]]))
    (letter,) = (
        await result_store.failures.dead_letters(bus.DeadLettersRequest(request=req))
    ).response.failures
    assert (letter.redrives, letter.failure.attempt) == (1, 2)


async def test_a_task_no_longer_a_dead_letter_is_skipped_and_said_why(result_store: Any) -> None:
    retried, purged, kept = await dead(result_store, 3)
    rid = (await create(result_store, all=True)).redrive.id
    await result_store.ops.queue_op(queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_RETRY, ids=[retried]))
    purge = fs.PurgeDeadLettersRequest(filter=fs.FailureFilter(task_ids=[purged]))
    await result_store.failures.purge(bus.PurgeDeadLettersRequest(request=purge))
    reply = await step(result_store, rid, 10)
    assert (reply.requeued, reply.skipped, reply.redrive.state) == (1, 2, DONE)
    assert (reply.redrive.requeued, reply.redrive.skipped) == (1, 2)
    listed = {i.task_id: i for i in (await items(result_store, rid)).items}
    assert (listed[retried].outcome, listed[retried].detail) == (
        SKIPPED,
        "no longer a dead letter: it is QUEUED",
    )
    assert (listed[purged].outcome, listed[purged].detail) == (SKIPPED, "the task no longer exists (purged)")
    assert listed[kept].outcome == REQUEUED
    # The retried task kept the attempt RetryTasks gave it: not re-queued twice.
    assert (await get(result_store, retried)).attempt == 2


async def test_a_step_with_a_stale_term_is_refused(result_store: Any, database_url: str) -> None:
    ids = await dead(result_store, 2)
    rid = (await create(result_store, all=True)).redrive.id
    await sql(
        database_url,
        "UPDATE scheduler_leader SET term = 7, holder = 'b', expires_at = now() + interval '1 h'",
    )
    err = await refused(step(result_store, rid, 10, term=6))
    assert (err.code, err.reason) == (errors.Code.FAILED_PRECONDITION, "NOT_LEADER")
    assert [i.outcome for i in (await items(result_store, rid)).items] == [PENDING, PENDING]
    assert (await get(result_store, ids[0])).state == FAILURE
    assert (await step(result_store, rid, 10, term=7)).requeued == 2
    err = await refused(step(result_store, "5d1c7f7e-6f0b-4f3e-9d59-00000000000f", 10, term=7))
    assert err.code == errors.Code.NOT_FOUND
    err = await refused(step(result_store, rid, 0, term=7))
    assert err.violations[0].field == "limit"


@contextlib.asynccontextmanager
async def second_store(settings: Settings) -> AsyncIterator[ResultStore]:
    """Another store on the same database (its own sockets)."""
    with tempfile.TemporaryDirectory(prefix="ty-", dir="/tmp") as ipc:
        store = await ResultStore.open(dataclasses.replace(settings, ipc_dir=ipc), run_migrations=False)
        store.start(listen=False, sweep=False)
        try:
            yield store
        finally:
            await store.close()


async def test_steps_racing_on_two_stores_requeue_no_task_twice(
    result_store: Any, store_settings: Settings, database_url: str
) -> None:
    ids = await dead(result_store, 5)
    rid = (await create(result_store, all=True)).redrive.id
    async with second_store(store_settings) as other:
        holder = await asyncpg.connect(database_url)
        try:
            # Both steps reach the redrive's lock while a third party holds it ...
            tx = holder.transaction()
            await tx.start()
            await holder.execute("SELECT 1 FROM redrives WHERE id = $1 FOR UPDATE", rid)
            racing = asyncio.gather(step(result_store, rid, 4), step(other, rid, 4))
            await wait_until_async(
                lambda: _lock_waits(database_url, 2),
                timeout=30,
                what="both steps waiting on the redrive's lock",
            )
            await tx.rollback()  # ... and go on, one after the other.
            first, second = await racing
        finally:
            await holder.close()
    assert sorted([first.requeued, second.requeued]) == [1, 4]
    for t in ids:
        rec = await get(result_store, t)
        assert (rec.state, rec.attempt) == (QUEUED, 2)
    assert [i.outcome for i in (await items(result_store, rid)).items] == [REQUEUED] * 5
    done = await control(result_store, bus.REDRIVE_OP_GET, rid)
    assert (done.state, done.requeued, done.skipped) == (DONE, 5, 0)


async def _lock_waits(database_url: str, n: int) -> bool:
    return bool(await sql(database_url, LOCK_WAITS) >= n)


async def test_pause_resume_and_cancel(result_store: Any) -> None:
    ids = await dead(result_store, 3)
    rid = (await create(result_store, all=True)).redrive.id
    assert (await control(result_store, bus.REDRIVE_OP_PAUSE, rid)).state == PAUSED
    paused = await step(result_store, rid, 10)
    assert (paused.requeued, paused.redrive.state) == (0, PAUSED)
    err = await refused(control(result_store, bus.REDRIVE_OP_PAUSE, rid))
    assert (err.code, err.reason) == (errors.Code.FAILED_PRECONDITION, "REDRIVE_STATE")
    assert not (await result_store.failures.active_redrives(bus.ActiveRedrivesRequest())).redrives
    assert (await control(result_store, bus.REDRIVE_OP_RESUME, rid)).state == RUNNING
    assert (await step(result_store, rid, 1)).requeued == 1
    cancelled = await control(result_store, bus.REDRIVE_OP_CANCEL, rid)
    assert (cancelled.state, cancelled.requeued) == (CANCELLED, 1) and cancelled.HasField("finished_at")
    assert [i.outcome for i in (await items(result_store, rid)).items] == [
        REQUEUED,
        ITEM_CANCELLED,
        ITEM_CANCELLED,
    ]
    for t in ids[1:]:  # not reached: still dead letters
        assert (await get(result_store, t)).dead_letter_reason == EXHAUSTED
    err = await refused(control(result_store, bus.REDRIVE_OP_CANCEL, rid))
    assert err.code == errors.Code.FAILED_PRECONDITION
    err = await refused(control(result_store, bus.REDRIVE_OP_RESUME, rid))
    assert err.code == errors.Code.FAILED_PRECONDITION
    err = await refused(control(result_store, bus.REDRIVE_OP_GET, "5d1c7f7e-6f0b-4f3e-9d59-00000000000f"))
    assert (err.code, err.reason) == (errors.Code.NOT_FOUND, "REDRIVE_NOT_FOUND")
    err = await refused(control(result_store, bus.REDRIVE_OP_GET, "nope"))
    assert err.violations[0].field == "id"


async def test_redrives_and_their_items_are_paged(result_store: Any) -> None:
    ids = await dead(result_store, 5)
    whole = (await create(result_store, all=True)).redrive.id
    await control(result_store, bus.REDRIVE_OP_CANCEL, whole)  # its tasks free for the next ones
    made = [(await create(result_store, task_ids=[t])).redrive.id for t in ids[:3]]
    seen: list[str] = []
    token = ""
    while True:
        req = bus.RedriveListRequest(redrives=fs.ListRedrivesRequest(page_size=2, page_token=token))
        page = (await result_store.failures.list_redrives(req)).redrives
        seen.extend(r.id for r in page.redrives)
        token = page.next_page_token
        if not token:
            break
    assert seen == [*made[::-1], whole]  # newest first
    got: list[str] = []
    token = ""
    while True:
        listed = await items(result_store, whole, page_size=2, page_token=token)
        got.extend(i.task_id for i in listed.items)
        token = listed.next_page_token
        if not token:
            break
    assert got == ids
    err = await refused(items(result_store, "5d1c7f7e-6f0b-4f3e-9d59-00000000000f"))
    assert err.code == errors.Code.NOT_FOUND
    err = await refused(items(result_store, whole, page_size=1001))
    assert err.violations[0].field == "page_size"


async def _fail_then_promote(store: Any, tid: str, attempt: int) -> tr.TaskRecord:
    """Attempt ``attempt`` of ``tid`` fails (retryable, no delay); a RETRYING task is queued again."""
    await lease_and_fail(store, [tid], attempt=attempt)
    rec = await get(store, tid)
    if rec.state == task_pb2.TASK_STATE_RETRYING:
        promoted = await store.promote_due(lanes_pb2.PromoteDueRequest(limit=10))
        assert [r.id for r in promoted.tasks] == [tid]
    return rec


async def test_a_redriven_task_gets_its_retry_budget_back(result_store: Any) -> None:
    rec = task(max_retries=1)
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[rec]))
    assert (await _fail_then_promote(result_store, rec.id, 1)).state == task_pb2.TASK_STATE_RETRYING
    spent = await _fail_then_promote(result_store, rec.id, 2)
    assert (spent.state, spent.dead_letter_reason) == (FAILURE, EXHAUSTED)
    rid = (await create(result_store, task_ids=[rec.id])).redrive.id
    assert (await step(result_store, rid, 10)).requeued == 1
    # Its first failure after the redrive is retried, as its first failure ever was.
    again = await _fail_then_promote(result_store, rec.id, 3)
    assert (again.state, again.attempt, again.dead_letter_reason) == (task_pb2.TASK_STATE_RETRYING, 4, 0)
    # And its budget is one retry again, no more.
    last = await _fail_then_promote(result_store, rec.id, 4)
    assert (last.state, last.dead_letter_reason) == (FAILURE, EXHAUSTED)


async def test_a_manual_retry_gets_the_retry_budget_back_too(result_store: Any) -> None:
    rec = task(max_retries=1)
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[rec]))
    await _fail_then_promote(result_store, rec.id, 1)
    assert (await _fail_then_promote(result_store, rec.id, 2)).state == FAILURE
    await result_store.ops.queue_op(queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_RETRY, ids=[rec.id]))
    again = await _fail_then_promote(result_store, rec.id, 3)
    assert (again.state, again.attempt) == (task_pb2.TASK_STATE_RETRYING, 4)
    assert (await _fail_then_promote(result_store, rec.id, 4)).state == FAILURE


async def test_a_dead_letter_pending_in_another_redrive_is_left_out(
    result_store: Any, database_url: str
) -> None:
    ids = await dead(result_store, 3)
    first = (await create(result_store, all=True)).redrive.id
    await control(result_store, bus.REDRIVE_OP_PAUSE, first)  # paused: still holds its tasks
    # Every dead letter matched is the first redrive's: nothing to redrive, and which one holds them.
    err = await refused(create(result_store, all=True))
    assert (err.code, err.reason) == (errors.Code.FAILED_PRECONDITION, "NOTHING_TO_REDRIVE")
    assert f"redrive {first} (PAUSED)" in err.message
    assert (await create(result_store, all=True, dry_run=True)).matched == 0
    # Named by id: refused, naming the redrive that holds it; nothing written.
    err = await refused(create(result_store, task_ids=[ids[1]]))
    assert (err.code, err.reason) == (errors.Code.FAILED_PRECONDITION, "PENDING_IN_ANOTHER_REDRIVE")
    assert ids[1] in err.message and first in err.message
    assert await sql(database_url, "SELECT count(*) FROM redrives") == 1
    # A new dead letter is free: a second redrive takes it and only it.
    (fresh,) = await dead(result_store, 1)
    second = await create(result_store, all=True)
    assert second.matched == 1
    assert [i.task_id for i in (await items(result_store, second.redrive.id)).items] == [fresh]
    # Once the first is over, its tasks may be redriven again.
    await control(result_store, bus.REDRIVE_OP_CANCEL, first)
    assert (await create(result_store, task_ids=[ids[1]])).matched == 1


async def test_active_redrives_are_capped(result_store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redrive_writes, "MAX_ACTIVE", 2)
    ids = await dead(result_store, 3)
    one = (await create(result_store, task_ids=[ids[0]])).redrive.id
    two = (await create(result_store, task_ids=[ids[1]])).redrive.id
    await control(result_store, bus.REDRIVE_OP_PAUSE, two)  # paused counts: it may resume
    err = await refused(create(result_store, task_ids=[ids[2]]))
    assert (err.code, err.reason) == (errors.Code.FAILED_PRECONDITION, "TOO_MANY_REDRIVES")
    assert "(2)" in err.message
    # A dry run writes nothing: it is not refused.
    assert (await create(result_store, task_ids=[ids[2]], dry_run=True)).matched == 1
    assert (await step(result_store, one, 10)).redrive.state == DONE
    assert (await create(result_store, task_ids=[ids[2]])).matched == 1


async def test_retention_deletes_finished_redrives_items_then_their_rows(
    result_store: Any, database_url: str
) -> None:
    ids = await dead(result_store, 3)
    done = (await create(result_store, task_ids=ids[:2])).redrive.id
    assert (await step(result_store, done, 10)).redrive.state == DONE
    running = (await create(result_store, task_ids=[ids[2]])).redrive.id
    purger = result_store.ops.purger
    assert await purger.purge_redrives() == (0, 0)  # finished just now: within the window
    # Past the window: the finished redrive's items go, its row (the audit's summary) stays.
    assert await purger.purge_redrives(items_older_than_us=0) == (2, 0)
    assert (await items(result_store, done)).items == []
    kept = await control(result_store, bus.REDRIVE_OP_GET, done)
    assert (kept.state, kept.matched, kept.requeued, kept.created_by) == (DONE, 2, 2, "ops-token")
    # Past the summary's window the row goes too; an active redrive is never touched.
    assert await purger.purge_redrives(items_older_than_us=0, rows_older_than_us=0) == (0, 1)
    err = await refused(control(result_store, bus.REDRIVE_OP_GET, done))
    assert err.code == errors.Code.NOT_FOUND
    assert len((await items(result_store, running)).items) == 1
    assert await sql(database_url, "SELECT count(*) FROM redrives") == 1


async def test_a_step_and_a_retry_publish_their_tasks_refs_not_a_reload(
    result_store: Any, store_settings: Any
) -> None:
    """The lanes take what a step (or RetryTasks) queued from its refs: a step every
    100 ms that asked the leader to read every QUEUED row again would keep it reading."""
    redriven = await dead(result_store, 2)
    retried = await dead(result_store, 1)
    rid = (await create(result_store, task_ids=redriven)).redrive.id
    sub = Subscriber(store_settings.events_address)
    try:
        await sub.connected()
        assert (await step(result_store, rid, 10)).requeued == 2
        await result_store.ops.queue_op(queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_RETRY, ids=retried))
        await sub.wait_for_released([*redriven, *retried])
        queued = {*redriven, *retried}
        await sub.until(lambda: queued <= {e.task_id for e in sub.events if e.type == "task.queued"})
        for t in (*redriven, *retried):
            types = sub.batch_of(lambda e, t=t: e.task_id == t and e.type == "task.queued")  # type: ignore[misc]
            assert "tasks.available" not in types, types
    finally:
        sub.close()
