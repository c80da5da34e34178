"""A request's TenantScope as the parameters of its statements.

The gateway says whose rows a caller's request may reach (tenants.proto,
TenantScope); every statement that reads or writes for a caller takes
``:all_tenants`` and ``:tenant`` and filters ``(:all_tenants OR x.tenant =
:tenant)`` in its WHERE clause, so another tenant's row is never read, changed
or counted and answers as a missing one, by the same statements. An unset scope
(all false, tenant "") reaches the default tenant's rows only: safe by default.
The scheduler's and the pools' own requests that need every tenant's rows set
``all``.
"""

from __future__ import annotations

from typing import Any

from taskyard.bus.v1 import tenants_pb2

ALL = tenants_pb2.TenantScope(all=True)


def params(scope: tenants_pb2.TenantScope) -> dict[str, Any]:
    """``all_tenants`` and ``tenant`` of a statement, from ``scope``."""
    return {"all_tenants": scope.all, "tenant": scope.tenant}


def owner(scope: tenants_pb2.TenantScope) -> str:
    """The tenant a request's new rows belong to: the scope's tenant; the default
    tenant for an operator acting on every tenant."""
    return "" if scope.all else scope.tenant


def reaches(scope: tenants_pb2.TenantScope, tenant: str) -> bool:
    """Whether ``scope`` reaches a row of ``tenant`` (what the statements test)."""
    return scope.all or scope.tenant == tenant
