"""The result-store's metrics: tasks created and finished, group commits, queue depth.

Counted after COMMIT, from what the commit returns, so a rolled-back group
(retried one request at a time) is never counted twice.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import asyncpg
from prometheus_client import Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import REGISTRY, Collector

from taskyard.bus.v1 import queues_pb2, task_record_pb2, tasks_pb2
from taskyard.core import metrics
from taskyard.v1 import queue_service_pb2, task_pb2

from .database_errors import OUTAGE

log = logging.getLogger(__name__)

# Queue names are the submitter's to choose: past this many, the rest count as "other".
QUEUES = metrics.LabelBudget(metrics.QUEUE_LABELS)
_STATE_NAMES = {
    v: task_pb2.TaskState.Name(v).removeprefix("TASK_STATE_") for v in task_pb2.TaskState.values()
}

# How often the queues' counts are read for taskyard_queue_tasks: one aggregate
# over the tasks table, only while metrics are served.
DEPTH_INTERVAL_SECONDS = 5.0

CREATED = Counter(
    "tasks_created",
    "Tasks inserted (submitted through the API, by a task, or released by a schedule).",
    ["queue", "name"],
    namespace=metrics.NAMESPACE,
)
FINISHED = Counter(
    "tasks_finished",
    "Tasks that reached a final state (SUCCESS, FAILURE, CANCELLED).",
    ["queue", "name", "state"],
    namespace=metrics.NAMESPACE,
)
COMMIT_ROWS = Histogram(
    "store_commit_rows",
    "Rows written by one group commit.",
    buckets=metrics.BATCH_ROWS,
    namespace=metrics.NAMESPACE,
)
COMMIT_SECONDS = Histogram(
    "store_commit_seconds",
    "Time from taking a group of writes to its COMMIT.",
    buckets=metrics.CALL_SECONDS,
    namespace=metrics.NAMESPACE,
)


def committed(
    rows: int, seconds: float, replies: Iterable[Any], finals: Sequence[task_record_pb2.TaskRecord]
) -> None:
    """Count one successful group commit (nothing while metrics are not served)."""
    if not metrics.enabled():
        return
    COMMIT_ROWS.observe(rows)
    COMMIT_SECONDS.observe(seconds)
    for reply in replies:
        if isinstance(reply, tasks_pb2.InsertTasksReply):
            created(reply.tasks)
    finished: collections.Counter[tuple[str, str, int]] = collections.Counter(
        (rec.queue, rec.name, rec.state) for rec in finals
    )
    for (queue, name, state), n in finished.items():
        FINISHED.labels(QUEUES.of(queue), name, _STATE_NAMES[state]).inc(n)


def created(tasks: Iterable[tasks_pb2.InsertedTask]) -> None:
    """Count the tasks an insert created (not the repeats it recognised)."""
    if not metrics.enabled():
        return
    counts: collections.Counter[tuple[str, str]] = collections.Counter(
        (t.queue, t.name) for t in tasks if t.created
    )
    for (queue, name), n in counts.items():
        CREATED.labels(QUEUES.of(queue), name).inc(n)


class QueueDepth(Collector):
    """``taskyard_queue_tasks{queue,state}``: the last counts the store read
    (``refresh``, on its own schedule), so a scrape never waits on the database."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str], int] = {}
        self._late = 0
        self._read_at = 0.0

    def update(self, queues: Iterable[queue_service_pb2.QueueInfo], late_completions: int = 0) -> None:
        counts: dict[tuple[str, str], int] = {}
        for q in queues:
            for field, state in _STATE_FIELDS.items():
                key = (QUEUES.of(q.name or "default"), state)
                counts[key] = counts.get(key, 0) + int(getattr(q, field))
        self._counts = counts
        self._late = late_completions
        self._read_at = time.time()

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        depth = GaugeMetricFamily(
            f"{metrics.NAMESPACE}_queue_tasks",
            "Tasks in each queue by state, as last read.",
            labels=["queue", "state"],
        )
        for (queue, state), n in sorted(self._counts.items()):
            depth.add_metric([queue, state], n)
        yield depth
        # Kept in the database (taskyard_counters), so it survives restarts and
        # counts the refusals of every store sharing it.
        late = CounterMetricFamily(
            f"{metrics.NAMESPACE}_late_completions",
            "Outcomes refused by fencing (an attempt that had been superseded), as last read.",
        )
        late.add_metric([], self._late)
        yield late
        read = GaugeMetricFamily(
            f"{metrics.NAMESPACE}_queue_tasks_read_timestamp_seconds", "When taskyard_queue_tasks was read."
        )
        read.add_metric([], self._read_at)
        yield read


# QueueInfo's per-state counts, labelled as the task states are named.
_STATE_FIELDS = {
    "pending": "PENDING",
    "queued": "QUEUED",
    "scheduled": "SCHEDULED",
    "assigned": "ASSIGNED",
    "running": "RUNNING",
    "retrying": "RETRYING",
    "succeeded": "SUCCESS",
    "failed": "FAILURE",
    "cancelled": "CANCELLED",
}
QUEUE_DEPTH = QueueDepth()
REGISTRY.register(QUEUE_DEPTH)


async def keep_queue_depth(pool: asyncpg.Pool, interval: float = DEPTH_INTERVAL_SECONDS) -> None:
    """Read the queues' counts every ``interval`` seconds for ``taskyard_queue_tasks``."""
    from . import scopes
    from .writes import queues  # the committer imports this module, and queues imports the committer

    while True:
        try:
            status = await queues.read_status(pool, queues_pb2.QueueStatusRequest(scope=scopes.ALL))
            QUEUE_DEPTH.update(status.queues, status.late_completions)
        except OUTAGE as exc:
            log.debug("reading queue depth for metrics failed: %s", exc)
        except Exception:  # must not end the refresh silently
            log.exception("reading queue depth for metrics failed")
        await asyncio.sleep(interval)
