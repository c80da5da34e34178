"""The scheduler's metrics: its lanes, due timers and pools, the leases it rescued
and the term it leads."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

from prometheus_client import Counter, Gauge
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import REGISTRY, Collector

from taskyard.core import metrics
from taskyard.core.priority import LANES, Priority
from taskyard.scheduler.breakers import Figures
from taskyard.v1 import limit_pb2

# How a rescued lease ended (maintenance.py): the task queued again, or failed for good.
RESCUE_OUTCOMES = ("requeued", "failed")
LEASES_RESCUED = Counter(
    "leases_rescued",
    "Leases that lapsed (by the database's clock) and were taken back: requeued or failed for good.",
    ["outcome"],
    namespace=metrics.NAMESPACE,
)
# Every outcome from the start, at 0: a healthy system rescues nothing, and a
# series that never appeared leaves its dashboard query empty, not 0.
for _outcome in RESCUE_OUTCOMES:
    LEASES_RESCUED.labels(_outcome)
# Full reads of the store's QUEUED rows into the lanes (maintenance.py): start-up, a
# store's listener (re)connecting, a lost pool, the fallback poll. A task inserted
# outside the store reaches the lanes without one (result_store/arrivals.py).
LANES_RELOADS = Counter(
    "lanes_reloads",
    "Full reloads of the lanes from every QUEUED row in the store.",
    namespace=metrics.NAMESPACE,
)
LEADER_TERM = Gauge(
    "scheduler_term",
    "The election term this scheduler leads; 0 while it stands by (docs/scaling.md).",
    namespace=metrics.NAMESPACE,
)


class SchedulerState(Collector):
    """Read at scrape time from the running scheduler (plain reads of its sizes)."""

    def __init__(
        self, lane_depth: Callable[[Priority], int], due: Callable[[], int], pools: Callable[[], int]
    ) -> None:
        self._lane_depth, self._due, self._pools = lane_depth, due, pools

    def collect(self) -> Iterator[GaugeMetricFamily]:
        lanes = GaugeMetricFamily(
            f"{metrics.NAMESPACE}_lane_tasks", "Tasks waiting in the scheduler's lanes.", labels=["priority"]
        )
        for priority in LANES:
            lanes.add_metric(
                [priority.name], metrics.read_live(functools.partial(self._lane_depth, priority), 0)
            )
        yield lanes
        yield GaugeMetricFamily(
            f"{metrics.NAMESPACE}_due_tasks",
            "Delayed and retrying tasks the scheduler's timers hold.",
            value=metrics.read_live(self._due, 0),
        )
        yield GaugeMetricFamily(
            f"{metrics.NAMESPACE}_pools_connected",
            "Worker pools connected to this scheduler.",
            value=metrics.read_live(self._pools, 0),
        )


class FlowState(Collector):
    """Flow control's figures, read at scrape time: per limit, what was admitted and
    held back this term, what waits at its gates, and the units in use by key, the
    busiest keys by name and the rest summed as key "other" (bounded series)."""

    def __init__(self, usage: Callable[[], dict[str, limit_pb2.LimitUsage]]) -> None:
        self._usage = usage

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        ns = metrics.NAMESPACE
        admitted = CounterMetricFamily(
            f"{ns}_flow_admitted", "Attempts a limit admitted (this scheduler's term).", labels=["limit"]
        )
        throttled = CounterMetricFamily(
            f"{ns}_flow_throttled",
            "Times a limit held a task back (this scheduler's term).",
            labels=["limit"],
        )
        waiting = GaugeMetricFamily(
            f"{ns}_flow_waiting", "Tasks waiting at a limit's gates.", labels=["limit"]
        )
        in_use = GaugeMetricFamily(
            f"{ns}_flow_units_in_use",
            "Units held (concurrency) or spent of the burst (rate), by key: the busiest keys, then 'other'.",
            labels=["limit", "key"],
        )
        empty: dict[str, limit_pb2.LimitUsage] = {}
        for name, usage in metrics.read_live(self._usage, empty).items():
            admitted.add_metric([name], usage.admitted)
            throttled.add_metric([name], usage.throttled)
            waiting.add_metric([name], usage.waiting)
            shown = 0
            for key in usage.busiest_keys:
                in_use.add_metric([name, key.key], key.units_in_use)
                shown += key.units_in_use
            in_use.add_metric([name, "other"], usage.units_in_use - shown)
        yield admitted
        yield throttled
        yield waiting
        yield in_use


# Breakers listed by key in taskyard_breaker_state per limit (the others are counted).
SHOWN_BREAKERS = 100


class BreakerState(Collector):
    """Circuit breakers, read at scrape time: opens and closes per limit this term,
    and each breaker that is not closed (1 for its state: open or half_open), the
    first SHOWN_BREAKERS keys of a limit by name, all of them in breakers_not_closed."""

    def __init__(self, figures: Callable[[], dict[str, Figures]]) -> None:
        self._figures = figures

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        ns = metrics.NAMESPACE
        opened = CounterMetricFamily(
            f"{ns}_breaker_opened",
            "Times a circuit breaker opened (this scheduler's term).",
            labels=["limit"],
        )
        closed = CounterMetricFamily(
            f"{ns}_breaker_closed",
            "Times a circuit breaker closed after a probe's success (this scheduler's term).",
            labels=["limit"],
        )
        not_closed = GaugeMetricFamily(
            f"{ns}_breakers_not_closed", "Circuit breakers open or half-open now.", labels=["limit"]
        )
        state = GaugeMetricFamily(
            f"{ns}_breaker_state",
            "1 for each circuit breaker open or half-open now, by key and state (closed ones are absent).",
            labels=["limit", "key", "state"],
        )
        empty: dict[str, Figures] = {}
        for name, figures in sorted(metrics.read_live(self._figures, empty).items()):
            opened.add_metric([name], figures.opened)
            closed.add_metric([name], figures.closed)
            not_closed.add_metric([name], len(figures.not_closed))
            for key in sorted(figures.not_closed)[:SHOWN_BREAKERS]:
                state.add_metric([name, key, figures.not_closed[key]], 1)
        yield opened
        yield closed
        yield not_closed
        yield state


def register(state: Collector) -> Callable[[], None]:
    """Expose ``state``; returns what takes it away again (a scheduler's stop)."""
    REGISTRY.register(state)
    return lambda: REGISTRY.unregister(state)
