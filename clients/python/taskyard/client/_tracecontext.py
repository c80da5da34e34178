"""W3C trace context on every call, from the caller's OpenTelemetry context.

When the application runs inside an OpenTelemetry span, each call to the gateway
carries ``traceparent`` (and ``tracestate``), so the submitted task joins the
application's trace: its span is the root of everything the task does. Without
the OpenTelemetry API installed, or outside any span, calls go out unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio

try:
    from opentelemetry import propagate
except ImportError:  # the API is optional for the client
    propagate = None  # type: ignore[assignment]


def _with_context(details: Any, rebuild: Callable[..., Any]) -> Any:
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    if not carrier:
        return details
    metadata = [(k, v) for k, v in (details.metadata or ()) if k not in carrier]
    metadata.extend(carrier.items())
    return rebuild(details, metadata)


class _Details(grpc.ClientCallDetails):
    def __init__(self, details: Any, metadata: list[tuple[str, str]]) -> None:
        self.method = details.method
        self.timeout = details.timeout
        self.metadata = tuple(metadata)
        self.credentials = details.credentials
        self.wait_for_ready = details.wait_for_ready
        self.compression = details.compression


def _aio_details(details: Any, metadata: list[tuple[str, str]]) -> grpc.aio.ClientCallDetails:
    return grpc.aio.ClientCallDetails(
        details.method,
        details.timeout,
        grpc.aio.Metadata(*metadata),
        details.credentials,
        details.wait_for_ready,
    )


class _Interceptor(
    grpc.UnaryUnaryClientInterceptor,  # type: ignore[type-arg]
    grpc.UnaryStreamClientInterceptor,  # type: ignore[type-arg]
):
    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(_with_context(details, _Details), request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(_with_context(details, _Details), request)


class _AioUnaryUnary(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[type-arg]
    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(_with_context(details, _aio_details), request)


class _AioUnaryStream(grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[type-arg]
    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(_with_context(details, _aio_details), request)


def traced(channel: grpc.Channel) -> grpc.Channel:
    """``channel`` with trace context on its calls (as is without OpenTelemetry)."""
    return channel if propagate is None else grpc.intercept_channel(channel, _Interceptor())


def aio_interceptors() -> list[Any]:
    """The interceptors an asyncio channel needs for the same (none without OpenTelemetry)."""
    return [] if propagate is None else [_AioUnaryUnary(), _AioUnaryStream()]
