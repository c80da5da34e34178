"""bench/_load/plan.py: how bench/load deals an open step's arrivals and a closed step's
tasks in flight out to its generator processes."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType

import pytest


def _load() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "_load" / "plan.py"
    spec = importlib.util.spec_from_file_location("load_plan", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["load_plan"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


plan = _load()


def _open(rate: float, duration: float, index: int, of: int, max_tasks: int = 1_000_000):
    return plan.Job(
        kind=plan.Kind.OPEN,
        start_at=100.0,
        duration=duration,
        warmup=0.0,
        max_tasks=max_tasks,
        rate=rate,
        index=index,
        of=of,
    )


def test_the_processes_arrivals_together_are_the_rate_evenly_spaced() -> None:
    together = sorted(t for i in range(3) for t in plan.arrivals(_open(200.0, 2.0, i, 3)))
    assert len(together) == 400
    assert together[0] == 100.0
    gaps = {round(b - a, 9) for a, b in itertools.pairwise(together)}
    assert gaps == {0.005}
    assert together[-1] < 102.0


def test_each_process_takes_every_nth_arrival() -> None:
    first, second = (plan.arrivals(_open(10.0, 1.0, i, 2)) for i in range(2))
    assert first == pytest.approx([100.0, 100.2, 100.4, 100.6, 100.8])
    assert second == pytest.approx([100.1, 100.3, 100.5, 100.7, 100.9])


def test_a_process_stops_at_its_bound() -> None:
    assert len(plan.arrivals(_open(1000.0, 10.0, 0, 1, max_tasks=7))) == 7


def test_an_open_step_without_a_rate_is_refused() -> None:
    with pytest.raises(ValueError, match="rate above 0"):
        plan.arrivals(_open(0.0, 1.0, 0, 1))


@pytest.mark.parametrize(
    ("total", "parts", "expected"),
    [(128, 4, [32, 32, 32, 32]), (10, 4, [3, 3, 2, 2]), (3, 4, [1, 1, 1, 0])],
)
def test_shares_split_a_total_as_evenly_as_whole_numbers_allow(
    total: int, parts: int, expected: list[int]
) -> None:
    assert plan.shares(total, parts) == expected
