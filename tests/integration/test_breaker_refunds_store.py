"""Circuit breakers' refunds in the store against a real PostgreSQL (in-process stores).

The leading scheduler sends the failed attempts its breakers counted as an
outage's; the store gives each one's retry back once (tasks.uncharged_attempts,
task_failures.refunded_at), fenced by the leader's term. A task whose retries
those charges spent (FAILURE, RETRIES_EXHAUSTED) is RETRYING again, due at the
breaker's next probe, and no longer a dead letter.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
import time
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from support.records import submitted_task, task
from support.waiting import wait_until_async

from taskyard.bus.v1 import failures_pb2, flow_pb2, leases_pb2, queues_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import contract, errors
from taskyard.core.config import Settings
from taskyard.result_store.reads.failures import get_failures
from taskyard.result_store.store import ResultStore
from taskyard.result_store.writes import refunds
from taskyard.v1 import failure_service_pb2 as fs
from taskyard.v1 import task_pb2

pytestmark = pytest.mark.asyncio

FAILURE = task_pb2.TASK_STATE_FAILURE
RETRYING = task_pb2.TASK_STATE_RETRYING
CANCELLED = task_pb2.TASK_STATE_CANCELLED
QUEUED = task_pb2.TASK_STATE_QUEUED
EXHAUSTED = task_pb2.DEAD_LETTER_REASON_RETRIES_EXHAUSTED
NOT_RETRYABLE = task_pb2.DEAD_LETTER_REASON_NOT_RETRYABLE
TERM = 7


async def sql(database_url: str, query: str, *args: Any) -> Any:
    conn = await asyncpg.connect(database_url)
    try:
        return await conn.fetchval(query, *args)
    finally:
        await conn.close()


async def lead(database_url: str, term: int = TERM) -> None:
    await sql(
        database_url,
        "UPDATE scheduler_leader SET term = $1, holder = 'sched-a', expires_at = now() + interval '1 h'",
        term,
    )


async def submit(store: Any, n: int, max_retries: int = 0) -> list[str]:
    recs = [task(max_retries=max_retries) for _ in range(n)]
    await store.insert(tasks_pb2.InsertTasksRequest(tasks=recs))
    return [r.id for r in recs]


async def lease(store: Any, ids: list[str], attempt: int = 1) -> None:
    reply = await store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id="pool-1",
            lease_ms=60_000,
            leases=[leases_pb2.Lease(task_id=t, lease_token=f"t{attempt}") for t in ids],
        )
    )
    assert len(reply.tasks) == len(ids)


async def fail(
    store: Any, ids: list[str], attempt: int = 1, *, retryable: bool = True, throttled: bool = False
) -> None:
    for t in ids:
        completion = leases_pb2.Completion(
            ref=tr.AttemptRef(task_id=t, attempt=attempt, lease_token=f"t{attempt}", worker_id="pool-1/w0:1"),
            success=False,
            retryable=retryable,
            failure=task_pb2.TaskFailure(
                type="ConnectionError", message="connection refused", throttled=throttled
            ),
        )
        assert list((await store.report(leases_pb2.ReportRequest(completed=[completion]))).completed) == [t]


async def get(store: Any, tid: str) -> tr.TaskRecord:
    (rec,) = (await store.get(tasks_pb2.GetTasksRequest(ids=[tid]))).tasks
    return rec


async def refund(
    store: Any, items: list[tuple[str, int]], *, term: int = TERM, probe_at_us: int = 0
) -> flow_pb2.BreakerRefundsReply:
    req = flow_pb2.BreakerRefundsRequest(
        term=term,
        refunds=[
            flow_pb2.BreakerRefund(task_id=t, attempt=a, next_probe_at_us=probe_at_us) for t, a in items
        ],
    )
    return await refunds.refund(store._submit, req)


async def failures(store: Any, tid: str) -> list[task_pb2.TaskFailure]:
    reply = await get_failures(store.pool, store.stats, tasks_pb2.GetFailuresRequest(task_ids=[tid]))
    return [f for t in reply.tasks for f in t.failures]


async def test_the_refund_kind_is_routed(result_store: Any) -> None:
    assert contract.STORE_BREAKER_REFUNDS.kind in {route.method.kind for route in result_store.routes()}


async def test_a_refund_revives_a_task_its_charges_failed_once_and_clears_its_dead_letter(
    result_store: Any, database_url: str
) -> None:
    await lead(database_url)
    (tid,) = await submit(result_store, 1, max_retries=0)
    await lease(result_store, [tid])
    await fail(result_store, [tid])
    before = await get(result_store, tid)
    assert (before.state, before.dead_letter_reason, before.uncharged_attempts) == (FAILURE, EXHAUSTED, 0)

    probe_at_us = (int(time.time()) + 3600) * 1_000_000
    reply = await refund(result_store, [(tid, 1), (tid, 1)], probe_at_us=probe_at_us)
    assert (reply.refunded, reply.revived, list(reply.pending)) == (1, 1, [])
    rec = await get(result_store, tid)
    assert (rec.state, rec.attempt, rec.uncharged_attempts) == (RETRYING, 2, 1)
    assert rec.dead_letter_reason == 0 and rec.finished_at_us == 0
    # Due at the breaker's next probe, not before.
    assert rec.run_at_us == probe_at_us
    (failure,) = await failures(result_store, tid)
    assert failure.attempt == 1 and failure.refunded
    assert failure.retry_at.ToMicroseconds() == probe_at_us
    assert not await sql(database_url, "SELECT count(*) FROM tasks WHERE dead_letter_reason > 0")

    # Sent again (a reply lost, a restart): nothing is refunded twice.
    again = await refund(result_store, [(tid, 1)], probe_at_us=probe_at_us)
    assert (again.refunded, again.revived, list(again.pending)) == (0, 0, [])
    rec = await get(result_store, tid)
    assert (rec.state, rec.attempt, rec.uncharged_attempts) == (RETRYING, 2, 1)


async def test_a_refund_of_a_task_still_retrying_gives_its_retry_back(
    result_store: Any, database_url: str
) -> None:
    await lead(database_url)
    (tid,) = await submit(result_store, 1, max_retries=3)
    await lease(result_store, [tid])
    await fail(result_store, [tid])
    reply = await refund(result_store, [(tid, 1)])
    assert (reply.refunded, reply.revived) == (1, 0)
    rec = await get(result_store, tid)
    assert (rec.state, rec.attempt, rec.uncharged_attempts) == (RETRYING, 2, 1)


async def test_a_deposed_leaders_refund_is_refused_and_changes_nothing(
    result_store: Any, database_url: str
) -> None:
    await lead(database_url)
    (tid,) = await submit(result_store, 1)
    await lease(result_store, [tid])
    await fail(result_store, [tid])
    with pytest.raises(errors.TaskyardError) as caught:
        await refund(result_store, [(tid, 1)], term=TERM - 1)
    assert (caught.value.code, caught.value.reason) == (errors.Code.FAILED_PRECONDITION, "NOT_LEADER")
    rec = await get(result_store, tid)
    assert (rec.state, rec.dead_letter_reason, rec.uncharged_attempts) == (FAILURE, EXHAUSTED, 0)
    assert not (await failures(result_store, tid))[0].refunded
    # The leader's own term is taken.
    assert (await refund(result_store, [(tid, 1)])).revived == 1


async def test_throttled_and_not_retryable_failures_are_not_revived_nor_refunded_twice(
    result_store: Any, database_url: str
) -> None:
    await lead(database_url)
    throttled, fatal = await submit(result_store, 2, max_retries=0)
    await lease(result_store, [throttled, fatal])
    await fail(result_store, [throttled], throttled=True)
    await fail(result_store, [fatal], retryable=False)
    assert (await get(result_store, throttled)).uncharged_attempts == 1

    reply = await refund(result_store, [(throttled, 1), (fatal, 1)])
    # The throttled attempt spent nothing: nothing to give back.
    assert (reply.refunded, reply.revived) == (1, 0)
    rec = await get(result_store, throttled)
    assert (rec.state, rec.uncharged_attempts) == (RETRYING, 1)
    assert not (await failures(result_store, throttled))[0].refunded
    # A failure the task itself said is final stays a dead letter.
    rec = await get(result_store, fatal)
    assert (rec.state, rec.dead_letter_reason) == (FAILURE, NOT_RETRYABLE)


async def test_an_attempt_whose_failure_is_not_written_yet_is_pending(
    result_store: Any, database_url: str
) -> None:
    await lead(database_url)
    (tid,) = await submit(result_store, 1)
    await lease(result_store, [tid])
    # The pool's notice overtook its report: the scheduler's refund comes first.
    early = await refund(result_store, [(tid, 1)], probe_at_us=123)
    assert (early.refunded, early.revived) == (0, 0)
    assert [(p.task_id, p.attempt, p.next_probe_at_us) for p in early.pending] == [(tid, 1, 123)]
    await fail(result_store, [tid])
    late = await refund(result_store, [(tid, 1)])
    assert (late.refunded, late.revived, list(late.pending)) == (1, 1, [])
    # An unknown task, or an attempt that ended some other way, is neither refunded nor pending.
    other = await refund(result_store, [("5d1c7f7e-6f0b-4f3e-9d59-00000000000f", 1), (tid, 5)])
    assert (other.refunded, other.revived, list(other.pending)) == (0, 0, [])


async def test_bad_refunds_are_refused(result_store: Any, database_url: str) -> None:
    await lead(database_url)
    (tid,) = await submit(result_store, 1)
    too_many = [(tid, 1)] * (refunds.MAX_REFUNDS + 1)
    for items, term, field in (
        (too_many, TERM, "refunds"),
        ([(tid, 1)], 0, "term"),
        ([("not-a-task", 1)], TERM, "refunds[0].task_id"),
        ([(tid, 0)], TERM, "refunds[0].attempt"),
    ):
        with pytest.raises(errors.TaskyardError) as caught:
            await refund(result_store, items, term=term)
        assert caught.value.code == errors.Code.INVALID_ARGUMENT
        assert [v.field for v in caught.value.violations] == [field]


@contextlib.asynccontextmanager
async def second_store(settings: Settings) -> AsyncIterator[ResultStore]:
    """Another store on the same database (its own sockets): the first one restarted."""
    with tempfile.TemporaryDirectory(prefix="ty-", dir="/tmp") as ipc:
        store = await ResultStore.open(dataclasses.replace(settings, ipc_dir=ipc), run_migrations=False)
        store.start(listen=False, sweep=False)
        try:
            yield store
        finally:
            await store.close()


async def test_a_refund_sent_again_to_another_store_refunds_nothing_twice(
    result_store: Any, store_settings: Settings, database_url: str
) -> None:
    await lead(database_url)
    ids = await submit(result_store, 3, max_retries=0)
    await lease(result_store, ids)
    await fail(result_store, ids)
    items = [(t, 1) for t in ids]
    first = await refund(result_store, items[:2])
    assert (first.refunded, first.revived) == (2, 2)
    async with second_store(store_settings) as other:
        # The whole batch again, as a scheduler whose first reply was lost sends it.
        again = await refund(other, items)
        assert (again.refunded, again.revived) == (1, 1)
    for t in ids:
        rec = await get(result_store, t)
        assert (rec.state, rec.attempt, rec.uncharged_attempts) == (RETRYING, 2, 1)
    assert await sql(database_url, "SELECT count(*) FROM task_failures WHERE refunded_at IS NOT NULL") == 3


async def until_cancelled(store: Any, tid: str, within: float = 5.0) -> tr.TaskRecord:
    """The dependent once its store has resolved it (the cascade runs after the failure's commit)."""
    rec = await get(store, tid)

    async def cancelled() -> bool:
        nonlocal rec
        rec = await get(store, tid)
        return rec.state == CANCELLED

    await wait_until_async(cancelled, within, lambda: f"{tid} to be cancelled (is {rec.state})")
    return rec


async def test_a_refund_does_not_revive_a_task_whose_dependents_its_failure_cancelled(
    result_store: Any, database_url: str
) -> None:
    await lead(database_url)
    a = submitted_task(max_retries=0)
    b = submitted_task(depends_on=[a.id])
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[a, b]))
    await lease(result_store, [a.id])
    await fail(result_store, [a.id])
    rec_b = await until_cancelled(result_store, b.id)
    assert (rec_b.state, rec_b.cancel_reason) == (CANCELLED, f"dependency {a.id} failed")

    reply = await refund(result_store, [(a.id, 1)])
    # The retry is given back, but the task stays final: its chain was already cut.
    assert (reply.refunded, reply.revived) == (1, 0)
    rec_a = await get(result_store, a.id)
    assert (rec_a.state, rec_a.attempt, rec_a.dead_letter_reason, rec_a.uncharged_attempts) == (
        FAILURE,
        1,
        EXHAUSTED,
        1,
    )
    assert (await failures(result_store, a.id))[0].refunded
    assert (await get(result_store, b.id)).state == CANCELLED


async def test_a_refund_does_not_revive_a_task_a_dependent_was_cancelled_for_at_its_insert(
    result_store: Any, database_url: str
) -> None:
    await lead(database_url)
    (tid,) = await submit(result_store, 1, max_retries=0)
    await lease(result_store, [tid])
    await fail(result_store, [tid])
    # Inserted after the failure: cancelled at once, the failed task never marked as waited on.
    late = submitted_task(depends_on=[tid])
    (inserted,) = (await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[late]))).tasks
    assert inserted.state == CANCELLED

    reply = await refund(result_store, [(tid, 1)])
    assert (reply.refunded, reply.revived) == (1, 0)
    assert (await get(result_store, tid)).state == FAILURE


async def test_a_refund_after_a_retry_gives_back_only_the_attempts_since(
    result_store: Any, database_url: str
) -> None:
    await lead(database_url)
    (tid,) = await submit(result_store, 1, max_retries=0)
    await lease(result_store, [tid])
    await fail(result_store, [tid])
    await result_store.ops.queue_op(queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_RETRY, ids=[tid]))
    rec = await get(result_store, tid)
    assert (rec.state, rec.attempt) == (QUEUED, 2)

    # The breaker's refund of attempt 1 lands late: the retry wrote its charge off already.
    reply = await refund(result_store, [(tid, 1)])
    assert (reply.refunded, reply.revived, list(reply.pending)) == (0, 0, [])
    rec = await get(result_store, tid)
    assert (rec.state, rec.attempt, rec.uncharged_attempts) == (QUEUED, 2, 0)
    assert not any(f.refunded for f in await failures(result_store, tid))

    # Attempt 2 spends the new budget: a refund of it is given back, and revives the task.
    await lease(result_store, [tid], attempt=2)
    await fail(result_store, [tid], attempt=2)
    assert (await get(result_store, tid)).state == FAILURE
    reply = await refund(result_store, [(tid, 2)])
    assert (reply.refunded, reply.revived) == (1, 1)
    rec = await get(result_store, tid)
    assert (rec.state, rec.attempt, rec.uncharged_attempts) == (RETRYING, 3, 1)


async def test_a_refund_after_a_redrive_gives_back_nothing_it_wrote_off(
    result_store: Any, database_url: str
) -> None:
    await lead(database_url)
    (tid,) = await submit(result_store, 1, max_retries=0)
    await lease(result_store, [tid])
    await fail(result_store, [tid])
    created = await result_store.failures.create_redrive(
        failures_pb2.CreateRedriveRequest(
            request=fs.RedriveRequest(filter=fs.FailureFilter(task_ids=[tid]), rate=100.0),
            created_by="ops-token",
        ),
        "",
    )
    step = await result_store.failures.step(
        failures_pb2.RedriveStepRequest(id=created.response.redrive.id, limit=10, term=TERM)
    )
    assert step.requeued == 1
    reply = await refund(result_store, [(tid, 1)])
    assert (reply.refunded, reply.revived) == (0, 0)
    rec = await get(result_store, tid)
    assert (rec.state, rec.attempt, rec.uncharged_attempts, rec.redriven_from_attempt) == (QUEUED, 2, 0, 1)
