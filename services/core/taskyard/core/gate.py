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

Every refusal is charged to its peer pipe (``Budget``): a pipe may cause
``REFUSAL_BURST`` refusals, refilled at ``REFUSAL_RATE`` per second; past that the
gate closes the pipe (pynng ``Pipe.close``), and what it already delivered is
dropped unhashed. A legitimate peer never pays: its messages verify. One whose
key or clock is wrong is refused anyway; a closed pipe only makes it redial. The
address of a pipe closed for flooding may then open one connection a second
(``ADDRESS_RATE``; more are closed as they connect, before anything is read): on
one host, the suite's own new connections share that rate while the flood lasts.

What a gate does not do is documented in docs/security.md ("Floods from a peer without the key").
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, cast

import pynng

from taskyard.core import contract
from taskyard.core import seal as seal_mod

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


class Gate:
    """Screens, verifies and budgets what one socket receives (see the module's doc).

    ``limits`` maps an envelope kind to the largest message of that kind (trailer
    excluded); kinds not in it are bounded by the socket's receive limit alone.
    ``police`` closes pipes that spend their refusal budget (listening sockets:
    a dialer's peers are the addresses it was configured with)."""

    def __init__(
        self,
        sealer: seal_mod.Seal,
        guard: seal_mod.ReplayGuard,
        where: str,
        *,
        limits: Mapping[int, int] | None = None,
        police: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.seal = sealer
        self.guard = guard
        self.where = where
        self.limits: Mapping[int, int] = limits or {}
        self.police = police
        self._clock = clock
        self._lock = threading.Lock()
        self._budgets: dict[int, Budget] = {}
        self._proven: set[int] = set()
        self._hashing = 0  # the unproven pipe whose large body is being hashed, or 0
        self._strangers_after = 0.0  # no stranger's large body is hashed before then
        self._penalised: dict[str, Budget] = {}  # addresses that flooded: new connections
        self._closed: set[int] = set()
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
            budget = self._penalised.get(host) if host else None
            if budget is None or budget.charge(now):
                return
            self.connections_refused += 1
        self.seal.refusals.add(FLOODING_ADDRESS, self.where)
        with contextlib.suppress(pynng.NNGException):
            pipe.close()

    def forget(self, pipe: Any) -> None:
        """A pipe is gone: drop what the gate kept about it (bounded memory)."""
        pid = pipe.id
        with self._lock:
            self._budgets.pop(pid, None)
            self._proven.discard(pid)
            if self._hashing == pid:
                self._hashing = 0
            self._closed.discard(pid)

    # --- receiving

    def screen(self, pid: int, body: Any) -> str:
        """The reason to refuse ``body`` before any MAC, or ""."""
        with self._lock:
            if pid in self._closed:
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
        size = len(body)
        if size < LARGE_BODY_BYTES:
            raw = bytes(body)
            del body
            return self._verified(msg, pid, self._open(raw))
        with self._lock:
            unproven = pid not in self._proven
            if unproven and (self._hashing or self._clock() < self._strangers_after):
                reason = BUSY
            elif unproven:
                self._hashing = pid or -1
        if reason:
            # Its pipe goes at once too: NNG is already reading the stranger's next
            # message into a buffer of its declared size.
            self.seal.refusals.add(reason, self.where)
            self._charge(msg, pid, at_once=True)
            return None
        try:
            started = self._clock()
            # Hashed in NNG's buffer (``msg`` keeps it alive meanwhile): a stranger's
            # junk is never copied; what verifies is copied once, its clear part only.
            view = await asyncio.to_thread(self._open, cast(bytes, body))
            clear = bytes(view) if view is not None else None
            del body, view
        finally:
            if unproven:
                with self._lock:
                    self._hashing = 0
        if clear is None and unproven:
            now = self._clock()
            with self._lock:
                self._strangers_after = now + (now - started) * STRANGER_BACKOFF
            # A stranger's large body that fails its MAC: its pipe goes at once (a
            # peer with the key never sends one; one with a wrong key is refused anyway).
            self._charge(msg, pid, at_once=True)
            return None
        return self._verified(msg, pid, clear)

    def _open(self, raw: bytes) -> bytes | None:
        with self._lock:
            self.macs += 1
        return self.seal.open(raw, self.guard, self.where)

    def _verified(self, msg: Any, pid: int, clear: bytes | None) -> bytes | None:
        if clear is None:  # the seal counted its reason
            self._charge(msg, pid)
            return None
        if self.seal.enabled:
            with self._lock:
                self._proven.add(pid)
        return clear

    def _refused(self, msg: Any, pid: int, reason: str) -> None:
        self.seal.refusals.add(reason, self.where)
        if reason != CLOSED_PIPE:
            self._charge(msg, pid)

    def _charge(self, msg: Any, pid: int, *, at_once: bool = False) -> None:
        if not self.police or not pid:
            return
        now = self._clock()
        with self._lock:
            if pid in self._proven or pid in self._closed:
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
            self._penalise(_host(pipe), now)
            # The peer may have gone meanwhile (NNG then says NoEntry): nothing to close.
            with contextlib.suppress(pynng.NNGException):
                pipe.close()

    def _penalise(self, host: str, now: float) -> None:
        if not host:
            return
        with self._lock:
            if host in self._penalised:
                return
            if len(self._penalised) >= PENALISED_ADDRESSES:
                del self._penalised[next(iter(self._penalised))]
            self._penalised[host] = Budget(now, burst=1, rate=ADDRESS_RATE)


def _body(msg: Any) -> memoryview:
    """The message's bytes in NNG's buffer, uncopied (pynng's ``Message._buffer``:
    ``Message.bytes`` would copy every message, junk included)."""
    return memoryview(msg._buffer)


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
