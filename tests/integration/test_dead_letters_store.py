"""Dead letters in the store against a real PostgreSQL (in-process store).

A task whose failure is final is a dead letter with a reason, and every failure
has a fingerprint (type, masked message, innermost frame of the task's own
code) and a group (queue, name, fingerprint), computed by the SQL functions of
migrations/0018_dead_letters.sql in the statement that writes the failure.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable
from typing import Any

import asyncpg
import pytest
from google.protobuf import json_format
from google.protobuf.struct_pb2 import Struct
from google.protobuf.timestamp_pb2 import Timestamp
from support.records import task

from taskyard.bus.v1 import failures_pb2 as bus
from taskyard.bus.v1 import leases_pb2, queues_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import contract, errors
from taskyard.core.codec import record_to_task
from taskyard.v1 import failure_service_pb2 as fs
from taskyard.v1 import task_pb2
from taskyard.worker_pool.context import split_key

pytestmark = pytest.mark.asyncio

EXHAUSTED = task_pb2.DEAD_LETTER_REASON_RETRIES_EXHAUSTED
QUARANTINED = task_pb2.DEAD_LETTER_REASON_QUARANTINED
NOT_RETRYABLE = task_pb2.DEAD_LETTER_REASON_NOT_RETRYABLE
HERE = "test_dead_letters_store"
# States as records carry them.
FAILURE = task_pb2.TASK_STATE_FAILURE
RETRYING = task_pb2.TASK_STATE_RETRYING
QUEUED = task_pb2.TASK_STATE_QUEUED
CANCELLED = task_pb2.TASK_STATE_CANCELLED


# --- real tracebacks ---------------------------------------------------------------
def _traceback_of(fn: Callable[[], object]) -> str:
    try:
        fn()
    except Exception as exc:
        return "".join(traceback.format_exception(exc))
    raise AssertionError("it did not raise")


def charge_card() -> None:
    validate_amount(-3)


def validate_amount(amount: int) -> None:
    raise ValueError(f"amount {amount} is negative")


def parse_body() -> object:
    return json.loads('{"order": 17,')  # the standard library raises


def to_message() -> object:
    return json_format.Parse("not json", Struct())  # an installed package raises


def save_progress() -> None:
    split_key("")  # taskyard's own worker package raises


def handle_order() -> None:
    try:
        {"a": 1}["order-42"]
    except KeyError as exc:
        raise RuntimeError("order 42 has no row") from exc


async def sql(database_url: str, query: str, *args: Any) -> Any:
    conn = await asyncpg.connect(database_url)
    try:
        return await conn.fetchval(query, *args)
    finally:
        await conn.close()


async def test_a_message_is_masked_bounded_and_its_ids_numbers_and_quoted_values_replaced(
    database_url: str,
) -> None:
    cases = {
        "KeyError: 'user_42'": "KeyError: '<s>'",
        'no such column "total 3"': 'no such column "<s>"',
        # An apostrophe opens no quoted value.
        "can't reach db-7 on port 5432 after 3.25 s": "can't reach db-<n> on port <n> after <n> s",
        "task 3f2a9c1e-1b2c-4d5e-8f90-123456789abc failed": "task <uuid> failed",
        "object at 0x7f3a9c in deadbeef1234 took 12345678 ms": "object at <hex> in <hex> took <n> ms",
        "range 1-5": "range <n>-<n>",
        "": "",
    }
    for message, masked in cases.items():
        assert await sql(database_url, "SELECT ty_failure_mask($1)", message) == masked, message
    # Cut at 1024 characters before masking: what follows changes nothing.
    long = "x" * 1020 + " 1234 and then more 5678"
    assert await sql(database_url, "SELECT ty_failure_mask($1)", long) == "x" * 1020 + " <n>"
    assert await sql(database_url, "SELECT ty_failure_mask(NULL)") == ""


async def test_the_frame_is_the_innermost_of_the_tasks_own_code(database_url: str) -> None:
    tracebacks = {
        charge_card: "validate_amount",
        parse_body: "parse_body",  # json's frames are the standard library's
        to_message: "to_message",  # protobuf's are an installed package's
        save_progress: "save_progress",  # taskyard's worker package is not the task's code
        handle_order: "handle_order",  # a chained exception: the last traceback
    }
    for fn, function in tracebacks.items():
        tb = _traceback_of(fn)
        assert await sql(database_url, "SELECT ty_failure_frame($1)", tb) == f"{HERE}:{function}", tb
    # The cases are what they say: frames below the task's own code were skipped.
    assert "site-packages" in _traceback_of(to_message)
    assert "/json/" in _traceback_of(parse_body)
    assert "/taskyard/worker_pool/" in _traceback_of(save_progress)
    # A traceback as another host's worker formats it (Windows paths), and none at all.
    windows = (
        "Traceback (most recent call last):\n"
        '  File "C:\\app\\billing\\tasks.py", line 9, in charge\n'
        '  File "C:\\Python312\\Lib\\json\\decoder.py", line 355, in raw_decode\n'
        "json.decoder.JSONDecodeError: Expecting value\n"
    )
    assert await sql(database_url, "SELECT ty_failure_frame($1)", windows) == "tasks:charge"
    assert await sql(database_url, "SELECT ty_failure_frame($1)", "") == ""


# --- through the store --------------------------------------------------------------
def _ref(t: str, attempt: int = 1, token: str = "t1") -> tr.AttemptRef:
    return tr.AttemptRef(task_id=t, attempt=attempt, lease_token=token, worker_id="pool-1/w0:1")


async def _leased(store: Any, recs: list[tr.TaskRecord], token: str = "t1") -> None:
    await store.insert(tasks_pb2.InsertTasksRequest(tasks=recs))
    reply = await store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id="pool-1",
            lease_ms=60_000,
            leases=[leases_pb2.Lease(task_id=r.id, lease_token=token) for r in recs],
        )
    )
    assert len(reply.tasks) == len(recs)


async def fail(
    store: Any,
    *,
    n: int = 1,
    type_: str = "ValueError",
    message: str | Callable[[int], str] = "boom",
    tb: str = "",
    retryable: bool = True,
    max_retries: int = 0,
    **fields: Any,
) -> list[str]:
    """``n`` new tasks whose first attempt fails so; ids in the order they failed."""
    recs = [task(max_retries=max_retries, **fields) for _ in range(n)]
    await _leased(store, recs)
    ids = []
    for i, rec in enumerate(recs):  # one report each: each its own failed_at
        text = message(i) if callable(message) else message
        completion = leases_pb2.Completion(
            ref=_ref(rec.id),
            success=False,
            retryable=retryable,
            failure=task_pb2.TaskFailure(type=type_, message=text, traceback=tb),
        )
        reply = await store.report(leases_pb2.ReportRequest(completed=[completion]))
        assert list(reply.completed) == [rec.id]
        ids.append(rec.id)
    return ids


async def get(store: Any, tid: str) -> tr.TaskRecord:
    (rec,) = (await store.get(tasks_pb2.GetTasksRequest(ids=[tid]))).tasks
    return rec


async def failure_rows(store: Any, tid: str) -> list[task_pb2.TaskFailure]:
    from taskyard.result_store.reads.failures import get_failures

    reply = await get_failures(store.pool, store.stats, tasks_pb2.GetFailuresRequest(task_ids=[tid]))
    return list(reply.tasks[0].failures) if reply.tasks else []


async def groups(
    store: Any, page_size: int = 0, page_token: str = "", **filter_: Any
) -> fs.ListFailureGroupsResponse:
    req = fs.ListFailureGroupsRequest(
        filter=fs.FailureFilter(**filter_), page_size=page_size, page_token=page_token
    )
    return (await store.failures.groups(bus.FailureGroupsRequest(request=req))).response


async def dead_letters(
    store: Any, page_size: int = 0, page_token: str = "", **filter_: Any
) -> fs.ListFailuresResponse:
    req = fs.ListFailuresRequest(
        filter=fs.FailureFilter(**filter_), page_size=page_size, page_token=page_token
    )
    return (await store.failures.dead_letters(bus.DeadLettersRequest(request=req))).response


async def test_the_new_kinds_are_routed(result_store: Any) -> None:
    kinds = {route.method.kind for route in result_store.routes()}
    assert {contract.STORE_FAILURE_GROUPS.kind, contract.STORE_DEAD_LETTERS.kind} <= kinds
    assert contract.STORE_PURGE_DEAD_LETTERS.kind in kinds


async def test_a_failure_that_spent_the_budget_is_a_dead_letter_with_its_group(
    result_store: Any, database_url: str
) -> None:
    tb = _traceback_of(charge_card)
    (tid,) = await fail(result_store, message="amount -3 is negative", tb=tb, queue="billing")
    rec = await get(result_store, tid)
    group = await sql(
        database_url,
        "SELECT ty_failure_group('billing', 'add', 'ValueError', ty_failure_mask($1), $2)",
        "amount -3 is negative",
        f"{HERE}:validate_amount",
    )
    assert (rec.state, rec.dead_letter_reason, rec.failure.group_id) == (FAILURE, EXHAUSTED, group)
    # GetTask's view (core.codec) carries the reason.
    assert record_to_task(rec).dead_letter_reason == EXHAUSTED
    (row,) = await failure_rows(result_store, tid)
    assert row.group_id == group and row.redrive_id == ""
    parts = await sql(
        database_url, "SELECT masked_message || ' @ ' || frame FROM task_failures WHERE task_id = $1", tid
    )
    assert parts == f"amount -<n> is negative @ {HERE}:validate_amount"


async def test_a_retried_failure_is_not_a_dead_letter_until_its_last(result_store: Any) -> None:
    (tid,) = await fail(result_store, max_retries=1, message="first")
    rec = await get(result_store, tid)
    assert (rec.state, rec.dead_letter_reason) == (RETRYING, 0)
    assert rec.failure.group_id  # the group of its last failure, dead letter or not
    assert not (await dead_letters(result_store, all=True)).failures


async def test_a_failure_marked_not_retryable_is_a_dead_letter_at_once(result_store: Any) -> None:
    (tid,) = await fail(result_store, max_retries=5, retryable=False, type_="PermissionError")
    rec = await get(result_store, tid)
    assert (rec.state, rec.attempt, rec.dead_letter_reason) == (FAILURE, 1, NOT_RETRYABLE)


async def test_a_task_whose_worker_died_too_often_is_quarantined(result_store: Any) -> None:
    quarantined, spent = task(max_retries=5), task(max_retries=0)
    await _leased(result_store, [quarantined, spent])
    await result_store.report(
        leases_pb2.ReportRequest(
            died=[
                leases_pb2.Death(ref=_ref(quarantined.id), started=True, max_rescues=1),
                leases_pb2.Death(ref=_ref(spent.id), started=True, max_rescues=0),
            ]
        )
    )
    rec = await get(result_store, quarantined.id)
    assert (rec.state, rec.dead_letter_reason) == (FAILURE, QUARANTINED)
    assert rec.failure.message.startswith("quarantined: its worker died 1 times")
    (row,) = await failure_rows(result_store, quarantined.id)
    assert row.group_id == rec.failure.group_id != ""
    rec = await get(result_store, spent.id)
    assert (rec.state, rec.dead_letter_reason, rec.failure.type) == (
        FAILURE,
        EXHAUSTED,
        "WorkerProcessDied",
    )
    # Two fingerprints: the quarantine's message is not the death's.
    listed = await groups(result_store)
    assert sorted(g.message for g in listed.groups) == sorted(
        [
            "quarantined: its worker died <n> times running it (TASKYARD_MAX_RESCUES = <n>)",
            "the worker process died while running the attempt",
        ]
    )
    assert {g.frame for g in listed.groups} == {""}


async def test_a_cancel_is_never_a_dead_letter(result_store: Any) -> None:
    rec = task(max_retries=0)
    await _leased(result_store, [rec])
    await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[rec.id], reason="stop"))
    completion = leases_pb2.Completion(
        ref=_ref(rec.id), success=False, retryable=True, failure=task_pb2.TaskFailure(type="ValueError")
    )
    await result_store.report(leases_pb2.ReportRequest(completed=[completion]))
    got = await get(result_store, rec.id)
    assert (got.state, got.dead_letter_reason) == (CANCELLED, 0)


async def test_a_retry_takes_a_task_out_of_the_dead_letters(result_store: Any) -> None:
    (tid,) = await fail(result_store)
    assert [d.task_id for d in (await dead_letters(result_store, all=True)).failures] == [tid]
    await result_store.ops.queue_op(queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_RETRY, ids=[tid]))
    rec = await get(result_store, tid)
    assert (rec.state, rec.dead_letter_reason) == (QUEUED, 0)
    assert not (await dead_letters(result_store, all=True)).failures


async def test_retention_keeps_dead_letters(result_store: Any) -> None:
    (dead,) = await fail(result_store)
    cancelled = task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[cancelled]))
    await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[cancelled.id], reason="stop"))
    assert await result_store.ops.purger.purge(0) == 1  # everything final, but the dead letter
    assert not (await result_store.get(tasks_pb2.GetTasksRequest(ids=[cancelled.id]))).tasks
    assert (await get(result_store, dead)).dead_letter_reason == EXHAUSTED


async def test_groups_count_dead_letters_by_queue_name_and_fingerprint(result_store: Any) -> None:
    tb = _traceback_of(charge_card)
    # Numbers differ, the fingerprint does not: one group of three.
    big = await fail(result_store, n=3, message=lambda i: f"amount -{i + 1} is negative", tb=tb)
    # Another frame: another group.
    two = await fail(result_store, n=2, message="amount -1 is negative", tb=_traceback_of(parse_body))
    # Another queue: another group, though the fingerprint is the same.
    (one,) = await fail(result_store, message="amount -1 is negative", tb=tb, queue="other")
    listed = await groups(result_store)
    assert [g.count for g in listed.groups] == [3, 2, 1]
    first = listed.groups[0]
    assert (first.queue, first.name, first.type, first.message, first.frame) == (
        "default",
        "add",
        "ValueError",
        "amount -<n> is negative",
        f"{HERE}:validate_amount",
    )
    assert list(first.sample_task_ids) == big[::-1]  # newest first
    assert first.sample_traceback == tb
    assert first.first_seen.ToMicroseconds() <= first.last_seen.ToMicroseconds()
    assert list(listed.groups[1].sample_task_ids) == two[::-1]
    assert list(listed.groups[2].sample_task_ids) == [one]
    assert len({g.group_id for g in listed.groups}) == 3
    # A filter narrows the dead letters counted.
    assert [g.count for g in (await groups(result_store, queue="other")).groups] == [1]
    # Paged: one group a page, in the same order, then no token.
    seen: list[str] = []
    token = ""
    while True:
        page = await groups(result_store, page_size=1, page_token=token)
        seen.extend(g.group_id for g in page.groups)
        token = page.next_page_token
        if not token:
            break
    assert seen == [g.group_id for g in listed.groups]
    # A group's dead letters, newest failure first, paged.
    got: list[fs.DeadLetter] = []
    token = ""
    while True:
        letters = await dead_letters(result_store, page_size=2, page_token=token, group_id=first.group_id)
        got.extend(letters.failures)
        token = letters.next_page_token
        if not token:
            break
    assert [d.task_id for d in got] == big[::-1]
    d = got[0]
    assert (d.reason, d.group_id, d.failure.group_id, d.failure.attempt, d.redrives) == (
        EXHAUSTED,
        first.group_id,
        first.group_id,
        1,
        0,
    )
    assert d.failure.traceback == tb and d.failure.failed_at.ToMicroseconds() > 0


async def test_filters_of_dead_letters(result_store: Any) -> None:
    (labelled,) = await fail(result_store, labels={"tenant": "acme", "region": "eu"})
    (other,) = await fail(result_store, retryable=False, labels={"tenant": "other"})
    rec = await get(result_store, other)

    async def ids(**f: Any) -> list[str]:
        return [d.task_id for d in (await dead_letters(result_store, **f)).failures]

    assert await ids(labels={"tenant": "acme"}) == [labelled]
    assert await ids(reason=NOT_RETRYABLE) == [other]
    assert await ids(task_ids=[labelled.upper()]) == [labelled]
    at = fs.FailureFilter()
    at.failed_after.FromMicroseconds(rec.finished_at_us)
    assert await ids(failed_after=at.failed_after) == [other]
    assert await ids(failed_before=at.failed_after) == [labelled]
    assert await ids(name="echo") == []
    assert [d.labels["tenant"] for d in (await dead_letters(result_store, all=True)).failures] == [
        "other",
        "acme",
    ]


async def test_bad_filters_and_pages_are_refused(result_store: Any) -> None:
    await fail(result_store)

    async def refused(call: Any) -> errors.TaskyardError:
        with pytest.raises(errors.TaskyardError) as caught:
            await call
        return caught.value

    err = await refused(dead_letters(result_store))
    assert err.code == errors.Code.INVALID_ARGUMENT and [v.field for v in err.violations] == ["filter"]
    err = await refused(dead_letters(result_store, task_ids=[str(i) for i in range(1001)]))
    assert err.code == errors.Code.INVALID_ARGUMENT and err.violations[0].field == "filter.task_ids"
    err = await refused(dead_letters(result_store, task_ids=["not-an-id"]))
    assert err.violations[0].field == "filter.task_ids[0]"
    err = await refused(dead_letters(result_store, group_id="0123456789abcdef"))
    assert (err.code, err.reason) == (errors.Code.NOT_FOUND, "FAILURE_GROUP_NOT_FOUND")
    err = await refused(dead_letters(result_store, all=True, page_size=1001))
    assert err.violations[0].field == "page_size"
    err = await refused(dead_letters(result_store, all=True, page_token="junk"))
    assert err.code == errors.Code.INVALID_ARGUMENT
    err = await refused(groups(result_store, reason=9))
    assert err.violations[0].field == "filter.reason"
    # An empty filter is every group.
    assert len((await groups(result_store)).groups) == 1


async def test_purge_deletes_the_dead_letters_a_filter_matches(result_store: Any) -> None:
    kept = await fail(result_store, n=2, queue="kept")
    purged = await fail(result_store, n=3, queue="gone")

    async def purge(dry_run: bool, request_id: str = "", **f: Any) -> int:
        req = bus.PurgeDeadLettersRequest(
            request=fs.PurgeDeadLettersRequest(filter=fs.FailureFilter(**f), dry_run=dry_run)
        )
        return (await result_store.failures.purge(req, request_id)).response.purged

    assert await purge(True, queue="gone") == 3
    assert len((await dead_letters(result_store, all=True)).failures) == 5  # a dry run deletes nothing
    assert await purge(False, "c5f3b0c2-0d0a-4a43-9a0e-0c8f1d9f0001", queue="gone") == 3
    assert not (await result_store.get(tasks_pb2.GetTasksRequest(ids=purged))).tasks
    assert sorted(d.task_id for d in (await dead_letters(result_store, all=True)).failures) == sorted(kept)
    with pytest.raises(errors.TaskyardError) as caught:
        await purge(False)
    assert caught.value.violations[0].field == "filter"


async def test_a_time_at_the_epoch_is_a_condition_not_an_unset_field(result_store: Any) -> None:
    ids = await fail(result_store, n=3)
    epoch = Timestamp(seconds=0)

    async def purge(dry_run: bool, **f: Any) -> int:
        req = bus.PurgeDeadLettersRequest(
            request=fs.PurgeDeadLettersRequest(filter=fs.FailureFilter(**f), dry_run=dry_run)
        )
        return (await result_store.failures.purge(req, "")).response.purged

    # Nothing failed before 1970: the filter matches none (it matched every one when 0 read as unset).
    assert (await dead_letters(result_store, failed_before=epoch)).failures == []
    assert await purge(True, failed_before=epoch) == 0
    assert await purge(False, failed_before=epoch) == 0
    assert len((await dead_letters(result_store, failed_after=epoch)).failures) == 3
    assert sorted(d.task_id for d in (await dead_letters(result_store, all=True)).failures) == sorted(ids)


async def test_a_time_past_the_timestamp_range_is_refused_by_the_store(result_store: Any) -> None:
    await fail(result_store)
    for field in ("failed_after", "failed_before"):
        far: dict[str, Any] = {field: Timestamp(seconds=10**15)}
        with pytest.raises(errors.TaskyardError) as caught:
            await dead_letters(result_store, **far)
        assert caught.value.code == errors.Code.INVALID_ARGUMENT
        assert [v.field for v in caught.value.violations] == [f"filter.{field}"]


async def test_the_in_memory_store_refuses_the_failure_kinds() -> None:
    from taskyard.result_store.testing.memory import MemoryStore

    memory = MemoryStore(task_names=["add"])
    requests: list[tuple[Any, Any]] = [
        (contract.STORE_FAILURE_GROUPS, bus.FailureGroupsRequest()),
        (contract.STORE_DEAD_LETTERS, bus.DeadLettersRequest()),
        (contract.STORE_PURGE_DEAD_LETTERS, bus.PurgeDeadLettersRequest()),
        (contract.STORE_REDRIVE_CREATE, bus.CreateRedriveRequest()),
        (contract.STORE_REDRIVE_CONTROL, bus.RedriveControlRequest()),
        (contract.STORE_REDRIVE_LIST, bus.RedriveListRequest()),
        (contract.STORE_REDRIVE_STEP, bus.RedriveStepRequest()),
        (contract.STORE_REDRIVES_ACTIVE, bus.ActiveRedrivesRequest()),
    ]
    for method, request in requests:
        with pytest.raises(errors.TaskyardError) as caught:
            await memory.call(method, request)
        assert caught.value.code == errors.Code.UNIMPLEMENTED, method
