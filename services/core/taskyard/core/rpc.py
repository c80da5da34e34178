"""Request/reply between services: NNG REQ/REP in raw mode, read on the event loop.

pynng's cooked contexts complete every send and receive on an NNG thread that must
take the GIL and wake the loop: two thread hand-offs a message. Raw sockets hand over
each message with its routing header instead; the loop reads when NNG's receive
descriptor is readable and sends without blocking. What cooked REQ/REP did is done
here (docs/internals.md, "Addresses"):

- a requester numbers its requests (32 bits, top bit set: the wire format), matches
  replies by id and drops a reply no one waits for any more;
- when its pipe closes, every request still waiting is sent again, sealed afresh, on
  the next pipe: a request may reach a handler twice, as with cooked REQ, and every
  write the bus carries is guarded against applying twice;
- a responder answers with the header its request came with (pipe, then id) and runs
  at most ``concurrency`` handlers; beyond that it stops reading and NNG buffers the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import logging
import secrets
import struct
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Generic, Protocol, TypeVar

import pynng
from google.protobuf.message import DecodeError, Message
from pynng import lib

from taskyard.bus.v1 import envelope_pb2
from taskyard.core import contract, errors, telemetry, transport, wire

log = logging.getLogger(__name__)

M = TypeVar("M", bound=Message)

_REQUEST_ID = struct.Struct(">I")
_LAST_HOP = 0x80000000  # the top bit marks the request id, the last word of a REQ header
Req = TypeVar("Req", bound=Message)
Rq = TypeVar("Rq", bound=Message)
Rp = TypeVar("Rp", bound=Message)


@dataclasses.dataclass(slots=True)
class _Waiting:
    future: asyncio.Future[bytes]
    data: bytes  # the envelope, unsealed: a resend is sealed afresh


class Caller(Protocol):
    """What a component needs to call a bus method (a Requester, or a fake in tests)."""

    async def call(
        self,
        method: contract.Method[Rq, Rp],
        request: Rq | bytes,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - a per-request RPC limit
        headers: Mapping[str, str] | None = None,
    ) -> Rp: ...


class RawCaller(Caller, Protocol):
    """A Caller that can also hand back a reply's bytes unparsed (for relays)."""

    async def call_raw(
        self,
        method: contract.Method[Rq, Any],
        request: Rq | bytes,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - a per-request RPC limit
        headers: Mapping[str, str] | None = None,
    ) -> bytes: ...


class Requester:
    """Requests to the responder at one address; any number may wait at once, each
    for its own reply."""

    def __init__(self, address: str, *, max_message_bytes: int, timeout: float) -> None:
        self.address = address
        self.timeout = timeout
        self._sock = transport.open_socket(
            pynng.Req0,
            max_message_bytes=max_message_bytes,
            dial=address,
            opener=lib.nng_req0_open_raw,
            send_buffer_size=wire.BUFFER_MESSAGES,
            recv_buffer_size=wire.BUFFER_MESSAGES,
        )
        self._waiting: dict[bytes, _Waiting] = {}
        self._ids = itertools.count(secrets.randbits(31))
        self._reader = wire.Reader(self._sock, self._reply)
        self._resends: set[asyncio.Task[None]] = set()
        self._sock.add_post_pipe_remove_cb(self._pipe_closed)

    async def call(
        self,
        method: contract.Method[Rq, Rp],
        request: Rq | bytes,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - a per-request RPC limit
        headers: Mapping[str, str] | None = None,
    ) -> Rp:
        """``request`` may be serialized already (bytes passed on as they are)."""
        return transport.unpack(await self._call(method.kind, request, timeout, headers), method.reply)

    async def call_raw(
        self,
        method: contract.Method[Rq, Any],
        request: Rq | bytes,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - a per-request RPC limit
        headers: Mapping[str, str] | None = None,
    ) -> bytes:
        """The reply's payload unparsed: for a caller that passes it on, or parses
        only a view of it."""
        return (await self._call(method.kind, request, timeout, headers)).payload

    async def _call(
        self,
        kind: int,
        payload: Message | bytes,
        timeout: float | None,  # noqa: ASYNC109 - a per-request RPC limit
        headers: Mapping[str, str] | None,
    ) -> envelope_pb2.Envelope:
        limit = self.timeout if timeout is None else timeout
        hdrs = telemetry.inject(dict(headers) if headers else None)
        data = transport.encode(kind, payload, headers=hdrs, deadline_ms=int((time.time() + limit) * 1000))
        loop = asyncio.get_running_loop()
        self._reader.start(loop)
        request_id = _REQUEST_ID.pack((next(self._ids) & 0x7FFFFFFF) | _LAST_HOP)
        waiting = _Waiting(loop.create_future(), data)
        self._waiting[request_id] = waiting
        try:
            # The send waits for a connected peer, so it is inside the limit too.
            async with asyncio.timeout(limit):
                await wire.send(self._sock, request_id, self._sock._seal.seal(data))
                raw = await waiting.future
        except (TimeoutError, pynng.Timeout) as exc:
            raise errors.deadline(f"no reply from {self.address} within {limit:.1f}s") from exc
        except pynng.NNGException as exc:
            raise errors.unavailable(f"{self.address}: {exc}") from exc
        finally:
            self._waiting.pop(request_id, None)
        env = transport.decode(raw)
        if env.HasField("error"):
            raise errors.TaskyardError.from_proto(env.error)
        return env

    def _reply(self, header: bytes, body: bytes) -> None:
        waiting = self._waiting.get(header)
        if waiting is not None and not waiting.future.done():
            waiting.future.set_result(body)

    def _pipe_closed(self, _pipe: Any) -> None:
        loop = self._reader.loop
        if loop is not None:
            transport.call_from_nng_thread(loop, self._resend)

    def _resend(self) -> None:
        for request_id, waiting in list(self._waiting.items()):
            if waiting.future.done():
                continue
            try:
                if wire.put(self._sock, request_id, self._sock._seal.seal(waiting.data)):
                    continue
            except pynng.NNGException:
                return  # closed
            task = asyncio.get_running_loop().create_task(self._resend_later(request_id, waiting))
            self._resends.add(task)
            task.add_done_callback(self._resends.discard)

    async def _resend_later(self, request_id: bytes, waiting: _Waiting) -> None:
        with contextlib.suppress(pynng.NNGException):
            send = asyncio.ensure_future(
                wire.send(self._sock, request_id, self._sock._seal.seal(waiting.data))
            )
            # Stop trying once the request is answered or abandoned.
            await asyncio.wait((send, waiting.future), return_when=asyncio.FIRST_COMPLETED)
            send.cancel()

    def close(self) -> None:
        self._reader.stop()
        for task in self._resends:
            task.cancel()
        self._sock.close()
        for waiting in self._waiting.values():
            if not waiting.future.done() and not waiting.future.get_loop().is_closed():
                waiting.future.set_exception(pynng.Closed("requester closed", lib.NNG_ECLOSED))


@dataclasses.dataclass(frozen=True)
class Route(Generic[Req]):
    """A contract method served by a handler of the parsed request (``serve``)."""

    method: contract.Method[Req, Any]
    handler: Callable[[Req, envelope_pb2.Envelope], Awaitable[Message]]


@dataclasses.dataclass(frozen=True)
class RawRoute:
    """A route whose handler gets the request's payload unparsed and may answer
    with a serialized message: for a handler that passes the bytes on (or reads
    only a view of them) instead of decoding and re-encoding every field."""

    method: contract.Method[Any, Any]
    handler: Callable[[bytes, envelope_pb2.Envelope], Awaitable[Message | bytes]]


def serve(
    method: contract.Method[Rq, Rp], handler: Callable[[Rq, envelope_pb2.Envelope], Awaitable[Rp]]
) -> Route[Rq]:
    """The route of ``method`` to ``handler`` (checked against the contract when a
    Responder takes it)."""
    return Route(method, handler)


def serve_call(method: contract.Method[Rq, Rp], fn: Callable[[Rq], Awaitable[Rp]]) -> Route[Rq]:
    """The route of ``method`` to a handler of the request alone (no envelope)."""
    contract.check_handler(method, fn)

    async def handler(request: Rq, env: envelope_pb2.Envelope) -> Rp:
        return await fn(request)

    return Route(method, handler)


def serve_raw(
    method: contract.Method[Any, Rp], handler: Callable[[bytes, envelope_pb2.Envelope], Awaitable[Rp | bytes]]
) -> RawRoute:
    """The route of ``method`` to a handler of the request's bytes."""
    return RawRoute(method, handler)


def route_table(routes: Iterable[Route[Any] | RawRoute]) -> dict[int, Route[Any] | RawRoute]:
    """Routes by kind. Each must be the contract's method for its kind, served once,
    by a handler whose annotations agree with the method (``contract.check_handler``)."""
    table: dict[int, Route[Any] | RawRoute] = {}
    for route in routes:
        method = route.method
        if contract.METHODS.get(method.kind) is not method:
            raise TypeError(f"{method}: not the contract's method for kind {method.kind}")
        if method.kind in table:
            raise TypeError(f"{method}: served twice")
        contract.check_handler(method, route.handler, raw=isinstance(route, RawRoute))
        table[method.kind] = route
    return table


class Responder:
    """Requests to one listening address, each handled by its route's handler, up
    to ``concurrency`` at once: that is what lets the result-store group-commit
    concurrent writes."""

    def __init__(
        self,
        address: str,
        routes: Iterable[Route[Any] | RawRoute],
        *,
        max_message_bytes: int,
        concurrency: int = 64,
    ) -> None:
        self.address = address
        self._routes = route_table(routes)
        self._concurrency = concurrency
        self._sock = transport.open_socket(
            pynng.Rep0,
            max_message_bytes=max_message_bytes,
            listen=address,
            opener=lib.nng_rep0_open_raw,
            send_buffer_size=wire.BUFFER_MESSAGES,
            recv_buffer_size=wire.BUFFER_MESSAGES,
        )
        self._reader = wire.Reader(self._sock, self._request)
        self._handling: set[asyncio.Task[None]] = set()
        self._stopped: asyncio.Future[None] | None = None
        self._closed = False

    async def serve(self) -> None:
        """Serve until ``close()`` (or cancelled); handlers still running then are cancelled."""
        loop = asyncio.get_running_loop()
        self._stopped = loop.create_future()
        if self._closed:
            return
        self._reader.start(loop)
        try:
            await self._stopped
        finally:
            self._reader.stop()
            running = list(self._handling)
            for task in running:
                task.cancel()
            if running:
                await asyncio.gather(*running, return_exceptions=True)

    def _request(self, header: bytes, body: bytes) -> None:
        loop = self._reader.loop
        assert loop is not None
        task = loop.create_task(self._answer(header, body))
        self._handling.add(task)
        task.add_done_callback(self._answered)
        if len(self._handling) >= self._concurrency:
            self._reader.stop()  # the rest waits in NNG until a handler finishes

    def _answered(self, task: asyncio.Task[None]) -> None:
        self._handling.discard(task)
        loop = self._reader.loop
        room = len(self._handling) < self._concurrency
        if room and not self._closed and not self._reader.on and loop is not None:
            self._reader.start(loop)
            self._reader.poll()  # what waited meanwhile; the descriptor may not change state

    async def _answer(self, header: bytes, raw: bytes) -> None:
        reply = await self._handle(raw)
        try:
            await wire.send(self._sock, header, self._sock._seal.seal(reply))
        except pynng.NNGException as exc:  # closed, or the requester went away
            log.debug("reply dropped: %s", exc)

    async def _handle(self, raw: bytes) -> bytes:
        try:
            env = transport.decode(raw)
        except DecodeError:
            return _error_reply("", errors.internal("malformed envelope"))
        route = self._routes.get(env.kind)
        if route is None:
            return _error_reply(env.message_id, errors.internal(f"no route for kind {env.kind}"))
        try:
            reply: Message | bytes
            if isinstance(route, RawRoute):
                with telemetry.attached(env.headers):
                    reply = await route.handler(env.payload, env)
            else:
                request = transport.unpack(env, route.method.request)
                with telemetry.attached(env.headers):
                    reply = await route.handler(request, env)
        except errors.TaskyardError as exc:
            return _error_reply(env.message_id, exc)
        except DecodeError:
            return _error_reply(env.message_id, errors.internal("malformed payload"))
        except Exception as exc:  # a handler bug must not stop the responder
            log.exception("handler for kind %s failed", env.kind)
            return _error_reply(env.message_id, errors.internal(f"{type(exc).__name__}: {exc}"))
        return transport.encode(env.kind, reply, message_id=env.message_id)

    def close(self) -> None:
        self._closed = True
        self._reader.stop()
        self._sock.close()
        stopped = self._stopped
        if stopped is not None and not stopped.done() and not stopped.get_loop().is_closed():
            stopped.set_result(None)


def _error_reply(message_id: str, exc: errors.TaskyardError) -> bytes:
    env = envelope_pb2.Envelope(message_id=message_id or uuid.uuid4().hex)
    env.error.CopyFrom(exc.to_proto())
    return env.SerializeToString()
