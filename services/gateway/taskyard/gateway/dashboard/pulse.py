"""The dashboard's pulse: what the suite did, one compact summary out per
interval, for every page at once.

Pure arithmetic (no I/O; the clock is injected): ``PulseHub`` feeds it the
store's summaries of the event log (``SummarizeEventsReply``: counted in the
database, so nothing per event reaches the gateway) and takes a summary every
``PULSE_INTERVAL``.
"""

from __future__ import annotations

import collections
import math
import time
from collections.abc import Callable, Iterable
from typing import Any

from taskyard.bus.v1 import event_log_pb2
from taskyard.v1 import event_service_pb2, task_pb2

# Seconds between two pulses: a page learns of a change at most this late.
PULSE_INTERVAL = 0.5
# The overview's chart: this many buckets of this many seconds (five minutes).
CHART_BUCKET_SECONDS = 10
CHART_BUCKETS = 30
# Ids of changed tasks in one pulse; past this the pulse says ``more``.
MAX_CHANGED_IDS = 200
# Distinct (queue, task name, state) a pulse lists; past this it says ``more``.
MAX_ENTERED = 100
# Latencies are counted in bins a quarter of a doubling wide (a median is within
# about 9 % of the true one) from 1 ms up to about 36 hours.
LATENCY_FLOOR = 0.001
LATENCY_BINS_PER_DOUBLING = 4
LATENCY_BINS = 1 + 27 * LATENCY_BINS_PER_DOUBLING

_TASK = event_service_pb2.EVENT_KIND_TASK
_SCHEDULE = event_service_pb2.EVENT_KIND_SCHEDULE
_QUEUE = event_service_pb2.EVENT_KIND_QUEUE
_POOLS = frozenset({event_service_pb2.EVENT_KIND_POOL, event_service_pb2.EVENT_KIND_WORKER})
# State numbers -> the short names a pulse uses ("SUCCESS").
_STATE_NAMES = {v: n.removeprefix("TASK_STATE_") for n, v in task_pb2.TaskState.items()}


def latency_bin(seconds: float) -> int:
    if seconds < LATENCY_FLOOR:
        return 0
    b = 1 + int(math.log2(seconds / LATENCY_FLOOR) * LATENCY_BINS_PER_DOUBLING)
    return min(b, LATENCY_BINS - 1)


def bin_seconds(b: int) -> float:
    """A bin's middle (geometric); bin 0 holds everything under ``LATENCY_FLOOR``."""
    if b == 0:
        return LATENCY_FLOOR / 2
    return float(LATENCY_FLOOR * 2 ** ((b - 0.5) / LATENCY_BINS_PER_DOUBLING))


class Bucket:
    """Tasks finished in one chart bucket and a histogram of their latencies."""

    __slots__ = ("count", "latencies", "timed")

    def __init__(self) -> None:
        self.count = 0
        self.timed = 0
        self.latencies: collections.Counter[int] = collections.Counter()

    def median_ms(self) -> float | None:
        if not self.timed:
            return None
        middle = (self.timed + 1) // 2
        seen = 0
        for b in sorted(self.latencies):
            seen += self.latencies[b]
            if seen >= middle:
                return round(bin_seconds(b) * 1000, 1)
        return None  # pragma: no cover - the counts add up to ``timed``


def _fill(into: set[Any], items: Iterable[Any], cap: int) -> bool:
    """``items`` added to ``into`` up to ``cap``; True when one did not fit."""
    for item in items:
        if item not in into:
            if len(into) >= cap:
                return True
            into.add(item)
    return False


class Aggregator:
    """Summaries of the log in (``add``), one pulse per interval out (``take``)."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.time,
        max_ids: int = MAX_CHANGED_IDS,
        max_entered: int = MAX_ENTERED,
    ) -> None:
        self._clock = clock
        self.max_ids = max_ids
        self.max_entered = max_entered
        self.cursor = ""
        self._taken = clock()
        self._buckets: dict[int, Bucket] = {}
        self._reset()

    def _reset(self) -> None:
        self._finished: dict[int, int] = {}
        self._ids: set[str] = set()
        self._entered: set[tuple[str, str, int]] = set()
        self._more = False
        self._queues = self._pools = self._schedules = False

    def add(self, summary: event_log_pb2.SummarizeEventsReply) -> bool:
        """Count one summary of the log; True when it held events."""
        if summary.cursor:
            self.cursor = summary.cursor
        if not summary.events:
            return False
        if not self._more:  # past a cap a page fetches anyway: the lists stop growing
            self._more = summary.more
            self._more |= _fill(self._ids, summary.task_ids, self.max_ids)
            triples = ((e.queue, e.task_name, e.state) for e in summary.entered)
            self._more |= _fill(self._entered, triples, self.max_entered)
        kinds = set(summary.kinds)
        if _TASK in kinds or _QUEUE in kinds or summary.schedule_made_task:
            self._queues = True  # every task event moves a queue's depth
        if _SCHEDULE in kinds:
            self._schedules = True
        if not _POOLS.isdisjoint(kinds):
            self._pools = True
        finished = self._finished
        for state in summary.finished_states:
            finished[state] = finished.get(state, 0) + 1
        self._chart_add(summary)
        return True

    def add_history(self, summary: event_log_pb2.SummarizeEventsReply) -> None:
        """Count a summary of the log from before the first pulse into the chart only:
        no page has to fetch anything for what happened before it opened."""
        if summary.cursor:
            self.cursor = summary.cursor
        self._chart_add(summary)

    def forget_chart(self) -> None:
        self._buckets.clear()

    def window_start(self) -> float:
        """Where the chart's oldest bucket begins now (seconds since the epoch)."""
        return float(self._oldest(self._clock()))

    def _chart_add(self, summary: event_log_pb2.SummarizeEventsReply) -> None:
        for at_us, latency_us in zip(summary.finished_at_us, summary.latency_us, strict=True):
            bucket = self._bucket(at_us / 1e6)
            bucket.count += 1
            if latency_us >= 0:
                bucket.timed += 1
                bucket.latencies[latency_bin(latency_us / 1e6)] += 1

    def _bucket(self, at: float) -> Bucket:
        start = int(at // CHART_BUCKET_SECONDS) * CHART_BUCKET_SECONDS
        bucket = self._buckets.get(start)
        if bucket is None:
            bucket = self._buckets[start] = Bucket()
        return bucket

    @staticmethod
    def _oldest(now: float) -> int:
        return (int(now // CHART_BUCKET_SECONDS) - CHART_BUCKETS + 1) * CHART_BUCKET_SECONDS

    def _chart(self, now: float) -> dict[str, Any]:
        oldest = self._oldest(now)
        for start in [s for s in self._buckets if s < oldest]:
            del self._buckets[start]
        points = [[s, b.count, b.median_ms()] for s, b in sorted(self._buckets.items())]
        return {"bucketSeconds": CHART_BUCKET_SECONDS, "buckets": CHART_BUCKETS, "points": points}

    def snapshot(self) -> dict[str, Any]:
        """What a page that just connected needs: the chart and how far the stream read."""
        now = self._clock()
        return {"first": True, "at": round(now, 3), "cursor": self.cursor, "chart": self._chart(now)}

    def take(self) -> dict[str, Any]:
        """The summary of everything added since the last ``take``; starts the next interval."""
        now = self._clock()
        summary = {
            "at": round(now, 3),
            "interval": round(max(0.0, now - self._taken), 3),
            "cursor": self.cursor,
            "finished": {_STATE_NAMES.get(k, "UNSPECIFIED"): n for k, n in self._finished.items()},
            "chart": self._chart(now),
            "changed": {"queues": self._queues, "pools": self._pools, "schedules": self._schedules},
            "tasks": {
                "ids": sorted(self._ids),
                "entered": sorted([q, n, _STATE_NAMES.get(st, "UNSPECIFIED")] for q, n, st in self._entered),
                "more": self._more,
            },
        }
        self._taken = now
        self._reset()
        return summary
