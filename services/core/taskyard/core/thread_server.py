"""The threaded HTTP server of the ops port (ops.py: ``/metrics``, ``/livez``,
``/readyz``): a thread per connection, so its connections are bounded.

- At most ``max_connections`` at once, ``per_address`` from one client address. A
  connection over its address's share is answered ``503`` and closed from the accepting
  thread, without a thread of its own. When all are taken, the oldest connection that
  has not finished its headers is shut down to make room (a probe or a scrape sends
  its headers at once, so only a connection holding a slot without asking anything
  loses it); only when every connection is past its headers is the new one refused.
- A connection's request headers must be in within ``header_timeout`` seconds of its
  connect, or it is shut down (one watchdog thread per server keeps the deadlines: a
  per-read timeout alone lets a client sending a byte every few seconds stay for ever).
- Every later read or write waits at most ``header_timeout`` seconds.

A request is answered in milliseconds, so a probe or a scrape never needs more than a
few of the slots; a client holding many only ever holds its address's share, and
silent connections from many addresses cannot keep the kubelet's probe out.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import socket
import socketserver
import sys
import threading
import time
from typing import Any

from taskyard.core.config import TelemetrySettings

log = logging.getLogger(__name__)

# Refused connections are logged at most once per this many seconds (the first at once).
REFUSAL_LOG_INTERVAL = 10.0

# What a connection over the limits is told before it is closed.
_REFUSAL_BODY = b"too many connections\n"
REFUSAL = (
    b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
    + f"Content-Length: {len(_REFUSAL_BODY)}\r\nConnection: close\r\n\r\n".encode()
    + _REFUSAL_BODY
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Limits:
    header_timeout: float
    max_connections: int
    per_address: int

    @classmethod
    def from_settings(cls, settings: TelemetrySettings) -> Limits:
        return cls(
            header_timeout=settings.ops_header_timeout,
            max_connections=settings.ops_max_connections,
            per_address=settings.ops_max_connections_per_address,
        )


DEFAULT_LIMITS = Limits.from_settings(TelemetrySettings())


class Deadlines:
    """Sockets shut down when their deadline passes, from one thread."""

    def __init__(self, name: str) -> None:
        self._due: dict[socket.socket, float] = {}
        self._changed = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=f"{name}-deadlines", daemon=True)
        self._thread.start()

    def add(self, sock: socket.socket, seconds: float) -> None:
        with self._changed:
            self._due[sock] = time.monotonic() + seconds
            self._changed.notify()

    def remove(self, sock: socket.socket) -> None:
        with self._changed:
            self._due.pop(sock, None)

    def shut_oldest(self) -> socket.socket | None:
        """Shuts down the socket whose deadline comes first (the oldest still waiting
        for its headers: every deadline is the same timeout from its connect), if any."""
        with self._changed:
            if not self._due:
                return None
            sock = min(self._due, key=self._due.__getitem__)
            del self._due[sock]
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        return sock

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._changed:
                if self._closed:
                    return
                now = time.monotonic()
                late = [s for s, due in self._due.items() if due <= now]
                for sock in late:
                    del self._due[sock]
                if not late:
                    wait = min(self._due.values(), default=now + 3600) - now
                    self._changed.wait(wait)
                    continue
            for sock in late:
                # Wakes the handler's blocked read, which then ends its connection.
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


class Bounded(socketserver.ThreadingMixIn, socketserver.TCPServer):
    """Mixed in before a ``ThreadingMixIn`` server: the limits above. Handlers mix in
    ``HeaderDeadline`` so the deadline ends with their headers."""

    limits: Limits = DEFAULT_LIMITS
    daemon_threads = True

    def bound(self, limits: Limits, name: str) -> None:
        self.limits = limits
        self.name = name
        self.deadlines = Deadlines(name)
        self._count_lock = threading.Lock()
        self._open = 0
        self._by_address: dict[str, int] = {}
        # Connections shut down to make room, still counted in _open until their thread ends.
        self._evicted: set[socket.socket] = set()
        self.evicted = 0
        self.refused = 0
        self._unlogged = 0
        self._logged_at = -REFUSAL_LOG_INTERVAL

    def _admit(self, address: str) -> bool:
        with self._count_lock:
            if self._by_address.get(address, 0) >= self.limits.per_address:
                self._count_refusal()
                return False
            if self._open - len(self._evicted) >= self.limits.max_connections:
                # Full: the oldest connection still owing its headers makes room; its
                # thread ends as its read fails, and gives its count back then.
                oldest = self.deadlines.shut_oldest()
                if oldest is None:
                    self._count_refusal()
                    return False
                self._evicted.add(oldest)
                self.evicted += 1
            self._open += 1
            self._by_address[address] = self._by_address.get(address, 0) + 1
            return True

    def _count_refusal(self) -> None:
        self.refused += 1
        self._unlogged += 1
        now = time.monotonic()
        if now - self._logged_at >= REFUSAL_LOG_INTERVAL:
            log.warning(
                "%s: refused %d connection(s) over its caps (%d per address, %d in all)",
                self.name,
                self._unlogged,
                self.limits.per_address,
                self.limits.max_connections,
            )
            self._unlogged = 0
            self._logged_at = now

    def _release(self, request: Any, address: str) -> None:
        with self._count_lock:
            self._evicted.discard(request)
            self._open -= 1
            left = self._by_address[address] - 1
            if left:
                self._by_address[address] = left
            else:
                del self._by_address[address]

    def process_request(self, request: Any, client_address: Any) -> None:
        address = str(client_address[0])
        if not self._admit(address):
            # From the accepting thread: never wait on this client.
            with contextlib.suppress(OSError):
                request.setblocking(False)
                request.send(REFUSAL)
            self.shutdown_request(request)
            return
        self.deadlines.add(request, self.limits.header_timeout)
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.deadlines.remove(request)
            self._release(request, address)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.deadlines.remove(request)
            self._release(request, str(client_address[0]))

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client gone silent (the timeout) or away: its connection ends, nothing to report.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)

    def server_close(self) -> None:
        super().server_close()
        self.deadlines.close()


class HeaderDeadline(socketserver.StreamRequestHandler):
    """Mixed in before a ``BaseHTTPRequestHandler``: reads and writes wait at most the
    header timeout, and the connection's deadline ends once its headers are parsed."""

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self._bounded().limits.header_timeout)

    def parse_request(self) -> bool:
        try:
            return bool(super().parse_request())  # type: ignore[misc]
        finally:
            self._bounded().deadlines.remove(self.connection)

    def _bounded(self) -> Bounded:
        assert isinstance(self.server, Bounded)
        return self.server
