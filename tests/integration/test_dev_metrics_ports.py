"""``taskyard dev``'s ops ports (/metrics, /livez, /readyz): a port whose last scrape lingers in TIME_WAIT is
free to reuse (servers bind with SO_REUSEADDR), one a server listens on is taken."""

from __future__ import annotations

import socket
from pathlib import Path

from support import ports
from support.waiting import wait_until

from taskyard.cli import dev_observability
from taskyard.core.ops import OpsServer

TIME_WAIT = "06"  # the state column of /proc/net/tcp


def _in_time_wait(port: int) -> bool:
    """A TCP socket whose local port is ``port`` lingers in TIME_WAIT (IPv4 loopback)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, state = fields[1], fields[3]
        if int(local.split(":")[1], 16) == port and state == TIME_WAIT:
            return True
    return False


def _binds_plainly(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_a_metrics_port_just_scraped_counts_as_free() -> None:
    port = ports.free_port()
    server = OpsServer("127.0.0.1", port)
    try:
        # A scrape, read to the end: the server answers and closes its side first, so
        # its end of the connection (local port = the ops port) lingers in
        # TIME_WAIT for a minute once the scraper closes too.
        with socket.create_connection(("127.0.0.1", port), timeout=10) as scraper:
            scraper.sendall(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            answer = b""
            while chunk := scraper.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.0 200"), answer[:200]
    finally:
        server.close()
    wait_until(lambda: _in_time_wait(port), 10, f"a connection of port {port} in TIME_WAIT")
    assert not _binds_plainly(port), "the lingering connection should block a bind without SO_REUSEADDR"

    assert not dev_observability.taken(port)
    # And it is free indeed: the service's server listens there again.
    OpsServer("127.0.0.1", port).close()


def test_a_listening_port_is_taken() -> None:
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        assert dev_observability.taken(listener.getsockname()[1])
