"""The bus as a caller's request reaches it: with the caller's TenantScope.

Every bus request the gateway sends the store (or the scheduler) for a caller has
a ``scope`` field (tenants.proto); the store applies it in the statement that
reads or writes. It is set here, once for every request, from the identity of
the call being served (auth.py), so no handler can forget it. A request that
sets its own scope keeps it: the gateway's own reads shared by many calls (the
limits held, the waits' batched reads) ask for every tenant's rows, and each
call keeps only what its caller may see.
"""

from __future__ import annotations

from typing import Any, TypeVar, Unpack

from google.protobuf.message import Message

from taskyard.bus.v1 import tenants_pb2
from taskyard.core import contract, rpc
from taskyard.gateway import auth

Rq = TypeVar("Rq", bound=Message)
Rp = TypeVar("Rp", bound=Message)
SCOPE_FIELD = "scope"


def every_tenant() -> tenants_pb2.TenantScope:
    """The scope of a read the gateway makes for itself (and then filters per caller)."""
    return tenants_pb2.TenantScope(all=True)


def put_scope(request: Any) -> None:
    """Set the caller's scope on ``request`` unless it has one (or has no such field)."""
    if (
        isinstance(request, Message)
        and SCOPE_FIELD in request.DESCRIPTOR.fields_by_name
        and not request.HasField(SCOPE_FIELD)
    ):
        getattr(request, SCOPE_FIELD).CopyFrom(auth.scope())


class Scoped:
    """``inner``, each request given the caller's scope (``put_scope``)."""

    def __init__(self, inner: rpc.RawCaller) -> None:
        self.inner = inner

    async def call(
        self, method: contract.Method[Rq, Rp], request: Rq | bytes, **options: Unpack[rpc.CallOptions]
    ) -> Rp:
        put_scope(request)
        return await self.inner.call(method, request, **options)

    async def call_raw(
        self, method: contract.Method[Rq, Any], request: Rq | bytes, **options: Unpack[rpc.CallOptions]
    ) -> bytes:
        put_scope(request)
        return await self.inner.call_raw(method, request, **options)
