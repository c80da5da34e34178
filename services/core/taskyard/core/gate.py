"""The receive side of a sealed socket, against peers that do not hold the key.

Anyone who reaches an NNG port can send it messages up to the socket's receive
limit, and NNG delivers them whole. The MAC is the only proof a message comes from
the suite, and hashing a large body costs time. So a gate decides what it can
before any MAC, from what is cheap to read:

- the trailer (``Seal.screen``): its layout, a key id this process holds, a send
  time within the window. Junk that fails here is never hashed, nor even copied
  out of NNG's buffer;
- the size a message's kind may legitimately have (``limits``): the envelope's
  kind is read from its first bytes, and a kind that only ever carries one gRPC
  request's worth is refused when it is larger.

What passes is hashed: a small body on the event loop (it costs less than a
thread hand-off), a large one in a thread, so a flood of large bodies never stops
the loop (hashlib releases the GIL). A pipe that has not yet delivered a verified
message (a peer not yet proven to hold the key) is a stranger: strangers get one
large body hashed at a time per socket; another one meanwhile is refused ("busy")
rather than held and its pipe closed, and a stranger's large body that fails its
MAC closes its pipe at once and keeps strangers' large bodies out for
``STRANGER_BACKOFF`` times as long as its hash took. So what strangers make this
process hold is one body being hashed plus what NNG is reading on their pipes (at
most the receive limit each). A suite peer whose first message on a new connection
is large may meet "busy" under a flood: its pipe is closed, and NNG redials and
sends its requests again.

A verified message proves little about what follows on its pipe: a copy of a
sealed message captured off the wire (sent to another store, or before this one
restarted) verifies once here too. So trust only spares a pipe the strangers'
queue: its large bodies are hashed one at a time per pipe (the next waits its
turn), every refusal is still charged, and a large body of its that fails its MAC
still closes it at once. A key holder never sends a bad MAC, a replayed nonce or,
short of a stall longer than the seal's window, a stale trailer.

Every refusal is charged to its peer pipe (``Budget``): a pipe may cause
``REFUSAL_BURST`` refusals, refilled at ``REFUSAL_RATE`` per second; past that the
gate closes the pipe (pynng ``Pipe.close``), and what it already delivered is
dropped unhashed, as is what arrives from a pipe after it is gone (the last
``GONE_PIPES`` ids are kept). A legitimate peer never pays: its messages verify.
One whose key or clock is wrong is refused anyway; a closed pipe only makes it
redial. The address of a pipe closed for flooding ("busy" alone does not count: a
suite peer meets it under a flood) may then open one connection a second
(``ADDRESS_RATE``; more are closed as they connect, before anything is read),
until it has been quiet (no pipe closed for flooding, no connection refused) for
``ADDRESS_QUIET_SECONDS``: on one host, the suite's own new connections share that
rate until then.

A gate given ``senders`` (a socket that serves requests) also enforces who may send
what (``contract.SENDERS``): a verified message whose key is bound to a role that may
not send its kind is refused like an unauthenticated one (dropped unanswered, counted
as ``forbidden``, and logged once per role and kind). Its pipe is not charged: its
sender holds a key of the suite, and what it may send still goes through.

What a gate does not do is documented in docs/security.md ("Floods from a peer without the key").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, cast

import pynng

from taskyard.bus.v1 import envelope_pb2
from taskyard.core import contract
from taskyard.core import seal as seal_mod

log = logging.getLogger(__name__)

# A body at least this large is hashed in a thread (HMAC-SHA256 runs at ~1 GB/s:
# 256 KiB is ~0.25 ms of the loop, about a thread hand-off's cost).
LARGE_BODY_BYTES = 256 * 1024
# After a stranger's large body failed its MAC, strangers' large bodies are refused
# for this many times as long as that hash took: hashing for strangers takes at most
# 1 / (1 + STRANGER_BACKOFF) of a core, however fast they send.
STRANGER_BACKOFF = 4.0
# An address one of whose pipes was closed for flooding may open new connections
# at this rate (one at once, then one a second): NNG reads a message whole before
# the gate sees it, so a flooder that redials at once would make the store read a
# message of up to the receive limit per connection. Addresses remembered: at most
# PENALISED_ADDRESSES, the oldest forgotten first.
ADDRESS_RATE = 1.0
PENALISED_ADDRESSES = 1024
# An address's penalty lapses after this long with no pipe of its closed for
# flooding and no connection of its refused: a flooder that keeps going keeps it,
# a host that shared an address with one (NAT, a sidecar, loopback) gets it back.
ADDRESS_QUIET_SECONDS = 30.0
# Ids of pipes gone (closed by either side) that the gate still recognises: a message
# already queued from one is dropped unhashed and leaves no entry behind.
GONE_PIPES = 4096
# Refusals a pipe may cause in a burst, and the rate they are forgiven at.
REFUSAL_BURST = 4
REFUSAL_RATE = 1.0
# The envelope's bytes besides a request's payload (ids, trace headers, deadline).
ENVELOPE_SLACK_BYTES = 64 * 1024
# Above half of max_message_bytes on the store's port: what a sender's batch adds
# past its own estimate (record fields, the envelope, trace headers).
STORE_SLACK_BYTES = 1 << 20
# The envelope's kind is read in at most this many leading bytes (message id first).
KIND_SCAN_BYTES = 128

# Refusal reasons a gate adds to the seal's (seal.REASONS).
OVERSIZE = "oversize"  # larger than its kind can be
BUSY = "busy"  # a second large body from an unproven pipe while one is hashed
CLOSED_PIPE = "closed_pipe"  # delivered by a pipe the gate had closed
FLOODING_ADDRESS = "flooding_address"  # a connection from an address past its rate
FORBIDDEN = "forbidden"  # verified, but its key's role may not send its kind (contract.SENDERS)


def store_receive_limit(max_message_bytes: int) -> int:
    """The result-store port's receive limit: what a store is sent. Every batch sent
    to it is cut at half of ``max_message_bytes`` by its sender (a gateway's lane
    requests, which become inserts; a pool's log lines), and a result is at most
    ``max_result_bytes``; the full size is for what a store sends (lease replies and
    dispatch of 200 max-size payloads). A larger message is refused by NNG from its
    length prefix, before it is read or allocated."""
    return max_message_bytes // 2 + STORE_SLACK_BYTES


def store_request_limits(grpc_max_message_bytes: int) -> dict[int, int]:
    """The result-store port's bounds by kind: a read (or a small admin request)
    carries at most what one gRPC request carried to a gateway, so it is bounded by
    the gRPC message limit; writes (inserts, reports, logs, renewals) are batches
    and keep the socket's limit (Settings.max_message_bytes)."""
    cap = grpc_max_message_bytes + ENVELOPE_SLACK_BYTES
    reads = (
        contract.STORE_GET,
        contract.STORE_LIST,
        contract.STORE_GET_LOGS,
        contract.STORE_TREE,
        contract.STORE_COUNTERS,
        contract.STORE_EXPLAIN,
        contract.STORE_QUEUE_STATUS,
        contract.STORE_SERVERS,
        contract.STORE_READ_EVENTS,
        contract.STORE_SUMMARIZE_EVENTS,
        contract.STORE_FAILURES,
        contract.STORE_SCHEDULE_READ,
        contract.STORE_TASK_NAMES,
        contract.STORE_QUEUE_OP,
        contract.STORE_CANCEL,
        contract.STORE_LIMITS,
        contract.STORE_LIMIT_CHANGE,
        contract.STORE_LEASED_FLOW,
    )
    return {method.kind: cap for method in reads}


class Budget:
    """One pipe's refusals: a token bucket of ``burst`` tokens refilled at ``rate``/s."""

    __slots__ = ("_at", "_rate", "_tokens", "burst")

    def __init__(self, now: float, *, burst: int = REFUSAL_BURST, rate: float = REFUSAL_RATE) -> None:
        self.burst = burst
        self._rate = rate
        self._tokens = float(burst)
        self._at = now

    def charge(self, now: float) -> bool:
        """Take one token; False when none is left (the burst is spent)."""
        self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self._rate)
        self._at = now
        if self._tokens < 1.0:  # refused: no debt, so a peer that keeps trying is not locked out
            return False
        self._tokens -= 1.0
        return True


class _Penalty:
    """An address that flooded: its connection rate, and when it last misbehaved."""

    __slots__ = ("budget", "seen")

    def __init__(self, now: float) -> None:
        self.budget = Budget(now, burst=1, rate=ADDRESS_RATE)
        self.seen = now


class _Turn:
    """A trusted pipe's large bodies, hashed one at a time (event loop only)."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class Gate:
    """Screens, verifies and budgets what one socket receives (see the module's doc).

    ``limits`` maps an envelope kind to the largest message of that kind (trailer
    excluded); kinds not in it are bounded by the socket's receive limit alone.
    ``police`` closes pipes that spend their refusal budget (listening sockets:
    a dialer's peers are the addresses it was configured with). ``senders`` maps an
    envelope kind to the roles that may send it here (``contract.senders_to``);
    kinds not in it are let through (a responder answers them "no route")."""

    def __init__(
        self,
        sealer: seal_mod.Seal,
        guard: seal_mod.ReplayGuard,
        where: str,
        *,
        limits: Mapping[int, int] | None = None,
        police: bool = True,
        senders: Mapping[int, frozenset[str]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.seal = sealer
        self.guard = guard
        self.where = where
        self.limits: Mapping[int, int] = limits or {}
        self.senders: Mapping[int, frozenset[str]] = senders or {}
        # (role, kind) pairs refused and logged already: one line each (bounded by the table).
        self._forbidden_said: set[tuple[str, int]] = set()
        self.police = police
        self._clock = clock
        self._lock = threading.Lock()
        self._budgets: dict[int, Budget] = {}
        self._proven: set[int] = set()
        self._hashing = 0  # the unproven pipe whose large body is being hashed, or 0
        self._strangers_after = 0.0  # no stranger's large body is hashed before then
        self._penalised: dict[str, _Penalty] = {}  # addresses that flooded, least recent first
        self._closed: set[int] = set()  # closed by the gate, not yet gone
        self._gone: dict[int, None] = {}  # the last GONE_PIPES pipes gone, oldest first
        self._turns: dict[int, _Turn] = {}  # trusted pipes with a large body being hashed
        # Counted for tests and metrics: messages handed to the MAC, pipes closed.
        self.macs = 0
        self.pipes_closed = 0
        self.connections_refused = 0

    # --- pipe events (NNG threads)

    def admit(self, pipe: Any) -> None:
        """A new connection (before it is added): refused when it comes from an
        address that flooded and has used its connection rate."""
        if not self.police or not self._penalised:
            return
        host = _host(pipe)
        now = self._clock()
        with self._lock:
            penalty = self._penalised.get(host) if host else None
            if penalty is None:
                return
            if now - penalty.seen >= ADDRESS_QUIET_SECONDS:
                del self._penalised[host]
                return
            if penalty.budget.charge(now):
                return
            penalty.seen = now
            self.connections_refused += 1
        self.seal.refusals.add(FLOODING_ADDRESS, self.where)
        with contextlib.suppress(pynng.NNGException):
            pipe.close()

    def forget(self, pipe: Any) -> None:
        """A pipe is gone: drop what the gate kept about it (bounded memory), and
        remember its id, so what it queued before going is not taken for new."""
        pid = pipe.id
        with self._lock:
            self._budgets.pop(pid, None)
            self._proven.discard(pid)
            self._closed.discard(pid)
            if pid:
                self._gone[pid] = None
                if len(self._gone) > GONE_PIPES:
                    del self._gone[next(iter(self._gone))]

    # --- receiving

    def screen(self, pid: int, body: Any) -> str:
        """The reason to refuse ``body`` before any MAC, or ""."""
        if self._shut(pid):
            return CLOSED_PIPE
        reason = self.seal.screen(body)
        if reason or not self.limits or not self.seal.enabled:
            return reason
        kind = envelope_kind(body)
        limit = self.limits.get(kind) if kind is not None else None
        if limit is not None and len(body) > limit + seal_mod.FIXED_TRAILER_BYTES + seal_mod.MAX_KID_BYTES:
            return OVERSIZE
        return ""

    def open_bytes(self, raw: bytes) -> bytes | None:
        """The clear part of ``raw``, received without its pipe (nothing to charge)."""
        reason = self.seal.screen(raw)
        if reason:
            self.seal.refusals.add(reason, self.where)
            return None
        return self._open(raw)

    def open_now(self, msg: Any) -> bytes | None:
        """The clear bytes of ``msg``, verified on the calling thread (dialers, sync receives)."""
        pid, body = _pipe_id(msg), _body(msg)
        reason = self.screen(pid, body)
        if reason:
            self._refused(msg, pid, reason)
            return None
        raw = bytes(body)
        del body
        return self._verified(msg, pid, self._open(raw))

    async def open(self, msg: Any) -> bytes | None:
        """The clear bytes of ``msg``; a large body is hashed in a thread."""
        pid, body = _pipe_id(msg), _body(msg)
        reason = self.screen(pid, body)
        if reason:
            self._refused(msg, pid, reason)
            return None
        if len(body) < LARGE_BODY_BYTES:
            raw = bytes(body)
            del body
            return self._verified(msg, pid, self._open(raw))
        del body
        with self._lock:
            trusted = bool(pid) and pid in self._proven
        if trusted:
            return await self._open_trusted(msg, pid)
        with self._lock:
            if self._hashing or self._clock() < self._strangers_after:
                reason = BUSY
            else:
                self._hashing = pid or -1
        if reason:
            # Its pipe goes at once too: NNG is already reading the stranger's next
            # message into a buffer of its declared size. Its address is not
            # penalised: a suite peer whose first message is large meets this too.
            self.seal.refusals.add(reason, self.where)
            self._charge(msg, pid, at_once=True, penalise=False)
            return None
        started = self._clock()
        clear = await self._hash_off_loop(msg, stranger=True)
        if clear is None:
            now = self._clock()
            with self._lock:
                self._strangers_after = now + (now - started) * STRANGER_BACKOFF
            # A stranger's large body that fails its MAC: its pipe goes at once (a
            # peer with the key never sends one; one with a wrong key is refused anyway).
            self._charge(msg, pid, at_once=True)
            return None
        return self._verified(msg, pid, clear)

    async def _open_trusted(self, msg: Any, pid: int) -> bytes | None:
        """A large body from a pipe that has delivered a verified message: hashed
        after the pipe's previous large body, unless the pipe was shut meanwhile."""
        turn = self._turns.get(pid)
        if turn is None:
            turn = self._turns[pid] = _Turn()
        turn.users += 1
        try:
            async with turn.lock:
                if self._shut(pid):
                    self.seal.refusals.add(CLOSED_PIPE, self.where)
                    return None
                clear = await self._hash_off_loop(msg, stranger=False)
        finally:
            turn.users -= 1
            if not turn.users:
                del self._turns[pid]
        if clear is None:
            # What verified before may have been a copy off the wire: a large body
            # that fails closes the pipe at once, as a stranger's does.
            self._charge(msg, pid, at_once=True)
            return None
        return self._verified(msg, pid, clear)

    async def _hash_off_loop(self, msg: Any, *, stranger: bool) -> bytes | None:
        # Shielded: a cancelled caller (a responder closing) must not cancel the
        # work item before its thread starts, which would leave the strangers' slot
        # taken; the thread releases it.
        work = asyncio.get_running_loop().run_in_executor(None, self._hash, msg, stranger)
        return await asyncio.shield(work)

    def _hash(self, msg: Any, stranger: bool) -> bytes | None:
        """Hash ``msg`` in NNG's buffer (a thread). ``msg`` is an argument so that
        it, and the buffer it frees when collected, lives until the hash is done,
        even when the coroutine that awaits it is cancelled. A stranger's junk is
        never copied; what verifies is copied once, its clear part only."""
        try:
            view = self._open(cast(bytes, _body(msg)))
            return bytes(view) if view is not None else None
        finally:
            if stranger:
                with self._lock:
                    self._hashing = 0

    def _open(self, raw: bytes) -> bytes | None:
        with self._lock:
            self.macs += 1
        return self.seal.open(raw, self.guard, self.where)

    def sender_role(self, msg: Any) -> str:
        """The role of the key ``msg`` was sealed with ("" for none): for a message
        this gate let through."""
        return self.seal.role_of(_body(msg))

    def _verified(self, msg: Any, pid: int, clear: bytes | None) -> bytes | None:
        if clear is None:  # the seal counted its reason
            self._charge(msg, pid)
            return None
        if self.senders and self.seal.roled and not self._permitted(msg, clear):
            return None
        if self.seal.enabled and pid:
            with self._lock:
                if pid not in self._gone:
                    self._proven.add(pid)
        return clear

    def _permitted(self, msg: Any, clear: bytes) -> bool:
        """Whether the role that sealed ``msg`` may send its kind here; if not, the
        refusal is counted and said (once per role and kind)."""
        role = self.seal.role_of(_body(msg))
        kind = envelope_kind(clear)
        allowed = self.senders.get(kind) if kind is not None else None
        if not role or kind is None or allowed is None or role in allowed:
            return True
        self.seal.refusals.add(FORBIDDEN, self.where)
        with self._lock:
            said = (role, kind) in self._forbidden_said
            self._forbidden_said.add((role, kind))
        if not said:
            kid = self.seal.kid_of(_body(msg)).decode("ascii", "replace")
            log.warning(
                "refused %s on %s: signed with key %r of role %s, which may not send it (%s may: "
                "core/contract.py SENDERS); dropped unanswered, counted as %r",
                _kind_name(kind),
                self.where or "a socket",
                kid,
                role,
                ", ".join(sorted(allowed)) or "no role",
                FORBIDDEN,
            )
        return False

    def _shut(self, pid: int) -> bool:
        """Whether ``pid`` was closed by the gate or is gone."""
        with self._lock:
            return pid in self._closed or pid in self._gone

    def _refused(self, msg: Any, pid: int, reason: str) -> None:
        self.seal.refusals.add(reason, self.where)
        if reason == CLOSED_PIPE:
            with self._lock:
                gone = pid in self._gone
            if gone:
                _unlist(msg.pipe)
        else:
            self._charge(msg, pid)

    def _charge(self, msg: Any, pid: int, *, at_once: bool = False, penalise: bool = True) -> None:
        """Charge a refusal to ``pid``, trusted or not (see the module's doc)."""
        if not self.police or not pid:
            return
        now = self._clock()
        with self._lock:
            if pid in self._closed or pid in self._gone:
                return
            budget = self._budgets.get(pid)
            if budget is None:
                budget = self._budgets[pid] = Budget(now)
            if budget.charge(now) and not at_once:
                return
            self._closed.add(pid)
            self.pipes_closed += 1
        pipe = msg.pipe
        if pipe is not None:
            if penalise:
                self._penalise(_host(pipe), now)
            # The peer may have gone meanwhile (NNG then says NoEntry): nothing to close.
            with contextlib.suppress(pynng.NNGException):
                pipe.close()

    def _penalise(self, host: str, now: float) -> None:
        if not host:
            return
        with self._lock:
            penalty = self._penalised.pop(host, None)
            if penalty is None or now - penalty.seen >= ADDRESS_QUIET_SECONDS:
                penalty = _Penalty(now)
            penalty.seen = now
            if len(self._penalised) >= PENALISED_ADDRESSES:
                del self._penalised[next(iter(self._penalised))]
            self._penalised[host] = penalty  # the most recent last: evicted last


def _body(msg: Any) -> memoryview:
    """The message's bytes in NNG's buffer, uncopied (pynng's ``Message._buffer``:
    ``Message.bytes`` would copy every message, junk included)."""
    return memoryview(msg._buffer)


def _unlist(pipe: Any) -> None:
    """Take a gone pipe off its socket's list again: pynng re-lists the pipe of a
    message that outlived it (``Socket._try_associate_msg_with_pipe``), and nothing
    would ever remove it after NNG's last pipe event."""
    if pipe is None:
        return
    sock: Any = getattr(pipe, "socket", None)
    pipes = getattr(sock, "_pipes", None)
    if not isinstance(pipes, dict):
        return
    pid = pipe.id
    with sock._pipe_notify_lock:
        if pipes.get(pid) is pipe:
            del pipes[pid]


def _host(pipe: Any) -> str:
    """The remote host of a tcp pipe ("" for ipc, or when NNG cannot say)."""
    try:
        address = str(pipe.remote_address)
    except (pynng.NNGException, AttributeError, ValueError):
        return ""
    host, sep, _port = address.rpartition(":")
    return host if sep else ""


def _pipe_id(msg: Any) -> int:
    pipe = msg.pipe
    return int(pipe.id) if pipe is not None else 0


def envelope_kind(body: Any) -> int | None:
    """The ``kind`` of the envelope ``body`` starts with, read from its first bytes
    (the serializer writes fields in number order: message_id, then kind), or None
    when not found there. Unauthenticated: only ever used to refuse."""
    end = min(len(body), KIND_SCAN_BYTES)
    i = 0
    while i < end:
        tag, i = _varint(body, i, end)
        if tag is None:
            return None
        field, wire = tag >> 3, tag & 7
        value, i = _varint(body, i, end) if wire in (0, 2) else (None, end)
        if value is None:
            return None
        if field == 2 and wire == 0:
            return value
        if field > 2:
            return 0  # proto3 leaves the default kind out
        if wire == 2:
            i += value
    return None


def _varint(body: Any, i: int, end: int) -> tuple[int | None, int]:
    value = shift = 0
    while i < end and shift < 64:
        byte = body[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7
    return None, end


def _kind_name(kind: int) -> str:
    try:
        return envelope_pb2.Kind.Name(kind)
    except ValueError:
        return f"kind {kind}"
