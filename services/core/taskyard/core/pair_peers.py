"""The peers of a pool's PAIR listener, and which of them is a scheduler.

Anyone who reaches the pool's PAIR port can connect to it, key or not. A pair0
listener takes one peer: a process without the key that connected first (across a
scheduler restart, say) kept the scheduler out for as long as it stayed, and the
pool's tasks waited. So the listener takes several pipes (pair1, polyamorous) and
admits a pipe by its first message, which must pass the seal and be a dispatch
(a scheduler's first message on a link is an empty one, its hello, sent from NNG's
thread as soon as it connects: scheduler/pools.py). A pipe whose message fails the
seal is closed at once; one that sends nothing within ``hello_timeout`` (the
request timeout: a stalled loop on either side must not cost the scheduler its
link) is closed then. Slot notices go to admitted pipes only, so an unadmitted
peer never delays or receives them.

What a keyless peer can make the pool hold is bounded: at most ``PENDING_PIPES``
pipes not yet admitted, ``PENDING_PER_HOST`` of them from one host (more are closed
as they connect, before anything is read from them), and NNG reads at most one
message at a time per pipe into a receive buffer of ``transport.PAIR_LISTEN_BUFFER``
messages, each at most the port's receive limit (``max_message_bytes``: a dispatch
of 200 max-size payloads fills it). A message's trailer is checked in NNG's buffer
before it is copied (core.gate), and a large body is hashed off the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import pynng
from google.protobuf.message import DecodeError

from taskyard.core import contract, gate, transport

log = logging.getLogger(__name__)

# Seconds a new pipe has to send its sealed hello, by default (a pool passes its
# request_timeout). The scheduler sends it as soon as its pipe connects, from NNG's
# thread; a peer that says nothing is dropped then.
HELLO_TIMEOUT = 10.0
# Pipes not yet admitted the listener keeps at once, in all and from one host (an
# ipc peer's host is ""): one more is closed as it connects, before NNG reads it.
PENDING_PIPES = 16
PENDING_PER_HOST = 4
# At most one line per this many seconds about dropped peers (a peer that redials
# in a loop must not flood the log); the count in between is in the next line.
LOG_INTERVAL = 10.0


def _is_dispatch(clear: bytes) -> bool:
    try:
        return transport.decode(clear).kind == contract.DISPATCH.kind
    except DecodeError:
        return False


class SchedulerPeers:
    """The PAIR listener ``sock`` (``transport.open_pair(..., several=True)``), as
    what the scheduler sends (``arecv``) and where slot notices go (``send``).
    ``on_lost`` runs on the loop when an admitted pipe goes away."""

    def __init__(
        self,
        sock: Any,
        *,
        where: str,
        on_lost: Callable[[], None],
        hello_timeout: float = HELLO_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.sock = sock
        self._gate: gate.Gate = sock._gate
        self._where = where
        self._on_lost = on_lost
        self._hello_timeout = hello_timeout
        self._clock = clock
        self._admitted: dict[int, Any] = {}  # pipe id -> pynng.Pipe
        # Connected pipes not yet admitted, by id: their host (kept on NNG's threads).
        self._lock = threading.Lock()
        self._pending: dict[int, str] = {}
        self.refused = 0  # connections closed as they came: too many pending
        self._waiting: dict[int, asyncio.TimerHandle] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self.dropped = 0
        self._logged_at = float("-inf")
        self._unlogged = 0

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Follow the listener's pipes on ``loop`` (NNG runs pipe callbacks on its threads)."""
        self._loop = loop
        self.sock.add_pre_pipe_connect_cb(self._connecting)
        self.sock.add_post_pipe_connect_cb(
            lambda pipe: transport.call_from_nng_thread(loop, self._connected, pipe)
        )
        self.sock.add_post_pipe_remove_cb(self._gone)

    @property
    def admitted(self) -> int:
        return len(self._admitted)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    # ------------------------------------------------------------ pipes
    def _connecting(self, pipe: Any) -> None:
        """NNG's thread, before the pipe is added: closed when too many are pending."""
        host = gate._host(pipe)
        with self._lock:
            from_host = sum(1 for h in self._pending.values() if h == host)
            if len(self._pending) < PENDING_PIPES and from_host < PENDING_PER_HOST:
                self._pending[pipe.id] = host
                return
            self.refused += 1
        with contextlib.suppress(pynng.NNGException):
            pipe.close()

    def _gone(self, pipe: Any) -> None:
        """NNG's thread: a pipe closed."""
        with self._lock:
            self._pending.pop(pipe.id, None)
        if self._loop is not None:
            transport.call_from_nng_thread(self._loop, self._removed, pipe.id)

    def _connected(self, pipe: Any) -> None:
        # NNG calls a pipe's connect callback before its remove callback, and both
        # reach the loop in that order; its first message may come first (admitted).
        if pipe.id in self._admitted or pipe.id in self._waiting or self._loop is None:
            return
        with self._lock:
            if pipe.id not in self._pending:  # refused as it came, or gone already
                return
        self._waiting[pipe.id] = self._loop.call_later(
            self._hello_timeout, self._drop, pipe, f"no sealed hello within {self._hello_timeout:g} s"
        )

    def _removed(self, pipe_id: int) -> None:
        handle = self._waiting.pop(pipe_id, None)
        if handle is not None:
            handle.cancel()
        elif self._admitted.pop(pipe_id, None) is not None:
            self._on_lost()

    def _drop(self, pipe: Any, reason: str) -> None:
        self._waiting.pop(pipe.id, None)
        if self._admitted.pop(pipe.id, None) is not None:
            self._on_lost()
        with contextlib.suppress(pynng.NNGException):
            pipe.close()
        self.dropped += 1
        self._unlogged += 1
        now = self._clock()
        if now - self._logged_at >= LOG_INTERVAL:
            log.warning(
                "PAIR peer dropped on %s: %s (%d dropped since the last such line, %d in all)",
                self._where,
                reason,
                self._unlogged,
                self.dropped,
            )
            self._logged_at, self._unlogged = now, 0

    def _admit(self, pipe: Any) -> bool:
        """Admit a pipe still connected (one that went meanwhile stays out)."""
        with self._lock:
            if self._pending.pop(pipe.id, None) is None:
                return False
        handle = self._waiting.pop(pipe.id, None)
        if handle is not None:
            handle.cancel()
        self._admitted[pipe.id] = pipe
        return True

    # ------------------------------------------------------------ messages
    async def arecv(self) -> bytes:
        """The next message from an admitted pipe, seal removed; what fails the seal
        closes its pipe, whether it was admitted or not."""
        while True:
            msg = await self.sock.arecv_msg()
            pipe = msg.pipe
            pid = int(pipe.id) if pipe is not None else 0
            # The trailer's cheap checks first, in NNG's buffer: junk is refused
            # without a copy or a MAC.
            reason = self._gate.screen(pid, gate._body(msg))
            if reason:
                # NNG's buffer goes now: named here while the next receive waits, a
                # refused message would be kept until the next one came (one body of
                # the receive limit more than docs/security.md counts for keyless peers).
                del msg
                self._gate.seal.refusals.add(reason, self._where)
                if pipe is not None:
                    self._drop(pipe, f"a message that fails the seal ({reason})")
                continue
            clear = await self._gate.open(msg)  # a large body is hashed in a thread
            del msg  # as above: not kept while the next receive waits
            if pipe is None:  # gone meanwhile: nothing to answer, nothing to close
                continue
            if pipe.id in self._admitted:
                if clear is not None:
                    return clear
                self._drop(pipe, "a message that fails the seal")
            elif clear is None:
                self._drop(pipe, "a first message that fails the seal")
            elif not _is_dispatch(clear):
                self._drop(pipe, "a first message that is not a dispatch")
            elif self._admit(pipe):
                return clear

    def send(self, data: bytes) -> int:
        """Seal ``data`` and send it to every admitted pipe without blocking (a full
        queue drops it); returns how many took it."""
        if not self._admitted:
            return 0
        sealed = self._gate.seal.seal(data)
        sent = 0
        for pipe in list(self._admitted.values()):
            try:
                self.sock.send_msg(pynng.Message(sealed, pipe=pipe), block=False)
            except pynng.NNGException as exc:
                log.debug("slot notice not sent to a scheduler pipe: %s", exc)
            else:
                sent += 1
        return sent

    def close(self) -> None:
        for handle in self._waiting.values():
            handle.cancel()
        self._waiting.clear()
        self.sock.close()
