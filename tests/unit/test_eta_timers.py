"""The scheduler's due heap (scheduler/timers.py) on an injected clock and a fake store.

The fake store keeps rows {id: run_at_us} and promotes by ITS clock (which may
lag the scheduler's), like PostgreSQL's now() does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from taskyard.core.clock import ManualClock, to_us
from taskyard.core.priority import Priority
from taskyard.scheduler.lanes import Ref
from taskyard.scheduler.timers import DueTimers


class FakeDb:
    def __init__(self, clock: ManualClock, lag: float = 0.0) -> None:
        self.clock = clock
        self.lag = lag  # the database clock is this many seconds behind
        self.rows: dict[str, int] = {}
        self.loads = 0
        self.promotes = 0
        self.fail = False

    def now_us(self) -> int:
        return to_us(self.clock.now() - self.lag)

    async def load_due(self, window_ms: int) -> tuple[list[tuple[str, int]], bool]:
        self.loads += 1
        if self.fail:
            raise ConnectionError("store down")
        limit = self.now_us() + window_ms * 1000
        return sorted(((i, t) for i, t in self.rows.items() if t <= limit), key=lambda x: x[1]), False

    async def promote_due(self) -> tuple[list[Ref], int]:
        self.promotes += 1
        if self.fail:
            raise ConnectionError("store down")
        now = self.now_us()
        due = [i for i, t in self.rows.items() if t <= now]
        for i in due:
            del self.rows[i]
        return [Ref(id=i, name="noop", priority=Priority.NORMAL) for i in due], min(
            self.rows.values(), default=0
        )


class Harness:
    def __init__(self, lag: float = 0.0, window: float = 60.0, refresh: float = 30.0) -> None:
        self.clock = ManualClock()
        self.db = FakeDb(self.clock, lag)
        self.queued: list[tuple[float, str]] = []
        self.timers = DueTimers(
            source=self.db, on_due=self._on_due, clock=self.clock, window=window, refresh=refresh
        )

    def _on_due(self, refs: Sequence[Ref]) -> None:
        self.queued.extend((self.clock.now(), r.id) for r in refs)

    def at(self, seconds: float) -> int:
        return to_us(self.clock.now() + seconds)

    async def advance(self, seconds: float, step: float = 0.01) -> None:
        """Move the clock in small steps, letting the timer run between them."""
        end = self.clock.now() + seconds
        while self.clock.now() < end - 1e-9:
            self.clock.advance(min(step, end - self.clock.now()))
            for _ in range(5):
                await asyncio.sleep(0)


async def _settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def test_rows_loaded_at_start_are_promoted_at_their_time() -> None:
    h = Harness()
    start = h.clock.now()
    h.db.rows = {"a": h.at(1.0), "b": h.at(0.5), "c": h.at(2.0)}
    task = asyncio.create_task(h.timers.run())
    try:
        await _settle()
        assert len(h.timers) == 3 and h.db.loads == 1
        await h.advance(2.5)
        assert [i for _, i in h.queued] == ["b", "a", "c"]
        for (when, task_id), due in zip(h.queued, (0.5, 1.0, 2.0), strict=True):
            assert due <= when - start < due + 0.02, task_id  # on time, never early
    finally:
        task.cancel()


async def test_an_earlier_entry_wakes_the_sleeping_timer() -> None:
    h = Harness()
    h.db.rows = {"late": h.at(30.0)}
    task = asyncio.create_task(h.timers.run())
    try:
        await _settle()
        h.db.rows["soon"] = h.at(0.2)
        assert h.timers.add("soon", h.db.rows["soon"])
        await h.advance(0.25)
        assert [i for _, i in h.queued] == ["soon"]
    finally:
        task.cancel()


async def test_rows_beyond_the_window_are_left_to_a_reload() -> None:
    h = Harness(window=10.0, refresh=5.0)
    task = asyncio.create_task(h.timers.run())
    try:
        await _settle()
        far = h.at(12.0)
        h.db.rows["far"] = far
        assert not h.timers.add("far", far)
        assert "far" not in h.timers
        await h.advance(8.0, step=0.1)  # a reload (every 5 s) brings it in
        assert "far" in h.timers
        await h.advance(4.1, step=0.05)
        assert [i for _, i in h.queued] == ["far"]
    finally:
        task.cancel()


async def test_a_row_the_heap_never_heard_of_is_found_through_the_database_hint() -> None:
    h = Harness(refresh=30.0)
    h.db.rows = {"known": h.at(0.1)}
    task = asyncio.create_task(h.timers.run())
    try:
        await _settle()
        h.db.rows["unknown"] = h.at(0.5)  # inserted elsewhere, its event lost
        await h.advance(0.6)
        assert [i for _, i in h.queued] == ["known", "unknown"]
    finally:
        task.cancel()


async def test_database_clock_behind_ours_only_delays_a_little() -> None:
    h = Harness(lag=0.05)
    h.db.rows = {"a": h.at(0.2)}
    task = asyncio.create_task(h.timers.run())
    try:
        await _settle()
        await h.advance(0.4)
        ((when, task_id),) = h.queued
        assert task_id == "a"
        # Due at 0.2 by our clock, 0.25 by the database's; retried every 20-40 ms.
        assert 0.25 <= when - (h.clock.now() - 0.4) <= 0.35
    finally:
        task.cancel()


async def test_a_store_outage_is_survived() -> None:
    h = Harness()
    h.db.fail = True
    task = asyncio.create_task(h.timers.run())
    try:
        await _settle()
        await h.advance(0.5, step=0.05)
        h.db.fail = False
        h.db.rows = {"a": h.at(0.3)}
        await h.advance(1.0, step=0.05)  # the next attempt reloads and finds it
        assert [i for _, i in h.queued] == ["a"]
    finally:
        task.cancel()


async def test_reload_request_without_a_time_is_rate_limited() -> None:
    h = Harness()
    task = asyncio.create_task(h.timers.run())
    try:
        await _settle()
        loads = h.db.loads
        for _ in range(50):
            h.timers.request_reload()
            await h.advance(0.01)
        # 0.5 s of requests: at most one reload per 0.2 s.
        assert h.db.loads - loads <= 3
    finally:
        task.cancel()


def test_add_ignores_unknown_times_and_duplicates() -> None:
    h = Harness()
    assert not h.timers.add("x", 0)
    assert h.timers.add("x", h.at(1))
    assert h.timers.add("x", h.at(1))
    assert len(h.timers) == 1
    h.timers.add("x", h.at(2))  # moved: the older entry goes stale
    assert h.timers.next_us == h.at(2)
    h.timers.discard("x")
    assert h.timers.next_us == 0


@pytest.mark.parametrize("count", [1, 1000])
async def test_many_due_at_once_are_promoted_in_one_request(count: int) -> None:
    h = Harness()
    h.db.rows = {f"t{i}": h.at(0.1) for i in range(count)}
    task = asyncio.create_task(h.timers.run())
    try:
        await _settle()
        promotes = h.db.promotes
        await h.advance(0.15)
        assert len(h.queued) == count
        assert h.db.promotes - promotes == 1
    finally:
        task.cancel()
