"""The dashboard's pulse: every event of the suite in, one compact summary out
per interval, for every page at once.

Pure arithmetic (no I/O; the clock is injected): ``PulseHub`` feeds it the
responses of its one ``WatchEvents`` stream and takes a summary every
``PULSE_INTERVAL``. Per event it touches only a few scalar fields of the
generated message: at thousands of events a second nothing is converted to JSON
but the summary.
"""

from __future__ import annotations

import collections
import math
import time
from collections.abc import Callable
from typing import Any

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
# Tasks whose first event was seen and whose final one was not, for their latency
# (the oldest is forgotten first).
MAX_TRACKED = 10_000
# Latencies are counted in bins a quarter of a doubling wide (a median is within
# about 9 % of the true one) from 1 ms up to about 36 hours.
LATENCY_FLOOR = 0.001
LATENCY_BINS_PER_DOUBLING = 4
LATENCY_BINS = 1 + 27 * LATENCY_BINS_PER_DOUBLING

_TASK = event_service_pb2.EVENT_KIND_TASK
_SCHEDULE = event_service_pb2.EVENT_KIND_SCHEDULE
_QUEUE = event_service_pb2.EVENT_KIND_QUEUE
_FINAL = frozenset({task_pb2.TASK_STATE_SUCCESS, task_pb2.TASK_STATE_FAILURE, task_pb2.TASK_STATE_CANCELLED})
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


class Aggregator:
    """Events in (``add``), one summary per interval out (``take``)."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.time,
        max_ids: int = MAX_CHANGED_IDS,
        max_entered: int = MAX_ENTERED,
        max_tracked: int = MAX_TRACKED,
    ) -> None:
        self._clock = clock
        self._max_ids = max_ids
        self._max_entered = max_entered
        self._max_tracked = max_tracked
        self.cursor = ""
        self._taken = clock()
        self._buckets: dict[int, Bucket] = {}
        # task id -> time of its first event seen, oldest first.
        self._first_seen: collections.OrderedDict[str, float] = collections.OrderedDict()
        self._reset()

    def _reset(self) -> None:
        self._finished: dict[int, int] = {}
        self._ids: set[str] = set()
        self._entered: set[tuple[str, str, int]] = set()
        self._more = False
        self._queues = self._pools = self._schedules = False

    def add(self, response: event_service_pb2.WatchEventsResponse) -> bool:
        """Count one response of the stream; True when it held events.

        The hot path: thousands of events a second, a few field reads each."""
        events = response.events
        if response.cursor:
            self.cursor = response.cursor
        elif events:
            self.cursor = events[-1].cursor
        ids, entered, finished = self._ids, self._entered, self._finished
        first_seen = self._first_seen
        max_ids, max_entered, max_tracked = self._max_ids, self._max_entered, self._max_tracked
        more = self._more
        tasks = False
        for event in events:
            if event.kind != _TASK:
                self._other(event)
                continue
            tasks = True
            task_id = event.task_id
            state = event.state
            if not more:  # past a cap a page fetches anyway: the lists stop growing
                if task_id not in ids:
                    if len(ids) < max_ids:
                        ids.add(task_id)
                    else:
                        more = True
                key = (event.queue, event.task_name, state)
                if key not in entered:
                    if len(entered) < max_entered:
                        entered.add(key)
                    else:
                        more = True
            if state in _FINAL:
                finished[state] = finished.get(state, 0) + 1
                stamp = event.time
                self._finish(task_id, stamp.seconds + stamp.nanos * 1e-9)
            elif task_id not in first_seen:
                stamp = event.time
                first_seen[task_id] = stamp.seconds + stamp.nanos * 1e-9
                if len(first_seen) > max_tracked:
                    first_seen.popitem(last=False)
        self._more = more
        if tasks:
            self._queues = True  # every task event moves a queue's depth
        return bool(events)

    def _other(self, event: event_service_pb2.Event) -> None:
        kind = event.kind
        if kind == _SCHEDULE:
            self._schedules = True
            if event.task_id:
                self._queues = True  # a run made a task
        elif kind == _QUEUE:
            self._queues = True
        else:
            self._pools = True

    def _finish(self, task_id: str, at: float) -> None:
        bucket = self._bucket(at)
        bucket.count += 1
        started = self._first_seen.pop(task_id, None)
        if started is not None:
            bucket.timed += 1
            bucket.latencies[latency_bin(max(0.0, at - started))] += 1

    def _bucket(self, at: float) -> Bucket:
        start = int(at // CHART_BUCKET_SECONDS) * CHART_BUCKET_SECONDS
        bucket = self._buckets.get(start)
        if bucket is None:
            bucket = self._buckets[start] = Bucket()
        return bucket

    def _chart(self, now: float) -> dict[str, Any]:
        oldest = (int(now // CHART_BUCKET_SECONDS) - CHART_BUCKETS + 1) * CHART_BUCKET_SECONDS
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
