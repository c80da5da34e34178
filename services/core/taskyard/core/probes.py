"""The HTTP side of the probes (health.py): ``/livez`` and ``/readyz`` answered from
a thread of their own. Imported only by a process that serves them."""

from __future__ import annotations

import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from taskyard.core import health, thread_server


class _Handler(thread_server.HeaderDeadline, BaseHTTPRequestHandler):
    # A connection that sends nothing, or its headers a byte at a time, holds its
    # thread at most the header timeout (thread_server.py).

    def do_GET(self) -> None:
        if self.path == "/livez":
            ok = health.live()
        elif self.path == "/readyz":
            ok = health.ready() and health.live()
        else:
            self.send_error(404)
            return
        body = b"ok\n" if ok else b"not ok\n"
        self.send_response(200 if ok else 503)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return  # probes every few seconds would flood the log


class Server(thread_server.Bounded, ThreadingHTTPServer):
    daemon_threads = True


class _V6Server(Server):
    address_family = socket.AF_INET6


def server(host: str, port: int) -> Server:
    """The probes' server bound to ``host:port`` (0 picks a free port), not yet serving."""
    server_class = _V6Server if ":" in host else Server
    return server_class((host.strip("[]"), port), _Handler)
