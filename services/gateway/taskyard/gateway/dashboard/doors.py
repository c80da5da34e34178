"""The dashboard's connections: how many, from whom, and for how long.

The gateway's descriptors are shared with its gRPC ports and its health port, so
the dashboard may hold only its own share of them, whoever connects:

- at most ``max_connections`` at once (TLS handshakes in progress included), at
  most ``per_address`` from one client address; more are refused as they are
  accepted (a ``503`` over plaintext; closed, with TLS);
- a TLS handshake must be done within ``header_timeout`` seconds, and a
  request's headers must be in within ``header_timeout`` seconds: from the
  connect (or the handshake) for the first request, from its first byte for the
  next ones;
- a connection that waits between requests longer than ``idle_timeout`` is closed;
- a request's body (the JSON API's) must be in within ``header_timeout`` seconds
  too (site.py), and a TLS connection closed for any of these is not kept open
  waiting for the client's close_notify.

A live view (SSE) is a request in progress, so neither timeout ends it; its
slots are counted apart (streams.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import resource
import socket
import ssl
from collections.abc import Callable, Coroutine
from typing import Any

from aiohttp import web

from taskyard.core.config import GatewaySettings
from taskyard.gateway import tls

log = logging.getLogger(__name__)

# Connections the kernel queues for the accepting task.
BACKLOG = 128
# Seconds before accepting again after an accept failed (out of descriptors).
ACCEPT_RETRY = 0.1
# Refused connections, and failed accepts (out of descriptors, retried every
# ACCEPT_RETRY), are logged at most once per this many seconds (the first at once).
REFUSAL_LOG_INTERVAL = 10.0
# What a plaintext connection over the limits is told before it is closed.
_REFUSAL_BODY = b'{"code":"RESOURCE_EXHAUSTED","message":"too many connections"}'
REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    + f"Content-Length: {len(_REFUSAL_BODY)}\r\nConnection: close\r\n\r\n".encode()
    + _REFUSAL_BODY
)


class TooManyForDescriptors(tls.ListenRefused):
    pass


@dataclasses.dataclass(frozen=True, kw_only=True)
class Limits:
    header_timeout: float
    idle_timeout: float
    max_connections: int
    per_address: int

    @classmethod
    def from_settings(cls, settings: GatewaySettings) -> Limits:
        return cls(
            header_timeout=settings.http_header_timeout,
            idle_timeout=settings.http_idle_timeout,
            max_connections=settings.http_max_connections,
            per_address=settings.http_max_connections_per_address,
        )

    def check_descriptors(self) -> None:
        """At most half the process's descriptors for the dashboard: the rest are the
        gRPC ports', the health port's, the bus's and the files'."""
        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and self.max_connections > soft // 2:
            raise TooManyForDescriptors(
                f"TASKYARD_HTTP_MAX_CONNECTIONS={self.max_connections} is more than half this "
                f"process's descriptor limit ({soft}, ulimit -n): lower it or raise the limit"
            )


class Ticket:
    """One admitted connection's place in the counts, given back once."""

    def __init__(self, doors: Doors, address: str) -> None:
        self._doors = doors
        self.address = address
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._doors.release(self.address)


class GuardedHandler(web.RequestHandler):
    """aiohttp's connection handler, with the header deadline and its ticket."""

    def __init__(self, manager: web.Server, ticket: Ticket, header_timeout: float, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._ticket = ticket
        self._header_timeout = header_timeout
        self._header_timer: asyncio.TimerHandle | None = None
        self._header_mark = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        # A next request's first bytes on a kept-alive connection: its headers' deadline
        # (a timer still pending from an earlier request, already answered, is not its).
        if not self._busy() and (self._header_timer is None or self._header_mark != self._request_count):
            if self._header_timer is not None:
                self._header_timer.cancel()
            self._arm()

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        try:
            super().connection_lost(exc)
        finally:
            self._ticket.release()

    def _busy(self) -> bool:
        # aiohttp's own state: a request parsed and queued, or one being answered.
        return bool(self._messages) or self._request_in_progress

    def _arm(self) -> None:
        # aiohttp counts the requests it parsed (headers complete) on this connection.
        self._header_mark = self._request_count
        self._header_timer = self._loop.call_later(self._header_timeout, self._headers_late)

    def _headers_late(self) -> None:
        self._header_timer = None
        if self._request_count == self._header_mark and not self._busy():
            # With TLS, aborted, not closed: a TLS close waits on the client's own
            # close_notify, which a client holding connections never sends.
            if self.transport is not None and self.transport.get_extra_info("ssl_object") is not None:
                self.transport.abort()
            self.force_close()


class Doors:
    """The dashboard's listeners: each accepted connection is counted (or refused)
    before anything is read from it, then served, over TLS after a handshake that has
    the header timeout. The accepting is done here, not by a server of the event loop,
    so that a connection is counted while its handshake is still going on."""

    def __init__(
        self,
        limits: Limits,
        make_handler: Callable[[Ticket], GuardedHandler],
        ssl_context: ssl.SSLContext | None,
    ) -> None:
        self.limits = limits
        self.ssl = ssl_context
        self._make_handler = make_handler
        self.open = 0
        self._by_address: dict[str, int] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._listeners: list[socket.socket] = []
        self.refused = 0
        self._unlogged = 0
        self._logged_at = -REFUSAL_LOG_INTERVAL
        self.accept_failures = 0
        self._unlogged_failures = 0
        self._failure_logged_at = -REFUSAL_LOG_INTERVAL

    def admit(self, address: str) -> Ticket | None:
        if self.open >= self.limits.max_connections:
            return None
        if self._by_address.get(address, 0) >= self.limits.per_address:
            return None
        self.open += 1
        self._by_address[address] = self._by_address.get(address, 0) + 1
        return Ticket(self, address)

    def release(self, address: str) -> None:
        self.open -= 1
        left = self._by_address[address] - 1
        if left:
            self._by_address[address] = left
        else:
            del self._by_address[address]

    async def listen(self, host: str, port: int) -> None:
        """Bind every address ``host`` names (as the event loop's own servers do)."""
        loop = asyncio.get_running_loop()
        infos = await loop.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        try:
            for family, kind, proto, _name, address in dict.fromkeys(infos):
                listener = socket.socket(family, kind, proto)
                self._listeners.append(listener)
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                listener.bind(address)
                listener.listen(BACKLOG)
                listener.setblocking(False)
        except OSError:
            self._close_listeners()
            raise
        for listener in self._listeners:
            self._spawn(self._accept(listener))

    async def _accept(self, listener: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, peer = await loop.sock_accept(listener)
            except OSError as exc:
                # Out of descriptors (EMFILE) or a connection gone before its accept:
                # the next accept may succeed; let the loop breathe meanwhile.
                self._count_accept_failure(loop.time(), exc)
                await asyncio.sleep(ACCEPT_RETRY)
                continue
            ticket = self.admit(str(peer[0]))
            if ticket is None:
                _refuse(conn, plaintext=self.ssl is None)
                self._count_refusal(loop.time())
                continue
            self._spawn(self._serve(conn, ticket))

    def _count_accept_failure(self, now: float, exc: OSError) -> None:
        self.accept_failures += 1
        self._unlogged_failures += 1
        if now - self._failure_logged_at >= REFUSAL_LOG_INTERVAL:
            log.warning("dashboard: %d accept(s) failed (%s)", self._unlogged_failures, exc.strerror or exc)
            self._unlogged_failures = 0
            self._failure_logged_at = now

    def _count_refusal(self, now: float) -> None:
        self.refused += 1
        self._unlogged += 1
        if now - self._logged_at >= REFUSAL_LOG_INTERVAL:
            log.warning(
                "dashboard: refused %d connection(s) over its caps (%d per address, %d in all)",
                self._unlogged,
                self.limits.per_address,
                self.limits.max_connections,
            )
            self._unlogged = 0
            self._logged_at = now

    async def _serve(self, conn: socket.socket, ticket: Ticket) -> None:
        handler = self._make_handler(ticket)
        try:
            await asyncio.get_running_loop().connect_accepted_socket(
                lambda: handler,
                conn,
                ssl=self.ssl,
                ssl_handshake_timeout=self.limits.header_timeout if self.ssl is not None else None,
                # Any other close of a TLS connection (idle, refused body) waits no longer
                # than a header for the client's close_notify.
                ssl_shutdown_timeout=self.limits.header_timeout if self.ssl is not None else None,
            )
        except BaseException:
            # A handshake that failed or took too long, or the dashboard stopping.
            conn.close()
            ticket.release()
            raise

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            log.debug("dashboard connection ended before it was served: %s", exc or type(exc).__name__)

    def _close_listeners(self) -> None:
        for listener in self._listeners:
            listener.close()
        self._listeners.clear()

    async def close(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._close_listeners()


def _refuse(conn: socket.socket, *, plaintext: bool) -> None:
    """Over the limits: told so (plaintext; with TLS there is no session to say it in)
    and closed, from the accepting task, never waiting on the client."""
    with contextlib.suppress(OSError):
        conn.setblocking(False)
        if plaintext:
            conn.send(REFUSAL)
    conn.close()
