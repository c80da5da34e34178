"""Prometheus metrics: every service's ``/metrics``, on its ops port (ops.py).

Each service declares its metrics where it observes them (``<service>/metrics.py``)
in the process-wide default registry, which also carries the client library's
process collectors (``process_resident_memory_bytes``, CPU, open files).
The page is served by the ops port's threaded HTTP server, apart from the event
loop, so a scrape is answered however busy the service is. It binds loopback unless
told otherwise, and off loopback it wants a bearer token (Prometheus'
``authorization: {credentials_file: …}``), as every other port of the suite.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import prometheus_client
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import REGISTRY, Collector

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


def app() -> Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]:
    """The process's ``/metrics`` page (prometheus_client's WSGI app) for the ops port
    (ops.py); from this call on the hot paths count."""
    global _registered, _serving
    if not _registered:
        REGISTRY.register(BusRefusals())
        _registered = True
    _serving = True
    return prometheus_client.make_wsgi_app()
