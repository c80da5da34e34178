"""An insert's tenants: each known and active, checked inside the insert's
transaction (tables of migrations/0025_tenants.sql, sql/tenants.sql)."""

from __future__ import annotations

import asyncpg

from taskyard.core import errors
from taskyard.core import tenants as names
from taskyard.v1 import tenant_service_pb2 as pub

from ..appliers import Db
from ..queries import bind

SUSPENDED = pub.TENANT_STATE_SUSPENDED


def unknown_tenant(name: str) -> errors.TaskyardError:
    """An insert for a tenant with no row (FAILED_PRECONDITION, reason TENANT_UNKNOWN)."""
    return errors.TaskyardError(
        errors.Code.FAILED_PRECONDITION,
        names.TENANT_UNKNOWN,
        names.unknown_message(name),
    )


def suspended_tenant(name: str) -> errors.TaskyardError:
    """An insert for a suspended tenant (FAILED_PRECONDITION, reason TENANT_SUSPENDED)."""
    return errors.TaskyardError(
        errors.Code.FAILED_PRECONDITION,
        names.TENANT_SUSPENDED,
        names.suspended_message(name),
    )


async def check_inserts(db: Db, tenants: set[str]) -> None:
    """Refuse an insert whose tenants are not all known and active, inside its
    transaction: the rows are share-locked to COMMIT, so a suspension waits for
    it and no insert follows a suspension that has returned. One statement,
    none for the default tenant's tasks (it has no row and is never suspended)."""
    wanted = sorted(tenants - {names.DEFAULT})
    if not wanted:
        return
    states = {r["name"]: r["state"] for r in await db.fetch("tenant_states", names=wanted)}
    for name in wanted:
        state = states.get(name)
        if state is None:
            raise unknown_tenant(name)
        if state == SUSPENDED:
            raise suspended_tenant(name)


async def check_owner(conn: asyncpg.Connection, tenant: str) -> None:
    """Refuse a write that starts new work of ``tenant`` (a retry, a redrive, a new
    schedule) as an insert is refused: the tenant unknown or suspended. Inside the
    write's transaction, share-locked to COMMIT as check_inserts is; none for the
    default tenant."""
    if tenant == names.DEFAULT:
        return
    rows = await conn.fetch(*bind("tenant_states", names=[tenant]))
    if not rows:
        raise unknown_tenant(tenant)
    if rows[0]["state"] == SUSPENDED:
        raise suspended_tenant(tenant)


async def suspended(db: Db, tenants: set[str]) -> set[str]:
    """Which of ``tenants`` are suspended (one statement; none for the default tenant)."""
    wanted = sorted(tenants - {names.DEFAULT})
    if not wanted:
        return set()
    return {r["name"] for r in await db.fetch("tenant_states", names=wanted) if r["state"] == SUSPENDED}
