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
from taskyard.scheduler.headroom import WINDOW, Headroom
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
        # A quota's task while its usage is counted, and a suspended tenant's, go through the lanes.
        assert pool is every and [lease.task_id for lease in leases] == ["a0", "b0", "d0"]

    asyncio.run(run())


def test_serves_needs_the_name_and_the_tenant() -> None:
    pool = _pool("p", frozenset({"a", ""}))
    assert pool.serves("add", "a") and pool.serves("add", "")
    assert not pool.serves("add", "b") and not pool.serves("other", "a")
    assert _pool("q", None).serves("add", "anyone")


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_while_tenants_contend_the_lanes_leave_slots_held_that_a_tenant_with_nothing_waiting_takes() -> None:
    async def run() -> None:
        pool = _pool("every", None)  # 10 slots: 1 held while tenants contend
        h, d, store = await _setup(pool)
        clock = _Clock()
        d.headroom = Headroom(waiting=h.lanes.waiting_tenants, clock=clock)
        for i in range(40):  # more than a few: a's backlog takes no held slot
            h.lanes.push(Ref(f"a{i}", "add", Priority.NORMAL, "default", "", (), "a"))

        d.headroom.submitted("a")  # one tenant: every slot goes to its lanes
        await _dispatch(d)
        assert len(store.leased) == 10
        for task_id in list(pool.inflight)[:3]:
            del pool.inflight[task_id]  # three finish

        d.headroom.submitted("b")  # another tenant submits: one slot is held
        await _dispatch(d)
        assert len(pool.inflight) == 9 and pool.free == 1
        assert d.fast_path_open()

        def head(task_id: str, tenant: str, priority: Any = 0) -> views_pb2.TaskRecordHead:
            return views_pb2.TaskRecordHead(
                id=task_id, name="add", state=QUEUED, tenant=tenant, priority=priority
            )

        # a's next task waits behind a's own: the lanes serve it, not the held slot.
        assert d.reserve_fast_path([head("a-late", "a")]) == (None, [])
        # b has nothing waiting: its task is leased at its insert, in the held slot.
        got, leases = d.reserve_fast_path([head("b0", "b")])
        assert got is pool and [lease.task_id for lease in leases] == ["b0"]
        # Nothing more urgent may be overtaken: a LOW task of c waits behind a's NORMAL ones.
        pool.inflight.pop("b0")
        low = task_pb2.PRIORITY_LOW
        assert d.reserve_fast_path([head("c-low", "c", low)]) == (None, [])

        # The contention ends with the window: the held slot goes back to the lanes.
        clock.now += WINDOW
        assert d.headroom.ends_at() is None
        await _dispatch(d)
        assert len(pool.inflight) == 10

    asyncio.run(run())


def test_a_batch_larger_than_the_held_slots_leaves_them_to_the_next_submit() -> None:
    async def run() -> None:
        pool = _pool("every", None)  # 10 slots: 1 held while tenants contend
        h, d, _store = await _setup(pool)
        d.headroom = Headroom(waiting=h.lanes.waiting_tenants, clock=_Clock())
        d.headroom.submitted("a")
        d.headroom.submitted("b")
        batch = [
            views_pb2.TaskRecordHead(id=f"a{i}", name="add", state=QUEUED, tenant="a") for i in range(20)
        ]
        got, leases = d.reserve_fast_path(batch)  # the lanes are empty: a's batch is next
        assert got is pool and len(leases) == 9 and pool.free == 1
        one = views_pb2.TaskRecordHead(id="b0", name="add", state=QUEUED, tenant="b")
        got, leases = d.reserve_fast_path([one])
        assert got is pool and [lease.task_id for lease in leases] == ["b0"]

    asyncio.run(run())


def test_a_quota_tenants_task_is_leased_at_insert_while_its_quota_admits_it() -> None:
    async def run() -> None:
        pool = _pool("every", None)  # 10 slots; tenant "quota": 5 at once
        h, d, _store = await _setup(pool)
        await h.flow.resync()  # the quota's usage counted: its tasks may skip the lanes
        records = [
            views_pb2.TaskRecordHead(id=f"q{i}", name="add", state=QUEUED, tenant="quota") for i in range(7)
        ]
        got, leases = d.reserve_fast_path(records)
        assert got is pool and [lease.task_id for lease in leases] == ["q0", "q1", "q2", "q3", "q4"]
        # The other two go through the lanes, where they wait at the quota's gate.
        assert h.flow.admission.room(("tenant.concurrency", "quota")) == 0
        h.flow.release("q0", leases[0].lease_token)  # q0's attempt ended
        again = views_pb2.TaskRecordHead(id="q7", name="add", state=QUEUED, tenant="quota")
        got, more = d.reserve_fast_path([again])
        assert got is pool and [lease.task_id for lease in more] == ["q7"]
        # A suspended tenant's task is never admitted at its insert.
        asleep = views_pb2.TaskRecordHead(id="s0", name="add", state=QUEUED, tenant="asleep")
        assert d.reserve_fast_path([asleep]) == (None, [])

    asyncio.run(run())
