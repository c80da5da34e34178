"""Tenants, as the leading scheduler follows them: their state, quota and weight.

The store owns the truth (the ``tenants`` table, TenantService). The scheduler
reads them with KIND_STORE_TENANTS at a term's start, at once when a ``tenant.*``
event says they changed, and every flow-control poll (flow.LIMITS_INTERVAL) in
case an event was lost: an unchanged version costs the store one indexed read.
What it read goes to

- the lanes: each tenant's weight in fair share, and a suspended tenant's tasks
  parked out of them (as a paused queue's) until it is resumed; attempts already
  running finish;
- admission: each tenant's quota as two limits keyed by the tenant
  (admission.QUOTA_CONCURRENCY, admission.QUOTA_RATE).

A store that does not serve the kind yet (an older store during a rolling
upgrade) is read as "no tenants": the default tenant alone, which has no row,
no quota and cannot be suspended.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Sequence

from taskyard.bus.v1 import tenants_pb2
from taskyard.core import contract, errors, rpc
from taskyard.core import limits as rules
from taskyard.scheduler.admission import QUOTA_CONCURRENCY, QUOTA_RATE, Admission, Gate
from taskyard.scheduler.lanes import Lanes
from taskyard.v1 import limit_pb2, tenant_service_pb2

log = logging.getLogger(__name__)

SUSPENDED = tenant_service_pb2.TENANT_STATE_SUSPENDED
# The reply of a store without the route (rpc.py: "no route for kind ...").
_NO_ROUTE = "no route for kind"


def quota_limits(quota: tenant_service_pb2.TenantQuota) -> list[limit_pb2.Limit]:
    """A tenant's quota as the limits admission applies with the tenant as the key
    (none for a quota without bounds)."""
    out: list[limit_pb2.Limit] = []
    if quota.HasField("rate") and quota.rate.units > 0 and rules.period_ms(quota.rate) > 0:
        out.append(limit_pb2.Limit(name=QUOTA_RATE, per_key=True, rate=quota.rate))
    if quota.max_concurrency > 0:
        out.append(
            limit_pb2.Limit(
                name=QUOTA_CONCURRENCY,
                per_key=True,
                concurrency=limit_pb2.ConcurrencyLimit(max_units=quota.max_concurrency),
            )
        )
    return out


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Applied:
    """What a read changed: tasks came back to the lanes (dispatch now), and the
    quota gates to look at again."""

    woke: bool
    gates: frozenset[Gate]


class Tenants:
    def __init__(self, store: rpc.Caller, lanes: Lanes, admission: Admission) -> None:
        self._store = store
        self._lanes = lanes
        self._admission = admission
        self._version = -1
        # Read once (or the store has no tenants to tell): named tenants' tasks may go.
        self.read_once = False

    def concurrency_quotas(self) -> list[str]:
        """The tenants with a concurrency quota (their leased attempts hold units)."""
        return sorted(t for t, mine in self._admission.quotas.items() if QUOTA_CONCURRENCY in mine)

    async def read(self) -> Applied | None:
        """Read the tenants if they changed; None when nothing did."""
        try:
            reply = await self._store.call(
                contract.STORE_TENANTS, tenants_pb2.ReadTenantsRequest(known_version=max(self._version, 0))
            )
        except errors.TaskyardError as exc:
            if exc.code == errors.Code.UNIMPLEMENTED or _NO_ROUTE in str(exc):
                if not self.read_once:
                    log.info("the result-store does not serve tenants: the default tenant only")
                    self.read_once = True
                    return Applied(woke=True, gates=frozenset())
                return None
            raise
        if (reply.unchanged and self._version >= 0) or reply.version < self._version:
            first = not self.read_once
            self.read_once = True
            return Applied(woke=True, gates=frozenset()) if first else None
        self._version = reply.version
        applied = self.apply(reply.tenants)
        self.read_once = True
        return applied

    def apply(self, tenants: Iterable[tenant_service_pb2.Tenant]) -> Applied:
        """Make the lanes and admission follow ``tenants`` (every tenant there is)."""
        rows: Sequence[tenant_service_pb2.Tenant] = list(tenants)
        lanes = self._lanes
        lanes.tenant_weights = {t.name: t.weight for t in rows if t.weight > 1}
        suspended = {t.name for t in rows if t.state == SUSPENDED}
        woke = not self.read_once
        for name in sorted(suspended - lanes.suspended):
            log.info("tenant %r suspended (%d waiting tasks parked)", name, lanes.suspend(name))
        for name in sorted(lanes.suspended - suspended):
            back = lanes.unsuspend(name)
            log.info("tenant %r resumed (%d tasks back in the lanes)", name, back)
            woke = woke or back > 0
        gates = self._admission.set_quotas(
            {t.name: quota_limits(t.quota) for t in rows if t.HasField("quota")}
        )
        if gates:
            log.info(
                "tenant quotas: %d tenants with one (%d gates changed)",
                len(self._admission.quotas),
                len(gates),
            )
        return Applied(woke=woke or bool(gates), gates=frozenset(gates))
