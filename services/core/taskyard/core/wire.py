"""Raw NNG messages (routing header and body) moved on the event loop.

A raw-mode socket hands over each message with its header; ``take`` and ``put``
move one without blocking, ``send`` waits (on NNG's thread) only when NNG cannot
take a message at once, and a ``Reader`` calls back from the loop while NNG's
receive descriptor is readable. Used by core.rpc's requester (raw REQ).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pynng
from pynng import ffi, lib
from pynng.exceptions import check_err

# Messages NNG may hold for a socket in each direction (its maximum): requests sent
# while no responder is connected wait here, and replies wait here until the loop
# reads them, so a burst backs up in C, not in Python.
BUFFER_MESSAGES = 8192

# Messages taken in a row before letting other callbacks run: a reader that finds a
# long queue must not hold the loop for all of it.
FAIR_SHARE = 64

_NONBLOCK = lib.NNG_FLAG_NONBLOCK
_EAGAIN = lib.NNG_EAGAIN


def take(sock: Any) -> tuple[bytes, bytes] | None:
    """The next message's (header, body), or None when none is waiting."""
    msg_p = ffi.new("nng_msg **")
    rv = lib.nng_recvmsg(sock.socket, msg_p, _NONBLOCK)
    if rv:
        if rv == _EAGAIN:
            return None
        check_err(rv)
    msg = msg_p[0]
    try:
        header = ffi.unpack(ffi.cast("char *", lib.nng_msg_header(msg)), lib.nng_msg_header_len(msg))
        body = ffi.unpack(ffi.cast("char *", lib.nng_msg_body(msg)), lib.nng_msg_len(msg))
    finally:
        lib.nng_msg_free(msg)
    return header, body


def _message(header: bytes, body: bytes) -> Any:
    msg_p = ffi.new("nng_msg **")
    check_err(lib.nng_msg_alloc(msg_p, 0))
    msg = msg_p[0]
    rv = lib.nng_msg_header_append(msg, header, len(header)) or lib.nng_msg_append(msg, body, len(body))
    if rv:
        lib.nng_msg_free(msg)
        check_err(rv)
    return msg


def put(sock: Any, header: bytes, body: bytes) -> bool:
    """Hand a message to NNG without blocking; False when it cannot take it now
    (no pipe yet and the send buffer full)."""
    msg = _message(header, body)
    rv = lib.nng_sendmsg(sock.socket, msg, _NONBLOCK)
    if rv == 0:
        return True
    lib.nng_msg_free(msg)
    if rv == _EAGAIN:
        return False
    check_err(rv)
    return False


async def send(sock: Any, header: bytes, body: bytes) -> None:
    """Send, waiting (on NNG's thread) only when NNG cannot take it at once."""
    if put(sock, header, body):
        return
    await sock.asend_msg(pynng.Message(_message(header, body)))


class Reader:
    """Calls ``on_message(header, body)`` for each authenticated message of a raw
    socket, from the loop, while it is on (``start``/``stop``)."""

    def __init__(self, sock: Any, on_message: Callable[[bytes, bytes], None]) -> None:
        self.sock = sock
        self.loop: asyncio.AbstractEventLoop | None = None
        self._on_message = on_message
        self._fd: int | None = None
        self.on = False

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.on and self.loop is loop:
            return
        self.stop()
        if self._fd is None:
            self._fd = int(self.sock.recv_fd)
        self.loop = loop
        loop.add_reader(self._fd, self.poll)
        self.on = True

    def stop(self) -> None:
        if self.on and self.loop is not None and self._fd is not None and not self.loop.is_closed():
            self.loop.remove_reader(self._fd)
        self.on = False

    def poll(self) -> None:
        for _ in range(FAIR_SHARE):
            if not self.on:
                return
            try:
                got = take(self.sock)
            except pynng.NNGException:  # closed under us
                self.stop()
                return
            if got is None:
                return
            header, body = got
            clear = self.sock._open_sealed(body)
            if clear is not None:
                self._on_message(header, clear)
