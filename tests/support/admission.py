"""Flow control's admission step driven through ``Flow`` (the scheduler's hooks),
with a manual clock and a store that answers the two reads flow control makes
(the limits, the leased attempts)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, cast

from google.protobuf.message import Message

from taskyard.bus.v1 import flow_pb2, tenants_pb2
from taskyard.core import contract
from taskyard.core.priority import Priority
from taskyard.scheduler.flow import Flow
from taskyard.scheduler.lanes import Lanes, Ref, Use
from taskyard.v1 import limit_pb2, tenant_service_pb2

ALL = frozenset({"add"})


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Store:
    """The store's side of flow control: its limits and the leased attempts."""

    def __init__(self) -> None:
        self.limits: list[limit_pb2.Limit] = []
        self.weights: list[limit_pb2.KeyWeight] = []
        self.version = 1
        self.leased: list[flow_pb2.LeasedFlow] = []
        self.breaker_events: list[flow_pb2.BreakerChange] = []
        self.breaker_event_terms: list[int] = []
        # Tenants (KIND_STORE_TENANTS), their version, and the leased-flow requests seen.
        self.tenants: list[tenant_service_pb2.Tenant] = []
        self.tenant_version = 1
        self.leased_requests: list[flow_pb2.LeasedFlowRequest] = []

    async def call(self, method: contract.Method[Any, Any], request: Message) -> Message:
        if method is contract.STORE_LIMITS:
            return flow_pb2.ReadLimitsReply(version=self.version, limits=self.limits, weights=self.weights)
        if method is contract.STORE_LEASED_FLOW:
            assert isinstance(request, flow_pb2.LeasedFlowRequest)
            self.leased_requests.append(request)
            return flow_pb2.LeasedFlowReply(attempts=self.leased)
        if method is contract.STORE_TENANTS:
            assert isinstance(request, tenants_pb2.ReadTenantsRequest)
            if request.known_version == self.tenant_version:
                return tenants_pb2.ReadTenantsReply(version=self.tenant_version, unchanged=True)
            return tenants_pb2.ReadTenantsReply(version=self.tenant_version, tenants=self.tenants)
        if method is contract.STORE_BREAKER_EVENTS:
            assert isinstance(request, flow_pb2.BreakerEventsRequest)
            self.breaker_events.extend(request.changes)
            self.breaker_event_terms.append(request.term)
            return flow_pb2.BreakerEventsReply(logged=len(request.changes))
        raise AssertionError(method)


def rate(name: str, units: int, period_ms: int, burst: int = 0, *, per_key: bool = False) -> limit_pb2.Limit:
    out = limit_pb2.Limit(name=name, per_key=per_key, rate=limit_pb2.RateLimit(units=units, burst=burst))
    out.rate.period.FromMilliseconds(period_ms)
    return out


def concurrency(name: str, n: int, *, per_key: bool = True) -> limit_pb2.Limit:
    return limit_pb2.Limit(name=name, per_key=per_key, concurrency=limit_pb2.ConcurrencyLimit(max_units=n))


def breaker(
    name: str,
    failures: int,
    window_ms: int,
    cool_down_ms: int,
    *,
    probes: int = 0,
    min_attempts: int = 0,
    per_key: bool = True,
) -> limit_pb2.Limit:
    out = limit_pb2.Limit(
        name=name,
        per_key=per_key,
        breaker=limit_pb2.CircuitBreaker(
            failure_threshold=failures, half_open_probes=probes, min_attempts=min_attempts
        ),
    )
    out.breaker.window.FromMilliseconds(window_ms)
    out.breaker.cool_down.FromMilliseconds(cool_down_ms)
    return out


class Harness:
    def __init__(self, *specs: limit_pb2.Limit, leased: Sequence[flow_pb2.LeasedFlow] = ()) -> None:
        self.clock = Clock()
        self.store = Store()
        self.store.limits = list(specs)
        self.store.leased = list(leased)
        self.lanes = Lanes()
        self.wakes = 0
        self.flow = Flow(self.lanes, cast(Any, self.store), wake=self._woken, clock=self.clock)
        self.tokens = 0
        self.running: dict[str, str] = {}  # task id -> token

    def _woken(self) -> None:
        self.wakes += 1

    def load(self) -> None:
        asyncio.run(self.load_async())

    async def load_async(self) -> None:
        await self.flow.read_limits()
        await self.flow.resync()

    def submit(self, task_id: str, *uses: Use, key: str = "", tenant: str = "") -> None:
        self.lanes.push(Ref(task_id, "add", Priority.NORMAL, "default", key, tuple(uses), tenant))

    def lease(self, slots: int) -> list[tuple[str, str]]:
        """One lease request of a pool with ``slots`` free slots, not answered yet: the
        (task id, token) pairs the lanes give and the limits admit, the lanes taken from
        again, as the dispatcher does, until nothing is left."""
        batch = self.flow.new_batch()
        leases: list[tuple[str, str]] = []
        while len(leases) < slots:
            seqs: list[int] = []
            taken = self.lanes.take(ALL, slots - len(leases), seqs)
            if not taken:
                break
            tokens = [f"tok{self.tokens + i}" for i in range(len(taken))]
            self.tokens += len(taken)
            leases += [(taken[i].id, tokens[i]) for i in self.flow.admit(taken, seqs, tokens, batch)]
        return leases

    def dispatch(self, slots: int) -> list[str]:
        """What a pool with ``slots`` free slots is leased (the store answers at once)."""
        leases = self.lease(slots)
        self.running.update(leases)
        self.flow.confirm(leases)
        return [task_id for task_id, _token in leases]

    def finish(self, task_id: str) -> None:
        self.flow.release(task_id, self.running.pop(task_id))

    def end(self, task_id: str, *, failed: bool) -> None:
        """The attempt ended with a result, as a pool's notice tells (scheduler/service.py)."""
        token = self.running.pop(task_id)
        self.flow.outcome(task_id, token, failed=failed)
        self.flow.release(task_id, token)

    def tick(self, seconds: float) -> None:
        self.clock.now += seconds
        self.flow.tick()
