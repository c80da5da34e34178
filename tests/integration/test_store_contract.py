"""One contract suite for the result-store and its in-memory fake.

Every test runs twice: against the real store (started in-process on its own
database, reached over ipc through an ``rpc.Requester``) and against
``MemoryStore``. Both are only called through ``caller.call(contract.X,
request)`` and must answer alike, so a component tested against the fake is
tested against what the store does.

The real store reads leases, lapses, due rows, key windows and live pools from
PostgreSQL's clock, which a test cannot move. So time-dependent tests use tiny
durations and poll for the condition (``eventually``); the fake's clock is a
``ManualClock`` moved a step on each poll, the database's moves by itself.
Everything a test needs to be far away (an hour-long lease, a run_at next
week) is far enough for both.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import pytest
from support.records import task as add_task
from support.waiting import wait_until_async

from taskyard.bus.v1 import lanes_pb2, leases_pb2, pools_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import clock, contract, errors, ids, rpc
from taskyard.core.config import Settings
from taskyard.result_store.service import serve
from taskyard.result_store.testing.memory import MemoryStore
from taskyard.v1 import task_pb2

pytestmark = pytest.mark.asyncio
T = TypeVar("T")

# Declared for both backends (tests/conftest.py's store_settings declares these, and more).
NAMES = ("add", "echo")
POOL = "pool-1"
WORKER = "pool-1/w0:1"
HOUR_MS = 3_600_000
# States as records carry them.
ASSIGNED = task_pb2.TASK_STATE_ASSIGNED
CANCELLED = task_pb2.TASK_STATE_CANCELLED
FAILURE = task_pb2.TASK_STATE_FAILURE
QUEUED = task_pb2.TASK_STATE_QUEUED
RETRYING = task_pb2.TASK_STATE_RETRYING
RUNNING = task_pb2.TASK_STATE_RUNNING
SCHEDULED = task_pb2.TASK_STATE_SCHEDULED
SUCCESS = task_pb2.TASK_STATE_SUCCESS
# How far the fake's clock moves between two polls of a condition.
STEP_SECONDS = 0.05


@dataclasses.dataclass(frozen=True, kw_only=True)
class Backend:
    name: str
    store: rpc.Caller
    # The clock the store reads (seconds since the epoch).
    now: Callable[[], float]
    # Called between two polls of a condition.
    let_time_pass: Callable[[], None]


@contextlib.asynccontextmanager
async def real_store(settings: Settings) -> AsyncIterator[rpc.Requester]:
    stop = asyncio.Event()
    serving = asyncio.create_task(serve(settings, stop))
    requester = rpc.Requester(settings.store_address, max_message_bytes=16 << 20, timeout=10)

    async def answers() -> bool:
        if serving.done():
            serving.result()  # a start-up failure, as it is
        try:
            await requester.call(contract.STORE_TASK_NAMES, pools_pb2.TaskNamesRequest(), timeout=0.5)
        except errors.TaskyardError:
            return False
        return True

    try:
        await wait_until_async(answers, 30, "the result-store to answer")
        yield requester
    finally:
        requester.close()
        stop.set()
        await asyncio.wait_for(serving, 10)


@pytest.fixture(params=["postgres", "memory"])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    if request.param == "memory":
        manual = clock.ManualClock()
        store = MemoryStore(clock=manual, task_names=NAMES)
        yield Backend(
            name="memory", store=store, now=manual.now, let_time_pass=lambda: manual.advance(STEP_SECONDS)
        )
        return
    async with real_store(request.getfixturevalue("store_settings")) as requester:
        yield Backend(name="postgres", store=requester, now=time.time, let_time_pass=lambda: None)


# --- helpers ---------------------------------------------------------------------------------
# No arguments unless a test gives some: what an insert leaves out reads back as its default.
task = functools.partial(add_task, args_json=b"")


def ref(rec: tr.TaskRecord, *, token: str = "tok", attempt: int = 1) -> tr.AttemptRef:
    return tr.AttemptRef(task_id=rec.id, attempt=attempt, lease_token=token, worker_id=WORKER)


def us(seconds: float) -> int:
    return clock.to_us(seconds)


async def insert(b: Backend, *records: tr.TaskRecord, **kw: Any) -> tasks_pb2.InsertTasksReply:
    return await b.store.call(contract.STORE_INSERT, tasks_pb2.InsertTasksRequest(tasks=records, **kw))


async def get(b: Backend, task_id: str) -> tr.TaskRecord:
    (rec,) = (await b.store.call(contract.STORE_GET, tasks_pb2.GetTasksRequest(ids=[task_id]))).tasks
    return rec


async def lease(
    b: Backend, *records: tr.TaskRecord, token: str = "tok", lease_ms: int = HOUR_MS
) -> list[tr.TaskRecord]:
    leases = [leases_pb2.Lease(task_id=r.id, lease_token=token) for r in records]
    req = leases_pb2.LeaseTasksRequest(pool_id=POOL, lease_ms=lease_ms, leases=leases)
    return list((await b.store.call(contract.STORE_LEASE, req)).tasks)


async def leased(b: Backend, *records: tr.TaskRecord, lease_ms: int = HOUR_MS) -> list[tr.TaskRecord]:
    """``records`` inserted and leased (token "tok"), in their order."""
    await insert(b, *records)
    got = {r.id: r for r in await lease(b, *records, lease_ms=lease_ms)}
    assert set(got) == {r.id for r in records}
    return [got[r.id] for r in records]


async def report(b: Backend, **kw: Any) -> leases_pb2.ReportReply:
    return await b.store.call(contract.STORE_REPORT, leases_pb2.ReportRequest(**kw))


async def started(b: Backend, *records: tr.TaskRecord) -> None:
    r = await report(b, started=[ref(rec) for rec in records])
    assert sorted(r.started) == sorted(rec.id for rec in records)


async def rescue(b: Backend, **kw: Any) -> leases_pb2.RescueReply:
    return await b.store.call(contract.STORE_RESCUE, leases_pb2.RescueRequest(**kw))


async def promote(b: Backend) -> lanes_pb2.PromoteDueReply:
    return await b.store.call(contract.STORE_PROMOTE_DUE, lanes_pb2.PromoteDueRequest())


async def cancel(b: Backend, *task_ids: str, reason: str = "") -> tasks_pb2.CancelTasksReply:
    return await b.store.call(
        contract.STORE_CANCEL, tasks_pb2.CancelTasksRequest(ids=task_ids, reason=reason)
    )


async def refused(call: Awaitable[Any]) -> errors.TaskyardError:
    with pytest.raises(errors.TaskyardError) as caught:
        await call
    return caught.value


async def eventually(b: Backend, probe: Callable[[], Awaitable[T | None]], what: str) -> T:
    """``probe()``'s first truthy value, time passing for the store between polls."""

    async def step() -> T | None:
        b.let_time_pass()
        return await probe()

    found: T = await wait_until_async(step, 20, what)
    return found


def success(rec: tr.TaskRecord, result: bytes = b"null", **kw: Any) -> leases_pb2.Completion:
    return leases_pb2.Completion(ref=ref(rec, **kw), success=True, result_json=result)


def failure(rec: tr.TaskRecord, type_: str = "ValueError", **kw: Any) -> leases_pb2.Completion:
    attempt = kw.pop("attempt", 1)
    completion = leases_pb2.Completion(ref=ref(rec, attempt=attempt), **kw)
    completion.failure.CopyFrom(task_pb2.TaskFailure(type=type_, message="boom"))
    return completion


# --- inserts and reads ----------------------------------------------------------------------
async def test_an_inserted_task_reads_back_as_stored(backend: Backend) -> None:
    rec = task(
        args_json=b'[1, {"aa": 2, "b": [1.50, 1e3, -0]}]',
        kwargs_json=b'{"x":null,"w":"\\u00e9"}',
        priority=task_pb2.PRIORITY_HIGH,
        queue="emails",
        max_retries=2,
        timeout_ms=5_000,
        labels={"team": "core"},
    )
    plain = task(name="echo")
    reply = await insert(backend, rec, plain)
    assert [(t.id, t.created, t.state, t.name, t.queue, t.priority) for t in reply.tasks] == [
        (rec.id, True, QUEUED, "add", "emails", task_pb2.PRIORITY_HIGH),
        (plain.id, True, QUEUED, "echo", "default", task_pb2.PRIORITY_NORMAL),
    ]
    got = await get(backend, rec.id)
    # JSON reads back as jsonb writes it: keys by length, then bytes; numbers without exponents.
    assert got.args_json == b'[1, {"b": [1.50, 1000, 0], "aa": 2}]'
    assert got.kwargs_json == '{"w": "é", "x": null}'.encode()
    assert (got.state, got.attempt, got.queue, got.priority, got.max_retries, got.timeout_ms) == (
        QUEUED,
        1,
        "emails",
        task_pb2.PRIORITY_HIGH,
        2,
        5_000,
    )
    assert dict(got.labels) == {"team": "core"} and got.lease_token == "" and not got.result_json
    assert got.created_at_us > 0 and got.updated_at_us == got.created_at_us
    default = await get(backend, plain.id)
    assert (default.args_json, default.kwargs_json, default.max_retries) == (b"[]", b"{}", 0)
    # Unknown and malformed ids are left out; an id asked twice comes once.
    reads = await backend.store.call(
        contract.STORE_GET,
        tasks_pb2.GetTasksRequest(ids=[plain.id, ids.new_task_id(), "nope", rec.id, plain.id]),
    )
    assert [t.id for t in reads.tasks] == [plain.id, rec.id]


async def test_a_task_of_a_name_no_pool_declared_is_refused(backend: Backend) -> None:
    err = await refused(insert(backend, task(), task(name="never.declared")))
    assert err.code is errors.Code.INVALID_ARGUMENT and err.reason == "UNKNOWN_TASK_NAME"
    assert [v.field for v in err.violations] == ["tasks[1].name"]
    orphan = task(parent_id=ids.new_task_id())
    err = await refused(insert(backend, orphan))
    assert [v.field for v in err.violations] == ["tasks[0].parent_id"]


async def test_a_resubmitted_request_id_or_live_key_returns_the_first_task(backend: Backend) -> None:
    first = task(request_id="order-17")
    await insert(backend, first)
    (again,) = (await insert(backend, task(request_id="order-17", name="echo"))).tasks
    assert (again.id, again.created, again.state, again.name) == (first.id, False, QUEUED, "add")
    # Within one batch too: the first record wins.
    a, b = task(request_id="batch-1"), task(request_id="batch-1")
    reply = await insert(backend, a, b)
    assert [(t.id, t.created) for t in reply.tasks] == [(a.id, True), (a.id, False)]
    assert [
        t.id
        for t in (await backend.store.call(contract.STORE_GET, tasks_pb2.GetTasksRequest(ids=[b.id]))).tasks
    ] == []
    # An idempotency key holds while its window lasts, and is free once it has passed.
    now = us(backend.now())
    keyed = task(idempotency_key="nightly", idempotency_expires_at_us=now + 100_000)
    await insert(backend, keyed)
    (dup,) = (
        await insert(backend, task(idempotency_key="nightly", idempotency_expires_at_us=now + 100_000))
    ).tasks
    assert (dup.id, dup.created) == (keyed.id, False)

    async def taken_again() -> str | None:
        fresh = task(idempotency_key="nightly", idempotency_expires_at_us=us(backend.now()) + HOUR_MS * 1000)
        (item,) = (await insert(backend, fresh)).tasks
        return item.id if item.created else None

    assert await eventually(backend, taken_again, "the key's window to pass") != keyed.id
    assert (await get(backend, keyed.id)).idempotency_key == ""


async def test_a_delayed_task_waits_scheduled_until_due(backend: Backend) -> None:
    now = us(backend.now())
    later = task(state=task_pb2.TASK_STATE_SCHEDULED, run_at_us=now + 7 * 24 * HOUR_MS * 1000)
    soon = task(state=task_pb2.TASK_STATE_SCHEDULED, run_at_us=now + 200_000)
    reply = await insert(backend, later, soon)
    assert [t.state for t in reply.tasks] == [SCHEDULED, SCHEDULED]

    async def promoted() -> lanes_pb2.PromoteDueReply | None:
        r = await promote(backend)
        return r if r.tasks else None

    r = await eventually(backend, promoted, "the delayed task to come due")
    assert [(t.id, t.name, t.queue, t.priority) for t in r.tasks] == [(soon.id, "add", "default", 3)]
    assert r.next_due_us == later.run_at_us
    assert (await get(backend, soon.id)).state == QUEUED
    assert (await get(backend, later.id)).state == SCHEDULED


# --- leases ---------------------------------------------------------------------------------
async def test_a_lease_gives_attempts_with_tokens(backend: Backend) -> None:
    a, b, c = task(), task(), task()
    await insert(backend, a, b, c)
    req = leases_pb2.LeaseTasksRequest(
        pool_id=POOL,
        lease_ms=HOUR_MS,
        leases=[leases_pb2.Lease(task_id=a.id, lease_token="tok-a"), leases_pb2.Lease(task_id=b.id)],
    )
    got = {r.id: r for r in (await backend.store.call(contract.STORE_LEASE, req)).tasks}
    assert set(got) == {a.id, b.id}
    assert got[a.id].lease_token == "tok-a" and got[b.id].lease_token not in ("", "tok-a")
    for rec in got.values():
        assert (rec.state, rec.attempt, rec.pool_id, rec.worker_id) == (ASSIGNED, 1, POOL, "")
    # A leased task is not leased again.
    assert await lease(backend, a, token="tok-2") == []
    assert (await get(backend, a.id)).lease_token == "tok-a"
    queued = await backend.store.call(contract.STORE_LOAD_QUEUED, lanes_pb2.LoadQueuedRequest())
    assert [t.id for t in queued.tasks] == [c.id]


async def test_an_insert_may_lease_its_tasks_at_once(backend: Backend) -> None:
    fast, slow = task(), task()
    reply = await insert(
        backend,
        fast,
        slow,
        pool_id=POOL,
        lease_ms=HOUR_MS,
        leases=[leases_pb2.Lease(task_id=fast.id, lease_token="t1")],
    )
    assert [(t.id, t.state) for t in reply.tasks] == [(fast.id, ASSIGNED), (slow.id, QUEUED)]
    assert [(r.id, r.state, r.lease_token, r.pool_id) for r in reply.leased] == [
        (fast.id, ASSIGNED, "t1", POOL)
    ]


# --- reports --------------------------------------------------------------------------------
async def test_a_success_makes_the_task_succeed_with_its_result(backend: Backend) -> None:
    (t,) = await leased(backend, task())
    await started(backend, t)
    running = await get(backend, t.id)
    assert (running.state, running.worker_id) == (RUNNING, WORKER) and running.started_at_us > 0
    r = await report(backend, completed=[success(t, b'{"sum":3, "ok" :true}')])
    assert (list(r.completed), r.refused) == ([t.id], 0)
    done = await get(backend, t.id)
    assert (done.state, done.attempt, done.result_json, done.lease_token) == (
        SUCCESS,
        1,
        b'{"ok": true, "sum": 3}',
        "",
    )
    assert done.finished_at_us >= done.started_at_us > 0 and not done.HasField("failure")
    # The same report again (a resend) is refused, and is no late outcome.
    r = await report(backend, completed=[success(t)])
    assert (list(r.completed), r.refused) == ([], 1)
    assert (await get(backend, t.id)).late_reports == 0


async def test_an_outcome_may_overtake_its_start_notice(backend: Backend) -> None:
    (t,) = await leased(backend, task())
    r = await report(backend, completed=[success(t, b"7")])
    assert list(r.completed) == [t.id]
    done = await get(backend, t.id)
    assert (done.state, done.result_json, done.worker_id) == (
        SUCCESS,
        b"7",
        WORKER,
    ) and done.started_at_us > 0
    # Its start notice, arriving after, changes nothing and is not counted as refused.
    r = await report(backend, started=[ref(t)])
    assert (list(r.started), r.refused) == ([], 0)


async def test_a_failure_with_retries_left_retries_then_runs_again(backend: Backend) -> None:
    (t,) = await leased(backend, task(max_retries=1))
    await started(backend, t)
    r = await report(backend, completed=[failure(t, retryable=True)])
    assert list(r.completed) == [t.id]
    retrying = await get(backend, t.id)
    assert (retrying.state, retrying.attempt, retrying.lease_token) == (RETRYING, 2, "")
    assert (retrying.failure.type, retrying.failure.message, retrying.failure.attempt) == (
        "ValueError",
        "boom",
        1,
    )

    async def promoted() -> list[str]:
        return [q.id for q in (await promote(backend)).tasks]

    assert await eventually(backend, promoted, "the retry to come due") == [t.id]
    assert (await get(backend, t.id)).state == QUEUED
    (again,) = await lease(backend, t, token="tok-2")
    assert again.attempt == 2
    r = await report(backend, completed=[success(t, b"1", token="tok-2", attempt=2)])
    assert list(r.completed) == [t.id]
    done = await get(backend, t.id)
    assert (done.state, done.attempt) == (SUCCESS, 2)


async def test_a_retry_waits_out_its_backoff(backend: Backend) -> None:
    # -1: the budget the pool resolved for the task (Completion.max_retries).
    (t,) = await leased(backend, task(max_retries=-1))
    await report(backend, completed=[failure(t, retryable=True, retry_delay_ms=HOUR_MS, max_retries=1)])
    rec = await get(backend, t.id)
    assert rec.state == RETRYING and rec.run_at_us > us(backend.now())
    r = await promote(backend)
    assert (list(r.tasks), r.next_due_us) == ([], rec.run_at_us)


async def test_a_final_failure(backend: Backend) -> None:
    spent, fatal, unbudgeted = await leased(
        backend, task(max_retries=0), task(max_retries=3), task(max_retries=-1)
    )
    r = await report(
        backend,
        completed=[
            failure(spent, retryable=True),
            failure(fatal, "KeyError", retryable=False),
            failure(unbudgeted, retryable=True, max_retries=0),
        ],
    )
    assert (sorted(r.completed), r.refused) == (sorted([spent.id, fatal.id, unbudgeted.id]), 0)
    for t, kind in ((spent, "ValueError"), (fatal, "KeyError"), (unbudgeted, "ValueError")):
        rec = await get(backend, t.id)
        assert (rec.state, rec.attempt, rec.failure.type, rec.failure.attempt) == (FAILURE, 1, kind, 1)
        assert rec.finished_at_us > 0 and rec.lease_token == ""


async def test_a_stale_or_late_outcome_is_refused(backend: Backend) -> None:
    t, other = await leased(backend, task(), task())
    # A token the attempt does not hold.
    r = await report(backend, completed=[success(t, token="old")], started=[ref(t, token="old")])
    assert (list(r.completed), list(r.started), r.refused) == ([], [], 1)
    rec = await get(backend, t.id)
    assert (rec.state, rec.lease_token, rec.late_reports, rec.late_attempt) == (ASSIGNED, "tok", 1, 1)
    # A superseded attempt: released (attempt 2), then attempt 1 reports.
    assert list((await report(backend, released=[leases_pb2.Release(ref=ref(t))])).released) == [t.id]
    r = await report(backend, completed=[failure(t, retryable=True)])
    assert r.refused == 1
    rec = await get(backend, t.id)
    assert (rec.state, rec.attempt, rec.late_reports, rec.late_attempt) == (QUEUED, 2, 2, 1)
    # An unknown task or a malformed id: refused, nothing noted.
    r = await report(
        backend, completed=[success(task()), leases_pb2.Completion(ref=tr.AttemptRef(task_id="x"))]
    )
    assert r.refused == 2
    assert (await get(backend, other.id)).late_reports == 0


async def test_releases_and_deaths(backend: Backend) -> None:
    released, died_running, died_unstarted, quarantined, kept = await leased(
        backend, task(), task(max_retries=1), task(), task(max_retries=5), task()
    )
    await started(backend, died_running, quarantined, kept)
    r = await report(
        backend,
        released=[leases_pb2.Release(ref=ref(released)), leases_pb2.Release(ref=ref(kept))],
        died=[
            leases_pb2.Death(ref=ref(died_running), started=True),
            leases_pb2.Death(ref=ref(died_unstarted), started=False),
            leases_pb2.Death(ref=ref(quarantined), started=True, max_rescues=1),
        ],
    )
    # A release that says "not started" never applies to a task a start notice reached.
    assert (list(r.released), r.refused) == ([released.id], 1)
    assert sorted(r.died) == sorted([died_running.id, died_unstarted.id, quarantined.id])
    for t in (released, died_unstarted):
        rec = await get(backend, t.id)
        assert (rec.state, rec.attempt, rec.uncharged_attempts, rec.pool_id) == (QUEUED, 2, 1, "")
    rec = await get(backend, died_running.id)
    assert (rec.state, rec.attempt, rec.rescues, rec.failure.type) == (RETRYING, 2, 1, "WorkerProcessDied")
    rec = await get(backend, quarantined.id)
    assert (rec.state, rec.rescues) == (FAILURE, 1)
    assert rec.failure.message.startswith("quarantined: its worker died 1 times")
    # A started attempt stopped by a shutdown goes back, resumable, spending no retry.
    r = await report(backend, released=[leases_pb2.Release(ref=ref(kept), resume_requested=True)])
    rec = await get(backend, kept.id)
    assert (list(r.released), rec.state, rec.attempt, rec.resume_requested) == ([kept.id], QUEUED, 2, True)


async def test_renewing_extends_a_lease(backend: Backend) -> None:
    kept, lapsing = await leased(backend, task(), task(), lease_ms=1)
    r = await backend.store.call(
        contract.STORE_RENEW, leases_pb2.RenewLeasesRequest(refs=[ref(kept)], lease_ms=HOUR_MS)
    )
    assert (list(r.lost), list(r.cancel_requested)) == ([], [])

    async def rescued() -> list[str]:
        return [t.id for t in (await rescue(backend)).requeued]

    assert await eventually(backend, rescued, "the lease that was not renewed to lapse") == [lapsing.id]
    assert (await get(backend, kept.id)).state == ASSIGNED
    r = await backend.store.call(
        contract.STORE_RENEW,
        leases_pb2.RenewLeasesRequest(refs=[ref(kept, token="old"), ref(lapsing), ref(kept)]),
    )
    assert list(r.lost) == [kept.id, lapsing.id]


async def test_a_lapsed_lease_is_rescued(backend: Backend) -> None:
    assigned, running, spent = await leased(
        backend, task(), task(max_retries=1), task(max_retries=-1), lease_ms=1
    )
    await started(backend, running, spent)
    seen: dict[str, tr.TaskRecord] = {}

    async def all_rescued() -> bool:
        r = await rescue(backend, retry_delay_ms=0, default_max_retries=0)
        seen.update((t.id, t) for t in [*r.requeued, *r.failed])
        return len(seen) == 3

    await eventually(backend, all_rescued, "every lapsed lease to be rescued")
    a, b, c = seen[assigned.id], seen[running.id], seen[spent.id]
    # Never started: back in the queue as a new attempt that spends no retry.
    assert (a.state, a.attempt, a.uncharged_attempts, a.lease_token, a.pool_id) == (QUEUED, 2, 1, "", "")
    # Started: the worker is taken for dead, and the attempt for failed.
    assert (b.state, b.attempt, b.rescues, b.failure.type) == (RETRYING, 2, 1, "WorkerProcessDied")
    assert (c.state, c.attempt, c.rescues, c.failure.type) == (FAILURE, 1, 1, "WorkerProcessDied")
    assert (await rescue(backend)).requeued == []


# --- cancels ---------------------------------------------------------------------------------
async def test_cancelling_a_queued_task(backend: Backend) -> None:
    t = task()
    await insert(backend, t)
    unknown = ids.new_task_id()
    r = await cancel(backend, t.id, unknown, "not-a-uuid", reason="no longer needed")
    assert [(o.id, o.cancelled, o.not_found) for o in r.outcomes] == [
        (t.id, True, False),
        (unknown, False, True),
        ("not-a-uuid", False, True),
    ]
    (rec,) = r.tasks
    assert (rec.state, rec.cancel_step, rec.cancel_reason) == (
        CANCELLED,
        task_pb2.CANCEL_STEP_NOT_STARTED,
        "no longer needed",
    )
    assert (await get(backend, t.id)).finished_at_us > 0
    (again,) = (await cancel(backend, t.id)).outcomes
    assert (again.cancelled, again.already_final) == (False, True)
    assert await lease(backend, t) == []


async def test_cancelling_a_leased_task_flags_it_until_its_pool_says_how_it_stopped(
    backend: Backend,
) -> None:
    running, assigned = await leased(backend, task(), task())
    await started(backend, running)
    r = await cancel(backend, running.id, assigned.id)
    # A dispatched attempt is never "not started" on the store's word: its worker
    # may be starting the body while the start notice is on its way.
    assert [(o.cancelled, o.flagged) for o in r.outcomes] == [(False, True), (False, True)]
    assert [(t.state, t.cancel_requested) for t in r.tasks] == [(RUNNING, True), (ASSIGNED, True)]
    renewed = await backend.store.call(
        contract.STORE_RENEW, leases_pb2.RenewLeasesRequest(refs=[ref(running), ref(assigned)])
    )
    assert sorted(renewed.cancel_requested) == sorted([running.id, assigned.id])
    stop = leases_pb2.Completion(ref=ref(running), cancel_step=task_pb2.CANCEL_STEP_FLAG)
    assert list((await report(backend, completed=[stop])).completed) == [running.id]
    rec = await get(backend, running.id)
    assert (rec.state, rec.cancel_step) == (CANCELLED, task_pb2.CANCEL_STEP_FLAG)
    # The pool never started the assigned one's body, and says so.
    skipped = leases_pb2.Completion(ref=ref(assigned), cancel_step=task_pb2.CANCEL_STEP_NOT_STARTED)
    assert list((await report(backend, completed=[skipped])).completed) == [assigned.id]
    rec = await get(backend, assigned.id)
    assert (rec.state, rec.cancel_step, rec.started_at_us, rec.lease_token) == (
        CANCELLED,
        task_pb2.CANCEL_STEP_NOT_STARTED,
        0,
        "",
    )
    assert (await report(backend, completed=[success(assigned)])).refused == 1


async def test_a_flagged_attempt_whose_body_started_ends_with_the_step_that_stopped_it(
    backend: Backend,
) -> None:
    """The start notice of a flagged dispatched attempt is accepted (the body began
    before the pool heard of the cancel); the flag stays for the pool to act on."""
    (t,) = await leased(backend, task())
    await cancel(backend, t.id)
    await started(backend, t)
    rec = await get(backend, t.id)
    assert (rec.state, rec.cancel_requested) == (RUNNING, True)
    stop = leases_pb2.Completion(ref=ref(t), cancel_step=task_pb2.CANCEL_STEP_ASYNCIO)
    assert list((await report(backend, completed=[stop])).completed) == [t.id]
    rec = await get(backend, t.id)
    assert (rec.state, rec.cancel_step, rec.late_reports) == (CANCELLED, task_pb2.CANCEL_STEP_ASYNCIO, 0)
    assert rec.started_at_us > 0


async def test_a_flagged_dispatched_attempt_handed_back_or_lost_ends_cancelled(backend: Backend) -> None:
    """Handed back unstarted, or its worker died before starting it: NOT_STARTED on
    the pool's word. Its lease lapsed (the pool is gone and said nothing): KILL,
    never "not started". Handed back after a drain stopped it: ASYNCIO."""
    released, resumed, died, lapsed = await leased(backend, task(), task(), task(), task(), lease_ms=200)
    await started(backend, resumed)
    await cancel(backend, released.id, resumed.id, died.id, lapsed.id)
    r = await report(
        backend,
        released=[
            leases_pb2.Release(ref=ref(released)),
            leases_pb2.Release(ref=ref(resumed), resume_requested=True),
        ],
        died=[leases_pb2.Death(ref=ref(died), started=False)],
    )
    assert sorted(r.released) == sorted([released.id, resumed.id]) and list(r.died) == [died.id]

    async def lapse_rescued() -> bool:
        return bool((await rescue(backend, retry_delay_ms=0)).failed)

    await eventually(backend, lapse_rescued, "the lapsed lease to be rescued")
    steps = {t.id: (await get(backend, t.id)) for t in (released, resumed, died, lapsed)}
    assert {tid: (rec.state, rec.cancel_step) for tid, rec in steps.items()} == {
        released.id: (CANCELLED, task_pb2.CANCEL_STEP_NOT_STARTED),
        resumed.id: (CANCELLED, task_pb2.CANCEL_STEP_ASYNCIO),
        died.id: (CANCELLED, task_pb2.CANCEL_STEP_NOT_STARTED),
        lapsed.id: (CANCELLED, task_pb2.CANCEL_STEP_KILL),
    }


async def test_cancelling_a_parent_cancels_its_descendants(backend: Backend) -> None:
    parent = task()
    child = task(parent_id=parent.id)
    grandchild = task(parent_id=child.id)
    await insert(backend, parent)
    await insert(backend, child)
    await insert(backend, grandchild)
    assert (await get(backend, child.id)).root_id == parent.id
    assert (await get(backend, grandchild.id)).root_id == parent.id
    r = await cancel(backend, parent.id)
    assert list(r.cancelled_children) == sorted([child.id, grandchild.id])
    rec = await get(backend, grandchild.id)
    assert (rec.state, rec.cancel_reason) == (CANCELLED, f"parent {parent.id} cancelled")
    # A child submitted after its parent's cancel is cancelled at once.
    late = task(parent_id=parent.id)
    (item,) = (await insert(backend, late)).tasks
    assert (item.created, item.state) == (True, CANCELLED)


# --- listings --------------------------------------------------------------------------------
async def test_listing_pages_newest_first(backend: Backend) -> None:
    base = us(backend.now())
    recs = [task(name="echo", queue="paged", created_at_us=base + i) for i in range(5)]
    await insert(backend, *recs, task(name="echo"))
    pages: list[list[str]] = []
    cursor = ""
    while True:
        r = await backend.store.call(
            contract.STORE_LIST, tasks_pb2.ListTasksRequest(queue="paged", limit=2, cursor=cursor)
        )
        pages.append([t.id for t in r.tasks])
        if not r.next_cursor:
            break
        cursor = r.next_cursor
    newest = [t.id for t in reversed(recs)]
    assert pages == [newest[:2], newest[2:4], newest[4:]]
    await cancel(backend, recs[0].id)
    r = await backend.store.call(
        contract.STORE_LIST, tasks_pb2.ListTasksRequest(name="echo", states=[task_pb2.TASK_STATE_CANCELLED])
    )
    assert [t.id for t in r.tasks] == [recs[0].id]
    err = await refused(backend.store.call(contract.STORE_LIST, tasks_pb2.ListTasksRequest(cursor="%%%")))
    assert (err.reason, [v.field for v in err.violations]) == ("INVALID_PAGE_TOKEN", ["page_token"])
    err = await refused(backend.store.call(contract.STORE_LIST, tasks_pb2.ListTasksRequest(limit=1001)))
    assert [v.field for v in err.violations] == ["page_size"]


async def test_queued_tasks_load_in_dispatch_order(backend: Backend) -> None:
    base = us(backend.now())
    low = task(priority=task_pb2.PRIORITY_LOW, created_at_us=base)
    critical = task(priority=task_pb2.PRIORITY_CRITICAL, created_at_us=base + 1)
    first, second = task(created_at_us=base + 2), task(created_at_us=base + 3)
    await insert(backend, low, second, critical, first)
    r = await backend.store.call(contract.STORE_LOAD_QUEUED, lanes_pb2.LoadQueuedRequest(limit=3))
    assert [t.id for t in r.tasks] == [critical.id, first.id, second.id] and r.next_cursor
    rest = await backend.store.call(
        contract.STORE_LOAD_QUEUED, lanes_pb2.LoadQueuedRequest(cursor=r.next_cursor)
    )
    assert ([t.id for t in rest.tasks], rest.next_cursor) == ([low.id], "")


# --- pools ----------------------------------------------------------------------------------
async def test_task_names_come_from_heartbeats(backend: Backend) -> None:
    async def beat(pool_id: str, names: list[str], *, running: bool) -> None:
        req = pools_pb2.HeartbeatRequest(
            pool_id=pool_id, is_running=running, task_names=names, state="RUNNING"
        )
        await backend.store.call(contract.STORE_HEARTBEAT, req)

    async def names(max_age_ms: int) -> list[str]:
        req = pools_pb2.TaskNamesRequest(max_age_ms=max_age_ms)
        return list((await backend.store.call(contract.STORE_TASK_NAMES, req)).names)

    await beat("pool-a", ["add", "contract.live"], running=True)
    await beat("pool-b", ["contract.idle"], running=False)
    assert await names(HOUR_MS) == ["add", "contract.live"]
    declared = await names(0)
    assert {"add", "contract.live", "contract.idle"} <= set(declared) and declared == sorted(declared)
    # A name once declared may be submitted while no live pool serves it.
    (item,) = (await insert(backend, task(name="contract.idle"))).tasks
    assert item.created
    err = await refused(backend.store.call(contract.STORE_HEARTBEAT, pools_pb2.HeartbeatRequest()))
    assert [v.field for v in err.violations] == ["pool_id"]

    async def gone_quiet() -> bool:
        return "contract.live" not in await names(1)

    await eventually(backend, gone_quiet, "pool-a's heartbeat to age")
