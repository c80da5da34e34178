"""Flow control in the result-store: limits, fairness weights and their version
(STORE_LIMITS, STORE_LIMIT_CHANGE), the leased attempts that use limits
(STORE_LEASED_FLOW), and each task's FlowControl through every path that
stores or returns it.

The tests taking ``backend`` run against the real store (its own database,
reached over the bus) and the in-memory fake, like tests/integration/
test_store_contract.py, whose helpers they use. The others read what only
PostgreSQL has: the columns, the durable event log, the statements run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable
from typing import Any

import asyncpg
import pytest
from integration.test_store_contract import (
    ASSIGNED,
    HOUR_MS,
    POOL,
    QUEUED,
    SCHEDULED,
    Backend,
    backend,
    eventually,
    get,
    insert,
    lease,
    leased,
    promote,
    refused,
    rescue,
    task,
    us,
)

from taskyard.bus.v1 import event_log_pb2, flow_pb2, lanes_pb2, leases_pb2, schedule_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import contract, errors
from taskyard.core import limits as core_limits
from taskyard.result_store import event_log
from taskyard.v1 import event_service_pb2 as pub
from taskyard.v1 import limit_pb2, task_pb2
from taskyard.v1 import schedule_pb2 as schedule_pub

pytestmark = pytest.mark.asyncio
__all__ = ["backend"]  # the fixture, from the contract suite: both stores

Op = flow_pb2.LimitOp


# --- helpers ---------------------------------------------------------------------------------
def rate(name: str, units: int = 100, period_ms: int = 1000, burst: int = 0, **kw: Any) -> limit_pb2.Limit:
    limit = limit_pb2.Limit(name=name, rate=limit_pb2.RateLimit(units=units, burst=burst), **kw)
    limit.rate.period.FromMilliseconds(period_ms)
    return limit


def concurrency(name: str, max_units: int = 3, **kw: Any) -> limit_pb2.Limit:
    return limit_pb2.Limit(name=name, concurrency=limit_pb2.ConcurrencyLimit(max_units=max_units), **kw)


def flow(*uses: tuple[str, str, int], fairness_key: str = "") -> tr.FlowControl:
    return tr.FlowControl(
        fairness_key=fairness_key,
        uses=[limit_pb2.LimitUse(limit=name, key=key, units=units) for name, key, units in uses],
    )


async def change(b: Backend, **kw: Any) -> flow_pb2.ChangeLimitReply:
    return await b.store.call(contract.STORE_LIMIT_CHANGE, flow_pb2.ChangeLimitRequest(**kw))


async def read(b: Backend, known_version: int = -1) -> flow_pb2.ReadLimitsReply:
    return await b.store.call(contract.STORE_LIMITS, flow_pb2.ReadLimitsRequest(known_version=known_version))


async def leased_flow(b: Backend, limit: int = 0, after_id: str = "") -> flow_pb2.LeasedFlowReply:
    return await b.store.call(
        contract.STORE_LEASED_FLOW, flow_pb2.LeasedFlowRequest(limit=limit, after_id=after_id)
    )


async def nothing_changed(b: Backend, version: int, call: Awaitable[Any]) -> errors.TaskyardError:
    """The refusal of ``call``, after which the store's limits are still at ``version``."""
    err = await refused(call)
    assert (await read(b, version)).unchanged, err
    return err


def definition(limit: limit_pb2.Limit) -> limit_pb2.Limit:
    """``limit`` without its output fields."""
    out = limit_pb2.Limit()
    out.CopyFrom(limit)
    for field in ("created_at", "updated_at", "usage"):
        out.ClearField(field)
    return out


# --- limits and weights ------------------------------------------------------------------------
async def test_limits_are_created_read_updated_and_deleted(backend: Backend) -> None:
    empty = await read(backend, 0)
    assert (empty.version, empty.unchanged, list(empty.limits)) == (0, True, [])

    api = rate("api", units=500, burst=50, description="the partner's API")
    created = await change(backend, op=Op.LIMIT_OP_CREATE, limit=api)
    assert created.version == 1 and definition(created.limit) == api
    assert created.limit.created_at.ToMicroseconds() > 0
    assert created.limit.updated_at == created.limit.created_at
    per_customer = concurrency("per-customer", per_key=True)
    assert (await change(backend, op=Op.LIMIT_OP_CREATE, limit=per_customer)).version == 2

    whole = await read(backend, 0)
    assert (whole.version, whole.unchanged) == (2, False)
    assert [definition(limit) for limit in whole.limits] == [api, per_customer]  # by name
    assert whole.limits[0].created_at == created.limit.created_at
    assert (await read(backend, 2)) == flow_pb2.ReadLimitsReply(version=2, unchanged=True)

    faster = rate("api", units=1000, period_ms=2000)
    updated = await change(backend, op=Op.LIMIT_OP_UPDATE, limit=faster)
    assert updated.version == 3 and definition(updated.limit) == faster
    assert updated.limit.created_at == created.limit.created_at
    assert updated.limit.updated_at.ToMicroseconds() >= created.limit.updated_at.ToMicroseconds()

    deleted = await change(backend, op=Op.LIMIT_OP_DELETE, name="api")
    assert (deleted.version, deleted.tasks_released) == (4, 0)
    after = await read(backend, 3)
    assert after.version == 4 and [limit.name for limit in after.limits] == ["per-customer"]


async def test_refused_changes_store_nothing(backend: Backend) -> None:
    await change(backend, op=Op.LIMIT_OP_CREATE, limit=rate("api"))
    v = (await read(backend, 0)).version

    err = await nothing_changed(backend, v, change(backend, op=Op.LIMIT_OP_CREATE, limit=rate("api", 5)))
    assert (err.code, err.reason) == (errors.Code.ALREADY_EXISTS, "LIMIT_EXISTS")
    err = await nothing_changed(backend, v, change(backend, op=Op.LIMIT_OP_UPDATE, limit=rate("nope")))
    assert (err.code, err.reason) == (errors.Code.NOT_FOUND, "LIMIT_NOT_FOUND")
    err = await nothing_changed(backend, v, change(backend, op=Op.LIMIT_OP_DELETE, name="nope"))
    assert (err.code, err.reason) == (errors.Code.NOT_FOUND, "LIMIT_NOT_FOUND")

    # Each rule of core/limits.py, as field violations.
    bad = rate("bad", units=0, period_ms=0)
    err = await nothing_changed(backend, v, change(backend, op=Op.LIMIT_OP_CREATE, limit=bad))
    assert err.code is errors.Code.INVALID_ARGUMENT
    assert [x.field for x in err.violations] == ["limit.rate.units", "limit.rate.period"]
    err = await nothing_changed(backend, v, change(backend, op=Op.LIMIT_OP_CREATE, limit=limit_pb2.Limit()))
    assert [x.field for x in err.violations] == ["limit.name", "limit"]
    err = await nothing_changed(
        backend, v, change(backend, op=Op.LIMIT_OP_UPDATE, limit=concurrency("api", max_units=-1))
    )
    assert [x.field for x in err.violations] == ["limit.concurrency.max_units"]
    err = await nothing_changed(backend, v, change(backend))
    assert [x.field for x in err.violations] == ["op"]
    err = await nothing_changed(backend, v, change(backend, op=Op.LIMIT_OP_DELETE))
    assert [x.field for x in err.violations] == ["name"]
    too_heavy = limit_pb2.KeyWeight(key="k" * 257, weight=1001)
    err = await nothing_changed(backend, v, change(backend, op=Op.LIMIT_OP_SET_WEIGHT, weight=too_heavy))
    assert [x.field for x in err.violations] == ["weight.key", "weight.weight"]
    assert [definition(limit) for limit in (await read(backend)).limits] == [rate("api")]


async def test_the_caps_on_limits_and_weights(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core_limits, "MAX_LIMITS", 2)
    monkeypatch.setattr(core_limits, "MAX_WEIGHTS", 1)
    await change(backend, op=Op.LIMIT_OP_CREATE, limit=rate("a"))
    await change(backend, op=Op.LIMIT_OP_CREATE, limit=rate("b"))
    v = (await read(backend)).version
    err = await nothing_changed(backend, v, change(backend, op=Op.LIMIT_OP_CREATE, limit=rate("c")))
    assert (err.code, err.reason) == (errors.Code.RESOURCE_EXHAUSTED, "TOO_MANY_LIMITS")
    declared = rate("send.rate", task_name="send")
    err = await nothing_changed(backend, v, change(backend, op=Op.LIMIT_OP_DECLARE, declared=[declared]))
    assert (err.code, err.reason) == (errors.Code.RESOURCE_EXHAUSTED, "TOO_MANY_LIMITS")

    await change(backend, op=Op.LIMIT_OP_SET_WEIGHT, weight=limit_pb2.KeyWeight(key="x", weight=2))
    v = (await read(backend)).version
    other = limit_pb2.KeyWeight(key="y", weight=2)
    err = await nothing_changed(backend, v, change(backend, op=Op.LIMIT_OP_SET_WEIGHT, weight=other))
    assert (err.code, err.reason) == (errors.Code.RESOURCE_EXHAUSTED, "TOO_MANY_WEIGHTS")
    # A key that has a weight may change it at the cap.
    again = limit_pb2.KeyWeight(key="x", weight=5)
    assert (await change(backend, op=Op.LIMIT_OP_SET_WEIGHT, weight=again)).version == v + 1


async def test_weights_are_set_and_removed(backend: Backend) -> None:
    gold = limit_pb2.KeyWeight(key="tenant:gold", weight=3)
    reply = await change(backend, op=Op.LIMIT_OP_SET_WEIGHT, weight=gold)
    assert (reply.weight, reply.version) == (gold, 1)
    await change(backend, op=Op.LIMIT_OP_SET_WEIGHT, weight=limit_pb2.KeyWeight(key="", weight=2))
    assert list((await read(backend)).weights) == [limit_pb2.KeyWeight(key="", weight=2), gold]
    # The same weight again changes nothing: no new version.
    assert (await change(backend, op=Op.LIMIT_OP_SET_WEIGHT, weight=gold)).version == 2
    removed = await change(backend, op=Op.LIMIT_OP_SET_WEIGHT, weight=limit_pb2.KeyWeight(key="tenant:gold"))
    assert removed.version == 3
    assert [w.key for w in (await read(backend, 2)).weights] == [""]
    # Removing a key without a weight changes nothing.
    gone = limit_pb2.KeyWeight(key="tenant:gold")
    assert (await change(backend, op=Op.LIMIT_OP_SET_WEIGHT, weight=gone)).version == 3


async def test_declared_limits_are_upserted_but_never_over_a_users(backend: Backend) -> None:
    send_rate = rate("send_email.rate", units=100, task_name="send_email", key_argument="customer_id")
    send_conc = concurrency("send_email.concurrency", 3, task_name="send_email")
    first = await change(backend, op=Op.LIMIT_OP_DECLARE, declared=[send_rate, send_conc])
    assert first.version == 1
    assert [definition(limit) for limit in (await read(backend)).limits] == [send_conc, send_rate]
    # A pool that starts again declares the same: nothing changes.
    assert (await change(backend, op=Op.LIMIT_OP_DECLARE, declared=[send_rate, send_conc])).version == 1
    slower = rate("send_email.rate", units=10, task_name="send_email", key_argument="customer_id")
    assert (await change(backend, op=Op.LIMIT_OP_DECLARE, declared=[slower])).version == 2

    # A user's change makes it the user's: a declaration no longer rewrites it.
    tuned = rate("send_email.rate", units=50, task_name="send_email", key_argument="customer_id")
    await change(backend, op=Op.LIMIT_OP_UPDATE, limit=tuned)
    err = await nothing_changed(
        backend, 3, change(backend, op=Op.LIMIT_OP_DECLARE, declared=[slower, send_conc])
    )
    assert (err.code, err.reason) == (errors.Code.FAILED_PRECONDITION, "LIMIT_NOT_DECLARED")
    assert "'send_email.rate'" in err.message
    # A declaration equal to the user's limit is no conflict.
    assert (await change(backend, op=Op.LIMIT_OP_DECLARE, declared=[tuned])).version == 3

    misnamed = rate("mail", task_name="send_email")
    anonymous = rate("x.rate")
    err = await nothing_changed(
        backend, 3, change(backend, op=Op.LIMIT_OP_DECLARE, declared=[misnamed, anonymous, anonymous])
    )
    assert [x.field for x in err.violations] == [
        "declared[0].name",
        "declared[1].task_name",
        "declared[2].task_name",
        "declared[2].name",
    ]


# --- tasks' flow ---------------------------------------------------------------------------------
async def test_flow_travels_with_the_task_through_every_read(backend: Backend) -> None:
    await change(backend, op=Op.LIMIT_OP_CREATE, limit=concurrency("per-customer", per_key=True))
    used = flow(("per-customer", "customer:42", 2), ("api", "", 0), fairness_key="tenant:a")
    keyed_only = flow(fairness_key="tenant:b")
    a, b, plain = task(flow=used), task(flow=keyed_only), task()
    reply = await insert(backend, a, b, plain)
    assert [(t.id, t.flow) for t in reply.tasks] == [
        (a.id, used),
        (b.id, keyed_only),
        (plain.id, tr.FlowControl()),
    ]
    assert not reply.tasks[2].HasField("flow")
    assert (await get(backend, a.id)).flow == used
    assert not (await get(backend, plain.id)).HasField("flow")
    listed = await backend.store.call(contract.STORE_LIST, tasks_pb2.ListTasksRequest())
    assert {t.id: t.flow for t in listed.tasks}[a.id] == used

    queued = await backend.store.call(contract.STORE_LOAD_QUEUED, lanes_pb2.LoadQueuedRequest())
    refs = {ref.id: ref for ref in queued.tasks}
    assert (refs[a.id].flow, refs[b.id].flow) == (used, keyed_only)
    assert not refs[plain.id].HasField("flow")

    # Leased: the record carries it, and the leased attempts that use limits list it
    # (a fairness key alone holds no units).
    got = {r.id: r for r in await lease(backend, a, b, plain)}
    assert got[a.id].flow == used and got[a.id].state == ASSIGNED
    attempts = (await leased_flow(backend)).attempts
    assert [(x.task_id, x.attempt, x.lease_token, x.flow) for x in attempts] == [(a.id, 1, "tok", used)]
    # An existing task given again is described with its flow.
    (dup,) = (await insert(backend, task(id=a.id))).tasks
    assert (dup.id, dup.created, dup.flow) == (a.id, False, used)


async def test_a_fast_path_insert_and_a_promotion_carry_flow(backend: Backend) -> None:
    used = flow(("api", "k", 1))
    fast = task(flow=used)
    reply = await insert(
        backend,
        fast,
        pool_id=POOL,
        lease_ms=HOUR_MS,
        leases=[leases_pb2.Lease(task_id=fast.id, lease_token="t1")],
    )
    assert reply.tasks[0].state == ASSIGNED and reply.tasks[0].flow == used
    assert [(r.id, r.flow) for r in reply.leased] == [(fast.id, used)]
    assert [x.task_id for x in (await leased_flow(backend)).attempts] == [fast.id]

    soon = task(state=task_pb2.TASK_STATE_SCHEDULED, run_at_us=us(backend.now()) + 200_000, flow=used)
    assert (await insert(backend, soon)).tasks[0].state == SCHEDULED

    async def promoted() -> lanes_pb2.PromoteDueReply | None:
        r = await promote(backend)
        return r if r.tasks else None

    r = await eventually(backend, promoted, "the delayed task to come due")
    assert [(ref.id, ref.flow) for ref in r.tasks] == [(soon.id, used)]


async def test_a_rescued_attempt_keeps_its_flow(backend: Backend) -> None:
    used = flow(("per-customer", "c1", 1))
    (rec,) = await leased(backend, task(flow=used), lease_ms=1)
    found: list[tr.TaskRecord] = []

    async def requeued() -> bool:
        found.extend((await rescue(backend, retry_delay_ms=0)).requeued)
        return bool(found)

    await eventually(backend, requeued, "the lapsed lease to be rescued")
    assert [(r.id, r.state, r.flow) for r in found] == [(rec.id, QUEUED, used)]
    assert (await leased_flow(backend)).attempts == []


async def test_leased_attempts_are_paged_by_id(backend: Backend) -> None:
    records = await leased(backend, *(task(flow=flow(("c", str(i), 1))) for i in range(3)))
    ids = sorted(r.id for r in records)
    first = await leased_flow(backend, limit=2)
    assert [x.task_id for x in first.attempts] == ids[:2] and first.next_after_id == ids[1]
    rest = await leased_flow(backend, limit=2, after_id=first.next_after_id)
    assert [x.task_id for x in rest.attempts] == ids[2:] and rest.next_after_id == ""
    err = await refused(leased_flow(backend, limit=10_001))
    assert [x.field for x in err.violations] == ["limit"]
    err = await refused(leased_flow(backend, after_id="not-an-id"))
    assert [x.field for x in err.violations] == ["after_id"]


async def test_a_task_with_bad_flow_is_refused_and_not_stored(backend: Backend) -> None:
    # Eight named at submit and the three a task name may declare are the most.
    too_many = flow(*((f"l{i}", "", 1) for i in range(core_limits.MAX_STORED_USES + 1)))
    long_key = flow(("api", "k" * 257, 1))
    negative = flow(("api", "", -1), ("api", "", 1), fairness_key="f" * 257)
    records = [task(flow=too_many), task(flow=long_key), task(flow=negative), task()]
    err = await refused(insert(backend, *records))
    assert err.code is errors.Code.INVALID_ARGUMENT
    assert [x.field for x in err.violations] == [
        "tasks[0].flow.uses",
        "tasks[1].flow.uses[0].key",
        "tasks[2].flow.fairness_key",
        "tasks[2].flow.uses[0].units",
        "tasks[2].flow.uses[1].limit",
    ]
    got = await backend.store.call(contract.STORE_GET, tasks_pb2.GetTasksRequest(ids=[r.id for r in records]))
    assert list(got.tasks) == []


async def test_a_limit_queued_tasks_use_is_deleted_only_with_force(backend: Backend) -> None:
    await change(backend, op=Op.LIMIT_OP_CREATE, limit=concurrency("per-customer", per_key=True))
    await change(backend, op=Op.LIMIT_OP_CREATE, limit=rate("api"))
    waiting = task(flow=flow(("per-customer", "c1", 1), ("api", "", 1)))
    running = task(flow=flow(("per-customer", "c2", 1)))
    done = task(flow=flow(("api", "", 1)))
    await insert(backend, waiting)
    await leased(backend, running, done)
    await backend.store.call(
        contract.STORE_REPORT,
        leases_pb2.ReportRequest(
            completed=[
                leases_pb2.Completion(
                    ref=tr.AttemptRef(task_id=done.id, attempt=1, lease_token="tok"),
                    success=True,
                    result_json=b"1",
                )
            ]
        ),
    )
    v = (await read(backend)).version

    err = await nothing_changed(backend, v, change(backend, op=Op.LIMIT_OP_DELETE, name="per-customer"))
    assert (err.code, err.reason) == (errors.Code.FAILED_PRECONDITION, "LIMIT_IN_USE")
    assert "2 task(s)" in err.message
    forced = await change(backend, op=Op.LIMIT_OP_DELETE, name="per-customer", force=True)
    assert (forced.tasks_released, forced.version) == (2, v + 1)
    # Their flow is left as it was: admission ignores a limit that no longer exists.
    assert (await get(backend, waiting.id)).flow == waiting.flow

    err = await nothing_changed(backend, v + 1, change(backend, op=Op.LIMIT_OP_DELETE, name="api"))
    assert "1 task(s)" in err.message  # the finished one does not count
    await backend.store.call(contract.STORE_CANCEL, tasks_pb2.CancelTasksRequest(ids=[waiting.id]))
    assert (await change(backend, op=Op.LIMIT_OP_DELETE, name="api")).tasks_released == 0


# --- what only PostgreSQL shows ------------------------------------------------------------------
async def test_flow_columns_are_null_for_a_task_without_flow(result_store: Any, database_url: str) -> None:
    used = flow(("per-customer", "c1", 1), ("a b", "", 0))
    keyed_only = flow(fairness_key="tenant:a")
    alone, mixed_plain, mixed_flow, keyed = task(), task(), task(flow=used), task(flow=keyed_only)
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[alone]))
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[mixed_plain, mixed_flow, keyed]))
    conn = await asyncpg.connect(database_url)
    try:
        rows = {r["id"]: r for r in await conn.fetch("SELECT id::text AS id, flow, limit_names FROM tasks")}
        users = await conn.fetchval(
            "SELECT count(*) FROM tasks WHERE limit_names @> ARRAY['a b'] AND limit_names IS NOT NULL"
        )
    finally:
        await conn.close()
    for plain in (alone, mixed_plain):
        assert (rows[plain.id]["flow"], rows[plain.id]["limit_names"]) == (None, None)
    assert tr.FlowControl.FromString(rows[mixed_flow.id]["flow"]) == used
    assert rows[mixed_flow.id]["limit_names"] == ["per-customer", "a b"]
    assert tr.FlowControl.FromString(rows[keyed.id]["flow"]) == keyed_only
    assert rows[keyed.id]["limit_names"] is None
    assert users == 1


async def test_a_limit_a_schedules_task_uses_is_deleted_only_with_force(
    result_store: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # The fake keeps no schedules (UNIMPLEMENTED there), so none can use a limit in it.
    limits, schedules = result_store.limits, result_store.schedules
    for limit in (concurrency("exports", per_key=True), rate("api")):
        await limits.change(flow_pb2.ChangeLimitRequest(op=Op.LIMIT_OP_CREATE, limit=limit))

    def every_hour(name: str, *uses: tuple[str, str], paused: bool = False) -> schedule_pub.Schedule:
        spec = task_pb2.TaskSpec(name="echo", limits=[limit_pb2.LimitUse(limit=n, key=k) for n, k in uses])
        made = schedule_pub.Schedule(name=name, task=spec, paused=paused)
        made.interval.FromSeconds(3600)
        return made

    now = us(time.time())
    # A paused schedule counts: it runs again once resumed; one of "api" only does not.
    for made in (
        every_hour("nightly-export", ("exports", "customer:1"), ("api", "")),
        every_hour("weekly-export", ("exports", "customer:2"), paused=True),
        every_hour("api-only", ("api", "")),
        every_hour("plain"),
    ):
        await schedules.save(schedule_pb2.SaveSchedulesRequest(schedules=[made], now_us=now))
    declared = every_hour("declared-export", ("exports", "customer:3"))
    await schedules.save(schedule_pb2.SaveSchedulesRequest(schedules=[declared], now_us=now, declared=True))
    version = (await limits.read(flow_pb2.ReadLimitsRequest())).version

    # No task uses it: the schedules alone keep it.
    with pytest.raises(errors.TaskyardError) as refused:
        await limits.change(flow_pb2.ChangeLimitRequest(op=Op.LIMIT_OP_DELETE, name="exports"))
    assert (refused.value.code, refused.value.reason) == (errors.Code.FAILED_PRECONDITION, "LIMIT_IN_USE")
    assert "0 task(s)" in refused.value.message and "3 schedule(s)" in refused.value.message
    assert (await limits.read(flow_pb2.ReadLimitsRequest(known_version=version))).unchanged

    await result_store.insert(
        tasks_pb2.InsertTasksRequest(tasks=[task(flow=flow(("exports", "customer:4", 1)))])
    )
    with pytest.raises(errors.TaskyardError) as refused:
        await limits.change(flow_pb2.ChangeLimitRequest(op=Op.LIMIT_OP_DELETE, name="exports"))
    assert "1 task(s)" in refused.value.message and "3 schedule(s)" in refused.value.message

    start = await event_log.read(result_store.pool, event_log_pb2.ReadEventsRequest(), page=100)
    with caplog.at_level(logging.WARNING, logger="taskyard.result_store.writes.limits"):
        forced = await limits.change(
            flow_pb2.ChangeLimitRequest(op=Op.LIMIT_OP_DELETE, name="exports", force=True)
        )
    assert (forced.tasks_released, forced.version) == (1, version + 1)  # the tasks only, as the API says
    assert any("3 schedule(s) keep its name" in r.getMessage() for r in caplog.records)

    async def deleted() -> list[pub.Event]:
        got = await event_log.read(
            result_store.pool, event_log_pb2.ReadEventsRequest(after=start.cursor), page=100
        )
        return [e for e in got.events if e.type == "limit.deleted"]

    from support.waiting import wait_until_async

    (event,) = await wait_until_async(deleted, 10, "the limit.deleted event below the watermark")
    assert dict(event.attributes) == {"limit": "exports", "tasks_released": "1", "schedules_using": "3"}
    # The schedules are left as they were: their template still names it.
    kept = await schedules.read(schedule_pb2.ReadSchedulesRequest(id=""))
    uses = {x.name: [u.limit for u in x.task.limits] for x in kept.schedules}
    assert uses["nightly-export"] == ["exports", "api"] and uses["weekly-export"] == ["exports"]


async def test_an_unchanged_read_is_one_statement(result_store: Any) -> None:
    limits = result_store.limits
    await limits.change(flow_pb2.ChangeLimitRequest(op=Op.LIMIT_OP_CREATE, limit=rate("api")))
    before = result_store.stats.statements
    reply = await limits.read(flow_pb2.ReadLimitsRequest(known_version=1))
    assert reply == flow_pb2.ReadLimitsReply(version=1, unchanged=True)
    assert result_store.stats.statements - before == 1


async def test_limit_changes_are_logged_and_published_with_their_attributes(result_store: Any) -> None:
    published: list[Any] = []
    result_store.publisher.listeners.append(lambda batch: published.extend(batch.events))
    limits = result_store.limits
    start = await event_log.read(result_store.pool, event_log_pb2.ReadEventsRequest(), page=100)
    declared = rate("send.rate", task_name="send")
    for req in (
        flow_pb2.ChangeLimitRequest(op=Op.LIMIT_OP_CREATE, limit=rate("api")),
        flow_pb2.ChangeLimitRequest(op=Op.LIMIT_OP_UPDATE, limit=rate("api", 5)),
        flow_pb2.ChangeLimitRequest(op=Op.LIMIT_OP_DECLARE, declared=[declared]),
        flow_pb2.ChangeLimitRequest(
            op=Op.LIMIT_OP_SET_WEIGHT, weight=limit_pb2.KeyWeight(key="tenant:a", weight=3)
        ),
        flow_pb2.ChangeLimitRequest(op=Op.LIMIT_OP_DELETE, name="api"),
    ):
        await limits.change(req)
    with pytest.raises(errors.TaskyardError):  # refused: nothing logged
        await limits.change(flow_pb2.ChangeLimitRequest(op=Op.LIMIT_OP_DELETE, name="api"))
    expected = [
        ("limit.created", {"limit": "api"}),
        ("limit.updated", {"limit": "api"}),
        ("limit.declared", {"limit": "send.rate"}),
        ("limit.weight", {"key": "tenant:a", "weight": "3"}),
        ("limit.deleted", {"limit": "api"}),
    ]

    async def logged() -> list[pub.Event]:
        got = await event_log.read(
            result_store.pool, event_log_pb2.ReadEventsRequest(after=start.cursor), page=100
        )
        return list(got.events) if len(got.events) >= len(expected) else []

    from support.waiting import wait_until_async

    events = await wait_until_async(logged, 10, "the limit events below the watermark")
    assert [(e.kind, e.type, dict(e.attributes)) for e in events] == [
        (pub.EVENT_KIND_LIMIT, t, a) for t, a in expected
    ]
    # (The NOTIFY listener's wake-ups go by too.)
    assert [(e.type, dict(e.attributes)) for e in published if e.type.startswith("limit.")] == expected
