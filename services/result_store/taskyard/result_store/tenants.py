"""Tenants in the store: their rows, their version, their changes (tables of
migrations/0025_tenants.sql, statements of sql/tenants.sql).

The gateways' and the leading scheduler's caches poll ``read`` (STORE_TENANTS)
with the version they hold: while nothing changed that is one one-row read. A
change (``change``, STORE_TENANT_CHANGE: create, update, suspend, resume) runs in
one transaction: it locks the version row (so changes are serialized and the cap
is counted under the lock), checks the request, writes the row, its ``tenant.*``
event in the durable log (EVENT_KIND_TENANT, attributes tenant and by) and the
next version, and publishes the same event on the bus after COMMIT. A refused
change stores nothing. ``tenant_of`` is the one place a row becomes a Tenant.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import asyncpg

from taskyard.bus.v1 import envelope_pb2, event_pb2, tenants_pb2
from taskyard.core import contract, errors, rpc
from taskyard.core import limits as limit_rules
from taskyard.core import tenants as names
from taskyard.core import validation as core_validation
from taskyard.core.errors import FieldViolation
from taskyard.core.validation import quote
from taskyard.v1 import limit_pb2
from taskyard.v1 import tenant_service_pb2 as pub

from . import bus_requests, event_log
from .appliers import Db, Stats
from .events import EventPublisher
from .queries import bind
from .writes.schedules import as_bus_errors
from .writes.tenant_checks import SUSPENDED

K = envelope_pb2
Op = tenants_pb2.ChangeTenantRequest.Op
ACTIVE = pub.TENANT_STATE_ACTIVE
# Limits (docs/tenants.md, "Limits").
MAX_TENANTS = 10_000
MAX_DESCRIPTION_CHARS = 1024
MAX_WEIGHT = 1000
MAX_CONCURRENCY = 1_000_000
MAX_NAMES = 1000
MAX_READ = MAX_TENANTS
# Error reasons (ErrorInfo.reason at the edge).
TENANT_EXISTS = "TENANT_EXISTS"
TENANT_NOT_FOUND = "TENANT_NOT_FOUND"
TOO_MANY_TENANTS = "TOO_MANY_TENANTS"
_EVENTS = {
    Op.OP_CREATE: "created",
    Op.OP_UPDATE: "updated",
    Op.OP_SUSPEND: "suspended",
    Op.OP_RESUME: "resumed",
}


# --- the codec: a row of {{tenant_row}} <-> a Tenant -----------------------------------
def stored_quota(quota: pub.TenantQuota) -> bytes:
    """What tenants.quota keeps of a quota (empty: no bound)."""
    return quota.SerializeToString(deterministic=True)


def tenant_of(row: Mapping[str, Any]) -> pub.Tenant:
    tenant = pub.Tenant(
        name=row["name"], state=row["state"], weight=row["weight"], description=row["description"]
    )
    if row["quota"]:
        tenant.quota.ParseFromString(row["quota"])
    tenant.created_at.FromMicroseconds(row["created_us"])
    tenant.updated_at.FromMicroseconds(row["updated_us"])
    if row["suspended_us"]:
        tenant.suspended_at.FromMicroseconds(row["suspended_us"])
    return tenant


# --- checks ----------------------------------------------------------------------------
def name_violations(name: str, field: str) -> list[FieldViolation]:
    found = names.problem(name)
    if found is None:
        return []
    return [core_validation.Violation(field=field, description=found, reason=names.INVALID_TENANT)]


def tenant_violations(tenant: pub.Tenant, path: str = "tenant") -> list[FieldViolation]:
    """Every violation of a tenant's name, quota, weight and description."""
    out = name_violations(tenant.name, f"{path}.name")
    if len(tenant.description) > MAX_DESCRIPTION_CHARS:
        out.append(
            FieldViolation(
                field=f"{path}.description",
                description=(
                    f"must be at most {MAX_DESCRIPTION_CHARS} characters, got {len(tenant.description)}"
                ),
            )
        )
    if not 0 <= tenant.weight <= MAX_WEIGHT:
        out.append(
            FieldViolation(
                field=f"{path}.weight", description=f"must be 0 to {MAX_WEIGHT}, got {tenant.weight}"
            )
        )
    quota = tenant.quota
    if not 0 <= quota.max_concurrency <= MAX_CONCURRENCY:
        out.append(
            FieldViolation(
                field=f"{path}.quota.max_concurrency",
                description=f"must be 0 to {MAX_CONCURRENCY}, got {quota.max_concurrency}",
            )
        )
    if quota.HasField("rate"):
        # RateLimit's own bounds, worded for this field (core/limits.py).
        as_limit = limit_pb2.Limit(name="tenant.rate", rate=quota.rate)
        for v in limit_rules.limit_violations(as_limit, f"{path}.quota"):
            if v.field.startswith(f"{path}.quota.rate"):
                out.append(FieldViolation(field=v.field, description=v.description))
    return out


def check_change(req: tenants_pb2.ChangeTenantRequest) -> None:
    """Refuse a malformed change before anything is read (INVALID_ARGUMENT with field violations)."""
    if req.op in (Op.OP_CREATE, Op.OP_UPDATE):
        found = tenant_violations(req.tenant)
    elif req.op in (Op.OP_SUSPEND, Op.OP_RESUME):
        found = name_violations(req.tenant.name, "tenant.name")
        if len(req.reason) > MAX_DESCRIPTION_CHARS:
            found.append(
                FieldViolation(
                    field="reason", description=f"must be at most {MAX_DESCRIPTION_CHARS} characters"
                )
            )
    else:
        found = [FieldViolation(field="op", description=f"unknown tenant operation {int(req.op)}")]
    if found:
        raise core_validation.invalid(found)


def check_read(req: tenants_pb2.ReadTenantsRequest) -> None:
    found: list[FieldViolation] = []
    if len(req.names) > MAX_NAMES:
        found.append(FieldViolation(field="names", description=f"at most {MAX_NAMES} names"))
    if not 0 <= req.limit <= MAX_READ:
        found.append(FieldViolation(field="limit", description=f"must be 0 to {MAX_READ}, got {req.limit}"))
    if len(req.after) > names.MAX_CHARS:
        found.append(FieldViolation(field="after", description="not a tenant's name"))
    if found:
        raise core_validation.invalid(found)


def not_found(name: str) -> errors.TaskyardError:
    return errors.TaskyardError(errors.Code.NOT_FOUND, TENANT_NOT_FOUND, f"no tenant named {quote(name)}")


def already_exists(name: str) -> errors.TaskyardError:
    return errors.TaskyardError(
        errors.Code.ALREADY_EXISTS, TENANT_EXISTS, f"a tenant named {quote(name)} already exists"
    )


def too_many() -> errors.TaskyardError:
    return errors.TaskyardError(
        errors.Code.RESOURCE_EXHAUSTED,
        TOO_MANY_TENANTS,
        f"at most {MAX_TENANTS} tenants are kept; this suite has that many already",
    )


class Tenants:
    """The STORE_TENANTS and STORE_TENANT_CHANGE routes."""

    def __init__(self, pool: asyncpg.Pool, publisher: EventPublisher, stats: Stats) -> None:
        self.pool = pool
        self.publisher = publisher
        self.stats = stats

    def routes(self) -> list[rpc.Route[Any]]:
        return [
            rpc.serve_call(contract.STORE_TENANTS, as_bus_errors(self.read)),
            # Carried out once per database, whichever store a copy reaches (bus_requests.py).
            rpc.serve(contract.STORE_TENANT_CHANGE, bus_requests.once(as_bus_errors(self.change))),
        ]

    async def read(self, req: tenants_pb2.ReadTenantsRequest) -> tenants_pb2.ReadTenantsReply:
        check_read(req)
        self.stats.statements += 1
        version = await self.pool.fetchval(*bind("tenant_version"))
        if req.known_version and version == req.known_version:
            return tenants_pb2.ReadTenantsReply(version=version, unchanged=True)
        # The version and the rows of one snapshot.
        async with self.pool.acquire() as conn, conn.transaction(isolation="repeatable_read", readonly=True):
            self.stats.statements += 2
            version = await conn.fetchval(*bind("tenant_version"))
            rows = await conn.fetch(
                *bind(
                    "read_tenants",
                    names=list(req.names) or None,
                    after=req.after,
                    limit=req.limit or None,
                )
            )
        return tenants_pb2.ReadTenantsReply(tenants=[tenant_of(r) for r in rows], version=version)

    async def change(
        self, req: tenants_pb2.ChangeTenantRequest, request_id: str = ""
    ) -> tenants_pb2.ChangeTenantReply:
        """``request_id``: the bus request's message id, recorded with the change."""
        check_change(req)
        name = req.tenant.name
        async with self.pool.acquire() as conn, conn.transaction():
            db = Db(conn, self.stats)
            if request_id:
                self.stats.statements += 1
                await bus_requests.record_one(conn, request_id, K.KIND_STORE_TENANT_CHANGE)
            version = int(await db.fetchval("lock_tenant_version"))
            row, changed = await self._apply(db, req)
            entry = event_log.Entry(
                type=f"tenant.{_EVENTS[req.op]}",
                attributes=_attributes(req),
                tenant=name,
            )
            if changed:
                version = int(await db.fetchval("bump_tenant_version"))
                await event_log.write(db, (), [entry])
            reply = tenants_pb2.ChangeTenantReply(tenant=tenant_of(row), version=version)
            if request_id:
                self.stats.statements += 1
                await bus_requests.keep_replies(conn, [request_id], [reply])
        if changed:
            await self.publisher.publish(
                [
                    event_pb2.Event(
                        type=entry.type, at_us=time.time_ns() // 1000, attributes=dict(entry.attributes)
                    )
                ]
            )
        return reply

    async def _apply(self, db: Db, req: tenants_pb2.ChangeTenantRequest) -> tuple[Mapping[str, Any], bool]:
        """The row after the change, and whether it changed anything."""
        t = req.tenant
        if req.op == Op.OP_CREATE:
            if int(await db.fetchval("count_tenants")) >= MAX_TENANTS:
                raise too_many()
            rows = await db.fetch(
                "insert_tenant",
                name=t.name,
                quota=stored_quota(t.quota),
                weight=t.weight or 1,
                description=t.description,
            )
            if not rows:
                raise already_exists(t.name)
            return rows[0], True
        if req.op == Op.OP_UPDATE:
            rows = await db.fetch(
                "update_tenant",
                name=t.name,
                quota=stored_quota(t.quota),
                weight=t.weight or 1,
                description=t.description,
            )
            if not rows:
                raise not_found(t.name)
            return rows[0], True
        state = SUSPENDED if req.op == Op.OP_SUSPEND else ACTIVE
        rows = await db.fetch("set_tenant_state", name=t.name, state=state)
        if not rows:
            raise not_found(t.name)
        return rows[0], bool(rows[0]["changed"])


def _attributes(req: tenants_pb2.ChangeTenantRequest) -> dict[str, str]:
    out = {"tenant": req.tenant.name, "by": req.caller}
    if req.op == Op.OP_SUSPEND and req.reason:
        out["reason"] = req.reason
    return out
