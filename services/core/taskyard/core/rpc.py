"""Request/reply between services over NNG REQ/REP, typed by ``core.contract``.

The requester runs REQ in raw mode, read on the event loop: pynng's cooked contexts
complete every send and receive on an NNG thread that must take the GIL and wake the
loop (two thread hand-offs a message), while a raw socket hands each reply over with
its request id when NNG's receive descriptor is readable. What cooked REQ did is done
here: requests are numbered (32 bits, top bit set: the wire format), replies matched by
id (one nobody waits for is dropped), and a request that went down with a pipe is sent
again, sealed afresh, on another (as with cooked REQ, a request may reach a handler
twice; every write the bus carries is guarded against applying twice). The responder
keeps cooked contexts (see ``Responder``).

A request says how long its caller waits for it two ways: its deadline, stamped by the
requester's wall clock, and its budget, the time the caller still gave it when it was
handed to NNG. The responder judges the budget, counted from its own receipt: a request
that waited longer than that for a handler is dropped (``arrived_late``); its deadline is
compared with the responder's clock only past the seal's window. Services' clocks may
disagree by seconds (up to that window, docs/security.md), and a responder that compared
a requester's deadline with its own clock dropped every request of a requester behind it
by more than the request's timeout. A deadline alone (a requester of an older version) is
still judged by this clock.

A requester may dial several responders (every result-store; every scheduler, of which
only the leader listens) on its one socket: NNG hands each request to whichever
connected pipe takes it first from the socket's send queue. Which one, it never says
(raw REQ tags a reply with its pipe, not a request), so when a pipe closes the
requester cannot tell which waiting requests it carried. Cooked REQ's answer, sending
every one again, would double the load on the surviving responders each time one
restarts. So a request is sent again only once it has waited ``RESEND_AFTER`` since it
was handed over: at once when the pipe closes if it is that old already (a responder
answers sooner, so it was most likely lost), else when it reaches that age still
unanswered. The cost: a request still being handled elsewhere after that long may run
twice (harmless, as above); a request lost with the pipe waits up to ``RESEND_AFTER``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import itertools
import logging
import math
import secrets
import struct
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Generic, Protocol, TypedDict, TypeVar, Unpack

import pynng
from google.protobuf.message import DecodeError, Message
from pynng import lib

from taskyard.bus.v1 import envelope_pb2
from taskyard.core import contract, dialer, errors, gate, seal, telemetry, transport, wire
from taskyard.core.background import Background

log = logging.getLogger(__name__)

_REQUEST_ID = struct.Struct(">I")
_LAST_HOP = 0x80000000  # the top bit marks the request id, the last word of a REQ header
Req = TypeVar("Req", bound=Message)
Rq = TypeVar("Rq", bound=Message)
Rp = TypeVar("Rp", bound=Message)
# Seconds a request waits, unanswered, after a pipe of its requester closed before it
# is sent again (see the module's docstring): longer than a responder takes to answer
# when it is well, as short as a lost request can bear; the reconnect of a restarted
# responder takes as long (transport.RECONNECT_MAX_MS).
RESEND_AFTER = 0.25
# A responder's receiving contexts per handler (``Responder.serve``).
RECEIVERS_PER_HANDLER = 2


@dataclasses.dataclass(slots=True)
class _Waiting:
    future: asyncio.Future[bytes]
    data: bytes  # the envelope, unsealed and without its budget: a resend is sealed afresh
    sent_at: float  # loop time it was last handed to NNG
    expires: float  # loop time its caller stops waiting

    def envelope(self, now: float) -> bytes:
        """The envelope as handed to NNG at loop time ``now``: with the budget left."""
        return with_budget(self.data, self.expires - now)


class CallOptions(TypedDict, total=False):
    """A call's keyword options, the same for every ``Caller`` method."""

    timeout: float | None  # seconds; None: the requester's default
    headers: Mapping[str, str] | None
    # The envelope's message id; empty: a new one. A relay passes on the id of the
    # request it serves, so that the store carries the request out once, however
    # many copies of it reach relays (result_store/bus_requests.py).
    message_id: str


class Caller(Protocol):
    """What a component needs to call a bus method (a Requester, or a fake in tests)."""

    async def call(
        self,
        method: contract.Method[Rq, Rp],
        request: Rq | bytes,
        **options: Unpack[CallOptions],
    ) -> Rp: ...


class RawCaller(Caller, Protocol):
    """A Caller that can also hand back a reply's bytes unparsed (for relays)."""

    async def call_raw(
        self,
        method: contract.Method[Rq, Any],
        request: Rq | bytes,
        **options: Unpack[CallOptions],
    ) -> bytes: ...


class Requester:
    """Requests to the responders at one address or several (each request to one of
    those connected); any number may wait at once, each for its own reply."""

    def __init__(
        self,
        address: str | Sequence[str],
        *,
        max_message_bytes: int,
        timeout: float,
        resend_after: float = RESEND_AFTER,
        sign_as: str = "",
    ) -> None:
        """``sign_as``: the role whose key seals the requests (``seal.Seal.for_audience``),
        for a gateway speaking for a remote worker as a pool; "" for the process's own."""
        self.addresses = dialer.address_list(address)
        self.address = self.addresses[0]
        self.timeout = timeout
        self._resend_after = resend_after
        self._peers = ", ".join(self.addresses)  # for errors
        self._sock = dialer.open_dialer(
            pynng.Req0,
            self.addresses,
            max_message_bytes=max_message_bytes,
            opener=lib.nng_req0_open_raw,
            send_buffer_size=wire.BUFFER_MESSAGES,
            recv_buffer_size=wire.BUFFER_MESSAGES,
            audience=sign_as,
        )
        self._waiting: dict[bytes, _Waiting] = {}
        self._ids = itertools.count(secrets.randbits(31))
        self._reader = wire.Reader(self._sock, self._reply)
        self._resends = Background("requester resends")
        self._closed = False
        self._sock.add_post_pipe_remove_cb(self._pipe_closed)

    async def call(
        self,
        method: contract.Method[Rq, Rp],
        request: Rq | bytes,
        **options: Unpack[CallOptions],
    ) -> Rp:
        """``request`` may be serialized already (bytes passed on as they are)."""
        reply = await self._call(
            method.kind,
            request,
            options.get("timeout"),
            options.get("headers"),
            options.get("message_id", ""),
        )
        return transport.unpack(reply, method.reply)

    async def call_raw(
        self,
        method: contract.Method[Rq, Any],
        request: Rq | bytes,
        **options: Unpack[CallOptions],
    ) -> bytes:
        """The reply's payload unparsed: for a caller that passes it on, or parses
        only a view of it."""
        return (
            await self._call(
                method.kind,
                request,
                options.get("timeout"),
                options.get("headers"),
                options.get("message_id", ""),
            )
        ).payload

    async def _call(
        self,
        kind: int,
        payload: Message | bytes,
        timeout: float | None,  # noqa: ASYNC109 - a per-request RPC limit
        headers: Mapping[str, str] | None,
        message_id: str = "",
    ) -> envelope_pb2.Envelope:
        if self._closed:
            raise errors.unavailable(f"{self._peers}: requester closed")
        limit = self.timeout if timeout is None else timeout
        hdrs = telemetry.inject(dict(headers) if headers else None)
        # The deadline is for a responder of an older version, which judges only that.
        data = transport.encode(
            kind, payload, message_id=message_id, headers=hdrs, deadline_ms=int((time.time() + limit) * 1000)
        )
        loop = asyncio.get_running_loop()
        self._reader.start(loop)
        request_id = _REQUEST_ID.pack((next(self._ids) & 0x7FFFFFFF) | _LAST_HOP)
        now = loop.time()
        waiting = _Waiting(loop.create_future(), data, now, now + limit)
        self._waiting[request_id] = waiting
        try:
            # The send waits for a connected peer, so it is inside the limit too.
            async with asyncio.timeout(limit):
                await wire.send(self._sock, request_id, self._sock._seal.seal(waiting.envelope(now)))
                raw = await waiting.future
        except (TimeoutError, pynng.Timeout) as exc:
            raise errors.deadline(f"no reply from {self._peers} within {limit:.1f}s") from exc
        except pynng.NNGException as exc:
            raise errors.unavailable(f"{self._peers}: {exc}") from exc
        finally:
            self._waiting.pop(request_id, None)
            waiting.future.cancel()  # a resend still waiting for room gives up too
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
            transport.call_from_nng_thread(loop, self._pipe_lost)

    def _pipe_lost(self) -> None:
        # Which requests the pipe carried is unknown (module docstring): those old
        # enough go again now, the younger ones once they are, if still unanswered.
        loop = asyncio.get_running_loop()
        closed_at = loop.time()
        self._resend(closed_at - self._resend_after)
        loop.call_later(self._resend_after, self._resend, closed_at)

    def _resend(self, handed_over_before: float) -> None:
        """Send again every request still waiting that was last handed to NNG before
        ``handed_over_before`` (loop time)."""
        if self._closed:
            return
        now = asyncio.get_running_loop().time()
        for request_id, waiting in list(self._waiting.items()):
            if waiting.future.done() or waiting.sent_at >= handed_over_before:
                continue
            waiting.sent_at = now
            try:
                if wire.put(self._sock, request_id, self._sock._seal.seal(waiting.envelope(now))):
                    continue
            except pynng.NNGException:
                return  # closed
            self._resends.spawn(self._resend_later(request_id, waiting), name="resend")

    async def _resend_later(self, request_id: bytes, waiting: _Waiting) -> None:
        with contextlib.suppress(pynng.NNGException):
            now = asyncio.get_running_loop().time()
            send = asyncio.ensure_future(
                wire.send(self._sock, request_id, self._sock._seal.seal(waiting.envelope(now)))
            )
            # Stop trying once the request is answered or abandoned.
            await asyncio.wait((send, waiting.future), return_when=asyncio.FIRST_COMPLETED)
            send.cancel()

    def close(self) -> None:
        self._closed = True
        self._reader.stop()
        self._resends.cancel()
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


# The role of the key the request being handled was sealed with (core.roles; "" for
# a key bound to no role, or an unsealed bus): set by a Responder around its handler.
_SENDER_ROLE: contextvars.ContextVar[str] = contextvars.ContextVar("taskyard_sender_role", default="")


def sender_role() -> str:
    """The role that sent the request a handler is serving (core.roles), as the
    receiver's keyring binds the key it was sealed with: "" for a key bound to no
    role. Read it in the handler itself (a task it starts keeps the value it had)."""
    return _SENDER_ROLE.get()


class Responder:
    """A REP socket listening on one address, served by ``concurrency`` contexts.

    Only the roles ``contract.SENDERS`` lets send a route's kind reach its handler
    (core.gate refuses the others, as it refuses unauthenticated requests), which
    learns the role from ``sender_role()``.

    Each context handles one request at a time, so up to ``concurrency`` requests
    are in flight at once; that is what lets the result-store group-commit
    concurrent writes. The responder stays in NNG's cooked mode: a cooked reply
    waits for room on its pipe, where raw REP drops replies beyond 64 queued for
    one requester (a burst of large replies to one gateway would lose some).
    """

    def __init__(
        self,
        address: str,
        routes: Iterable[Route[Any] | RawRoute],
        *,
        max_message_bytes: int,
        concurrency: int = 64,
        limits: Mapping[int, int] | None = None,
    ) -> None:
        self.address = address
        self._routes = route_table(routes)
        self._concurrency = concurrency
        self._sock = transport.open_socket(
            pynng.Rep0,
            max_message_bytes=max_message_bytes,
            listen=address,
            limits=limits,
            senders={kind: contract.SENDERS[kind].by for kind in self._routes},
        )
        self._contexts: list[asyncio.Task[None]] = []
        # (role, kind) refusals already said in the log (``_may_send``).
        self._forbidden_said: set[tuple[str, int]] = set()
        # Requests taken off the socket wait here for one of ``concurrency`` handlers,
        # their receipt known on this clock: one that waited past its budget is dropped.
        self._handlers = asyncio.Semaphore(concurrency)
        self._clock: Callable[[], float] = time.monotonic

    async def serve(self) -> None:
        """Serve until ``close()`` (or cancelled); handlers still running then are cancelled.

        Twice ``concurrency`` contexts receive, so that while every handler is busy
        (a frozen database) the requests behind them are taken and timed here, not left
        in NNG's queue where their wait could not be told (``arrived_late``)."""
        async with asyncio.TaskGroup() as tg:
            self._contexts = [
                tg.create_task(self._serve_context())
                for _ in range(self._concurrency * RECEIVERS_PER_HANDLER)
            ]

    async def _serve_context(self) -> None:
        ctx = self._sock.new_context()
        try:
            while await self._serve_one(ctx):
                pass
        finally:
            with contextlib.suppress(pynng.NNGException):
                ctx.close()

    async def _serve_one(self, ctx: Any) -> bool:
        """Receive, handle and answer one request on ``ctx``; False once the socket is
        closed. A frame of its own per request: the request and its reply (each up to
        the receive limit) go with it, so a context waiting for its next request holds
        neither (there are ``RECEIVERS_PER_HANDLER`` per handler)."""
        try:
            raw = await ctx.arecv()
        except pynng.Closed:
            return False
        received = self._clock()
        async with self._handlers:
            role = _SENDER_ROLE.set(ctx.sender_role)
            try:
                reply = await self._handle(raw, waited=self._clock() - received)
            finally:
                _SENDER_ROLE.reset(role)
        del raw
        if reply is None:
            return True  # its caller gave up: no reply (the next receive drops it)
        try:
            await ctx.asend(reply)
        except pynng.Closed:
            return False
        except pynng.NNGException as exc:  # requester went away
            log.debug("reply dropped: %s", exc)
        return True

    def _may_send(self, kind: int) -> bool:
        """Whether the role that sealed the request being handled may send ``kind``
        (contract.SENDERS). The gate refuses early by the kind it reads from the
        envelope's first bytes; the decoded envelope, which picks the handler, is
        what decides: a kind repeated, or placed after the payload or a long
        message id, must not pass under another kind's right."""
        role = _SENDER_ROLE.get()
        if contract.may_send(role, kind):
            return True
        self._sock._seal.refusals.add(gate.FORBIDDEN, self.address)
        if (role, kind) not in self._forbidden_said:
            self._forbidden_said.add((role, kind))
            log.warning(
                "refused kind %s on %s: signed with a key of role %s, which may not send it "
                "(core/contract.py SENDERS); dropped unanswered, counted as %r",
                kind,
                self.address,
                role,
                gate.FORBIDDEN,
            )
        return False

    async def _handle(self, raw: bytes, *, waited: float = 0.0) -> bytes | None:
        try:
            env = transport.decode(raw)
        except DecodeError:
            return _error_reply("", errors.internal("malformed envelope"))
        window_ms = self._sock._seal.window_ms
        if arrived_late(env, now_ms=time.time() * 1000, waited_ms=waited * 1000, window_ms=window_ms):
            log.debug("request of kind %s past its deadline: dropped", env.kind)
            return None
        if not self._may_send(env.kind):
            return None  # unanswered, as the gate refuses it
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
        except seal.Replayed as repeat:
            # Carried out already (its id is on record): not run again, but answered with
            # the reply it got, for a requester whose reply was lost and who sent it
            # again. A copy sent by anyone else learns nothing: that reply crossed the
            # bus already. Counted as the seal counts a replay.
            self._sock._seal.refusals.add("replayed", self.address)
            if repeat.reply is None:
                return None
            return transport.encode(env.kind, repeat.reply, message_id=env.message_id)
        except DecodeError:
            return _error_reply(env.message_id, errors.internal("malformed payload"))
        except Exception as exc:  # a handler bug must not stop the responder
            log.exception("handler for kind %s failed", env.kind)
            return _error_reply(env.message_id, errors.internal(f"{type(exc).__name__}: {exc}"))
        return transport.encode(env.kind, reply, message_id=env.message_id)

    def close(self) -> None:
        self._sock.close()
        for task in self._contexts:  # a handler still waiting (on a commit, a peer) ends too
            task.cancel()


def with_budget(envelope: bytes, budget: float) -> bytes:
    """``envelope`` (serialized, without a budget) with ``budget`` seconds as its
    ``budget_ms``, at least 1 ms (0 would say it has none). Appended as a field of its
    own: a parser takes the last value of a field, so the payload is not parsed again."""
    budget_ms = max(1, math.ceil(budget * 1000))
    return envelope + envelope_pb2.Envelope(budget_ms=budget_ms).SerializeToString()


def arrived_late(
    env: envelope_pb2.Envelope, *, now_ms: float, waited_ms: float = 0.0, window_ms: float = 0.0
) -> bool:
    """Whether a request is past its deadline, to be dropped unanswered.

    A request that carries its budget is judged by it, counted from its receipt by this
    process's own clock: late once it ``waited_ms`` longer than its budget in this
    responder's queue (every handler busy, say on a frozen database) before its handler
    starts. What it waited on its way (a requester's send queue, NNG's) cannot be told
    without comparing two clocks, so its deadline is compared with this clock only past
    the seal's window (``window_ms``): clocks that disagree by more are refused by the
    seal anyway, so a request whose deadline is that far behind this clock was given up
    by its caller whatever the skew. A late request run anyway is harmless (every write
    the bus carries is guarded against applying twice), but a backlog run in full after a
    stall would hold leases their scheduler gave up. A request with a deadline and no
    budget (a requester of an older version) is judged by its deadline against
    ``now_ms``, this process's wall clock, as that version's responders judge it."""
    if env.budget_ms:
        if env.budget_ms < waited_ms:
            return True
        return env.deadline_unix_ms > 0 and env.deadline_unix_ms + window_ms < now_ms
    return 0 < env.deadline_unix_ms < now_ms


def _error_reply(message_id: str, exc: errors.TaskyardError) -> bytes:
    env = envelope_pb2.Envelope(message_id=message_id or uuid.uuid4().hex)
    env.error.CopyFrom(exc.to_proto())
    return env.SerializeToString()
