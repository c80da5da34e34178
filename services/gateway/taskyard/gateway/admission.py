"""How many calls the gateway runs at once, per kind of call.

grpc.aio's ``maximum_concurrent_rpcs`` is one pool for every call: a thousand
``WaitTask`` calls parked on the event stream made ``Health/Check`` and
``GetTask`` fail with RESOURCE_EXHAUSTED. Here long calls (``WaitTask``,
``RunTask`` and ``CancelTask``, which may wait, and every streaming call) and unary calls each
have their own limit, and ``Health/Check`` has none. A call over its limit is
refused at once with RESOURCE_EXHAUSTED and an ErrorInfo (reason
``TOO_MANY_CALLS``); nothing is queued.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import grpc
from grpc_health.v1 import health

from taskyard.core import errors
from taskyard.gateway import status

log = logging.getLogger(__name__)

# The stubs make these generic; grpc's classes are not subscriptable at run time.
if TYPE_CHECKING:
    Handler = grpc.RpcMethodHandler[Any, Any]
    Interceptor = grpc.aio.ServerInterceptor[Any, Any]
else:
    Handler = grpc.RpcMethodHandler
    Interceptor = grpc.aio.ServerInterceptor

# Never limited: a probe must be answered however busy the gateway is.
UNLIMITED_METHODS = frozenset({f"/{health.SERVICE_NAME}/Check"})
# Unary on the wire, but they may wait for a long time.
LONG_UNARY_METHODS = frozenset(f"/taskyard.v1.TaskService/{m}" for m in ("WaitTask", "RunTask", "CancelTask"))


def refusing(handler: Handler, refusal: errors.TaskyardError) -> Handler:
    """A handler of the same shape as ``handler`` that answers every call with ``refusal``."""

    async def refuse(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await status.abort(context, refusal)

    if handler.response_streaming:
        # A streaming handler must be an async generator: an interceptor in front
        # (the tracing one) iterates it, and a coroutine there fails as UNKNOWN.
        async def refuse_stream(
            request: Any, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            await status.abort(context, refusal)
            yield  # never reached: abort raises

        return handler_like(handler, refuse_stream)
    return handler_like(handler, refuse)


def refusing_any(refusal: errors.TaskyardError) -> Handler:
    """A handler that answers a call of any shape with ``refusal``, reading nothing:
    for a method no servicer serves (so its shape is unknown). Every gRPC call is a
    stream on the wire, so a streaming handler fits them all."""

    async def refuse(
        requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[bytes]:
        await status.abort(context, refusal)
        yield b""  # never reached: abort raises

    return grpc.stream_stream_rpc_method_handler(refuse)


def handler_like(handler: Handler, behavior: Callable[..., Any], *, raw: bool = False) -> Handler:
    """A handler of ``handler``'s shape and serializers running ``behavior``; with
    ``raw``, no request deserializer: grpc hands ``behavior`` the request's bytes."""
    args: dict[str, Any] = {
        "request_deserializer": None if raw else handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(behavior, **args)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(behavior, **args)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(behavior, **args)
    return grpc.unary_unary_rpc_method_handler(behavior, **args)


def behavior_of(handler: Handler) -> Callable[..., Any]:
    behavior = handler.stream_stream or handler.stream_unary or handler.unary_stream or handler.unary_unary
    assert behavior is not None
    return behavior


@dataclasses.dataclass(kw_only=True)
class Gate:
    """Calls of one kind in flight, and how many were refused."""

    kind: str
    limit: int
    in_flight: int = 0
    refused: int = 0
    # Set while no call of this kind runs: a stopping gateway waits on it (``drained``).
    idle: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.idle.set()

    def enter(self) -> None:
        self.in_flight += 1
        self.idle.clear()

    def leave(self) -> None:
        self.in_flight -= 1
        if not self.in_flight:
            self.idle.set()

    def refusal(self) -> errors.TaskyardError:
        return errors.TaskyardError(
            errors.Code.RESOURCE_EXHAUSTED,
            "TOO_MANY_CALLS",
            f"the gateway already runs {self.limit} {self.kind} calls; retry with backoff",
        )


def guarded(handler: Handler, gate: Gate) -> Handler:
    """``handler`` counted against ``gate``: refused when the gate is full."""
    behavior = behavior_of(handler)

    if inspect.isasyncgenfunction(behavior):

        async def stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
            if gate.in_flight >= gate.limit:
                gate.refused += 1
                await status.abort(context, gate.refusal())
            gate.enter()
            try:
                async for item in behavior(request, context):
                    yield item
            finally:
                gate.leave()

        return handler_like(handler, stream)

    async def call(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        if gate.in_flight >= gate.limit:
            gate.refused += 1
            await status.abort(context, gate.refusal())
        gate.enter()
        try:
            return await behavior(request, context)
        finally:
            gate.leave()

    return handler_like(handler, call)


class Admission(Interceptor):
    """Counts every call but ``Health/Check`` against the unary or the long gate."""

    def __init__(self, *, unary_limit: int, long_limit: int) -> None:
        if unary_limit < 1 or long_limit < 1:
            raise ValueError("call limits must be at least 1")
        self.unary = Gate(kind="unary", limit=unary_limit)
        self.long = Gate(kind="long (WaitTask, RunTask, CancelTask, streaming)", limit=long_limit)
        # The server hands back the same handler for a method each time: wrap it once.
        self._wrapped: dict[str, tuple[Handler, Handler]] = {}

    async def drained(self) -> None:
        """Returns once no admitted call runs: every call but ``Health/Check``."""
        while not (self.unary.idle.is_set() and self.long.idle.is_set()):
            await self.unary.idle.wait()
            await self.long.idle.wait()

    def gate_of(self, method: str, handler: Handler) -> Gate | None:
        if method in UNLIMITED_METHODS:
            return None
        if handler.request_streaming or handler.response_streaming or method in LONG_UNARY_METHODS:
            return self.long
        return self.unary

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        method = handler_call_details.method
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        gate = self.gate_of(method, handler)
        wrapped = handler if gate is None else guarded(handler, gate)
        self._wrapped[method] = (handler, wrapped)
        return wrapped
