"""The leading scheduler's tenants: quotas as flow-control gates keyed by the
tenant ("tenant.concurrency", "tenant.rate"), taken with a task's other limits,
all or none, their held units given back and rebuilt by a new leader; suspended
tenants parked; the tenants read with a known version; a store without the kind
read as no tenants; NO_POOL when no pool serves a task's name and tenant."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from google.protobuf.message import Message
from support.admission import Harness, concurrency

from taskyard.bus.v1 import flow_pb2, tenants_pb2
from taskyard.core import contract, errors, transport
from taskyard.scheduler.admission import QUOTA_CONCURRENCY, QUOTA_RATE
from taskyard.v1 import limit_pb2, task_service_pb2, tenant_service_pb2

R = task_service_pb2
ACTIVE = tenant_service_pb2.TENANT_STATE_ACTIVE
SUSPENDED = tenant_service_pb2.TENANT_STATE_SUSPENDED


def _tenant(
    name: str,
    *,
    max_concurrency: int = 0,
    rate: tuple[int, int] | None = None,
    state: int = ACTIVE,
    weight: int = 0,
) -> tenant_service_pb2.Tenant:
    out = tenant_service_pb2.Tenant(name=name, state=cast(Any, state), weight=weight)
    out.quota.max_concurrency = max_concurrency
    if rate is not None:
        out.quota.rate.units = rate[0]
        out.quota.rate.period.FromMilliseconds(rate[1])
    return out


async def _loaded(h: Harness, *tenants: tenant_service_pb2.Tenant) -> None:
    h.store.tenants = list(tenants)
    await h.flow.read_limits()
    await h.flow.read_tenants()
    await h.flow.resync()


def _gate(h: Harness, task_id: str, within: str | None = None) -> flow_pb2.TaskGate:
    """The task's gate as an operator over every tenant sees it (``within``: as that tenant)."""
    request = flow_pb2.FlowGatesRequest(task_ids=[task_id])
    request.scope.CopyFrom(_scope(within))
    reply = asyncio.run(h.flow.on_gates(request, cast(Any, None)))
    return reply.gates[0]


def _scope(within: str | None) -> tenants_pb2.TenantScope:
    return tenants_pb2.TenantScope(all=True) if within is None else tenants_pb2.TenantScope(tenant=within)


def test_a_concurrency_quota_holds_the_tenants_tasks_past_it_and_frees_a_unit_on_completion() -> None:
    h = Harness()
    asyncio.run(_loaded(h, _tenant("acme", max_concurrency=2)))
    for i in range(4):
        h.submit(f"a{i}", tenant="acme")
    h.submit("d0")  # the default tenant: no quota
    h.submit("b0", tenant="beta")  # a tenant without a row: no quota either
    assert sorted(h.dispatch(10)) == ["a0", "a1", "b0", "d0"]
    gate = _gate(h, "a2")
    assert gate.reason == R.WAIT_REASON_TENANT_QUOTA
    assert (gate.gate.limit, gate.gate.key) == (QUOTA_CONCURRENCY, "acme")
    assert sorted(gate.gate.holder_ids) == ["a0", "a1"]
    h.finish("a0")  # its unit given back: the next one goes
    assert h.dispatch(10) == ["a2"]
    h.flow.release_tasks(["a1"], before=h.clock.now + 1)  # a lapsed lease gives its unit back too
    assert h.dispatch(10) == ["a3"]


def test_a_tenant_without_a_quota_holds_nothing() -> None:
    h = Harness()
    asyncio.run(_loaded(h, _tenant("acme")))
    h.submit("a0", tenant="acme")
    assert h.dispatch(1) == ["a0"]
    assert not h.flow.admission.holds("a0")
    assert h.flow.admission.quotas == {}


def test_a_rate_quota_admits_its_units_per_period() -> None:
    h = Harness()
    asyncio.run(_loaded(h, _tenant("acme", rate=(2, 1000))))
    for i in range(5):
        h.submit(f"a{i}", tenant="acme")
    # A quota of the term's first read starts spent, as a rate limit does.
    assert h.dispatch(5) == []
    gate = _gate(h, "a0")
    assert gate.reason == R.WAIT_REASON_TENANT_QUOTA
    assert (gate.gate.limit, gate.gate.key) == (QUOTA_RATE, "acme")
    assert gate.gate.HasField("next_admission_at")
    h.tick(1.0)
    assert h.dispatch(5) == ["a0", "a1"]
    h.tick(0.5)
    assert h.dispatch(5) == ["a2"]


def test_a_quota_is_taken_with_the_tasks_limits_all_or_none() -> None:
    # A tenant's own limit is stored qualified (acme/db).
    h = Harness(concurrency("acme/db", 5, per_key=False))
    asyncio.run(_loaded(h, _tenant("acme", max_concurrency=1)))
    h.submit("a0", ("acme/db", "", 1), tenant="acme")
    h.submit("a1", ("acme/db", "", 1), tenant="acme")
    assert h.dispatch(2) == ["a0"]
    # a1 was refused by the quota: it took none of db's units.
    assert h.flow.admission.held(("acme/db", "")) == 1
    assert h.flow.admission.held((QUOTA_CONCURRENCY, "acme")) == 1
    # And the other way round: db full, the quota's unit is not taken.
    h2 = Harness(concurrency("acme/db", 1, per_key=False))
    asyncio.run(_loaded(h2, _tenant("acme", max_concurrency=5)))
    h2.submit("d0", ("acme/db", "", 1), tenant="acme")
    h2.submit("a0", ("acme/db", "", 1), tenant="acme")
    assert h2.dispatch(2) == ["d0"]
    assert h2.flow.admission.held((QUOTA_CONCURRENCY, "acme")) == 1
    assert _gate(h2, "a0").reason == R.WAIT_REASON_CONCURRENCY_FULL


def test_a_new_leader_counts_the_attempts_a_quota_holds() -> None:
    running = flow_pb2.LeasedFlow(task_id="a0", attempt=1, lease_token="old-leader", tenant="acme")
    h = Harness(leased=[running])
    asyncio.run(_loaded(h, _tenant("acme", max_concurrency=1)))
    # It asked the store for the attempts of the tenants with a concurrency quota.
    assert list(h.store.leased_requests[-1].tenants) == ["acme"]
    assert h.flow.admission.held((QUOTA_CONCURRENCY, "acme")) == 1
    h.submit("a1", tenant="acme")
    assert h.dispatch(1) == []
    assert _gate(h, "a1").reason == R.WAIT_REASON_TENANT_QUOTA
    # The old leader's attempt ended (the store no longer has it): its unit is free.
    h.store.leased = []
    h.clock.now += 1
    asyncio.run(h.flow.resync())
    assert h.dispatch(1) == ["a1"]


def test_a_quota_added_counts_what_runs_already_and_one_removed_frees_its_tasks() -> None:
    h = Harness()
    asyncio.run(_loaded(h, _tenant("acme")))
    h.submit("a0", tenant="acme")
    assert h.dispatch(1) == ["a0"]
    h.store.leased = [flow_pb2.LeasedFlow(task_id="a0", attempt=1, lease_token="tok0", tenant="acme")]
    h.store.tenants = [_tenant("acme", max_concurrency=1)]
    h.store.tenant_version += 1
    asyncio.run(h.flow.read_tenants())
    # Until a resync counts what a0 holds, acme's tasks wait (a0 was admitted before
    # the quota was known: it holds nothing here yet).
    h.submit("a1", tenant="acme")
    h.submit("d1")
    assert h.dispatch(2) == ["d1"]
    asyncio.run(h.flow.resync())
    assert h.flow.admission.held((QUOTA_CONCURRENCY, "acme")) == 1
    assert h.dispatch(1) == []
    assert _gate(h, "a1").reason == R.WAIT_REASON_TENANT_QUOTA
    # The quota lifted: a1 goes at once.
    h.store.tenants = [_tenant("acme")]
    h.store.tenant_version += 1
    asyncio.run(h.flow.read_tenants())
    assert h.dispatch(1) == ["a1"]


def test_a_named_tenants_task_waits_for_the_first_read_of_the_tenants() -> None:
    h = Harness()
    asyncio.run(h.load_async())  # limits and leased attempts, not the tenants yet
    h.submit("a0", tenant="acme")
    h.submit("d0")
    assert h.dispatch(2) == ["d0"]
    h.store.tenants = [_tenant("acme", max_concurrency=1)]
    asyncio.run(h.flow.read_tenants())
    assert h.dispatch(2) == []  # its quota's running attempts are counted first
    asyncio.run(h.flow.resync())
    assert h.dispatch(2) == ["a0"]


def test_a_suspended_tenant_is_parked_and_resumed_by_the_reads() -> None:
    h = Harness()
    asyncio.run(_loaded(h, _tenant("acme", state=SUSPENDED)))
    h.submit("a0", tenant="acme")
    h.submit("b0", tenant="beta")
    assert h.dispatch(5) == ["b0"]
    assert _gate(h, "a0").reason == R.WAIT_REASON_TENANT_SUSPENDED
    # Unchanged: one read, nothing done.
    wakes = h.wakes
    asyncio.run(h.flow.read_tenants())
    assert h.wakes == wakes
    h.store.tenants = [_tenant("acme")]
    h.store.tenant_version += 1
    asyncio.run(h.flow.read_tenants())
    assert h.wakes > wakes  # dispatch at once
    assert h.dispatch(5) == ["a0"]


def test_tenant_weights_come_from_the_reads() -> None:
    h = Harness()
    asyncio.run(_loaded(h, _tenant("gold", weight=4), _tenant("tin", weight=1)))
    assert h.flow.lanes.tenant_weights == {"gold": 4}


class _OldStore:
    """A store that does not serve tenants (no route for the kind)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.asked = 0

    async def call(self, method: contract.Method[Any, Any], request: Message) -> Message:
        if method is contract.STORE_TENANTS:
            self.asked += 1
            raise errors.internal(f"no route for kind {method.kind}")
        result: Message = await self.inner.call(method, request)
        return result


def test_a_store_without_tenants_reads_as_no_tenants() -> None:
    h = Harness()
    old = _OldStore(h.store)
    h.flow._store = cast(Any, old)
    h.flow.tenants._store = cast(Any, old)
    asyncio.run(_loaded(h))
    assert old.asked == 1 and h.flow.tenants.read_once
    h.submit("a0", tenant="acme")
    assert h.dispatch(1) == ["a0"]
    asyncio.run(h.flow.read_tenants())  # asked again, still nothing breaks
    assert old.asked == 2


def test_no_pool_serving_the_tasks_name_and_tenant_says_no_pool() -> None:
    h = Harness()
    asyncio.run(_loaded(h))
    h.flow.serving = lambda name, tenant: tenant == "acme"
    h.submit("b0", tenant="beta")
    h.submit("a0", key="x", tenant="acme")
    h.submit("a1", key="y", tenant="acme")
    assert _gate(h, "b0").reason == R.WAIT_REASON_NO_POOL
    assert _gate(h, "a1").reason == R.WAIT_REASON_FAIR_SHARE


def test_fair_share_is_explained_by_the_callers_own_keys_never_another_tenants_work() -> None:
    # beta's backlog is ahead of acme's one task in the turns, but a reason naming it
    # (FAIR_SHARE, keys_ahead) would tell acme that beta has work waiting.
    h = Harness()
    asyncio.run(_loaded(h))
    for i in range(3):
        h.submit(f"b{i}", key=f"k{i}", tenant="beta")
    h.submit("a0", tenant="acme")
    gate = _gate(h, "a0")
    assert gate.reason != R.WAIT_REASON_FAIR_SHARE and gate.gate.keys_ahead == 0
    assert (_gate(h, "b2").reason, _gate(h, "b2").gate.keys_ahead) == (R.WAIT_REASON_FAIR_SHARE, 2)


def test_a_tenant_caller_sees_its_own_tenants_limits_only() -> None:
    h = Harness(concurrency("acme/db", 2), concurrency("db", 2))
    asyncio.run(_loaded(h))
    mine = flow_pb2.FlowGatesRequest(limits=["*"])
    mine.scope.tenant = "acme"
    reply = asyncio.run(h.flow.on_gates(mine, cast(Any, None)))
    assert sorted(reply.usage) == ["acme/db"]
    every = flow_pb2.FlowGatesRequest(limits=["*"])
    every.scope.all = True
    reply = asyncio.run(h.flow.on_gates(every, cast(Any, None)))
    assert sorted(reply.usage) == ["acme/db", "db"]


def test_the_scheduler_reads_every_tenants_limits() -> None:
    h = Harness()
    seen: list[flow_pb2.ReadLimitsRequest] = []
    inner = h.store.call

    async def call(method: contract.Method[Any, Any], request: Message) -> Message:
        if isinstance(request, flow_pb2.ReadLimitsRequest):
            seen.append(request)
        return await inner(method, request)

    h.store.call = call  # type: ignore[method-assign]
    asyncio.run(h.flow.read_limits())
    assert seen and seen[0].scope.all


def test_the_stores_tenant_events_reach_the_scheduler() -> None:
    # The leader reads the tenants at once on these (a suspension within a read, not a poll).
    assert {"tenant.created", "tenant.updated", "tenant.suspended", "tenant.resumed"} <= (
        transport.SCHEDULER_EVENT_TYPES
    )


def test_a_suspended_tenants_task_a_gate_lets_go_is_parked_not_dispatched() -> None:
    h = Harness(concurrency("db", 1, per_key=False))
    asyncio.run(_loaded(h, _tenant("acme")))
    h.submit("a0", ("db", "", 1), tenant="acme")
    h.submit("a1", ("db", "", 1), tenant="acme")
    assert h.dispatch(2) == ["a0"]
    h.store.tenants = [_tenant("acme", state=SUSPENDED)]
    h.store.tenant_version += 1
    asyncio.run(h.flow.read_tenants())
    assert _gate(h, "a1").reason == R.WAIT_REASON_TENANT_SUSPENDED  # at db's gate, suspended
    h.finish("a0")  # db's unit free: a1 leaves its gate, to its tenant's parking
    assert h.dispatch(2) == []
    assert _gate(h, "a1").reason == R.WAIT_REASON_TENANT_SUSPENDED
    h.store.tenants = [_tenant("acme")]
    h.store.tenant_version += 1
    asyncio.run(h.flow.read_tenants())
    assert h.dispatch(2) == ["a1"]


class _TenantsDown:
    """The store answers everything but the tenants (UNAVAILABLE), and says when the
    leased attempts were read."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.resynced = asyncio.Event()

    async def call(self, method: contract.Method[Any, Any], request: Message) -> Message:
        if method is contract.STORE_TENANTS:
            raise errors.TaskyardError(errors.Code.UNAVAILABLE, "UNAVAILABLE", "tenants read failed")
        if method is contract.STORE_LEASED_FLOW:
            self.resynced.set()
        result: Message = await self.inner.call(method, request)
        return result


def test_a_failed_read_of_the_tenants_does_not_stop_the_limits_resync() -> None:
    async def run() -> None:
        h = Harness()
        down = _TenantsDown(h.store)
        h.flow._store = cast(Any, down)
        h.flow.tenants._store = cast(Any, down)
        loop = asyncio.create_task(h.flow.run())
        try:
            await asyncio.wait_for(down.resynced.wait(), 5)
        finally:
            loop.cancel()
        assert h.flow.ready and not h.flow.tenants.read_once

    asyncio.run(run())


def _declared(name: str, n: int) -> Any:
    """A concurrency limit a task name declares, one bucket per key (a pool's: bare, task_name set)."""
    spec = concurrency(name, n)
    spec.task_name = name.partition(".")[0]
    spec.key_argument = "account"
    return spec


def test_a_declared_limit_keeps_each_tenants_buckets_apart() -> None:
    # beta holds settle.concurrency for key 'b-acct': acme's task of the same key is
    # admitted (its own bucket), and neither tenant is told of the other's holder.
    h = Harness(_declared("settle.concurrency", 1))
    asyncio.run(_loaded(h))
    use = ("settle.concurrency", "b-acct", 1)
    h.submit("b0", use, tenant="beta")
    h.submit("b1", use, tenant="beta")
    h.submit("a0", use, tenant="acme")
    h.submit("a1", use, tenant="acme")
    assert sorted(h.dispatch(10)) == ["a0", "b0"]
    mine = _gate(h, "a1", "acme")
    assert (mine.reason, mine.gate.key) == (R.WAIT_REASON_CONCURRENCY_FULL, "b-acct")
    assert list(mine.gate.holder_ids) == ["a0"]
    assert list(_gate(h, "b1", "beta").gate.holder_ids) == ["b0"]
    # The operator over every tenant sees whose buckets they are.
    assert _gate(h, "a1").gate.key == "acme/b-acct"
    h.finish("b0")
    assert h.dispatch(10) == ["b1"]


def test_a_declared_global_limit_is_one_bucket_for_every_tenant() -> None:
    # It bounds the one downstream every tenant's tasks of that name call.
    spec = _declared("report.concurrency", 1)
    spec.per_key = False
    h = Harness(spec)
    asyncio.run(_loaded(h))
    use = ("report.concurrency", "", 1)
    for task_id, tenant in (("b0", "beta"), ("b1", "beta"), ("a0", "acme"), ("d0", ""), ("d1", "")):
        h.submit(task_id, use, tenant=tenant)
    assert h.dispatch(10) == ["b0"]
    # Its holder is beta's: acme's waiting task is told of the gate, not of beta's task.
    mine = _gate(h, "a0", "acme")
    assert mine.reason == R.WAIT_REASON_CONCURRENCY_FULL and list(mine.gate.holder_ids) == []
    h.finish("b0")
    assert len(h.dispatch(10)) == 1


def _gates(h: Harness, request: flow_pb2.FlowGatesRequest, within: str | None) -> flow_pb2.FlowGatesReply:
    request.scope.CopyFrom(_scope(within))
    return asyncio.run(h.flow.on_gates(request, cast(Any, None)))


def test_a_tenants_flow_gates_answer_of_its_own_tasks_limits_and_buckets_only() -> None:
    h = Harness(_declared("settle.concurrency", 1), concurrency("beta/db", 1), concurrency("acme/db", 1))
    asyncio.run(_loaded(h))
    h.submit("b0", ("settle.concurrency", "b-acct", 1), ("beta/db", "", 1), tenant="beta")
    h.submit("b1", ("beta/db", "", 1), tenant="beta")
    h.submit("a0", ("settle.concurrency", "a-acct", 1), tenant="acme")
    assert sorted(h.dispatch(10)) == ["a0", "b0"]
    # beta's waiting task, asked for by acme, answers as a task not waiting here.
    asked = flow_pb2.FlowGatesRequest(task_ids=["b1"], limits=["beta/db", "acme/db", "settle.concurrency"])
    reply = _gates(h, asked, "acme")
    assert reply.gates[0].reason == 0 and not reply.gates[0].gate.limit
    assert reply.gates[0] == flow_pb2.TaskGate(task_id="b1")
    # Another tenant's named limit is left out; the declared one shows acme's buckets alone.
    assert sorted(reply.usage) == ["acme/db", "settle.concurrency"]
    shared = reply.usage["settle.concurrency"]
    assert [(k.key, k.units_in_use) for k in shared.busiest_keys] == [("a-acct", 1)]
    assert (shared.units_in_use, shared.keys, shared.admitted) == (1, 1, 0)
    # beta's own view, and the operator's of every tenant.
    reply = _gates(h, flow_pb2.FlowGatesRequest(task_ids=["b1"], limits=["beta/db"]), "beta")
    assert reply.gates[0].reason == R.WAIT_REASON_CONCURRENCY_FULL
    assert list(reply.gates[0].gate.holder_ids) == ["b0"] and reply.usage["beta/db"].units_in_use == 1
    every = _gates(h, flow_pb2.FlowGatesRequest(limits=["settle.concurrency"]), None).usage
    assert sorted(k.key for k in every["settle.concurrency"].busiest_keys) == ["acme/a-acct", "beta/b-acct"]


def test_a_default_tenant_key_that_looks_qualified_weighs_nothing_in_that_tenant() -> None:
    # The store keeps acme's key "x" as "acme/x" with its tenant beside it; the default
    # tenant may have a key "acme/x" of its own, which is not acme's.
    h = Harness()
    h.store.weights = [
        limit_pb2.KeyWeight(key="acme/x", weight=5, tenant=""),
        limit_pb2.KeyWeight(key="acme/y", weight=3, tenant="acme"),
    ]
    asyncio.run(_loaded(h))
    assert h.lanes.weights == {("", "acme/x"): 5, ("acme", "y"): 3}
