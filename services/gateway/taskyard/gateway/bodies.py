"""Request bodies decoded where a bad one can be answered as the client's mistake.

grpc.aio decodes a request before any handler runs, and answers a body that is
not the method's message with UNKNOWN ("Exception deserializing request!") and no
details, as if the server had failed. This interceptor is the innermost: it hands
grpc a handler that takes the bytes as they came and decodes them itself, so an
undecodable body is refused with INVALID_ARGUMENT (reason ``MALFORMED_REQUEST``)
before the servicer sees it. Interceptors outside it see the bytes, not the
message: none of them reads a request.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from taskyard.core import errors
from taskyard.gateway import admission, status

MALFORMED_REQUEST = "MALFORMED_REQUEST"
Context = grpc.aio.ServicerContext[Any, Any]


def _message_name(parse: Callable[[bytes], Any]) -> str:
    owner = getattr(parse, "__self__", None)  # Message.FromString is a classmethod
    descriptor = getattr(owner, "DESCRIPTOR", None)
    return str(getattr(descriptor, "full_name", "")) or "request"


def decoding(handler: admission.Handler) -> admission.Handler:
    """``handler`` taking raw bytes and decoding them itself; INVALID_ARGUMENT when it cannot."""
    parse = handler.request_deserializer
    if parse is None:
        return handler
    behavior = admission.behavior_of(handler)
    refusal = errors.TaskyardError(
        errors.Code.INVALID_ARGUMENT,
        MALFORMED_REQUEST,
        f"the request body is not a valid {_message_name(parse)} message (protobuf binary)",
    )

    async def decoded(raw: bytes, context: Context) -> Any:
        try:
            return parse(raw)
        except Exception:  # whatever the message's parser raises: the body is not one
            await status.abort(context, refusal)

    if handler.request_streaming:

        async def messages(raws: AsyncIterator[bytes], context: Context) -> AsyncIterator[Any]:
            async for raw in raws:
                yield await decoded(raw, context)

        if inspect.isasyncgenfunction(behavior):

            async def stream_of_stream(raws: AsyncIterator[bytes], context: Context) -> AsyncIterator[Any]:
                async for item in behavior(messages(raws, context), context):
                    yield item

            return admission.handler_like(handler, stream_of_stream, raw=True)

        async def call_of_stream(raws: AsyncIterator[bytes], context: Context) -> Any:
            return await behavior(messages(raws, context), context)

        return admission.handler_like(handler, call_of_stream, raw=True)

    if inspect.isasyncgenfunction(behavior):

        async def stream(raw: bytes, context: Context) -> AsyncIterator[Any]:
            request = await decoded(raw, context)
            async for item in behavior(request, context):
                yield item

        return admission.handler_like(handler, stream, raw=True)

    async def call(raw: bytes, context: Context) -> Any:
        return await behavior(await decoded(raw, context), context)

    return admission.handler_like(handler, call, raw=True)


class Decoder(admission.Interceptor):
    """Every served method's handler, ``decoding``: the innermost interceptor."""

    def __init__(self) -> None:
        # The server hands back the same handler for a method each time: wrap it once.
        self._wrapped: dict[str, tuple[admission.Handler, admission.Handler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[admission.Handler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> admission.Handler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        method = handler_call_details.method
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = decoding(handler)
        self._wrapped[method] = (handler, wrapped)
        return wrapped
