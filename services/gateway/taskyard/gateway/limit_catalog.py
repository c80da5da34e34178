"""The limits and fairness weights that exist, as the store last said (STORE_LIMITS).

Kept by the store's version: a read sends the version held, and the store answers
``unchanged`` (one indexed read, nothing else) while it is still current. A
submission that uses limits checks them against the copy held, re-read when it is
older than ``max_age``, or at once when a name is missing from it or its units are
over a burst it holds: a limit created a moment ago is accepted, and only what the
store itself does not know is refused. A submission without limits never gets
here (the hot path reads nothing).
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
import time
from collections.abc import Iterable, Sequence

from taskyard.bus.v1 import flow_pb2
from taskyard.core import codec, contract, rpc, tenants
from taskyard.core import limits as rules
from taskyard.gateway import scoped
from taskyard.v1 import limit_pb2

# How old the copy held may be when a submission's limits are all in it.
MAX_AGE = 1.0


@dataclasses.dataclass(frozen=True, kw_only=True)
class Snapshot:
    """One answer of the store: limits by name (sorted), weights by key."""

    version: int
    limits: tuple[limit_pb2.Limit, ...] = ()
    weights: tuple[limit_pb2.KeyWeight, ...] = ()
    names: tuple[str, ...] = ()
    bursts: dict[str, int] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, reply: flow_pb2.ReadLimitsReply) -> Snapshot:
        limits = tuple(sorted(reply.limits, key=lambda lim: lim.name))
        return cls(
            version=reply.version,
            limits=limits,
            weights=tuple(sorted(reply.weights, key=lambda w: w.key)),
            names=tuple(lim.name for lim in limits),
            bursts={lim.name: rules.burst_of(lim) for lim in limits},
        )

    def find(self, name: str) -> limit_pb2.Limit | None:
        i = bisect.bisect_left(self.names, name)
        return self.limits[i] if i < len(self.names) and self.names[i] == name else None

    def after(self, name: str, count: int) -> tuple[limit_pb2.Limit, ...]:
        """Up to ``count`` limits whose names sort after ``name``."""
        i = bisect.bisect_right(self.names, name) if name else 0
        return self.limits[i : i + count]

    def flow(self, tenant: str = tenants.DEFAULT) -> codec.FlowCatalog:
        """The limits ``tenant``'s tasks may use, by the names it knows them by:
        its own only (stored qualified, core/tenants.py)."""
        if not tenant and all(tenants.SEPARATOR not in n for n in self.names):
            return codec.FlowCatalog(names=self.bursts, bursts=self.bursts)
        own = {}
        for name, burst in self.bursts.items():
            owner, bare = tenants.split(name)
            if owner == tenant:
                own[bare] = burst
        return codec.FlowCatalog(names=own, bursts=own)

    def admits(self, uses: Iterable[limit_pb2.LimitUse]) -> bool:
        """Whether every use names a limit held here and fits its burst."""
        bursts = self.bursts
        for use in uses:
            burst = bursts.get(use.limit)
            if burst is None or rules.units_of(use) > burst:
                return False
        return True


_EMPTY = Snapshot(version=-1)


class LimitCatalog:
    def __init__(self, store: rpc.Caller, *, max_age: float = MAX_AGE) -> None:
        self._store = store
        self.max_age = max_age
        self._held = _EMPTY
        self._read_at = -1e9
        # Bumped by every change through this gateway: a read begun before a change
        # may not have seen it, so it is neither joined after the change nor trusted
        # as recent once it ends.
        self._generation = 0
        self._reading: asyncio.Task[Snapshot] | None = None
        self._reading_generation = -1
        self.reads = 0

    def stale(self) -> None:
        """The copy held is out of date (a change went through): read before the next use."""
        self._generation += 1
        self._read_at = -1e9

    async def fresh(self) -> Snapshot:
        """What the store holds now (for LimitService's reads)."""
        return await self._read()

    async def for_uses(
        self, uses: Sequence[limit_pb2.LimitUse], tenant: str = tenants.DEFAULT
    ) -> codec.FlowCatalog:
        """The catalog to check ``tenant``'s ``uses`` (bare names) against: the copy
        held when it is recent and admits them all, else the store's answer now."""
        held = self._held
        if tenant:
            uses = [
                limit_pb2.LimitUse(limit=tenants.qualify(tenant, u.limit), key=u.key, units=u.units)
                for u in uses
            ]
        if time.monotonic() - self._read_at < self.max_age and held.admits(uses):
            return held.flow(tenant)
        return (await self._read()).flow(tenant)

    async def _read(self) -> Snapshot:
        """The store's answer, read after the last change through this gateway;
        concurrent callers share one request."""
        if self._reading is None or self._reading_generation != self._generation:
            reading = asyncio.get_running_loop().create_task(
                self._load(self._generation), name="gateway-limits"
            )
            self._reading, self._reading_generation = reading, self._generation
        # The shield: one caller's cancel does not end the others' request.
        return await asyncio.shield(self._reading)

    async def _load(self, generation: int) -> Snapshot:
        try:
            held = self._held
            reply = await self._store.call(
                contract.STORE_LIMITS,
                # Every tenant's, shared by every caller (each sees its own: ``flow``).
                flow_pb2.ReadLimitsRequest(known_version=held.version, scope=scoped.every_tenant()),
            )
            self.reads += 1
            # Versions only grow: an older answer (a read overtaken by a later one)
            # does not replace a newer copy.
            if not reply.unchanged and reply.version >= self._held.version:
                self._held = Snapshot.of(reply)
            if generation == self._generation:
                self._read_at = time.monotonic()
            return self._held
        finally:
            if self._reading is asyncio.current_task():
                self._reading = None
