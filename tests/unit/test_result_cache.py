"""The LRU cache of final task records: bound, TTL, sweep, injected clock."""

from __future__ import annotations

import asyncio

import pytest

from taskyard.bus.v1 import task_record_pb2
from taskyard.core.clock import ManualClock
from taskyard.core.states import TaskState
from taskyard.result_store.cache import ResultCache


def rec(i: int, state: TaskState = TaskState.SUCCESS) -> task_record_pb2.TaskRecord:
    return task_record_pb2.TaskRecord(id=f"t{i}", name="add", state=int(state))  # type: ignore[arg-type]


def test_defaults() -> None:
    c = ResultCache()
    assert (c.max_entries, c.ttl, c.sweep_interval) == (10_000, 3600.0, 60.0)


def test_only_records_that_never_change_are_cached() -> None:
    c = ResultCache(clock=ManualClock())
    assert c.put(rec(1, TaskState.SUCCESS))
    assert not c.put(rec(2, TaskState.FAILURE))  # final until a manual retry, through any store
    assert c.put(rec(3, TaskState.CANCELLED))
    assert not c.put(rec(4, TaskState.RUNNING))
    assert c.get("t2") is None and c.get("t4") is None
    assert len(c) == 2


def test_lru_eviction_keeps_recently_used() -> None:
    c = ResultCache(max_entries=3, clock=ManualClock())
    for i in range(3):
        c.put(rec(i))
    assert c.get("t0") is not None  # t0 is now most recent
    c.put(rec(3))
    assert "t1" not in c
    assert {"t0", "t2", "t3"} <= {k for k in ("t0", "t1", "t2", "t3") if k in c}
    assert c.evictions == 1


def test_ttl_expiry_on_get() -> None:
    clock = ManualClock()
    c = ResultCache(ttl_seconds=10, clock=clock)
    c.put(rec(1))
    clock.advance(9.9)
    assert c.get("t1") is not None
    clock.advance(0.2)
    assert c.get("t1") is None
    assert len(c) == 0


def test_sweep_removes_expired_only() -> None:
    clock = ManualClock()
    c = ResultCache(ttl_seconds=10, clock=clock)
    c.put(rec(1))
    clock.advance(5)
    c.put(rec(2))
    clock.advance(6)
    assert c.sweep() == 1
    assert "t1" not in c and "t2" in c


@pytest.mark.asyncio
async def test_sweeper_runs_on_the_injected_clock() -> None:
    clock = ManualClock()
    c = ResultCache(ttl_seconds=30, sweep_interval=60, clock=clock)
    c.put(rec(1))
    task = asyncio.create_task(c.run_sweeper())
    await asyncio.sleep(0)
    clock.advance(60)
    for _ in range(5):
        await asyncio.sleep(0)
    assert len(c) == 0
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_non_final_put_invalidates() -> None:
    c = ResultCache(clock=ManualClock())
    c.put(rec(1, TaskState.FAILURE))
    c.put(rec(1, TaskState.QUEUED))  # a manual retry
    assert c.get("t1") is None


def test_an_expired_entry_never_takes_a_live_ones_place() -> None:
    """A put drops the expired entries before the bound is looked at: no live record
    is let go (or counted as evicted) while an expired one holds a place."""
    clock = ManualClock()
    c = ResultCache(max_entries=2, ttl_seconds=10, clock=clock)
    c.put(rec(1))
    clock.advance(5)
    c.put(rec(2))
    clock.advance(6)  # t1 expired, t2 has 4 s left
    c.put(rec(3))
    assert c.get("t2") is not None and c.get("t3") is not None
    assert c.evictions == 0


def test_a_put_starts_the_ttl_anew_and_a_get_does_not() -> None:
    clock = ManualClock()
    c = ResultCache(ttl_seconds=10, clock=clock)
    c.put(rec(1))
    clock.advance(6)
    assert c.get("t1") is not None
    clock.advance(6)
    assert c.get("t1") is None  # read at 6 s, still gone at 10 s
    c.put(rec(1))
    clock.advance(6)
    c.put(rec(1))
    clock.advance(6)
    assert c.get("t1") is not None  # put again at 6 s: good until 16 s
