"""Every store request the gateway sends for a caller applies its TenantScope in
SQL: with two tenants, a row of tenant B is never read, changed or counted for
scope A, and answers exactly as a missing row does (same code, same message).

A real store on its own database (``result_store``, called in process).
"""

from __future__ import annotations

from typing import Any

import pytest
from integration.test_dead_letters_store import fail
from integration.test_store_tenants import EVERY, change, insert, scope, tenant
from support.records import task as add_task
from support.waiting import wait_until_async

from taskyard.bus.v1 import (
    event_log_pb2,
    failures_pb2,
    flow_pb2,
    graph_pb2,
    logs_pb2,
    pools_pb2,
    queues_pb2,
    schedule_pb2,
    tasks_pb2,
    tenants_pb2,
)
from taskyard.core import errors
from taskyard.v1 import failure_service_pb2 as fs
from taskyard.v1 import limit_pb2, task_pb2
from taskyard.v1 import schedule_pb2 as schedule_pub

pytestmark = pytest.mark.asyncio
Op = tenants_pb2.ChangeTenantRequest.Op
A, B = scope("acme"), scope("beta")
MISSING = "01890000-0000-7000-8000-000000000000"


async def tenants_ab(store: Any) -> None:
    await change(store, Op.OP_CREATE, tenant("acme"))
    await change(store, Op.OP_CREATE, tenant("beta"))


async def refusal(call: Any) -> errors.TaskyardError:
    with pytest.raises(errors.TaskyardError) as caught:
        await call
    return caught.value


def like_missing(err: errors.TaskyardError, missing: errors.TaskyardError, ident: str) -> None:
    """``err`` (for another tenant's ``ident``) is what a missing one answers."""
    assert err.code == missing.code and err.reason == missing.reason
    assert err.message == missing.message.replace(MISSING, ident)


# --- a task's reads: logs, tree, failures, explain ---------------------------------------------------
async def test_a_tasks_logs_tree_failures_and_facts_are_its_tenants_only(result_store: Any) -> None:
    await tenants_ab(result_store)
    (bid,) = await fail(result_store, tenant="beta")
    await result_store.ops.write_logs(
        logs_pb2.LogBatch(lines=[logs_pb2.LogLine(task_id=bid, attempt=1, message="hello")])
    )

    async def logs(where: tenants_pb2.TenantScope, tid: str = bid) -> logs_pb2.GetLogsReply:
        reply: logs_pb2.GetLogsReply = await result_store.ops.read_logs(
            logs_pb2.GetLogsRequest(task_id=tid, scope=where)
        )
        return reply

    assert (await logs(B)).found and [line.message for line in (await logs(B)).logs] == ["hello"]
    assert await logs(A) == await logs(A, MISSING) == logs_pb2.GetLogsReply(found=False)

    async def tree(where: tenants_pb2.TenantScope, tid: str = bid) -> graph_pb2.TaskTreeReply:
        reply: graph_pb2.TaskTreeReply = await result_store._task_tree(
            graph_pb2.TaskTreeRequest(id=tid, scope=where)
        )
        return reply

    assert (await tree(B)).found and not (await tree(A)).found
    assert await tree(A) == await tree(A, MISSING)

    from taskyard.result_store.reads import explain, failures

    for counts_only in (False, True):
        req = tasks_pb2.GetFailuresRequest(task_ids=[bid], counts_only=counts_only)
        req.scope.CopyFrom(B)
        assert len((await failures.get_failures(result_store.pool, result_store.stats, req)).tasks) == 1
        req.scope.CopyFrom(A)
        assert (await failures.get_failures(result_store.pool, result_store.stats, req)).tasks == []

    facts = await explain.explain_facts(
        result_store.pool, result_store.stats, tasks_pb2.ExplainFactsRequest(task_id=bid, scope=B)
    )
    assert facts.found
    # The tasks ahead of one are its own tenant's only: another's backlog is not told.
    ahead = [add_task(tenant="acme"), add_task(tenant="beta")]
    for rec in ahead:
        await insert(result_store, rec)
    mine = add_task(tenant="beta")
    await insert(result_store, mine)
    beat = pools_pb2.HeartbeatRequest(pool_id="pool-1", capacity=4, task_names=["add"], is_running=True)
    await result_store.heartbeat(beat)
    depth = await explain.explain_facts(
        result_store.pool, result_store.stats, tasks_pb2.ExplainFactsRequest(task_id=mine.id, scope=B)
    )
    assert depth.depth_ahead == 1
    hidden = await explain.explain_facts(
        result_store.pool, result_store.stats, tasks_pb2.ExplainFactsRequest(task_id=bid, scope=A)
    )
    assert hidden == tasks_pb2.ExplainFactsReply(found=False)


# --- queues ------------------------------------------------------------------------------------------
async def test_queue_operations_and_status_are_the_scopes_tenants(result_store: Any) -> None:
    await tenants_ab(result_store)
    await insert(result_store, add_task(tenant="acme", queue="reports"))
    await insert(result_store, add_task(tenant="beta", queue="reports"))
    await insert(result_store, add_task(queue="reports"))

    async def op(where: tenants_pb2.TenantScope, **kw: Any) -> queues_pb2.QueueOpReply:
        reply: queues_pb2.QueueOpReply = await result_store.ops.queue_op(
            queues_pb2.QueueOpRequest(scope=where, **kw)
        )
        return reply

    async def status(where: tenants_pb2.TenantScope, **kw: Any) -> queues_pb2.QueueStatusReply:
        reply: queues_pb2.QueueStatusReply = await result_store.ops.status(
            queues_pb2.QueueStatusRequest(scope=where, **kw)
        )
        return reply

    # Two tenants both have a queue "reports": pausing A's leaves B's and the default's.
    paused = await op(A, op=queues_pb2.QUEUE_OP_PAUSE, queue="reports")
    assert (paused.queue.name, paused.queue.paused, paused.queue.queued) == ("acme/reports", True, 1)
    assert (await status(A)).paused == ["acme/reports"]
    assert list((await status(B)).paused) == [] and list((await status(scope())).paused) == []
    assert list((await status(EVERY, paused_only=True)).paused) == ["acme/reports"]
    assert [q.name for q in (await status(B)).queues] == ["beta/reports"]
    assert [q.name for q in (await status(scope())).queues] == ["reports"]
    assert [(q.name, q.queued) for q in (await status(B, queue="reports")).queues] == [("beta/reports", 1)]
    err = await refusal(op(A, op=queues_pb2.QUEUE_OP_PAUSE, queue="beta/reports"))
    assert err.code == errors.Code.INVALID_ARGUMENT  # another tenant's queue is no name of A's

    # A retry by A never takes B's failed tasks, named by id or not.
    (bid,) = await fail(result_store, tenant="beta", queue="reports")
    assert (await op(A, op=queues_pb2.QUEUE_OP_RETRY, ids=[bid])).count == 0
    assert (await op(A, op=queues_pb2.QUEUE_OP_RETRY)).count == 0
    assert (await op(B, op=queues_pb2.QUEUE_OP_RETRY, ids=[bid])).ids == [bid]


# --- schedules ---------------------------------------------------------------------------------------
def schedule(name: str) -> schedule_pub.Schedule:
    s = schedule_pub.Schedule(
        name=name, cron="0 3 * * *", task=task_pb2.TaskSpec(name="add", queue="nightly")
    )
    return s


async def test_schedules_are_the_scopes_tenants(result_store: Any) -> None:
    await tenants_ab(result_store)
    s = result_store.schedules

    async def save(where: tenants_pb2.TenantScope, name: str) -> schedule_pub.Schedule:
        reply = await s.save(
            schedule_pb2.SaveSchedulesRequest(schedules=[schedule(name)], scope=where, now_us=1)
        )
        return reply.schedules[0]

    mine = await save(A, "nightly")
    theirs = await save(B, "beta/nightly")  # qualified or bare: the tenant's own
    default = await save(scope(), "nightly")
    assert (mine.name, theirs.name, default.name) == ("acme/nightly", "beta/nightly", "nightly")
    row = await result_store.pool.fetchrow(
        "SELECT tenant, task->>'queue' AS queue FROM schedules WHERE id = $1", mine.id
    )
    assert (row["tenant"], row["queue"]) == ("acme", "nightly")

    async def read(where: tenants_pb2.TenantScope, ident: str = "") -> schedule_pb2.ReadSchedulesReply:
        reply: schedule_pb2.ReadSchedulesReply = await s.read(
            schedule_pb2.ReadSchedulesRequest(id=ident, scope=where)
        )
        return reply

    assert [x.name for x in (await read(A)).schedules] == ["acme/nightly"]
    for ident in ("nightly", "acme/nightly", mine.id):  # bare or qualified: A's own
        assert [x.id for x in (await read(A, ident)).schedules] == [mine.id]
    assert {x.name for x in (await read(EVERY)).schedules} == {"acme/nightly", "beta/nightly", "nightly"}
    missing = await refusal(read(A, MISSING))
    for ident in (theirs.id, "beta/nightly"):
        like_missing(await refusal(read(A, ident)), missing, ident)
    change_missing = await refusal(
        s.change(
            schedule_pb2.ChangeScheduleRequest(
                id=MISSING, action=schedule_pb2.SCHEDULE_ACTION_DELETE, scope=A
            )
        )
    )
    err = await refusal(
        s.change(
            schedule_pb2.ChangeScheduleRequest(
                id=theirs.id, action=schedule_pb2.SCHEDULE_ACTION_DELETE, scope=A
            )
        )
    )
    like_missing(err, change_missing, theirs.id)
    fire_missing = await refusal(s.fire(schedule_pb2.FireSchedulesRequest(trigger=MISSING, scope=A)))
    like_missing(
        await refusal(s.fire(schedule_pb2.FireSchedulesRequest(trigger=theirs.id, scope=A))),
        fire_missing,
        theirs.id,
    )
    assert len((await read(B)).schedules) == 1  # unchanged

    # A run is its schedule's tenant's, its names qualified.
    fired = await s.fire(schedule_pb2.FireSchedulesRequest(trigger=theirs.id, scope=B))
    (run,) = fired.records
    assert (run.tenant, run.queue) == ("beta", "beta/nightly")
    stored = await result_store.pool.fetchrow("SELECT tenant, queue FROM tasks WHERE id = $1", run.id)
    assert (stored["tenant"], stored["queue"]) == ("beta", "beta/nightly")
    assert default.name == "nightly"


async def test_a_suspended_tenants_due_runs_are_skipped(result_store: Any) -> None:
    await tenants_ab(result_store)
    s = result_store.schedules
    sched = schedule_pub.Schedule(name="often", task=task_pb2.TaskSpec(name="add"))
    sched.interval.FromSeconds(60)
    await s.save(schedule_pb2.SaveSchedulesRequest(schedules=[sched], scope=B, now_us=1_000_000))
    await change(result_store, Op.OP_SUSPEND, tenant("beta"))
    fired = await s.fire(schedule_pb2.FireSchedulesRequest(now_us=1_000_000 + 61_000_000))
    assert (len(fired.tasks), fired.skipped) == (0, 1)
    await change(result_store, Op.OP_RESUME, tenant("beta"))
    fired = await s.fire(schedule_pb2.FireSchedulesRequest(now_us=1_000_000 + 122_000_000))
    assert len(fired.tasks) == 1 and fired.records[0].tenant == "beta"


# --- limits and weights ------------------------------------------------------------------------------
def concurrency(name: str) -> limit_pb2.Limit:
    return limit_pb2.Limit(name=name, concurrency=limit_pb2.ConcurrencyLimit(max_units=3))


async def test_limits_and_weights_are_the_scopes_tenants(result_store: Any) -> None:
    await tenants_ab(result_store)
    limits = result_store.limits

    async def lchange(where: tenants_pb2.TenantScope, **kw: Any) -> flow_pb2.ChangeLimitReply:
        reply: flow_pb2.ChangeLimitReply = await limits.change(flow_pb2.ChangeLimitRequest(scope=where, **kw))
        return reply

    async def read(where: tenants_pb2.TenantScope) -> flow_pb2.ReadLimitsReply:
        reply: flow_pb2.ReadLimitsReply = await limits.read(flow_pb2.ReadLimitsRequest(scope=where))
        return reply

    Create, Update, Delete, Weight = (
        flow_pb2.LIMIT_OP_CREATE,
        flow_pb2.LIMIT_OP_UPDATE,
        flow_pb2.LIMIT_OP_DELETE,
        flow_pb2.LIMIT_OP_SET_WEIGHT,
    )
    await lchange(A, op=Create, limit=concurrency("api"))
    await lchange(B, op=Create, limit=concurrency("beta/api"))
    await lchange(scope(), op=Create, limit=concurrency("api"))
    await lchange(B, op=Weight, weight=limit_pb2.KeyWeight(key="big", weight=5))
    assert [x.name for x in (await read(A)).limits] == ["acme/api"]
    assert [x.name for x in (await read(scope())).limits] == ["api"]
    assert [(w.key, w.weight) for w in (await read(B)).weights] == [("beta/big", 5)]
    assert list((await read(A)).weights) == []
    assert len((await read(EVERY)).limits) == 3

    err = await refusal(lchange(A, op=Update, limit=concurrency("beta/api")))
    assert err.code == errors.Code.INVALID_ARGUMENT  # not a name of A's
    missing = await refusal(lchange(A, op=Delete, name="gone"))
    assert (missing.code, missing.message) == (errors.Code.NOT_FOUND, "no limit named 'acme/gone'")
    # A's "api" is not B's or the default tenant's.
    await lchange(A, op=Delete, name="api")
    assert [x.name for x in (await read(EVERY)).limits] == ["api", "beta/api"]

    start = (await result_store.pool.fetchval("SELECT max(id) FROM events")) or 0
    await lchange(B, op=Update, limit=concurrency("api"))

    async def logged() -> list[str] | None:
        rows = await result_store.pool.fetch(
            "SELECT tenant FROM events WHERE id > $1 AND type = 'limit.updated'", start
        )
        return [r["tenant"] for r in rows] or None

    assert await wait_until_async(logged, 10, "the limit.updated event") == ["beta"]


# --- failures: dead letters, groups, purge, redrives -------------------------------------------------
async def test_dead_letters_groups_purges_and_redrives_are_the_scopes_tenants(result_store: Any) -> None:
    await tenants_ab(result_store)
    (aid,) = await fail(result_store, tenant="acme", queue="q")
    (bid,) = await fail(result_store, tenant="beta", queue="q")
    f = result_store.failures

    async def letters(where: tenants_pb2.TenantScope, **filter_: Any) -> list[str]:
        req = failures_pb2.DeadLettersRequest(
            request=fs.ListFailuresRequest(filter=fs.FailureFilter(**filter_))
        )
        req.scope.CopyFrom(where)
        return [x.task_id for x in (await f.dead_letters(req)).response.failures]

    async def groups(where: tenants_pb2.TenantScope, **filter_: Any) -> list[str]:
        req = failures_pb2.FailureGroupsRequest(
            request=fs.ListFailureGroupsRequest(filter=fs.FailureFilter(**filter_))
        )
        req.scope.CopyFrom(where)
        return [g.group_id for g in (await f.groups(req)).response.groups]

    assert await letters(A, queue="q") == [aid] and await letters(B, queue="q") == [bid]
    assert await letters(A, task_ids=[bid]) == [] and await letters(scope(), queue="q") == []
    (b_group,) = await groups(B)
    (a_group,) = await groups(A)
    assert a_group != b_group  # the queue in the fingerprint is qualified
    missing_group = "0" * 16
    missing = await refusal(letters(A, group_id=missing_group))
    err = await refusal(letters(A, group_id=b_group))
    assert (err.code, err.message) == (missing.code, missing.message.replace(missing_group, b_group))

    purge = failures_pb2.PurgeDeadLettersRequest(
        request=fs.PurgeDeadLettersRequest(filter=fs.FailureFilter(task_ids=[bid]))
    )
    purge.scope.CopyFrom(A)
    assert (await f.purge(purge)).response.purged == 0
    assert await letters(B, task_ids=[bid]) == [bid]

    create = failures_pb2.CreateRedriveRequest(
        request=fs.RedriveRequest(filter=fs.FailureFilter(task_ids=[bid]), rate=10)
    )
    create.scope.CopyFrom(A)
    refused = await refusal(f.create_redrive(create))
    assert refused.reason == "NOT_DEAD_LETTERS" and bid in refused.message
    create.scope.CopyFrom(B)
    made = (await f.create_redrive(create)).response.redrive
    stored = await result_store.pool.fetchval("SELECT tenant FROM redrives WHERE id = $1", made.id)
    assert stored == "beta"

    async def control(where: tenants_pb2.TenantScope, rid: str) -> Any:
        return await f.control_redrive(
            failures_pb2.RedriveControlRequest(op=failures_pb2.REDRIVE_OP_GET, id=rid, scope=where)
        )

    assert (await control(B, made.id)).redrive.id == made.id
    not_there = await refusal(control(A, MISSING))
    like_missing(await refusal(control(A, made.id)), not_there, made.id)
    pause_missing = await refusal(
        f.control_redrive(
            failures_pb2.RedriveControlRequest(op=failures_pb2.REDRIVE_OP_PAUSE, id=MISSING, scope=A)
        )
    )
    paused = await refusal(
        f.control_redrive(
            failures_pb2.RedriveControlRequest(op=failures_pb2.REDRIVE_OP_PAUSE, id=made.id, scope=A)
        )
    )
    like_missing(paused, pause_missing, made.id)

    async def redrives(where: tenants_pb2.TenantScope) -> list[str]:
        req = failures_pb2.RedriveListRequest(redrives=fs.ListRedrivesRequest(), scope=where)
        return [r.id for r in (await f.list_redrives(req)).redrives.redrives]

    assert await redrives(B) == [made.id] and await redrives(A) == []
    items_missing = await refusal(
        f.list_redrives(
            failures_pb2.RedriveListRequest(items=fs.ListRedriveItemsRequest(id=MISSING), scope=A)
        )
    )
    items = await refusal(
        f.list_redrives(
            failures_pb2.RedriveListRequest(items=fs.ListRedriveItemsRequest(id=made.id), scope=A)
        )
    )
    like_missing(items, items_missing, made.id)


# --- the event log -----------------------------------------------------------------------------------
async def test_events_carry_their_tenant_and_summaries_count_the_scopes(result_store: Any) -> None:
    from taskyard.result_store import event_log
    from taskyard.result_store.reads import event_summary

    start = (await event_log.read(result_store.pool, event_log_pb2.ReadEventsRequest(), page=10)).cursor
    await tenants_ab(result_store)
    a, b = add_task(tenant="acme"), add_task(tenant="beta")
    await insert(result_store, a)
    await insert(result_store, b)

    async def tenants_of_tasks() -> dict[str, str] | None:
        got = await event_log.read(result_store.pool, event_log_pb2.ReadEventsRequest(after=start), page=1000)
        found = {e.task_id: e.tenant for e in got.events if e.type == "task.queued"}
        return found if len(found) == 2 else None

    assert await wait_until_async(tenants_of_tasks, 10, "the tasks' events") == {a.id: "acme", b.id: "beta"}

    async def summary(where: tenants_pb2.TenantScope) -> event_log_pb2.SummarizeEventsReply:
        return await event_summary.summarize(
            result_store.pool,
            event_log_pb2.SummarizeEventsRequest(after=start, max_task_ids=10, max_entered=10, scope=where),
        )

    assert list((await summary(A)).task_ids) == [a.id]
    assert list((await summary(B)).task_ids) == [b.id]
    assert set((await summary(EVERY)).task_ids) == {a.id, b.id}
    assert list((await summary(scope())).task_ids) == []
