"""Pools serve tenants: the dispatcher sends a task only to a pool that serves its
task name and its tenant (a pool that lists none serves every tenant), on the
lanes' path and on the fast path of a submission."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from support.admission import Harness

from taskyard.bus.v1 import leases_pb2, views_pb2
from taskyard.core import contract
from taskyard.core.priority import Priority
from taskyard.scheduler.dispatcher import Dispatcher
from taskyard.scheduler.lanes import Ref
from taskyard.scheduler.pools import Pool
from taskyard.v1 import task_pb2, tenant_service_pb2

QUEUED = task_pb2.TASK_STATE_QUEUED


class _Socket:
    async def asend(self, data: bytes) -> None:
        pass


class _Store:
    """Leases every task asked for, and remembers which pool each went to."""

    def __init__(self) -> None:
        self.leased: dict[str, str] = {}

    async def call_raw(self, method: Any, request: leases_pb2.LeaseTasksRequest, **_: Any) -> bytes:
        assert method is contract.STORE_LEASE
        heads = views_pb2.TaskRecordHeads()
        for lease in request.leases:
            self.leased[lease.task_id] = request.pool_id
            heads.tasks.add(id=lease.task_id, name="add", attempt=1, lease_token=lease.lease_token)
        return heads.SerializeToString()


def _pool(pool_id: str, tenants: frozenset[str] | None) -> Pool:
    return Pool(
        pool_id=pool_id,
        pair_address=f"ipc:///{pool_id}",
        names=frozenset({"add"}),
        capacity=10,
        socket=cast(Any, _Socket()),
        tenants=tenants,
    )


async def _setup(*pools: Pool) -> tuple[Harness, Dispatcher, _Store]:
    h = Harness()
    h.store.tenants = [
        tenant_service_pb2.Tenant(name="quota", quota=tenant_service_pb2.TenantQuota(max_concurrency=5)),
        tenant_service_pb2.Tenant(name="asleep", state=tenant_service_pb2.TENANT_STATE_SUSPENDED),
    ]
    await h.load_async()
    await h.flow.read_tenants()
    registry = cast(Any, type("Registry", (), {})())
    registry.pools = {p.pool_id: p for p in pools}
    store = _Store()
    return h, Dispatcher(h.lanes, registry, cast(Any, store), lease_ms=30_000, flow=h.flow), store


async def _dispatch(d: Dispatcher) -> None:
    d.dispatch_once()
    while d._inflight:
        await asyncio.gather(*d._inflight)


def test_a_pool_serving_some_tenants_is_sent_only_their_tasks() -> None:
    async def run() -> None:
        only_a = _pool("only-a", frozenset({"a"}))
        only_default = _pool("only-default", frozenset({""}))
        h, d, store = await _setup(only_a, only_default)
        for task_id, tenant in (("a0", "a"), ("b0", "b"), ("d0", "")):
            h.lanes.push(Ref(task_id, "add", Priority.NORMAL, "default", "", (), tenant))
        await _dispatch(d)
        assert store.leased == {"a0": "only-a", "d0": "only-default"}
        assert "b0" in h.lanes  # no pool serves b: it waits
        every = _pool("every", None)
        d.pools.pools["every"] = every
        await _dispatch(d)
        assert store.leased["b0"] == "every"

    asyncio.run(run())


def test_the_fast_path_leases_only_to_a_pool_serving_the_tenant_and_skips_quotas_and_suspensions() -> None:
    async def run() -> None:
        _h, d, _store = await _setup(_pool("only-a", frozenset({"a"})))
        records = [
            views_pb2.TaskRecordHead(id=task_id, name="add", state=QUEUED, tenant=tenant)
            for task_id, tenant in (("a0", "a"), ("b0", "b"), ("q0", "quota"), ("s0", "asleep"), ("d0", ""))
        ]
        pool, leases = d.reserve_fast_path(records)
        assert pool is not None and [lease.task_id for lease in leases] == ["a0"]
        every = _pool("every", None)
        d.pools.pools = {"every": every}
        pool, leases = d.reserve_fast_path(records)
        # A quota's task and a suspended tenant's go through the lanes.
        assert pool is every and [lease.task_id for lease in leases] == ["a0", "b0", "d0"]

    asyncio.run(run())


def test_serves_needs_the_name_and_the_tenant() -> None:
    pool = _pool("p", frozenset({"a", ""}))
    assert pool.serves("add", "a") and pool.serves("add", "")
    assert not pool.serves("add", "b") and not pool.serves("other", "a")
    assert _pool("q", None).serves("add", "anyone")
