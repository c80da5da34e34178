"""``taskyard.v1.TenantService``: the tenants, for operators (docs/tenants.md).

Every change is checked here (INVALID_ARGUMENT with field violations, nothing
sent) and forwarded to the result-store (STORE_TENANT_CHANGE), which stores it
with its ``tenant.*`` event. Reads ask the store (STORE_TENANTS). A tenant token
may read its own tenant only (GetTenant): any other name answers NOT_FOUND as a
missing one does. The other RPCs are refused to it before they run (tenancy.py).
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import grpc

from taskyard.bus.v1 import tenants_pb2
from taskyard.core import codec, contract, errors, rpc, tenants
from taskyard.core import limits as rules
from taskyard.gateway import auth, status
from taskyard.gateway.tenancy import TenantCache
from taskyard.v1 import limit_pb2, tenant_service_pb2_grpc
from taskyard.v1 import tenant_service_pb2 as svc

log = logging.getLogger(__name__)

R = TypeVar("R")
Context = grpc.aio.ServicerContext[object, object]
Op = tenants_pb2.ChangeTenantRequest.Op

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
MAX_PAGE_TOKEN_CHARS = 1024
MAX_DESCRIPTION_CHARS = 1024
MAX_REASON_CHARS = 1024
MAX_WEIGHT = 1000
MAX_CONCURRENCY = 1_000_000


def _name_violations(value: str, field: str) -> list[codec.Violation]:
    problem = tenants.problem(value)
    if problem is None:
        return []
    return [codec.Violation(field=field, description=problem, reason=tenants.INVALID_TENANT)]


def _name(value: str, field: str = "name") -> str:
    violations = _name_violations(value, field)
    if violations:
        raise codec.invalid(violations)
    return value


def _definition(request: svc.CreateTenantRequest | svc.UpdateTenantRequest) -> svc.Tenant:
    """The request's tenant, checked: its name, quota, weight and description only."""
    if not request.HasField("tenant"):
        raise codec.invalid([codec.Violation(field="tenant", description="required")])
    given = request.tenant
    violations = _name_violations(given.name, "tenant.name")
    if not 0 <= given.weight <= MAX_WEIGHT:
        violations.append(
            codec.Violation(
                field="tenant.weight", description=f"must be 0 to {MAX_WEIGHT}, got {given.weight}"
            )
        )
    codec.check_text(violations, "tenant.description", given.description, max_chars=MAX_DESCRIPTION_CHARS)
    quota = given.quota
    if not 0 <= quota.max_concurrency <= MAX_CONCURRENCY:
        violations.append(
            codec.Violation(
                field="tenant.quota.max_concurrency",
                description=f"must be 0 to {MAX_CONCURRENCY}, got {quota.max_concurrency}",
            )
        )
    if quota.HasField("rate"):
        # RateLimit's own bounds, as a limit's (core/limits.py).
        as_limit = limit_pb2.Limit(name="quota", rate=quota.rate)
        violations += [
            v
            for v in rules.limit_violations(as_limit, "tenant.quota")
            if v.field.startswith("tenant.quota.rate")
        ]
    if violations:
        raise codec.invalid(violations)
    return svc.Tenant(name=given.name, quota=given.quota, weight=given.weight, description=given.description)


def page_token(after: str) -> str:
    return base64.urlsafe_b64encode(after.encode()).decode().rstrip("=")


def _after(token: str, violations: list[codec.Violation]) -> str:
    """The name a page token continues after; a violation for one this API never gave."""
    if not token:
        return ""
    name = ""
    if len(token) <= MAX_PAGE_TOKEN_CHARS:
        try:
            name = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        except (binascii.Error, UnicodeDecodeError, ValueError):
            name = ""
    if not tenants.fits(name):
        violations.append(codec.Violation(field="page_token", description="not a token from a previous page"))
    return name


class TenantService(tenant_service_pb2_grpc.TenantServiceServicer):
    def __init__(self, *, store: rpc.Caller, cache: TenantCache, caller: Callable[[], str]) -> None:
        self._store = store
        self._cache = cache
        self._caller = caller

    @classmethod
    def register(
        cls, server: grpc.aio.Server, *, store: rpc.Caller, cache: TenantCache, caller: Callable[[], str]
    ) -> None:
        tenant_service_pb2_grpc.add_TenantServiceServicer_to_server(
            cls(store=store, cache=cache, caller=caller), server
        )

    async def _guard(self, context: Context, call: Callable[[], Awaitable[R]]) -> R:
        return await status.guard(context, call, log, "tenant request failed")

    async def _change(
        self, op: tenants_pb2.ChangeTenantRequest.Op, tenant: svc.Tenant, reason: str = ""
    ) -> svc.Tenant:
        request = tenants_pb2.ChangeTenantRequest(op=op, tenant=tenant, reason=reason, caller=self._caller())
        reply = await self._store.call(contract.STORE_TENANT_CHANGE, request)
        # The next call through this gateway sees the change.
        self._cache.stale()
        return reply.tenant

    async def CreateTenant(
        self, request: svc.CreateTenantRequest, context: Context
    ) -> svc.CreateTenantResponse:
        async def call() -> svc.CreateTenantResponse:
            return svc.CreateTenantResponse(tenant=await self._change(Op.OP_CREATE, _definition(request)))

        return await self._guard(context, call)

    async def UpdateTenant(
        self, request: svc.UpdateTenantRequest, context: Context
    ) -> svc.UpdateTenantResponse:
        async def call() -> svc.UpdateTenantResponse:
            return svc.UpdateTenantResponse(tenant=await self._change(Op.OP_UPDATE, _definition(request)))

        return await self._guard(context, call)

    async def SuspendTenant(
        self, request: svc.SuspendTenantRequest, context: Context
    ) -> svc.SuspendTenantResponse:
        async def call() -> svc.SuspendTenantResponse:
            violations = _name_violations(request.name, "name")
            codec.check_text(violations, "reason", request.reason, max_chars=MAX_REASON_CHARS)
            if violations:
                raise codec.invalid(violations)
            tenant = await self._change(Op.OP_SUSPEND, svc.Tenant(name=request.name), request.reason)
            return svc.SuspendTenantResponse(tenant=tenant)

        return await self._guard(context, call)

    async def ResumeTenant(
        self, request: svc.ResumeTenantRequest, context: Context
    ) -> svc.ResumeTenantResponse:
        async def call() -> svc.ResumeTenantResponse:
            tenant = await self._change(Op.OP_RESUME, svc.Tenant(name=_name(request.name)))
            return svc.ResumeTenantResponse(tenant=tenant)

        return await self._guard(context, call)

    async def GetTenant(self, request: svc.GetTenantRequest, context: Context) -> svc.GetTenantResponse:
        async def call() -> svc.GetTenantResponse:
            name = _name(request.name)
            within = auth.identity().tenant
            # Another tenant's answers as a missing one: the same read, the same error.
            wanted = name if within is None or within == name else ""
            reply = await self._store.call(
                contract.STORE_TENANTS, tenants_pb2.ReadTenantsRequest(names=[wanted])
            )
            for tenant in reply.tenants:
                if tenant.name == name and wanted:
                    return svc.GetTenantResponse(tenant=tenant)
            raise errors.not_found("tenant", name)

        return await self._guard(context, call)

    async def ListTenants(self, request: svc.ListTenantsRequest, context: Context) -> svc.ListTenantsResponse:
        async def call() -> svc.ListTenantsResponse:
            violations: list[codec.Violation] = []
            size = request.page_size or DEFAULT_PAGE_SIZE
            if not 1 <= size <= MAX_PAGE_SIZE:
                violations.append(
                    codec.Violation(
                        field="page_size",
                        description=f"must be between 1 and {MAX_PAGE_SIZE}, got {request.page_size}",
                    )
                )
            after = _after(request.page_token, violations)
            if violations:
                raise codec.invalid(violations)
            reply = await self._store.call(
                contract.STORE_TENANTS, tenants_pb2.ReadTenantsRequest(after=after, limit=size + 1)
            )
            page = list(reply.tenants)[:size]
            out = svc.ListTenantsResponse(tenants=page)
            if len(reply.tenants) > size:
                out.next_page_token = page_token(page[-1].name)
            return out

        return await self._guard(context, call)
