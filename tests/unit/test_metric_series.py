"""Counters whose labels are known at start serve a 0 for each from the start: a
series that never appeared leaves a dashboard query empty ("no data"), where a
healthy system should read 0."""

from __future__ import annotations

from prometheus_client.registry import REGISTRY

from taskyard.core import metrics, seal
from taskyard.scheduler import metrics as scheduler_metrics
from taskyard.worker_pool import metrics as pool_metrics


def test_rescued_leases_start_at_zero_for_every_outcome() -> None:
    for outcome in scheduler_metrics.RESCUE_OUTCOMES:
        assert REGISTRY.get_sample_value("taskyard_leases_rescued_total", {"outcome": outcome}) is not None


def test_worker_deaths_start_at_zero_for_every_cause() -> None:
    for cause in pool_metrics.DEATH_CAUSES:
        assert REGISTRY.get_sample_value("taskyard_worker_deaths_total", {"reason": cause}) is not None


def test_bus_refusals_serve_every_reason_before_any_refusal() -> None:
    (family,) = metrics.BusRefusals().collect()
    served = {s.labels["reason"]: s.value for s in family.samples if s.name.endswith("_total")}
    counts = seal.current().refusals.counts()
    assert set(served) >= set(seal.REASONS)
    assert all(served[r] == counts.get(r, 0) for r in seal.REASONS)
