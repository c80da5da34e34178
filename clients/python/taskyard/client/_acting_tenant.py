"""The tenant an operator token acts as: ``taskyard-tenant`` metadata on every call.

An operator token (one without ``tenant=`` in the gateway's tokens file) acts on every
tenant; with this metadata it acts exactly as that tenant's token would (its tasks, its
queues, schedules and limits), and keeps the operator-only RPCs. A tenant token sending
another tenant's name is refused (PERMISSION_DENIED, reason OPERATOR_ONLY); its own name
changes nothing (docs/tenants.md).
"""

from __future__ import annotations

import re
from typing import Any

import grpc
import grpc.aio

METADATA_KEY = "taskyard-tenant"
# As the gateway checks it (taskyard.core.tenants, which the client does not depend on).
_NAME = re.compile(r"[a-z0-9-]{1,64}")


def checked(tenant: str) -> str:
    """``tenant`` when it names a tenant; ValueError (now, not on the first call) otherwise."""
    if not _NAME.fullmatch(tenant):
        shown = tenant if len(tenant) <= 64 else tenant[:64] + "…"
        raise ValueError(f"tenant must be 1 to 64 characters of [a-z0-9-], got {shown!r}")
    return tenant


def _metadata(details: Any, tenant: str) -> list[tuple[str, str]]:
    metadata = [(k, v) for k, v in (details.metadata or ()) if k != METADATA_KEY]
    metadata.append((METADATA_KEY, tenant))
    return metadata


class _Details(grpc.ClientCallDetails):
    def __init__(self, details: Any, tenant: str) -> None:
        self.method = details.method
        self.timeout = details.timeout
        self.metadata = tuple(_metadata(details, tenant))
        self.credentials = details.credentials
        self.wait_for_ready = details.wait_for_ready
        self.compression = details.compression


class _Interceptor(
    grpc.UnaryUnaryClientInterceptor,  # type: ignore[type-arg]
    grpc.UnaryStreamClientInterceptor,  # type: ignore[type-arg]
    grpc.StreamUnaryClientInterceptor,  # type: ignore[type-arg]
    grpc.StreamStreamClientInterceptor,  # type: ignore[type-arg]
):
    def __init__(self, tenant: str) -> None:
        self._tenant = tenant

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(_Details(details, self._tenant), request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(_Details(details, self._tenant), request)

    def intercept_stream_unary(self, continuation: Any, details: Any, requests: Any) -> Any:
        return continuation(_Details(details, self._tenant), requests)

    def intercept_stream_stream(self, continuation: Any, details: Any, requests: Any) -> Any:
        return continuation(_Details(details, self._tenant), requests)


def _aio_details(details: Any, tenant: str) -> grpc.aio.ClientCallDetails:
    return grpc.aio.ClientCallDetails(
        details.method,
        details.timeout,
        grpc.aio.Metadata(*_metadata(details, tenant)),
        details.credentials,
        details.wait_for_ready,
    )


class _AioUnaryUnary(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[type-arg]
    def __init__(self, tenant: str) -> None:
        self._tenant = tenant

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(_aio_details(details, self._tenant), request)


class _AioUnaryStream(grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[type-arg]
    def __init__(self, tenant: str) -> None:
        self._tenant = tenant

    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(_aio_details(details, self._tenant), request)


class _AioStreamUnary(grpc.aio.StreamUnaryClientInterceptor):  # type: ignore[type-arg]
    def __init__(self, tenant: str) -> None:
        self._tenant = tenant

    async def intercept_stream_unary(self, continuation: Any, details: Any, requests: Any) -> Any:
        return await continuation(_aio_details(details, self._tenant), requests)


class _AioStreamStream(grpc.aio.StreamStreamClientInterceptor):  # type: ignore[type-arg]
    def __init__(self, tenant: str) -> None:
        self._tenant = tenant

    async def intercept_stream_stream(self, continuation: Any, details: Any, requests: Any) -> Any:
        return await continuation(_aio_details(details, self._tenant), requests)


def acting(channel: grpc.Channel, tenant: str | None) -> grpc.Channel:
    """``channel`` with ``tenant`` on its calls (as is for None or "")."""
    return grpc.intercept_channel(channel, _Interceptor(tenant)) if tenant else channel


def aio_interceptors(tenant: str | None) -> list[Any]:
    """The interceptors an asyncio channel needs for the same (none for None or "")."""
    if not tenant:
        return []
    return [
        _AioUnaryUnary(tenant),
        _AioUnaryStream(tenant),
        _AioStreamUnary(tenant),
        _AioStreamStream(tenant),
    ]
