"""Tenants for the benchmarks (bench/fairness --tenants, bench/tenants): a tokens file
with an operator token and one token per tenant (the file's `tenant=NAME` field,
docs/tenants.md), and the tenants made through TenantService with the operator's
token, as an operator of a shared suite makes them."""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
from collections.abc import Sequence

import grpc
from _submit import bearer

from taskyard.v1 import limit_pb2, tenant_service_pb2, tenant_service_pb2_grpc


@dataclasses.dataclass(frozen=True, kw_only=True)
class Tokens:
    operator: str
    # Each tenant's token (scopes submit and read), by the tenant's name.
    by_tenant: dict[str, str]

    def file_text(self) -> str:
        lines = ["# token  scopes  name  [tenant]", f"{self.operator}  admin  operator"]
        lines += [f"{t}  submit,read  {name}-producer  tenant={name}" for name, t in self.by_tenant.items()]
        return "\n".join(lines) + "\n"


def make_tokens(tenants: Sequence[str]) -> Tokens:
    return Tokens(
        operator=f"op-{secrets.token_urlsafe(24)}",
        by_tenant={name: f"{name}-{secrets.token_urlsafe(24)}" for name in tenants},
    )


def quota(max_concurrency: int, rate_units: int, rate_seconds: int) -> tenant_service_pb2.TenantQuota:
    """A quota: at most ``max_concurrency`` attempts at once and ``rate_units`` started
    per ``rate_seconds`` (burst the same)."""
    rate = limit_pb2.RateLimit(units=rate_units, burst=rate_units)
    rate.period.FromSeconds(rate_seconds)
    return tenant_service_pb2.TenantQuota(max_concurrency=max_concurrency, rate=rate)


async def create_tenants(
    target: str,
    operator: str,
    names: Sequence[str],
    *,
    quota: tenant_service_pb2.TenantQuota | None = None,
    parallel: int = 8,
) -> None:
    """CreateTenant for each name (``parallel`` calls at once), with the operator's token."""
    todo = list(names)

    async def one_caller(stub: tenant_service_pb2_grpc.TenantServiceStub) -> None:
        while todo:
            tenant = tenant_service_pb2.Tenant(name=todo.pop(), description="bench")
            if quota is not None:
                tenant.quota.CopyFrom(quota)
            await stub.CreateTenant(
                tenant_service_pb2.CreateTenantRequest(tenant=tenant), timeout=30, metadata=bearer(operator)
            )

    async with grpc.aio.insecure_channel(target) as channel:
        stub = tenant_service_pb2_grpc.TenantServiceStub(channel)
        await asyncio.gather(*(one_caller(stub) for _ in range(parallel)))


async def list_tenants(target: str, operator: str) -> list[tenant_service_pb2.Tenant]:
    """Every tenant, through ListTenants' pages."""
    found: list[tenant_service_pb2.Tenant] = []
    page_token = ""
    async with grpc.aio.insecure_channel(target) as channel:
        stub = tenant_service_pb2_grpc.TenantServiceStub(channel)
        while True:
            reply = await stub.ListTenants(
                tenant_service_pb2.ListTenantsRequest(page_size=1000, page_token=page_token),
                timeout=30,
                metadata=bearer(operator),
            )
            found += reply.tenants
            page_token = reply.next_page_token
            if not page_token:
                return found
