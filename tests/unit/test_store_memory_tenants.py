"""The in-memory store's tenants (testing/tenants.py) answer as the store's do
(tests/integration/test_store_tenants.py): what a scheduler or gateway tested
against the fake reads is what it reads from the store."""

from __future__ import annotations

import pytest

from taskyard.bus.v1 import tenants_pb2
from taskyard.core import clock, contract, errors
from taskyard.result_store.testing.memory import MemoryStore
from taskyard.v1 import tenant_service_pb2 as pub

pytestmark = pytest.mark.asyncio
Op = tenants_pb2.ChangeTenantRequest.Op


async def test_tenants_in_memory() -> None:
    store = MemoryStore(clock=clock.ManualClock())

    async def change(op: int, name: str, **kw: object) -> tenants_pb2.ChangeTenantReply:
        req = tenants_pb2.ChangeTenantRequest(op=op, tenant=pub.Tenant(name=name, **kw))  # type: ignore[arg-type]
        return await store.call(contract.STORE_TENANT_CHANGE, req)

    async def read(**kw: object) -> tenants_pb2.ReadTenantsReply:
        return await store.call(contract.STORE_TENANTS, tenants_pb2.ReadTenantsRequest(**kw))  # type: ignore[arg-type]

    assert (await change(Op.OP_CREATE, "acme", weight=3)).version == 1
    await change(Op.OP_CREATE, "beta")
    assert [(t.name, t.weight) for t in (await read()).tenants] == [("acme", 3), ("beta", 1)]
    assert (await read(known_version=2)).unchanged
    suspended = await change(Op.OP_SUSPEND, "beta")
    assert (suspended.version, suspended.tenant.state) == (3, pub.TENANT_STATE_SUSPENDED)
    assert (await change(Op.OP_SUSPEND, "beta")).version == 3  # already so: no change
    assert [t.name for t in (await read(after="acme", limit=1)).tenants] == ["beta"]
    with pytest.raises(errors.TaskyardError) as caught:
        await change(Op.OP_CREATE, "acme")
    assert (caught.value.code, caught.value.reason) == (errors.Code.ALREADY_EXISTS, "TENANT_EXISTS")
    with pytest.raises(errors.TaskyardError) as caught:
        await change(Op.OP_RESUME, "nobody")
    assert (caught.value.code, caught.value.reason) == (errors.Code.NOT_FOUND, "TENANT_NOT_FOUND")
    with pytest.raises(errors.TaskyardError) as caught:
        await change(Op.OP_CREATE, "Bad_Name")
    assert caught.value.code == errors.Code.INVALID_ARGUMENT
