"""Tenants: ``client.tenants`` (TenantService), for operator tokens.

with Client(token=operator_token) as c:
    c.tenants.create("acme", max_concurrency=50, rate=Rate(units=100, period=timedelta(seconds=1)), weight=2)
    c.tenants.suspend("acme", reason="invoice overdue")   # its submissions refused, its tasks wait
    c.tenants.resume("acme")
    for t in c.tenants: print(t.name, t.state.name)

Every call but ``get`` takes an operator token (a token without ``tenant=`` in the tokens
file): a tenant token gets PERMISSION_DENIED, reason OPERATOR_ONLY. A tenant token may
``get`` its own tenant; any other name is NOT_FOUND, as a missing one (docs/tenants.md).
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import grpc

from taskyard.client._common import request_from
from taskyard.client._flow import Rate
from taskyard.v1 import limit_pb2, tenant_service_pb2, tenant_service_pb2_grpc


class TenantState(enum.IntEnum):
    """``taskyard.v1.TenantState``, value for value."""

    UNSPECIFIED = 0
    ACTIVE = 1
    SUSPENDED = 2

    @classmethod
    def from_wire(cls, value: int) -> TenantState:
        return cls(value) if value in cls._value2member_map_ else cls.UNSPECIFIED


def _when(msg: Any, field: str) -> datetime.datetime | None:
    return getattr(msg, field).ToDatetime(tzinfo=datetime.UTC) if msg.HasField(field) else None


@dataclasses.dataclass(frozen=True, kw_only=True)
class TenantInfo:
    """A tenant: its state, its quota (``max_concurrency`` attempts at once, 0: no bound;
    ``rate``, attempts started per period, None: no bound), its ``weight`` in fair share
    against the other tenants (1 to 1,000) and a description."""

    name: str
    state: TenantState
    max_concurrency: int
    rate: Rate | None
    weight: int
    description: str
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None
    # Set while suspended.
    suspended_at: datetime.datetime | None

    @property
    def suspended(self) -> bool:
        return self.state is TenantState.SUSPENDED

    @classmethod
    def from_proto(cls, m: tenant_service_pb2.Tenant) -> TenantInfo:
        q = m.quota
        rate = q.rate if q.HasField("rate") else None
        return cls(
            name=m.name,
            state=TenantState.from_wire(m.state),
            max_concurrency=q.max_concurrency,
            rate=None
            if rate is None
            else Rate(units=rate.units, period=rate.period.ToTimedelta(), burst=rate.burst),
            weight=m.weight,
            description=m.description,
            created_at=_when(m, "created_at"),
            updated_at=_when(m, "updated_at"),
            suspended_at=_when(m, "suspended_at"),
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class TenantPage:
    tenants: tuple[TenantInfo, ...]
    next_page_token: str


def definition(
    name: str,
    *,
    max_concurrency: int = 0,
    rate: Rate | None = None,
    weight: int = 0,
    description: str = "",
) -> tenant_service_pb2.Tenant:
    """A tenant as CreateTenant and UpdateTenant read it: its name, its quota
    (``max_concurrency`` attempts of its tasks at once, 0: no bound; ``rate`` attempts
    started per period, None: no bound), its ``weight`` (1 to 1,000; 0 means 1) and its
    description (at most 1,024 characters). The gateway checks the name and the numbers
    (INVALID_ARGUMENT with the fields named).

    ``update`` sends the whole of it, as UpdateTenant replaces quota, weight and
    description: an option left out is reset to its default."""
    if rate is not None and not isinstance(rate, Rate):
        # A bare number has no period; "100/s" is the CLI's spelling, not the client's.
        raise TypeError(f"rate= takes a Rate(units=..., period=...), got {type(rate).__name__}")
    tenant = tenant_service_pb2.Tenant(name=name, weight=weight, description=description)
    tenant.quota.max_concurrency = max_concurrency
    if rate is not None:
        tenant.quota.rate.CopyFrom(limit_pb2.RateLimit(units=rate.units, burst=rate.burst))
        tenant.quota.rate.period.FromTimedelta(rate.period)
    return tenant


def _page(resp: tenant_service_pb2.ListTenantsResponse) -> TenantPage:
    return TenantPage(
        tenants=tuple(TenantInfo.from_proto(t) for t in resp.tenants), next_page_token=resp.next_page_token
    )


class Tenants:
    """The blocking client's ``client.tenants``: tenants by name (operator tokens)."""

    def __init__(self, channel: grpc.Channel, call: Callable[[Callable[..., Any], Any], Any]) -> None:
        self._stub = tenant_service_pb2_grpc.TenantServiceStub(channel)
        self._call = call

    @request_from(definition)
    def create(self, tenant: tenant_service_pb2.Tenant) -> TenantInfo:
        """Create tenant ``name`` (ACTIVE). ALREADY_EXISTS when the name is taken."""
        req = tenant_service_pb2.CreateTenantRequest(tenant=tenant)
        return TenantInfo.from_proto(self._call(self._stub.CreateTenant, req).tenant)

    def get(self, name: str) -> TenantInfo:
        req = tenant_service_pb2.GetTenantRequest(name=name)
        return TenantInfo.from_proto(self._call(self._stub.GetTenant, req).tenant)

    def list(self, *, page_size: int = 0, page_token: str = "") -> TenantPage:
        """One page of tenants by name (``page_size`` 0 means 100, at most 1000)."""
        req = tenant_service_pb2.ListTenantsRequest(page_size=page_size, page_token=page_token)
        return _page(self._call(self._stub.ListTenants, req))

    def __iter__(self) -> Iterator[TenantInfo]:
        """Every tenant by name, fetching pages as needed."""
        token = ""
        while True:
            page = self.list(page_token=token)
            yield from page.tenants
            token = page.next_page_token
            if not token:
                return

    @request_from(definition)
    def update(self, tenant: tenant_service_pb2.Tenant) -> TenantInfo:
        """Replace tenant ``name``'s quota, weight and description (an option left out is
        reset to its default); NOT_FOUND when there is none."""
        req = tenant_service_pb2.UpdateTenantRequest(tenant=tenant)
        return TenantInfo.from_proto(self._call(self._stub.UpdateTenant, req).tenant)

    def suspend(self, name: str, reason: str = "") -> TenantInfo:
        """Stop the tenant's dispatch and refuse its submissions (FAILED_PRECONDITION,
        reason TENANT_SUSPENDED); nothing it had is lost. ``reason`` goes in the audit event."""
        req = tenant_service_pb2.SuspendTenantRequest(name=name, reason=reason)
        return TenantInfo.from_proto(self._call(self._stub.SuspendTenant, req).tenant)

    def resume(self, name: str) -> TenantInfo:
        """Dispatch its tasks and take its submissions again."""
        req = tenant_service_pb2.ResumeTenantRequest(name=name)
        return TenantInfo.from_proto(self._call(self._stub.ResumeTenant, req).tenant)


class AsyncTenants:
    """The asyncio client's ``client.tenants`` (same methods, awaitable; ``async for`` iterates)."""

    def __init__(
        self, channel: grpc.aio.Channel, call: Callable[[Callable[..., Any], Any], Awaitable[Any]]
    ) -> None:
        self._stub = tenant_service_pb2_grpc.TenantServiceStub(channel)
        self._call = call

    @request_from(definition)
    async def create(self, tenant: tenant_service_pb2.Tenant) -> TenantInfo:
        req = tenant_service_pb2.CreateTenantRequest(tenant=tenant)
        return TenantInfo.from_proto((await self._call(self._stub.CreateTenant, req)).tenant)

    async def get(self, name: str) -> TenantInfo:
        req = tenant_service_pb2.GetTenantRequest(name=name)
        return TenantInfo.from_proto((await self._call(self._stub.GetTenant, req)).tenant)

    async def list(self, *, page_size: int = 0, page_token: str = "") -> TenantPage:
        req = tenant_service_pb2.ListTenantsRequest(page_size=page_size, page_token=page_token)
        return _page(await self._call(self._stub.ListTenants, req))

    async def __aiter__(self) -> AsyncIterator[TenantInfo]:
        token = ""
        while True:
            page = await self.list(page_token=token)
            for tenant in page.tenants:
                yield tenant
            token = page.next_page_token
            if not token:
                return

    @request_from(definition)
    async def update(self, tenant: tenant_service_pb2.Tenant) -> TenantInfo:
        req = tenant_service_pb2.UpdateTenantRequest(tenant=tenant)
        return TenantInfo.from_proto((await self._call(self._stub.UpdateTenant, req)).tenant)

    async def suspend(self, name: str, reason: str = "") -> TenantInfo:
        req = tenant_service_pb2.SuspendTenantRequest(name=name, reason=reason)
        return TenantInfo.from_proto((await self._call(self._stub.SuspendTenant, req)).tenant)

    async def resume(self, name: str) -> TenantInfo:
        req = tenant_service_pb2.ResumeTenantRequest(name=name)
        return TenantInfo.from_proto((await self._call(self._stub.ResumeTenant, req)).tenant)
