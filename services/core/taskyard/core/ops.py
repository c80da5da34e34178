"""The ops port: one HTTP port per process (TASKYARD_METRICS_PORT, bound on
TASKYARD_METRICS_HOST) for the people and machines that run it: Prometheus'
``/metrics`` (metrics.py) and the probes' ``/livez`` and ``/readyz`` (health.py).

One wsgiref server, a thread per connection within thread_server's bounds, serving
from a daemon thread apart from the event loop, so a busy service still answers (and
a wedged one is seen to be: ``/livez`` asks that loop). Its rules:

- ``/livez`` and ``/readyz`` never ask for a token: they say only up or down, and the
  kubelet's probe could send one only by writing it into the pod spec.
- ``/metrics`` wants ``Authorization: Bearer <TASKYARD_METRICS_TOKEN>`` when a token is
  set. Off loopback the token is mandatory: without one the port serves the probes
  alone and ``/metrics`` answers 403 saying why (a pod needs its probes whether or not
  anything scrapes it), and the process counts nothing.
"""

from __future__ import annotations

import hmac
import logging
import socket
import threading
from collections.abc import Callable, Iterable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from taskyard.core import health, thread_server
from taskyard.core.config import metrics_scrapable

log = logging.getLogger(__name__)

StartResponse = Callable[[str, list[tuple[str, str]]], Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

PROBE_PATHS = ("/livez", "/readyz")
_OFF_LOOPBACK = (
    b"/metrics off loopback needs TASKYARD_METRICS_TOKEN: this port serves /livez and /readyz only\n"
)


class _Server(thread_server.Bounded, WSGIServer):
    # prometheus_client's ThreadingWSGIServer is this (a ThreadingMixIn over wsgiref's
    # WSGIServer); Bounded brings the ThreadingMixIn, so a process that serves only its
    # probes never imports prometheus_client (about 2 MiB).
    pass


class _V6Server(_Server):
    address_family = socket.AF_INET6


class _Quiet(thread_server.HeaderDeadline, WSGIRequestHandler):
    # An idle connection, before any path or token is read, holds a thread at most the
    # header timeout, and only up to the caps (thread_server.py). A probe or a scrape
    # every few seconds is not worth a log line.
    def log_message(self, format: str, *args: Any) -> None:
        return


def _text(start_response: StartResponse, status: str, body: bytes, *headers: tuple[str, str]) -> list[bytes]:
    start_response(
        status, [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body))), *headers]
    )
    return [body]


def guarded(app: WsgiApp, token: str | None) -> WsgiApp:
    """``app`` behind a bearer token (as is, when there is none)."""
    if not token:
        return app
    expected = f"Bearer {token}".encode()

    def check(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        given = environ.get("HTTP_AUTHORIZATION", "").encode()
        if not hmac.compare_digest(given, expected):
            return _text(
                start_response,
                "401 Unauthorized",
                b"a bearer token is required\n",
                ("WWW-Authenticate", "Bearer"),
            )
        return app(environ, start_response)

    return check


def _refused(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    return _text(start_response, "403 Forbidden", _OFF_LOOPBACK)


def _probe(path: str) -> bool:
    if path == "/livez":
        return health.live()
    return health.ready() and health.live()


def routes(metrics_app: WsgiApp) -> WsgiApp:
    """The port's paths: the probes as they are, ``/metrics`` by ``metrics_app``."""

    def route(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path in PROBE_PATHS:
            if _probe(path):
                return _text(start_response, "200 OK", b"ok\n")
            return _text(start_response, "503 Service Unavailable", b"not ok\n")
        if path == "/metrics":
            return metrics_app(environ, start_response)
        return _text(start_response, "404 Not Found", b"not found: /metrics, /livez or /readyz\n")

    return route


class OpsServer:
    """The ops port on ``host:port`` in a daemon thread; ``port`` 0 picks a free one.
    ``token``: what ``/metrics`` wants; ``limits``: its connections (thread_server.py),
    the settings' defaults unless given."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        token: str | None = None,
        limits: thread_server.Limits | None = None,
    ) -> None:
        self.metrics_served = metrics_scrapable(host, token or "")
        if self.metrics_served:
            # Imported only when served: prometheus_client costs every process ~2 MiB.
            from taskyard.core import metrics

            metrics_app = guarded(metrics.app(), token)
        else:
            metrics_app = _refused
        server_class = _V6Server if ":" in host else _Server
        app = routes(metrics_app)
        self._server: _Server = make_server(host.strip("[]"), port, app, server_class, handler_class=_Quiet)
        self._server.bound(limits or thread_server.DEFAULT_LIMITS, "ops")
        self.port: int = self._server.server_port
        self.host = host
        self._thread = threading.Thread(target=self._server.serve_forever, name="ops", daemon=True)
        self._thread.start()
        shown = host if ":" not in host else f"[{host}]"
        if self.metrics_served:
            log.info("ops: http://%s:%d/metrics, /livez and /readyz", shown, self.port)
        else:
            # As the chart runs a pod without metrics: not a mistake to warn of on every start.
            log.info(
                "ops: http://%s:%d/livez and /readyz (no /metrics: off loopback it needs "
                "TASKYARD_METRICS_TOKEN)",
                shown,
                self.port,
            )

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
