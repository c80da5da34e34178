"""Tenants in the result-store: their rows, version and changes (STORE_TENANTS,
STORE_TENANT_CHANGE) with their tenant.* events, and the tenant of what is
inserted: the record's, a child's parent's, a schedule run's schedule's; an
insert for a suspended or unknown tenant refused inside its transaction; and
transactional enqueue (taskyard_submit) for a tenant.

A real store on its own database (``result_store``, called in process), so the
columns, the durable event log and the statements run can be read.
"""

from __future__ import annotations

import json
import time
from typing import Any

import asyncpg
import pytest
from support.records import task as add_task
from support.waiting import wait_until_async

from taskyard.bus.v1 import event_log_pb2, tasks_pb2, tenants_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import contract, errors, rpc, tenants
from taskyard.result_store import event_log
from taskyard.result_store import tenants as store_tenants
from taskyard.v1 import event_service_pb2 as pub
from taskyard.v1 import limit_pb2, task_pb2
from taskyard.v1 import tenant_service_pb2 as tenant_pub

pytestmark = pytest.mark.asyncio
Op = tenants_pb2.ChangeTenantRequest.Op
ACTIVE = tenant_pub.TENANT_STATE_ACTIVE
SUSPENDED = tenant_pub.TENANT_STATE_SUSPENDED
CANCELLED = task_pb2.TASK_STATE_CANCELLED


def tenant(name: str, **kw: Any) -> tenant_pub.Tenant:
    return tenant_pub.Tenant(name=name, **kw)


async def change(store: Any, op: Any, t: tenant_pub.Tenant, **kw: Any) -> tenants_pb2.ChangeTenantReply:
    reply: tenants_pb2.ChangeTenantReply = await store.tenants.change(
        tenants_pb2.ChangeTenantRequest(op=op, tenant=t, caller="ops", **kw)
    )
    return reply


async def read(store: Any, **kw: Any) -> tenants_pb2.ReadTenantsReply:
    reply: tenants_pb2.ReadTenantsReply = await store.tenants.read(tenants_pb2.ReadTenantsRequest(**kw))
    return reply


async def refused(call: Any) -> errors.TaskyardError:
    with pytest.raises(errors.TaskyardError) as caught:
        await call
    return caught.value


async def events_after(store: Any, cursor: str, prefix: str, count: int) -> list[pub.Event]:
    async def logged() -> list[pub.Event] | None:
        got = await event_log.read(store.pool, event_log_pb2.ReadEventsRequest(after=cursor), page=1000)
        found = [e for e in got.events if e.type.startswith(prefix)]
        return found if len(found) >= count else None

    return await wait_until_async(logged, 10, f"{count} {prefix}* events below the watermark")


async def cursor_now(store: Any) -> str:
    return (await event_log.read(store.pool, event_log_pb2.ReadEventsRequest(), page=10)).cursor


# --- tenants: rows, version, events ------------------------------------------------------------------
async def test_tenants_are_created_read_updated_suspended_and_resumed(result_store: Any) -> None:
    empty = await read(result_store)
    assert (empty.version, list(empty.tenants)) == (0, [])
    assert (await read(result_store, known_version=0)).version == 0
    start = await cursor_now(result_store)

    quota = tenant_pub.TenantQuota(max_concurrency=5, rate=limit_pb2.RateLimit(units=10, burst=2))
    quota.rate.period.FromSeconds(1)
    created = await change(result_store, Op.OP_CREATE, tenant("acme", quota=quota, description="Acme's team"))
    assert created.version == 1
    got = created.tenant
    assert (got.name, got.state, got.weight, got.description) == ("acme", ACTIVE, 1, "Acme's team")
    assert got.quota == quota and got.created_at.ToMicroseconds() > 0 and not got.HasField("suspended_at")
    await change(result_store, Op.OP_CREATE, tenant("beta", weight=3))

    whole = await read(result_store)
    assert whole.version == 2 and not whole.unchanged
    assert [(t.name, t.weight) for t in whole.tenants] == [("acme", 1), ("beta", 3)]
    assert await read(result_store, known_version=2) == tenants_pb2.ReadTenantsReply(
        version=2, unchanged=True
    )
    assert [t.name for t in (await read(result_store, names=["beta", "zeta"])).tenants] == ["beta"]
    assert [t.name for t in (await read(result_store, after="acme", limit=1)).tenants] == ["beta"]
    assert [t.name for t in (await read(result_store, limit=1)).tenants] == ["acme"]

    updated = await change(result_store, Op.OP_UPDATE, tenant("acme", weight=7))
    assert (updated.version, updated.tenant.weight, updated.tenant.quota) == (3, 7, tenant_pub.TenantQuota())
    assert updated.tenant.created_at == got.created_at

    suspended = await change(result_store, Op.OP_SUSPEND, tenant("acme"), reason="unpaid")
    assert (suspended.version, suspended.tenant.state) == (4, SUSPENDED)
    assert suspended.tenant.suspended_at.ToMicroseconds() > 0
    # Suspending a suspended tenant changes nothing: no version, no event.
    again = await change(result_store, Op.OP_SUSPEND, tenant("acme"))
    assert (again.version, again.tenant.state) == (4, SUSPENDED)
    resumed = await change(result_store, Op.OP_RESUME, tenant("acme"))
    assert (resumed.version, resumed.tenant.state) == (5, ACTIVE)
    assert not resumed.tenant.HasField("suspended_at")

    logged = await events_after(result_store, start, "tenant.", 5)
    assert [(e.type, e.kind, e.tenant, dict(e.attributes)) for e in logged] == [
        ("tenant.created", pub.EVENT_KIND_TENANT, "acme", {"tenant": "acme", "by": "ops"}),
        ("tenant.created", pub.EVENT_KIND_TENANT, "beta", {"tenant": "beta", "by": "ops"}),
        ("tenant.updated", pub.EVENT_KIND_TENANT, "acme", {"tenant": "acme", "by": "ops"}),
        (
            "tenant.suspended",
            pub.EVENT_KIND_TENANT,
            "acme",
            {"tenant": "acme", "by": "ops", "reason": "unpaid"},
        ),
        ("tenant.resumed", pub.EVENT_KIND_TENANT, "acme", {"tenant": "acme", "by": "ops"}),
    ]


async def test_refused_tenant_changes_store_nothing(result_store: Any) -> None:
    await change(result_store, Op.OP_CREATE, tenant("acme"))

    err = await refused(change(result_store, Op.OP_CREATE, tenant("acme", weight=2)))
    assert (err.code, err.reason, err.message) == (
        errors.Code.ALREADY_EXISTS,
        "TENANT_EXISTS",
        "a tenant named 'acme' already exists",
    )
    for op in (Op.OP_UPDATE, Op.OP_SUSPEND, Op.OP_RESUME):
        err = await refused(change(result_store, op, tenant("nobody")))
        assert (err.code, err.reason, err.message) == (
            errors.Code.NOT_FOUND,
            "TENANT_NOT_FOUND",
            "no tenant named 'nobody'",
        )

    bad = tenant("Acme_Corp", weight=1001, description="x" * 1025)
    bad.quota.max_concurrency = 1_000_001
    bad.quota.rate.units = 0
    err = await refused(change(result_store, Op.OP_CREATE, bad))
    assert err.code == errors.Code.INVALID_ARGUMENT
    assert {v.field for v in err.violations} == {
        "tenant.name",
        "tenant.weight",
        "tenant.description",
        "tenant.quota.max_concurrency",
        "tenant.quota.rate.units",
        "tenant.quota.rate.period",
    }
    err = await refused(change(result_store, Op.OP_CREATE, tenant("a" * 65)))
    assert [(v.field, v.description) for v in err.violations] == [
        ("tenant.name", "must be at most 64 characters, got 65")
    ]
    assert err.reason == "INVALID_TENANT"
    err = await refused(change(result_store, Op.OP_SUSPEND, tenant("")))
    assert [v.field for v in err.violations] == ["tenant.name"]  # the default tenant is never suspended
    err = await refused(change(result_store, 0, tenant("acme")))
    assert [v.field for v in err.violations] == ["op"]

    whole = await read(result_store)
    assert whole.version == 1 and [(t.name, t.weight) for t in whole.tenants] == [("acme", 1)]


async def test_at_most_ten_thousand_tenants(result_store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The cap counted under the version's lock; a small one stands for 10,000.
    monkeypatch.setattr(store_tenants, "MAX_TENANTS", 2)
    await change(result_store, Op.OP_CREATE, tenant("a"))
    await change(result_store, Op.OP_CREATE, tenant("b"))
    err = await refused(change(result_store, Op.OP_CREATE, tenant("c")))
    assert (err.code, err.reason) == (errors.Code.RESOURCE_EXHAUSTED, "TOO_MANY_TENANTS")
    assert store_tenants.too_many().message == "at most 2 tenants are kept; this suite has that many already"
    assert [t.name for t in (await read(result_store)).tenants] == ["a", "b"]


async def test_tenants_over_the_bus_once_per_request(store_settings: Any) -> None:
    """The routes as a gateway reaches them; a change sent twice under one id is carried out once."""
    from integration.test_store_contract import real_store

    async with real_store(store_settings) as requester:
        req = tenants_pb2.ChangeTenantRequest(op=Op.OP_CREATE, tenant=tenant("acme"), caller="ops")
        created = await requester.call(contract.STORE_TENANT_CHANGE, req)
        assert created.version == 1
        got = await requester.call(contract.STORE_TENANTS, tenants_pb2.ReadTenantsRequest(names=["acme"]))
        assert [t.name for t in got.tenants] == ["acme"] and got.version == 1
        assert isinstance(requester, rpc.Requester)


# --- inserts: a task's tenant ------------------------------------------------------------------------
def scope(tenant_name: str = "", *, everyone: bool = False) -> tenants_pb2.TenantScope:
    return tenants_pb2.TenantScope(all=everyone, tenant=tenant_name)


EVERY = scope(everyone=True)


async def insert(store: Any, *records: tr.TaskRecord) -> tasks_pb2.InsertTasksReply:
    reply: tasks_pb2.InsertTasksReply = await store.insert(tasks_pb2.InsertTasksRequest(tasks=records))
    return reply


async def get(store: Any, task_id: str, where: tenants_pb2.TenantScope = EVERY) -> tr.TaskRecord | None:
    got = await store.get(tasks_pb2.GetTasksRequest(ids=[task_id], scope=where))
    return got.tasks[0] if got.tasks else None


async def stored(store: Any, task_id: str) -> asyncpg.Record:
    row = await store.pool.fetchrow(
        "SELECT tenant, queue, request_id, idempotency_key, limit_names FROM tasks WHERE id = $1", task_id
    )
    assert row is not None
    return row


async def two_tenants(store: Any) -> None:
    await change(store, Op.OP_CREATE, tenant("acme"))
    await change(store, Op.OP_CREATE, tenant("beta"))


async def test_a_tenants_task_is_stored_with_its_names_qualified_and_read_back_as_given(
    result_store: Any,
) -> None:
    await two_tenants(result_store)
    flow = tr.FlowControl(uses=[limit_pb2.LimitUse(limit="api", units=1)])
    hour = int(time.time() * 1e6) + 3_600_000_000
    keyed: dict[str, Any] = {"request_id": "r1", "idempotency_key": "k1", "idempotency_expires_at_us": hour}
    a = add_task(tenant="acme", queue="reports", flow=flow, **keyed)
    b = add_task(tenant="beta", queue="beta/reports", **keyed)
    d = add_task(queue="reports", request_id="r1")
    replies = [await insert(result_store, r) for r in (a, b, d)]
    # The same request id and key in three tenants: three tasks.
    assert [r.tasks[0].created for r in replies] == [True, True, True]
    assert [r.tasks[0].queue for r in replies] == ["acme/reports", "beta/reports", "reports"]

    row = await stored(result_store, a.id)
    assert (row["tenant"], row["queue"], row["request_id"], row["idempotency_key"], row["limit_names"]) == (
        "acme",
        "acme/reports",
        "acme/r1",
        "acme/k1",
        ["acme/api"],
    )
    rec = await get(result_store, a.id)
    assert rec is not None
    assert (rec.tenant, rec.queue, rec.request_id, rec.idempotency_key) == (
        "acme",
        "acme/reports",
        "r1",
        "k1",
    )
    assert [u.limit for u in rec.flow.uses] == ["acme/api"]
    assert (await stored(result_store, d.id))["tenant"] == ""

    # The limits a task's name declares are its pool's, every tenant's: kept bare. Told
    # by where they came from (core/limits.add_declared), not by their name: the
    # tenant's own limit of such a name is its own.
    declared = tr.FlowControl(
        uses=[
            limit_pb2.LimitUse(limit="add.rate", units=1),
            limit_pb2.LimitUse(limit="acme/api", units=1),
            limit_pb2.LimitUse(limit="add.concurrency", units=1),
        ],
        declared=["add.rate"],
    )
    mixed = add_task(tenant="acme", flow=declared)
    await insert(result_store, mixed)
    names = ["add.rate", "acme/api", "acme/add.concurrency"]
    assert (await stored(result_store, mixed.id))["limit_names"] == names

    # Another tenant's queue or limit is no name of this tenant's.
    err = await refused(insert(result_store, add_task(tenant="acme", queue="beta/reports")))
    assert err.code == errors.Code.INVALID_ARGUMENT and [v.field for v in err.violations] == [
        "tasks[0].queue"
    ]
    err = await refused(insert(result_store, add_task(queue="beta/reports")))
    assert [v.field for v in err.violations] == ["tasks[0].queue"]
    err = await refused(insert(result_store, add_task(tenant="Not_A_Name")))
    assert (err.reason, [v.field for v in err.violations]) == ("INVALID_TENANT", ["tasks[0].tenant"])


async def test_a_child_without_a_tenant_is_its_parents_tenants(result_store: Any) -> None:
    await two_tenants(result_store)
    parent = add_task(tenant="acme")
    await insert(result_store, parent)
    child = add_task(parent_id=parent.id, queue="exports")
    flow = tr.FlowControl(uses=[limit_pb2.LimitUse(limit="api", units=1)])
    bare = add_task(parent_id=parent.id, flow=flow)  # a pool's child: no tenant, bare names
    reply = await insert(result_store, child, bare)
    assert [t.queue for t in reply.tasks] == ["acme/exports", "acme/default"]
    assert [(await stored(result_store, t.id))["tenant"] for t in (child, bare)] == ["acme", "acme"]
    assert (await stored(result_store, bare.id))["limit_names"] == ["acme/api"]
    # A default-tenant parent's child stays the default tenant's, with its names bare.
    top = add_task()
    await insert(result_store, top)
    kid = add_task(parent_id=top.id)
    assert (await insert(result_store, kid)).tasks[0].queue == "default"
    assert (await stored(result_store, kid.id))["tenant"] == ""
    # Parent and child in one request.
    mother = add_task(tenant="beta")
    daughter = add_task(parent_id=mother.id)
    await insert(result_store, mother, daughter)
    assert (await stored(result_store, daughter.id))["tenant"] == "beta"


async def test_an_insert_for_a_suspended_or_unknown_tenant_is_refused_and_loses_no_other(
    result_store: Any,
) -> None:
    import asyncio

    await two_tenants(result_store)
    await change(result_store, Op.OP_SUSPEND, tenant("beta"))
    good = [add_task(tenant="acme"), add_task(), add_task(tenant="acme")]
    bad = [add_task(tenant="beta"), add_task(tenant="ghost")]
    # In one drain or not, each request stands or falls alone.
    results = await asyncio.gather(*(insert(result_store, r) for r in good + bad), return_exceptions=True)
    assert all(isinstance(r, tasks_pb2.InsertTasksReply) and r.tasks[0].created for r in results[:3])
    suspended, unknown = results[3], results[4]
    assert isinstance(suspended, errors.TaskyardError) and isinstance(unknown, errors.TaskyardError)
    assert (suspended.code, suspended.reason, suspended.message) == (
        errors.Code.FAILED_PRECONDITION,
        "TENANT_SUSPENDED",
        tenants.suspended_message("beta"),
    )
    assert (unknown.code, unknown.reason) == (errors.Code.FAILED_PRECONDITION, "TENANT_UNKNOWN")
    for r in good:
        assert await get(result_store, r.id) is not None
    for r in bad:
        assert await get(result_store, r.id) is None
    # Resumed, it takes tasks again; its tasks stayed.
    await change(result_store, Op.OP_RESUME, tenant("beta"))
    assert (await insert(result_store, bad[0])).tasks[0].created


async def test_the_default_tenants_inserts_read_no_tenant(result_store: Any) -> None:
    await change(result_store, Op.OP_CREATE, tenant("acme"))
    await insert(result_store, add_task(), add_task(tenant="acme"))  # names declared, plans made
    before = result_store.stats.statements
    await insert(result_store, add_task(), add_task())
    assert result_store.stats.statements - before == 1  # the insert alone
    before = result_store.stats.statements
    await insert(result_store, add_task(tenant="acme"), add_task(tenant="acme"))
    assert result_store.stats.statements - before == 2  # and one lookup of the tenants


# --- scopes: another tenant's rows answer as missing ones ---------------------------------------------
async def test_get_list_and_cancel_reach_the_scopes_tenant_only(result_store: Any) -> None:
    await two_tenants(result_store)
    a = add_task(tenant="acme", queue="q")
    b = add_task(tenant="beta", queue="q")
    d = add_task(queue="q")
    for r in (a, b, d):
        await insert(result_store, r)
    A, B, D = scope("acme"), scope("beta"), scope()

    assert (await get(result_store, a.id, A)) is not None
    assert (await get(result_store, a.id, B)) is None
    assert (await get(result_store, a.id, D)) is None  # an unset scope: the default tenant's only
    assert (await get(result_store, d.id, D)) is not None and (await get(result_store, d.id, A)) is None
    assert (await get(result_store, b.id, EVERY)) is not None

    async def listed(where: tenants_pb2.TenantScope, **kw: Any) -> list[str]:
        got = await result_store.list(tasks_pb2.ListTasksRequest(scope=where, **kw))
        return [t.id for t in got.tasks]

    assert await listed(A) == [a.id]
    assert await listed(B, queue="beta/q") == [b.id]
    assert await listed(B, queue="acme/q") == []
    assert await listed(D) == [d.id]
    assert set(await listed(EVERY)) == {a.id, b.id, d.id}
    # A page token from A's listing lists B's rows only for B.
    first = await result_store.list(tasks_pb2.ListTasksRequest(scope=EVERY, limit=1))
    rest = await result_store.list(tasks_pb2.ListTasksRequest(scope=A, cursor=first.next_cursor))
    assert {t.tenant for t in rest.tasks} <= {"acme"}

    missing = "01890000-0000-7000-8000-000000000000"
    mine = await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[b.id, missing], scope=A))
    assert [(o.not_found, o.cancelled) for o in mine.outcomes] == [(True, False), (True, False)]
    assert list(mine.tasks) == []
    still = await get(result_store, b.id)
    assert still is not None and still.state != CANCELLED
    theirs = await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[b.id], scope=B))
    assert theirs.outcomes[0].cancelled


async def test_a_cached_record_of_another_tenant_is_read_as_a_miss(result_store: Any) -> None:
    await two_tenants(result_store)
    b = add_task(tenant="beta")
    await insert(result_store, b)
    await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[b.id], scope=scope("beta")))
    assert (await get(result_store, b.id, scope("beta"))) is not None  # final: cached
    missing = "01890000-0000-7000-8000-000000000000"
    before = result_store.stats.statements
    assert (await get(result_store, b.id, scope("acme"))) is None
    other = result_store.stats.statements - before
    before = result_store.stats.statements
    assert (await get(result_store, missing, scope("acme"))) is None
    assert other == result_store.stats.statements - before == 1


# --- transactional enqueue ------------------------------------------------------------------------
async def test_taskyard_submit_for_a_tenant(result_store: Any, database_url: str) -> None:
    await two_tenants(result_store)
    await change(result_store, Op.OP_SUSPEND, tenant("beta"))
    conn = await asyncpg.connect(database_url)
    try:
        one = await conn.fetchval(
            "SELECT taskyard_submit('add', '[1]', '{}', '{\"queue\": \"q\", \"request_id\": \"r\"}', 'acme')"
        )
        again = await conn.fetchval(
            "SELECT taskyard_submit('add', '[1]', '{}', '{\"queue\": \"q\", \"request_id\": \"r\"}', 'acme')"
        )
        default = await conn.fetchval("SELECT taskyard_submit('add', '[1]', '{}', '{\"request_id\": \"r\"}')")
        many = await conn.fetchval(
            "SELECT taskyard_submit_many($1::jsonb, 'acme')", json.dumps([{"name": "add"}, {"name": "add"}])
        )
        refusals = []
        for call in (
            "SELECT taskyard_submit('add', '[]', '{}', '{}', 'beta')",
            "SELECT taskyard_submit('add', '[]', '{}', '{}', 'ghost')",
            "SELECT taskyard_submit_many('[{\"name\": \"add\"}]', 'Bad_Name')",
        ):
            with pytest.raises(asyncpg.InvalidParameterValueError) as caught:
                await conn.fetchval(call)
            refusals.append(caught.value.detail)
        rows = {
            r["id"]: r
            for r in await conn.fetch("SELECT id, tenant, queue, request_id FROM tasks ORDER BY created_at")
        }
        events = await conn.fetch("SELECT DISTINCT tenant FROM events WHERE task_id = ANY($1::uuid[])", many)
    finally:
        await conn.close()
    assert one == again and default != one
    assert (rows[one]["tenant"], rows[one]["queue"], rows[one]["request_id"]) == ("acme", "acme/q", "acme/r")
    assert (rows[default]["tenant"], rows[default]["request_id"]) == ("", "r")
    assert [rows[i]["queue"] for i in many] == ["acme/default", "acme/default"]
    assert [e["tenant"] for e in events] == ["acme"]
    assert refusals == ["TENANT_SUSPENDED", "TENANT_UNKNOWN", "INVALID_TENANT"]
    rec = await get(result_store, str(one))
    assert rec is not None and (rec.tenant, rec.request_id) == ("acme", "r")


async def test_a_dependency_or_parent_of_another_tenant_is_no_task(result_store: Any) -> None:
    await two_tenants(result_store)
    theirs = add_task(tenant="beta")
    await insert(result_store, theirs)
    missing = "01890000-0000-7000-8000-000000000000"

    async def refusal_for(ref: str) -> errors.TaskyardError:
        return await refused(
            insert(result_store, add_task(tenant="acme", depends_on=[ref], state=task_pb2.TASK_STATE_PENDING))
        )

    other, none = await refusal_for(theirs.id), await refusal_for(missing)
    assert (other.code, [v.description for v in other.violations]) == (
        none.code,
        [v.description.replace(missing, theirs.id) for v in none.violations],
    )
    mine = add_task(tenant="beta", depends_on=[theirs.id], state=task_pb2.TASK_STATE_PENDING)
    assert (await insert(result_store, mine)).tasks[0].created

    # A parent of another tenant's (or of the default tenant's) is no task either, alone or
    # in a batch: a record that names its tenant keeps it, it does not become the parent's.
    top = add_task()
    await insert(result_store, top)

    async def orphan(parent: str, *others: tr.TaskRecord) -> errors.TaskyardError:
        return await refused(insert(result_store, *others, add_task(tenant="acme", parent_id=parent)))

    for batch in ((), (add_task(tenant="acme"),)):
        gone = await orphan(missing, *batch)
        assert "no task" in gone.message + "".join(v.description for v in gone.violations)
        for parent in (theirs.id, top.id):
            err = await orphan(parent, *batch)
            assert (err.code, err.reason, err.message) == (
                gone.code,
                gone.reason,
                gone.message.replace(missing, parent),
            )
            assert [(v.field, v.description) for v in err.violations] == [
                (v.field, v.description.replace(missing, parent)) for v in gone.violations
            ]
    child = add_task(tenant="beta", parent_id=theirs.id)
    assert (await insert(result_store, child)).tasks[0].created
    assert (await stored(result_store, child.id))["tenant"] == "beta"


async def test_the_documented_tenant_call_as_written(result_store: Any, database_url: str) -> None:
    """docs/transactional-enqueue.md, "For a tenant": its example, as written."""
    import pathlib
    import re

    doc = pathlib.Path(__file__).parents[2] / "docs" / "transactional-enqueue.md"
    section = doc.read_text().split("## For a tenant", 1)[1].split("\n## ", 1)[0]
    (example,) = re.findall(r"^```sql\n(SELECT .*?)^```$", section, re.MULTILINE | re.DOTALL)
    await change(result_store, Op.OP_CREATE, tenant("acme"))
    conn = await asyncpg.connect(database_url)
    try:
        tid = await conn.fetchval(example)
        row = await conn.fetchrow("SELECT tenant, queue FROM tasks WHERE id = $1", tid)
    finally:
        await conn.close()
    assert row is not None and (row["tenant"], row["queue"]) == ("acme", "acme/reports")


async def test_a_role_granted_the_default_tenants_calls_is_granted_the_tenants_ones(
    database_url: str,
) -> None:
    """Migration 0025's grants, run again on a role granted the calls of before tenants."""
    from taskyard.result_store.migrate import migration_files

    (sql,) = [text for version, text in migration_files() if version == "0025_tenants"]
    privileges = sql[sql.index("DO $privileges$") :]
    conn = await asyncpg.connect(database_url)
    tx = conn.transaction()
    await tx.start()
    try:
        await conn.execute("CREATE ROLE tenants_app_role")
        await conn.execute(
            "GRANT EXECUTE ON FUNCTION taskyard_submit(text, jsonb, jsonb, jsonb), "
            "taskyard_submit_many(jsonb) TO tenants_app_role"
        )
        before = await conn.fetchval(
            "SELECT has_function_privilege('tenants_app_role', "
            "'taskyard_submit(text, jsonb, jsonb, jsonb, text)', 'EXECUTE')"
        )
        await conn.execute(privileges)
        after = [
            await conn.fetchval("SELECT has_function_privilege('tenants_app_role', $1, 'EXECUTE')", fn)
            for fn in (
                "taskyard_submit(text, jsonb, jsonb, jsonb, text)",
                "taskyard_submit_many(jsonb, text)",
            )
        ]
        public = await conn.fetchval(
            "SELECT has_function_privilege('public', "
            "'taskyard_submit(text, jsonb, jsonb, jsonb, text)', 'EXECUTE')"
        )
    finally:
        await tx.rollback()
        await conn.close()
    assert (before, after, public) == (False, [True, True], False)


@pytest.mark.parametrize(
    ("query", "index", "values"),
    [
        ("list_tenant_tasks", "tasks_tenant_listing_idx", {"tenant": "acme"}),
        ("list_tasks", "tasks_listing_idx", {"all_tenants": False}),
        ("list_tasks", "tasks_listing_idx", {"all_tenants": True}),
    ],
)
async def test_a_listing_reads_its_index_in_a_generic_plan_too(
    database_url: str, query: str, index: str, values: dict[str, Any]
) -> None:
    """ListTasks of one tenant reads that tenant's index, whatever plan the session keeps
    (a generic one cannot prove a partial index's predicate from a parameter)."""
    from taskyard.result_store.queries import STATEMENTS

    statement = STATEMENTS[query]
    args = {
        "states": None,
        "name": "",
        "queue": "",
        "priority": 0,
        "after_us": None,
        "after_id": None,
        "limit": 10,
        **values,
    }
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("SET plan_cache_mode = force_generic_plan")
        await conn.execute("SET enable_seqscan = off")  # an empty table: whether the index can serve
        await conn.execute(f"PREPARE listing AS {statement.sql}")
        literals = ", ".join(_literal(v) for v in statement.args(args))
        plan = await conn.fetchval(f"EXPLAIN (FORMAT JSON) EXECUTE listing({literals})")
    finally:
        await conn.close()
    names = [n["Index Name"] for n in _nodes(json.loads(plan)[0]["Plan"]) if "Index Name" in n]
    assert names == [index]


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def _nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [node, *(n for child in node.get("Plans", []) for n in _nodes(child))]
