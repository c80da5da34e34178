"""Prometheus metrics: every service's ``/metrics`` on its own port.

Each service declares its metrics where it observes them (``<service>/metrics.py``)
in the process-wide default registry, which also carries the client library's
process collectors (``process_resident_memory_bytes``, CPU, open files).
The endpoint is a small threaded HTTP server, apart from the event loop, so a
scrape is answered however busy the service is. It binds loopback unless told
otherwise, and off loopback it wants a bearer token (Prometheus'
``authorization: {credentials_file: …}``), as every other port of the suite.
"""

from __future__ import annotations

import hmac
import logging
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar
from wsgiref.simple_server import WSGIRequestHandler, make_server

import prometheus_client
from prometheus_client.core import CounterMetricFamily
from prometheus_client.exposition import ThreadingWSGIServer
from prometheus_client.registry import REGISTRY, Collector

from taskyard.core import thread_server
from taskyard.core.addresses import is_loopback

log = logging.getLogger(__name__)
T = TypeVar("T")

NAMESPACE = "taskyard"
# Seconds, for waits and runs of tasks: 1 ms to 10 minutes.
TASK_SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
# Seconds, for a commit or an RPC: 100 µs to 10 s.
CALL_SECONDS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10)
# Seconds, for a gRPC call: WaitTask may wait 5 minutes, a log stream longer.
RPC_SECONDS = (*CALL_SECONDS, 30, 60, 120, 300, 900)
# Rows in one group commit.
BATCH_ROWS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)

# Distinct queue names a metric labels one by one; the rest share "other".
QUEUE_LABELS = 100


def read_live(read: Callable[[], T], default: T) -> T:
    """``read()`` of state the event loop owns, from the scrape's thread: a read that
    met a change in flight ("dictionary changed size during iteration") is read
    again, a few times, then given up for ``default`` (this scrape only)."""
    for _ in range(5):
        try:
            return read()
        except RuntimeError:
            continue
    return default


class LabelBudget:
    """At most ``limit`` distinct values of a label the users choose (queue names):
    every series a process ever creates stays in its memory and in every scrape, so
    one submitter inventing a queue per task must not grow them without end."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._seen: set[str] = set()

    def of(self, value: str) -> str:
        seen = self._seen
        if value in seen:
            return value
        if len(seen) < self._limit:
            seen.add(value)
            return value
        return "other"


class TenantLabels(LabelBudget):
    """A metric's ``tenant`` label: the first ``limit`` tenants seen (TASKYARD_METRICS_TENANTS)
    by name, the rest "other"; the default tenant ("") shows as "default"."""

    def of(self, value: str) -> str:
        return super().of(value) if value else "default"


StartResponse = Callable[[str, list[tuple[str, str]]], Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class _Server(thread_server.Bounded, ThreadingWSGIServer):
    pass


class _V6Server(_Server):
    address_family = socket.AF_INET6


class _Quiet(thread_server.HeaderDeadline, WSGIRequestHandler):
    # Its connections are bounded (thread_server.py): an idle one, before any token
    # check, holds a thread at most the header timeout, and only up to the cap.
    # A scrape every few seconds is not worth a log line.
    def log_message(self, format: str, *args: Any) -> None:
        return


def guarded(app: WsgiApp, token: str | None) -> WsgiApp:
    """``app`` behind a bearer token (as is, when there is none)."""
    if not token:
        return app
    expected = f"Bearer {token}".encode()

    def check(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        given = environ.get("HTTP_AUTHORIZATION", "").encode()
        if not hmac.compare_digest(given, expected):
            start_response(
                "401 Unauthorized", [("WWW-Authenticate", "Bearer"), ("Content-Type", "text/plain")]
            )
            return [b"a bearer token is required\n"]
        return app(environ, start_response)

    return check


class MetricsServer:
    """``/metrics`` on ``host:port`` in a daemon thread; ``port`` 0 picks a free one.
    ``limits``: its connections (thread_server.py), the settings' defaults unless given."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        token: str | None = None,
        limits: thread_server.Limits | None = None,
    ) -> None:
        if not token and not is_loopback(host):
            raise ValueError(
                f"metrics on {host}: a port off loopback needs TASKYARD_METRICS_TOKEN (or bind 127.0.0.1)"
            )
        app = guarded(prometheus_client.make_wsgi_app(), token)
        server_class = _V6Server if ":" in host else _Server
        self._server: _Server = make_server(host.strip("[]"), port, app, server_class, handler_class=_Quiet)
        self._server.bound(limits or thread_server.DEFAULT_LIMITS, "metrics")
        self.port: int = self._server.server_port
        self.host = host
        self._thread = threading.Thread(target=self._server.serve_forever, name="metrics", daemon=True)
        self._thread.start()
        log.info("metrics: http://%s:%d/metrics", host if ":" not in host else f"[{host}]", self.port)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


class BusRefusals(Collector):
    """``taskyard_bus_messages_refused_total{reason}``: internal messages this
    process refused (bad seal, replay, stale, unknown key), from core/seal.py."""

    def collect(self) -> Iterator[CounterMetricFamily]:
        from taskyard.core import seal

        family = CounterMetricFamily(
            f"{NAMESPACE}_bus_messages_refused",
            "Internal bus messages refused, by reason.",
            labels=["reason"],
        )
        counts = seal.current().refusals.counts()
        # Every reason, 0 until one happens: a healthy bus refuses nothing, and a
        # family without samples leaves its dashboard query empty, not 0.
        for reason in sorted(set(seal.REASONS) | set(counts)):
            family.add_metric([reason], counts.get(reason, 0))
        yield family


_registered = False
_serving = False


def enabled() -> bool:
    """True once this process serves /metrics: until then the hot paths count nothing."""
    return _serving


def serve(
    host: str, port: int, *, token: str | None = None, limits: thread_server.Limits | None = None
) -> MetricsServer | None:
    """Start the process's ``/metrics`` (None when ``port`` is 0: metrics off)."""
    global _registered, _serving
    if port == 0:
        return None
    if not _registered:
        REGISTRY.register(BusRefusals())
        _registered = True
    server = MetricsServer(host, port, token=token, limits=limits)
    _serving = True
    return server
