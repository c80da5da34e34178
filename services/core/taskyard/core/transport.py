"""NNG plumbing shared by every service: envelopes, sealed sockets, socket options, the Inbox.

Request/reply between services is in ``core.rpc``.

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
import uuid
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import pynng
from google.protobuf.message import Message

from taskyard.bus.v1 import envelope_pb2
from taskyard.core import bus_tls, gate, seal, states

Kind = envelope_pb2.Kind
M = TypeVar("M", bound=Message)


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


# Redial a lost peer quickly (NNG's default is a flat 1 s): a restarted scheduler
# or store is back within ~0.25 s of listening, which a restart's latency budget
# (a due task runs <= 1 s after its ETA, scheduler kill included) needs.
RECONNECT_MIN_MS = 100
RECONNECT_MAX_MS = 250


class _Sealed(pynng.Socket):  # type: ignore[misc]
    """Seals what a socket sends and opens what it receives (core.seal), through
    its gate (core.gate: cheap refusals first, large MACs off the loop, a refusal
    budget per peer pipe).

    Mixed in front of a pynng socket class (``sealed``). The seal is taken when the
    socket opens; each socket has its own replay guard, since one process may
    legitimately receive the same message on two sockets (a hub and its own peer)."""

    _seal: seal.Seal
    _gate: gate.Gate

    def _open_sealed(self, raw: bytes) -> bytes | None:
        """For a message taken without its pipe (core.wire's raw requester)."""
        return self._gate.open_bytes(raw)

    def send(self, data: bytes, block: bool = True) -> None:
        super().send(self._seal.seal(data), block)

    async def asend(self, data: bytes) -> None:
        await super().asend(self._seal.seal(data))

    def recv(self, block: bool = True) -> bytes:
        while True:
            clear = self._gate.open_now(super().recv_msg(block))
            if clear is not None:
                return clear

    async def arecv(self) -> bytes:
        while True:
            clear = await self._gate.open(await super().arecv_msg())
            if clear is not None:
                return clear

    def new_context(self) -> Any:
        return _SealedContext(self)


class _SealedContext(pynng.Context):  # type: ignore[misc]
    """A REP context of a sealed socket. A refused request is never answered: the
    next receive on the context discards it, and its sender times out.

    A reply is sealed under the key its request came with (the requester holds it:
    a worker pool needs no other role's key to read its replies), and the role of
    that key is the request's ``sender_role`` (core.roles; "" for a key bound to none)."""

    def __init__(self, sock: _Sealed) -> None:
        super().__init__(sock)
        self._sealed_by = sock
        self.sender_role = ""
        self._sender_kid = b""

    async def asend(self, data: bytes) -> None:
        await super().asend(self._sealed_by._seal.seal(data, self._sender_kid))

    async def arecv(self) -> bytes:
        gate_ = self._sealed_by._gate
        while True:
            msg = await super().arecv_msg()
            clear = await gate_.open(msg)
            if clear is not None:
                body = memoryview(msg._buffer)
                self._sender_kid = gate_.seal.kid_of(body)
                self.sender_role = gate_.seal.role_of(body)
                return clear
            # Refused: NNG's buffer goes now. Still named here while the next receive
            # waits, it would outlive the refusal until this context's next message
            # (NNG hands messages to waiting contexts in turn): a responder's every
            # context would keep the last junk body it refused (a flood of 33 MiB
            # bodies made a store hold 360 MiB of them).
            del msg


_SEALED: dict[type[Any], type[Any]] = {}


def sealed(cls: type[Any]) -> type[Any]:
    """The sealed variant of a pynng socket class."""
    if issubclass(cls, _Sealed):
        return cls
    found = _SEALED.get(cls)
    if found is None:
        found = _SEALED[cls] = type(f"Sealed{cls.__name__}", (_Sealed, cls), {})
    return found


def _new_sealed(
    cls: type[Any],
    where: str,
    *,
    limits: Mapping[int, int] | None,
    police: bool,
    senders: Mapping[int, frozenset[str]] | None = None,
    audience: str = "",
    **options: Any,
) -> Any:
    sock = sealed(cls)(**options)
    sock._seal = seal.current().for_audience(audience) if audience else seal.current()
    sock._gate = gate.Gate(
        sock._seal, seal.ReplayGuard(), where, limits=limits, police=police, senders=senders
    )
    # What the gate keeps per pipe goes with the pipe (NNG runs this on its thread).
    sock.add_post_pipe_remove_cb(sock._gate.forget)
    sock.add_pre_pipe_connect_cb(sock._gate.admit)
    return sock


def open_socket(
    cls: type[Any],
    *,
    max_message_bytes: int,
    listen: str | None = None,
    dial: str | None = None,
    limits: Mapping[int, int] | None = None,
    senders: Mapping[int, frozenset[str]] | None = None,
    audience: str = "",
    **options: Any,
) -> Any:
    """Create a sealed pynng socket with an explicit receive limit: the largest
    message its role may legitimately receive (NNG refuses a larger one from its
    length prefix, before reading it). ``limits``: smaller bounds by envelope kind
    (core.gate). ``senders``: the roles that may send each kind to it
    (``contract.senders_to``). ``audience``: the role of all its peers, whose key
    seals what it sends (``seal.Seal.for_audience``: worker pools hold no other).
    A listener's gate closes peer pipes that spend their refusal budget; a dialer's
    peers are the addresses it was given."""
    if dial:
        options.setdefault("reconnect_time_min", RECONNECT_MIN_MS)
        options.setdefault("reconnect_time_max", RECONNECT_MAX_MS)
    if listen or dial:
        # A TLS configuration has one mode per socket: a socket listens or dials, never both.
        options.update(bus_tls.socket_options(listen or dial or "", listening=bool(listen)))
    sock = _new_sealed(
        cls,
        listen or dial or cls.__name__,
        limits=limits,
        police=bool(listen),
        senders=senders,
        audience=audience,
        recv_max_size=max_message_bytes,
        **options,
    )
    if listen:
        sock.listen(listen)
    if dial:
        sock.dial(dial, block=False)
    return sock


# Messages a PAIR link may queue (NNG counts messages, not bytes). A sender that
# must never block (slot notices) relies on it; beyond it, a message is dropped.
PAIR_BUFFER = 1024
# Messages a pool's PAIR listener (``several``) holds received and not yet read:
# anyone may connect to it, and each message may be as large as the receive limit,
# so few. The pool reads dispatches as they come; a scheduler whose dispatches
# wait meanwhile waits in its own send buffer (backpressure), not in the pool.
PAIR_LISTEN_BUFFER = 4


def open_pair(
    *,
    max_message_bytes: int,
    listen: str | None = None,
    dial: str | None = None,
    several: bool = False,
    audience: str = "",
) -> Any:
    """A PAIR socket with send/receive buffers, so short bursts never block the sender.

    pair1, so that a listener may take ``several`` peers at once (a pool's: a peer
    that holds its port without the key must not keep the scheduler out, see
    core/pair_peers.py); such a socket sends to one pipe at a time, and receives
    into a buffer of ``PAIR_LISTEN_BUFFER`` messages. ``max_message_bytes`` is the
    receive limit: for a pool, what a dispatch can carry (Settings.max_message_bytes
    fits 200 max-size payloads, the scheduler's largest batch)."""
    return open_socket(
        pynng.Pair1,
        max_message_bytes=max_message_bytes,
        listen=listen,
        dial=dial,
        polyamorous=several,
        audience=audience,
        send_buffer_size=PAIR_BUFFER,
        recv_buffer_size=PAIR_LISTEN_BUFFER if several else PAIR_BUFFER,
    )


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
        "pool.lost",  # no dispatch to a pool no store hears (scheduler/pools.py)
        "pool.registered",  # heard again
        "limit.created",  # flow control: read the limits again at once
        "limit.updated",
        "limit.deleted",
        "limit.declared",
        "limit.weight",
        "tenant.created",  # tenants: read them again at once (weights, quotas, suspensions)
        "tenant.updated",
        "tenant.suspended",
        "tenant.resumed",
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
    scheme, sep, _ = url.partition("://")
    if sep and scheme in ("tcp", "tls+tcp") and url.endswith(":0"):
        return f"{scheme}://{listener.local_address}"
    return url


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


def varint(n: int) -> bytes:
    """``n`` as a protobuf varint: the length prefix of a field written by hand (a
    repeated field made of messages serialized once and shared)."""
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)
