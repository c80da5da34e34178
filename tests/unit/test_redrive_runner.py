"""The leader's redrive runner (scheduler/redrives.py): paced by a token bucket of the
redrive's rate, started empty, bursts of at most one second's worth, steps of at most
500, fenced by the term; it stops stepping a redrive that is no longer RUNNING. The
clock is injected (ManualClock): time moves only when the test says."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from taskyard.bus.v1 import failures_pb2 as bus
from taskyard.core import contract, errors
from taskyard.core.clock import ManualClock
from taskyard.scheduler import redrives
from taskyard.scheduler.redrives import RedriveRunner
from taskyard.v1 import failure_service_pb2 as fs

RUNNING, PAUSED, DONE = fs.REDRIVE_STATE_RUNNING, fs.REDRIVE_STATE_PAUSED, fs.REDRIVE_STATE_DONE


@dataclasses.dataclass
class Redrive:
    id: str
    rate: float
    pending: int
    state: fs.RedriveState = RUNNING
    requeued: int = 0


class FakeStore:
    """The store's side of the bus methods the runner uses, with items counted, not kept."""

    def __init__(self, clock: ManualClock, *redrives: Redrive) -> None:
        self.clock = clock
        self.redrives = {r.id: r for r in redrives}
        # (time, id, limit, term, taken) for every step.
        self.steps: list[tuple[float, str, int, int, int]] = []
        self.fail_next: errors.TaskyardError | None = None

    def _proto(self, r: Redrive) -> fs.Redrive:
        return fs.Redrive(id=r.id, rate=r.rate, state=r.state, requeued=r.requeued)

    async def call(self, method: contract.Method[Any, Any], request: Any, **_: Any) -> Any:
        if method is contract.STORE_REDRIVES_ACTIVE:
            running = [self._proto(r) for r in self.redrives.values() if r.state == RUNNING]
            return bus.ActiveRedrivesReply(redrives=running)
        assert method is contract.STORE_REDRIVE_STEP
        if self.fail_next is not None:
            exc, self.fail_next = self.fail_next, None
            raise exc
        r = self.redrives[request.id]
        taken = min(request.limit, r.pending) if r.state == RUNNING else 0
        r.pending -= taken
        r.requeued += taken
        if r.pending == 0 and r.state == RUNNING:
            r.state = DONE
        self.steps.append((self.clock.monotonic(), request.id, request.limit, request.term, taken))
        return bus.RedriveStepReply(redrive=self._proto(r), requeued=taken)

    def taken(self, redrive_id: str, until: float) -> int:
        return sum(s[4] for s in self.steps if s[1] == redrive_id and s[0] <= until + 1e-9)


async def _rounds(runner: RedriveRunner, clock: ManualClock, seconds: float, tick: float = 0.1) -> None:
    """Rounds of the runner every ``tick`` for ``seconds`` of the manual clock."""
    for _ in range(round(seconds / tick)):
        clock.advance(tick)
        await runner.pace()


async def test_a_redrive_is_paced_at_its_rate_from_an_empty_bucket() -> None:
    clock = ManualClock()
    store = FakeStore(clock, Redrive("r1", rate=200, pending=1000))
    runner = RedriveRunner(store, term=7, clock=clock)
    await runner.refresh()
    await runner.pace()
    assert store.steps == []  # no burst at the start: the bucket starts empty
    await _rounds(runner, clock, 6.0)
    assert store.redrives["r1"].state == DONE and store.redrives["r1"].pending == 0
    # Never more than rate * elapsed: the first item after 0.1 s, the 1,000th after 5 s.
    for t in (0.5, 1.0, 2.5, 4.9):
        assert store.taken("r1", t) <= 200 * t + 1e-6, t
    first, last = store.steps[0][0], store.steps[-1][0]
    assert last - first >= (1000 - 1) / 200 - 0.1 - 1e-9
    assert {s[3] for s in store.steps} == {7}  # every step carries the term
    assert "r1" not in runner.running  # DONE: no more steps
    steps = len(store.steps)
    await _rounds(runner, clock, 1.0)
    assert len(store.steps) == steps


async def test_a_bucket_holds_at_most_one_seconds_worth() -> None:
    clock = ManualClock()
    store = FakeStore(clock, Redrive("r1", rate=50, pending=10_000))
    runner = RedriveRunner(store, term=1, clock=clock)
    await runner.refresh()
    clock.advance(30.0)  # a round late by 30 s (a slow store) may not catch up
    await runner.pace()
    assert [s[4] for s in store.steps] == [50]


async def test_steps_take_at_most_500_items() -> None:
    clock = ManualClock()
    store = FakeStore(clock, Redrive("r1", rate=10_000, pending=5_000))
    runner = RedriveRunner(store, term=1, clock=clock)
    await runner.refresh()
    clock.advance(1.0)
    await runner.pace()
    assert [s[2] for s in store.steps] == [500] * 10  # a second's worth, in steps of 500
    assert redrives.MAX_STEP == 500


async def test_a_slow_rate_waits_for_whole_items() -> None:
    clock = ManualClock()
    store = FakeStore(clock, Redrive("r1", rate=0.5, pending=3))
    runner = RedriveRunner(store, term=1, clock=clock)
    await runner.refresh()
    await _rounds(runner, clock, 1.9)
    assert store.steps == []
    await _rounds(runner, clock, 0.2)
    assert [s[2] for s in store.steps] == [1]


async def test_a_paused_redrive_is_not_stepped_and_resumes_from_an_empty_bucket() -> None:
    clock = ManualClock()
    store = FakeStore(clock, Redrive("r1", rate=100, pending=1000), Redrive("r2", rate=10, pending=1000))
    runner = RedriveRunner(store, term=1, clock=clock)
    await runner.refresh()
    await _rounds(runner, clock, 1.0)
    store.redrives["r1"].state = PAUSED
    before = store.taken("r1", clock.monotonic())
    # The next step's reply says PAUSED: the runner drops it before the refresh does.
    await _rounds(runner, clock, 0.1)
    assert "r1" not in runner.running and "r2" in runner.running
    await runner.refresh()
    await _rounds(runner, clock, 2.0)
    assert store.taken("r1", clock.monotonic()) == before
    assert store.taken("r2", clock.monotonic()) > 10  # the other one goes on
    store.redrives["r1"].state = RUNNING
    await runner.refresh()
    resumed = clock.monotonic()
    await runner.pace()
    assert store.taken("r1", resumed) == before  # no burst for the time it was paused
    await _rounds(runner, clock, 1.0)
    assert store.taken("r1", clock.monotonic()) - before <= 100


async def test_a_failed_step_spends_its_tokens_and_a_refused_one_drops_the_redrive() -> None:
    clock = ManualClock()
    store = FakeStore(clock, Redrive("r1", rate=100, pending=1000))
    runner = RedriveRunner(store, term=3, clock=clock)
    await runner.refresh()
    clock.advance(0.5)
    store.fail_next = errors.deadline("no answer")
    await runner.pace()
    await runner.pace()
    assert store.steps == []  # the 50 asked for are spent: the store may have taken them
    assert runner.failed_steps == 1 and "r1" in runner.running
    store.fail_next = errors.TaskyardError(errors.Code.FAILED_PRECONDITION, "NOT_LEADER", "term 3 is over")
    clock.advance(0.1)
    await runner.pace()
    assert "r1" not in runner.running


async def test_run_refreshes_every_second_and_picks_up_a_new_redrive() -> None:
    clock = ManualClock()
    store = FakeStore(clock)
    runner = RedriveRunner(store, term=1, clock=clock)
    task = asyncio.create_task(runner.run())
    try:
        for _ in range(3):
            await asyncio.sleep(0)
        store.redrives["r1"] = Redrive("r1", rate=20, pending=100)
        for _ in range(25):  # 2.5 s of rounds
            clock.advance(0.1)
            for _ in range(5):
                await asyncio.sleep(0)
        assert "r1" in runner.running
        assert 0 < store.taken("r1", clock.monotonic()) <= 20 * 1.5 + 1
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
