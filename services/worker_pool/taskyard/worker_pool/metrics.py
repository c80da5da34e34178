"""The pool's metrics: queue wait and run time of each attempt, workers, slots, deaths,
and the reports it hands the result-store.

Observed by the manager from what its workers report (the workers themselves
serve nothing), so one ``/metrics`` per pool covers all of its processes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import REGISTRY, Collector

from taskyard.bus.v1 import leases_pb2, pools_pb2
from taskyard.core import metrics
from taskyard.worker_pool.attempts import outcome_of

QUEUE_WAIT = Histogram(
    "task_queue_wait_seconds",
    "From a task's enqueue (or its retry's due time) to its attempt's start.",
    ["queue"],
    buckets=metrics.TASK_SECONDS,
    namespace=metrics.NAMESPACE,
)
RUN = Histogram(
    "task_run_seconds",
    "An attempt's run time, by how it ended.",
    ["queue", "name", "outcome"],
    buckets=metrics.TASK_SECONDS,
    namespace=metrics.NAMESPACE,
)
# Why a worker died (handles.py _death_cause): the watchdog killed it (unresponsive,
# or past a cancel's deadline), a signal, or it exited.
DEATH_CAUSES = ("unresponsive", "cancel_deadline", "signal", "exit")
DEATHS = Counter(
    "worker_deaths",
    "Worker processes that died (not stopped by the pool), by cause.",
    ["reason"],
    namespace=metrics.NAMESPACE,
)
# Every cause from the start, at 0 (a series that never appeared reads as no data).
for _cause in DEATH_CAUSES:
    DEATHS.labels(_cause)
REPORTS = Counter(
    "pool_store_reports",
    "Report requests the pool sent the result-store (start notices and outcomes, "
    "everything waiting goes in one), retries included.",
    namespace=metrics.NAMESPACE,
)
# How an attempt's start reached the store: as a notice of its own ("notice", the
# attempt outlived the hold-back), or carried by how it ended ("outcome": the
# completion, release or death that came first says it started, in one request).
START_CARRIERS = ("notice", "outcome")
START_NOTICES = Counter(
    "pool_start_notices",
    "Attempts' starts the pool reported, by what carried them to the result-store.",
    ["carried_by"],
    namespace=metrics.NAMESPACE,
)
for _carrier in START_CARRIERS:
    START_NOTICES.labels(_carrier)
# Queue names are the submitter's to choose: past this many, the rest count as "other".
QUEUES = metrics.LabelBudget(metrics.QUEUE_LABELS)
_STATES = ("starting", "idle", "busy", "recycling", "stopping")


def attempt_ended(
    queue: str, name: str, enqueued_us: int, completion: leases_pb2.Completion, charged: int
) -> None:
    """Observe an attempt's wait and run (nothing while metrics are not served);
    ``charged``: the attempt as the retry budget counts it (``attempts.outcome_of``)."""
    if not metrics.enabled():
        return
    queue = QUEUES.of(queue)
    started_us, ended_us = completion.started_at_us, completion.ref.at_us
    if not started_us:
        return  # never started (cancelled while waiting for a slot)
    if enqueued_us and started_us >= enqueued_us:
        QUEUE_WAIT.labels(queue).observe((started_us - enqueued_us) / 1e6)
    if ended_us >= started_us:
        RUN.labels(queue, name, outcome_of(completion, charged)).observe((ended_us - started_us) / 1e6)


def report_sent() -> None:
    if metrics.enabled():
        REPORTS.inc()


def start_notices(carried_by: str, count: int) -> None:
    if metrics.enabled():
        START_NOTICES.labels(carried_by).inc(count)


class PoolGauges(Collector):
    """Workers by lifecycle state, their memory and the pool's slots, read at scrape time."""

    def __init__(
        self, pool_id: str, processes: Callable[[], list[pools_pb2.WorkerProcess]], concurrency: int
    ) -> None:
        self._pool_id, self._processes, self._concurrency = pool_id, processes, concurrency

    def collect(self) -> Iterator[GaugeMetricFamily]:
        no_processes: list[pools_pb2.WorkerProcess] = []
        processes = metrics.read_live(self._processes, no_processes)
        workers = GaugeMetricFamily(
            f"{metrics.NAMESPACE}_workers", "Worker processes by lifecycle state.", labels=["state"]
        )
        for state in _STATES:
            workers.add_metric([state], sum(1 for p in processes if p.state == state))
        yield workers
        rss = GaugeMetricFamily(
            f"{metrics.NAMESPACE}_worker_rss_bytes",
            "Resident memory of each worker process, as it last reported.",
            labels=["pool", "worker"],
        )
        for p in processes:
            rss.add_metric([self._pool_id, str(p.index)], p.rss_bytes)
        yield rss
        live = [p for p in processes if p.state in ("idle", "busy")]
        yield GaugeMetricFamily(
            f"{metrics.NAMESPACE}_pool_slots",
            "Attempts the pool's live workers can hold at once.",
            value=len(live) * self._concurrency,
        )
        yield GaugeMetricFamily(
            f"{metrics.NAMESPACE}_pool_slots_busy",
            "Attempts the pool's workers hold.",
            value=sum(p.running_tasks for p in processes),
        )


def register(state: PoolGauges) -> Callable[[], None]:
    """Expose ``state``; returns what takes it away again (the pool's stop)."""
    REGISTRY.register(state)
    return lambda: REGISTRY.unregister(state)
