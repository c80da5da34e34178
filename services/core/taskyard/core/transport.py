"""NNG plumbing shared by every service: envelopes, REQ/REP with contexts, socket options.

Every socket gets an explicit ``recv_max_size`` (pynng's default is unlimited).
Listeners bind stable, known addresses; dialers use non-blocking dials so
services may start in any order and NNG redials by itself.

Every socket opened here is sealed (``core.seal``): what it sends carries the
process's HMAC trailer, and what it receives is verified first. A refused message
is dropped and counted, and the receive waits for the next one, so callers only
ever see authenticated bytes (topic prefix included, trailer removed).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, TypeVar

import pynng
from google.protobuf.message import DecodeError, Message

from taskyard.bus.v1 import envelope_pb2
from taskyard.core import errors, seal, states, telemetry

log = logging.getLogger(__name__)

Kind = envelope_pb2.Kind
M = TypeVar("M", bound=Message)
Req = TypeVar("Req", bound=Message)


def encode(
    kind: int,
    payload: Message | bytes,
    *,
    message_id: str = "",
    headers: Mapping[str, str] | None = None,
    deadline_ms: int = 0,
) -> bytes:
    env = envelope_pb2.Envelope(
        message_id=message_id or uuid.uuid4().hex,
        kind=kind,  # type: ignore[arg-type]
        deadline_unix_ms=deadline_ms,
        payload=payload if isinstance(payload, bytes) else payload.SerializeToString(),
    )
    if headers:
        env.headers.update(headers)
    return env.SerializeToString()


def decode(data: bytes) -> envelope_pb2.Envelope:
    env = envelope_pb2.Envelope()
    env.ParseFromString(data)
    return env


def unpack(env: envelope_pb2.Envelope, message_type: type[M]) -> M:
    msg = message_type()
    msg.ParseFromString(env.payload)
    return msg


def open_message(raw: bytes, kind: int, message_type: type[M]) -> M | None:
    """The payload of an envelope of ``kind``; None for an envelope of another kind.
    Raises DecodeError when the bytes are not a well-formed envelope and payload."""
    env = decode(raw)
    if env.kind != kind:
        return None
    return unpack(env, message_type)


# Redial a lost peer quickly (NNG's default is a flat 1 s): a restarted scheduler
# or store is back within ~0.25 s of listening, which a restart's latency budget
# (a due task runs <= 1 s after its ETA, scheduler kill included) needs.
RECONNECT_MIN_MS = 100
RECONNECT_MAX_MS = 250


class _Sealed(pynng.Socket):  # type: ignore[misc]
    """Seals what a socket sends and opens what it receives (core.seal).

    Mixed in front of a pynng socket class (``sealed``). The seal is taken when the
    socket opens; each socket has its own replay guard, since one process may
    legitimately receive the same message on two sockets (a hub and its own peer)."""

    _seal: seal.Seal
    _guard: seal.ReplayGuard
    _where: str

    def _open_sealed(self, raw: bytes) -> bytes | None:
        return self._seal.open(raw, self._guard, self._where)

    def send(self, data: bytes, block: bool = True) -> None:
        super().send(self._seal.seal(data), block)

    async def asend(self, data: bytes) -> None:
        await super().asend(self._seal.seal(data))

    def recv(self, block: bool = True) -> bytes:
        while True:
            clear = self._open_sealed(super().recv(block))
            if clear is not None:
                return clear

    async def arecv(self) -> bytes:
        while True:
            clear = self._open_sealed(await super().arecv())
            if clear is not None:
                return clear

    def new_context(self) -> Any:
        return _SealedContext(self)


class _SealedContext(pynng.Context):  # type: ignore[misc]
    """A REQ/REP context of a sealed socket. A refused request is never answered:
    the next receive on the context discards it, and its sender times out."""

    def __init__(self, sock: _Sealed) -> None:
        super().__init__(sock)
        self._sealed_by = sock

    async def asend(self, data: bytes) -> None:
        await super().asend(self._sealed_by._seal.seal(data))

    async def arecv(self) -> bytes:
        while True:
            clear = self._sealed_by._open_sealed(await super().arecv())
            if clear is not None:
                return clear

    def send(self, data: bytes) -> None:
        super().send(self._sealed_by._seal.seal(data))

    def recv(self) -> bytes:
        while True:
            clear = self._sealed_by._open_sealed(super().recv())
            if clear is not None:
                return clear


_SEALED: dict[type[Any], type[Any]] = {}


def sealed(cls: type[Any]) -> type[Any]:
    """The sealed variant of a pynng socket class."""
    if issubclass(cls, _Sealed):
        return cls
    found = _SEALED.get(cls)
    if found is None:
        found = _SEALED[cls] = type(f"Sealed{cls.__name__}", (_Sealed, cls), {})
    return found


def _new_sealed(cls: type[Any], where: str, **options: Any) -> Any:
    sock = sealed(cls)(**options)
    sock._seal = seal.current()
    sock._guard = seal.ReplayGuard()
    sock._where = where
    return sock


def open_socket(
    cls: type[Any],
    *,
    max_message_bytes: int,
    listen: str | None = None,
    dial: str | None = None,
    **options: Any,
) -> Any:
    """Create a sealed pynng socket with an explicit receive limit."""
    if dial:
        options.setdefault("reconnect_time_min", RECONNECT_MIN_MS)
        options.setdefault("reconnect_time_max", RECONNECT_MAX_MS)
    sock = _new_sealed(cls, listen or dial or cls.__name__, recv_max_size=max_message_bytes, **options)
    if listen:
        sock.listen(listen)
    if dial:
        sock.dial(dial, block=False)
    return sock


# Messages a PAIR link may queue (NNG counts messages, not bytes). A sender that
# must never block (slot notices) relies on it; beyond it, a message is dropped.
PAIR_BUFFER = 1024


def open_pair(*, max_message_bytes: int, listen: str | None = None, dial: str | None = None) -> Any:
    """A PAIR socket with send/receive buffers, so short bursts never block the sender."""
    sock = _new_sealed(
        pynng.Pair0,
        listen or dial or "pair",
        recv_max_size=max_message_bytes,
        reconnect_time_min=RECONNECT_MIN_MS,
        reconnect_time_max=RECONNECT_MAX_MS,
    )
    sock.send_buffer_size = PAIR_BUFFER
    sock.recv_buffer_size = PAIR_BUFFER
    if listen:
        sock.listen(listen)
    if dial:
        sock.dial(dial, block=False)
    return sock


# Topics of the result-store's full event stream (events_address). NNG SUB filters
# on a prefix, in C: a message of another topic never reaches Python. Both topics
# are EVENTS_TOPIC_BYTES long and start with EVENTS_TOPIC, so subscribing to
# EVENTS_TOPIC gets every event. RESULT_EVENTS_TOPIC carries what a gateway waits
# for (final transitions and task.log lines: WaitTask, StreamTaskLogs); the
# others (queued, assigned, started, ..., graph releases) go under
# TASK_EVENTS_TOPIC, so they never wake a gateway on a task's way to its result.
EVENTS_TOPIC = b"ev"
TASK_EVENTS_TOPIC = b"ev\x00"
RESULT_EVENTS_TOPIC = b"ev\x01"
EVENTS_TOPIC_BYTES = 3


def is_result_event(event: Any) -> bool:
    """Whether an ``Event`` goes under RESULT_EVENTS_TOPIC."""
    return event.type == "task.log" or event.state in states.FINAL_VALUES


# The scheduler's share of the stream, published next to the full batch: only the
# event types it reads (plus the other envelope kinds it reads, e.g. graph
# releases), so a task's queued/assigned/final events do not wake it (latency).
SCHEDULER_TOPIC = b"es\x00"
SCHEDULER_EVENT_TYPES = frozenset(
    {
        "tasks.available",  # reload QUEUED rows written by other means
        "task.cancelled",  # drop a queued task from its lane
        "task.scheduled",  # due timers
        "task.retrying",
        "schedule.changed",  # periodic schedules
        "queue.paused",  # ops: paused queues
        "queue.resumed",
    }
)


def dispatch_topic(pool_id: str) -> bytes:
    """Leased attempts for one pool, published by the store right after COMMIT."""
    return b"dp\x00" + pool_id.encode() + b"\x00"


def cancel_topic(pool_id: str) -> bytes:
    """Cancel requests (task.cancel_requested events) for attempts one pool runs."""
    return b"cx\x00" + pool_id.encode() + b"\x00"


def pool_of_worker(worker_id: str) -> str:
    """The pool id in a worker id ``<pool_id>/w<index>:<pid>`` ("" when not one)."""
    pool, sep, _ = worker_id.rpartition("/w")
    return pool if sep else ""


def call_from_nng_thread(loop: asyncio.AbstractEventLoop, fn: Callable[..., None], *args: object) -> None:
    """For pipe callbacks, which NNG runs on its own threads: schedule ``fn`` on the
    loop, unless the loop has already closed (the process is stopping)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(fn, *args)


def listen_address(sock: Any) -> str:
    """The real address of a socket's first listener (resolves port 0)."""
    listener = sock.listeners[0]
    url: str = listener.url
    if url.startswith("tcp://") and url.endswith(":0"):
        addr = listener.local_address
        return f"tcp://{addr}"
    return url


class Requester:
    """A REQ socket dialing one address; each request runs in its own NNG context,
    so concurrent requests on one socket each get their own reply."""

    def __init__(self, address: str, *, max_message_bytes: int, timeout: float) -> None:
        self.address = address
        self.timeout = timeout
        self._sock = open_socket(pynng.Req0, max_message_bytes=max_message_bytes, dial=address)
        # NNG re-sends an unanswered request after resend_time (and at once on
        # another pipe when its pipe closes). The resend is byte-identical, so a
        # sealed responder that saw the first copy refuses it as a replay; the
        # original's reply still answers (same request id). Keep it beyond the
        # usual timeout so it rarely happens at all.
        self._sock.resend_time = int(timeout * 1000 * 2)

    async def request(
        self,
        kind: int,
        payload: Message | bytes,
        reply_type: type[M],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - a per-request RPC limit
        headers: Mapping[str, str] | None = None,
    ) -> M:
        """``payload`` may be a serialized message (bytes passed on as they are)."""
        return unpack(await self._call(kind, payload, timeout, headers), reply_type)

    async def request_raw(
        self,
        kind: int,
        payload: Message | bytes,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - a per-request RPC limit
        headers: Mapping[str, str] | None = None,
    ) -> bytes:
        """The reply's payload unparsed: for a caller that passes it on, or parses
        only a view of it."""
        return (await self._call(kind, payload, timeout, headers)).payload

    async def _call(
        self,
        kind: int,
        payload: Message | bytes,
        timeout: float | None,  # noqa: ASYNC109 - a per-request RPC limit
        headers: Mapping[str, str] | None,
    ) -> envelope_pb2.Envelope:
        limit = self.timeout if timeout is None else timeout
        hdrs = telemetry.inject(dict(headers) if headers else None)
        data = encode(kind, payload, headers=hdrs, deadline_ms=int((time.time() + limit) * 1000))
        ctx = self._sock.new_context()
        try:
            # The send waits for a connected peer, so it is inside the limit too.
            # asyncio.timeout, not wait_for: wait_for (3.11) wraps the exchange in
            # a new task, whose send would wait for the loop's next iteration.
            async with asyncio.timeout(limit):
                raw = await self._exchange(ctx, data)
        except (TimeoutError, pynng.Timeout) as exc:
            raise errors.deadline(f"no reply from {self.address} within {limit:.1f}s") from exc
        except pynng.NNGException as exc:
            raise errors.unavailable(f"{self.address}: {exc}") from exc
        finally:
            _close_quietly(ctx)
        env = decode(raw)
        if env.HasField("error"):
            raise errors.TaskyardError.from_proto(env.error)
        return env

    @staticmethod
    async def _exchange(ctx: Any, data: bytes) -> bytes:
        await ctx.asend(data)
        reply: bytes = await ctx.arecv()
        return reply

    def close(self) -> None:
        self._sock.close()


class Inbox:
    """The messages of one NNG socket (not a context), taken on the event loop.

    pynng's ``arecv`` completes on an NNG thread that must take the GIL and wake
    the loop through its self-pipe: two thread hand-offs per message. An Inbox
    waits on NNG's receive descriptor instead (registered only while it waits,
    so a consumer busy elsewhere never makes the loop spin on a readable fd) and
    takes messages without blocking. Close it with ``close()``, which takes the
    descriptor off the loop before NNG closes it (the number may be reused).
    One reader at a time.
    """

    # Messages taken in a row without suspending before letting other tasks run
    # (a reader that finds a long queue must not hold the loop for all of it).
    FAIR_SHARE = 64

    def __init__(self, sock: Any) -> None:
        self.sock = sock
        self._fd: int | None = None
        self._waiting: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = None
        self._closed = False
        self._in_a_row = 0

    async def recv(self) -> bytes:
        if self._waiting is not None:
            raise RuntimeError("Inbox.recv: one reader at a time")
        if self._in_a_row >= self.FAIR_SHARE:
            self._in_a_row = 0
            await asyncio.sleep(0)
        while True:
            if self._closed:
                raise pynng.Closed("inbox closed", 12)
            try:
                data: bytes = self.sock.recv(block=False)
                self._in_a_row += 1
                return data
            except pynng.TryAgain:
                self._in_a_row = 0
            loop = asyncio.get_running_loop()
            if self._fd is None:
                self._fd = int(self.sock.recv_fd)
            waiter: asyncio.Future[None] = loop.create_future()
            loop.add_reader(self._fd, _wake, waiter)
            self._waiting = (loop, waiter)
            try:
                await waiter
            finally:
                if self._waiting is not None and self._waiting[1] is waiter:
                    self._waiting = None
                    loop.remove_reader(self._fd)

    def close(self) -> None:
        self._closed = True
        if self._waiting is not None:
            loop, waiter = self._waiting
            self._waiting = None
            if self._fd is not None and not loop.is_closed():
                loop.remove_reader(self._fd)
            _wake(waiter)
        self.sock.close()


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


@dataclasses.dataclass(frozen=True)
class Route(Generic[Req]):
    request_type: type[Req]
    handler: Callable[[Req, envelope_pb2.Envelope], Awaitable[Message]]


@dataclasses.dataclass(frozen=True)
class RawRoute:
    """A route whose handler gets the request's payload unparsed and may answer
    with a serialized message: for a handler that passes the bytes on (or reads
    only a view of them) instead of decoding and re-encoding every field."""

    handler: Callable[[bytes, envelope_pb2.Envelope], Awaitable[Message | bytes]]


class Responder:
    """A REP socket listening on one address, served by ``concurrency`` contexts.

    Each context handles one request at a time, so up to ``concurrency`` requests
    are in flight at once; that is what lets the result-store group-commit
    concurrent writes.
    """

    def __init__(
        self,
        address: str,
        routes: Mapping[int, Route[Any] | RawRoute],
        *,
        max_message_bytes: int,
        concurrency: int = 64,
    ) -> None:
        self.address = address
        self._routes = dict(routes)
        self._concurrency = concurrency
        self._sock = open_socket(pynng.Rep0, max_message_bytes=max_message_bytes, listen=address)

    async def serve(self) -> None:
        async with asyncio.TaskGroup() as tg:
            for _ in range(self._concurrency):
                tg.create_task(self._serve_context())

    async def _serve_context(self) -> None:
        ctx = self._sock.new_context()
        try:
            while True:
                try:
                    raw = await ctx.arecv()
                except pynng.Closed:
                    return
                reply = await self._handle(raw)
                try:
                    await ctx.asend(reply)
                except pynng.Closed:
                    return
                except pynng.NNGException as exc:  # requester went away
                    log.debug("reply dropped: %s", exc)
        finally:
            _close_quietly(ctx)

    async def _handle(self, raw: bytes) -> bytes:
        try:
            env = decode(raw)
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
                request = unpack(env, route.request_type)
                with telemetry.attached(env.headers):
                    reply = await route.handler(request, env)
        except errors.TaskyardError as exc:
            return _error_reply(env.message_id, exc)
        except DecodeError:
            return _error_reply(env.message_id, errors.internal("malformed payload"))
        except Exception as exc:  # a handler bug must not kill the context loop
            log.exception("handler for kind %s failed", env.kind)
            return _error_reply(env.message_id, errors.internal(f"{type(exc).__name__}: {exc}"))
        return encode(env.kind, reply, message_id=env.message_id)

    def close(self) -> None:
        self._sock.close()


def _error_reply(message_id: str, exc: errors.TaskyardError) -> bytes:
    env = envelope_pb2.Envelope(message_id=message_id or uuid.uuid4().hex)
    env.error.CopyFrom(exc.to_proto())
    return env.SerializeToString()


def _close_quietly(obj: Any) -> None:
    """Close a context whose socket may already be closed."""
    with contextlib.suppress(pynng.NNGException):
        obj.close()
