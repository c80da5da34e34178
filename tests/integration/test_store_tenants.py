"""Tenants in the result-store: their rows, version and changes (STORE_TENANTS,
STORE_TENANT_CHANGE) with their tenant.* events, and the tenant of what is
inserted: the record's, a child's parent's, a schedule run's schedule's; an
insert for a suspended or unknown tenant refused inside its transaction; and
transactional enqueue (taskyard_submit) for a tenant.

A real store on its own database (``result_store``, called in process), so the
columns, the durable event log and the statements run can be read.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.waiting import wait_until_async

from taskyard.bus.v1 import event_log_pb2, tenants_pb2
from taskyard.core import contract, errors, rpc
from taskyard.result_store import event_log
from taskyard.result_store import tenants as store_tenants
from taskyard.v1 import event_service_pb2 as pub
from taskyard.v1 import limit_pb2
from taskyard.v1 import tenant_service_pb2 as tenant_pub

pytestmark = pytest.mark.asyncio
Op = tenants_pb2.ChangeTenantRequest.Op
ACTIVE = tenant_pub.TENANT_STATE_ACTIVE
SUSPENDED = tenant_pub.TENANT_STATE_SUSPENDED


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
