"""The ops port (``/metrics``, ``/livez``, ``/readyz``) on its real threaded server, on loopback: connections
that never finish their headers are closed at the header deadline, however slowly
they drip bytes; idle ones before any token check hold at most the cap's threads;
one address holds at most its share, and another still gets its answer."""

from __future__ import annotations

import select
import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from taskyard.core import ops, thread_server
from taskyard.core.config import Settings

# Safety bound only: every wait below ends on a socket event, long before this.
SAFETY = 30.0


def _connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=SAFETY, source_address=(source, 0))
    return sock


def _answer(sock: socket.socket) -> bytes:
    """All the server sends until it closes the connection."""
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
    return data


def _closed_while_dripping(sock: socket.socket) -> bool:
    """Sends a header a byte at a time until the server closes the connection; True
    once it did (it answered nothing or an error, never a page)."""
    sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
    for _ in range(4000):  # a header of under 4,000 bytes: every server's line limit allows it
        readable, _, _ = select.select([sock], [], [], 0.05)
        if readable:
            return _answer(sock) == b""
        sock.sendall(b"a")
    return False


@pytest.fixture
def serve() -> Iterator[Callable[[thread_server.Limits], int]]:
    closers: list[Callable[[], None]] = []

    def start(limits: thread_server.Limits) -> int:
        server = ops.OpsServer("127.0.0.1", 0, token="s3cret", limits=limits)
        closers.append(server.close)
        return server.port

    yield start
    for close in closers:
        close()


def test_connections_that_never_finish_their_headers_are_closed(
    serve: Callable[[thread_server.Limits], int],
) -> None:
    port = serve(thread_server.Limits(header_timeout=0.3, max_connections=16, per_address=16))
    silent = [_connect(port) for _ in range(5)]
    dripping = [_connect(port) for _ in range(3)]
    try:
        for sock in silent:
            sock.sendall(b"GET /livez HTTP/1.1\r\n")  # and never the end of the headers
        for sock in silent:
            assert _answer(sock) == b""
        for sock in dripping:
            assert _closed_while_dripping(sock)
    finally:
        for sock in silent + dripping:
            sock.close()


def test_idle_connections_hold_at_most_the_caps_threads_and_another_address_is_answered(
    serve: Callable[[thread_server.Limits], int], caplog: pytest.LogCaptureFixture
) -> None:
    port = serve(thread_server.Limits(header_timeout=SAFETY * 4, max_connections=6, per_address=4))
    before = threading.active_count()
    idle = [_connect(port) for _ in range(16)]
    try:
        # Over its address's share, a connection is told so and closed at once.
        refused: list[bytes] = []
        waiting = list(idle)
        while len(refused) < 12:
            readable, _, _ = select.select(waiting, [], [], SAFETY)
            assert readable, f"only {len(refused)} of 12 refused"
            for sock in readable:
                waiting.remove(sock)
                refused.append(_answer(sock))
        assert all(answer.startswith(b"HTTP/1.0 503 ") for answer in refused)
        assert len(waiting) == 4
        assert threading.active_count() - before <= 4
        assert "refused 1 connection(s) over its caps (4 per address, 6 in all)" in caplog.text

        # Another address (the scraper's, the kubelet's) still gets its answer.
        other = _connect(port, source="127.0.0.2")
        with other:
            other.sendall(b"GET /metrics HTTP/1.0\r\nAuthorization: Bearer s3cret\r\n\r\n")
            answer = _answer(other)
        assert answer.startswith(b"HTTP/1.")
        assert answer != thread_server.REFUSAL  # the server's own answer, whatever it is
    finally:
        for sock in idle:
            sock.close()


def test_when_full_the_oldest_silent_connection_makes_room_for_a_probe(
    serve: Callable[[thread_server.Limits], int],
) -> None:
    """Silent connections from as many addresses as it takes to fill the cap: a probe
    from yet another address is answered, and the oldest silent one is closed for it."""
    port = serve(thread_server.Limits(header_timeout=SAFETY * 4, max_connections=6, per_address=2))
    silent = [_connect(port, source) for source in ("127.0.0.2", "127.0.0.3", "127.0.0.4") for _ in range(2)]
    try:
        probe = _connect(port, source="127.0.0.5")
        with probe:
            probe.sendall(b"GET /livez HTTP/1.0\r\nAuthorization: Bearer s3cret\r\n\r\n")
            answer = _answer(probe)
        assert answer.startswith(b"HTTP/1.")
        assert answer != thread_server.REFUSAL  # the server's own answer, whatever it is
        # The oldest lost its place (connections are accepted in connect order).
        assert _answer(silent[0]) == b""
    finally:
        for sock in silent:
            sock.close()


def test_the_probe_ports_have_a_header_timeout_of_their_own() -> None:
    settings = Settings(http_header_timeout=10.0)
    assert thread_server.Limits.from_settings(settings).header_timeout == 2.0
    assert thread_server.Limits.from_settings(Settings(ops_header_timeout=0.5)).header_timeout == 0.5
