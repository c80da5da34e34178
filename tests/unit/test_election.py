"""The schedulers' election (scheduler/election.py) on an injected clock and a fake
store that keeps the leader's row as sql/leader.sql does (its expiry by ITS clock;
tests/integration/test_leadership_store.py holds the SQL to the same rules)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from taskyard.bus.v1 import leader_pb2
from taskyard.core import contract, errors
from taskyard.core.clock import ManualClock
from taskyard.scheduler import election
from taskyard.scheduler.election import JITTER, RETRY, Election

TTL = 2.0
STEP = 0.01


class FakeStore:
    """The one row: term, holder, expiry (seconds on the clock's monotonic time)."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.term = 0
        self.holder = ""
        self.expires = 0.0
        self.reachable = True
        self.asked: list[leader_pb2.LeadershipRequest] = []

    def take(self, holder: str, seconds: float) -> None:
        """Another scheduler takes the row (a new term)."""
        self.term += 1
        self.holder = holder
        self.expires = self.clock.monotonic() + seconds

    async def call(self, method: contract.Method[Any, Any], request: Any, **_: Any) -> Any:
        assert method is contract.STORE_LEADERSHIP
        assert isinstance(request, leader_pb2.LeadershipRequest)
        self.asked.append(leader_pb2.LeadershipRequest.FromString(request.SerializeToString()))
        await asyncio.sleep(0)
        if not self.reachable:
            raise errors.unavailable("no store")
        now, ttl = self.clock.monotonic(), request.ttl_ms / 1000
        mine = (self.holder, self.term) == (request.holder, request.term)
        if request.release:
            if mine:
                self.expires = min(self.expires, now)
            leader = False
        elif request.term:
            if mine:
                self.expires = now + ttl
            leader = mine
        else:
            current = self.holder == request.holder and self.expires > now
            if self.expires <= now or self.holder == request.holder:
                self.term += 0 if current else 1
                self.holder, self.expires = request.holder, now + ttl
            leader = self.holder == request.holder
        left = max(0, round((self.expires - now) * 1000))
        return leader_pb2.LeadershipReply(
            term=self.term, holder=self.holder, leader=leader, expires_in_ms=left
        )

    def count(self, kind: str) -> int:
        def of(r: leader_pb2.LeadershipRequest) -> str:
            return "release" if r.release else "renew" if r.term else "acquire"

        return sum(1 for r in self.asked if of(r) == kind)


class Candidate:
    """One scheduler process: its election running, its terms recorded."""

    def __init__(self, store: FakeStore, clock: ManualClock, holder: str, seed: int = 1) -> None:
        self.election = Election(store, holder=holder, ttl=TTL, clock=clock, rng=random.Random(seed))
        self.stop = asyncio.Event()
        self.terms: list[int] = []
        self.leading = asyncio.Event()
        self.ended = asyncio.Event()
        self.task = asyncio.create_task(self.election.run(self.stop, self._lead))

    async def _lead(self, term: int, over: asyncio.Event) -> None:
        self.terms.append(term)
        self.ended.clear()
        self.leading.set()
        await over.wait()
        self.leading.clear()
        self.ended.set()

    async def crash(self) -> None:
        """SIGKILL: nothing released, nothing renewed any more."""
        self.task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await self.task


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def run_until(clock: ManualClock, done: Callable[[], bool], limit: float, what: str) -> float:
    """Advance the clock in small steps until ``done``; the time it took."""
    start = clock.monotonic()
    await settle()
    while not done():
        if clock.monotonic() - start > limit:
            raise AssertionError(f"{what}: not within {limit}s of the test's clock")
        clock.advance(STEP)
        await settle()
    return clock.monotonic() - start


def renewed_after(store: FakeStore, count: int) -> Callable[[], bool]:
    return lambda: store.count("renew") > count


async def finish(*candidates: Candidate) -> None:
    for c in candidates:
        c.stop.set()
    await settle()
    for c in candidates:
        if not c.task.done():
            await asyncio.wait_for(c.task, 1.0)


async def test_a_standby_takes_the_free_row_then_renews_every_quarter_of_the_ttl() -> None:
    clock = ManualClock()
    store = FakeStore(clock)
    a = Candidate(store, clock, "a")
    await run_until(clock, a.leading.is_set, 1.0, "a to lead")
    assert a.terms == [1] and a.election.term == 1
    renewed = store.count("renew")
    await run_until(clock, lambda: store.count("renew") >= renewed + 8, 3 * TTL, "eight renewals")
    took = 0.0
    for _ in range(4):  # four more, each a quarter of the ttl after the last
        before = store.count("renew")
        took += await run_until(clock, renewed_after(store, before), TTL, "a renewal")
    assert took == pytest.approx(TTL, abs=4 * STEP)
    assert store.holder == "a" and store.term == 1
    await finish(a)


async def test_of_two_one_leads_and_the_other_takes_over_once_the_row_expired() -> None:
    clock = ManualClock()
    store = FakeStore(clock)
    a = Candidate(store, clock, "a", seed=1)
    await run_until(clock, a.leading.is_set, 1.0, "a to lead")
    b = Candidate(store, clock, "b", seed=2)
    await run_until(clock, lambda: store.count("acquire") >= 5, 5.0, "b to ask a few times")
    assert not b.leading.is_set() and b.terms == []
    await a.crash()
    failover = await run_until(clock, b.leading.is_set, 2 * TTL, "b to take over")
    assert b.terms == [2] and store.holder == "b"
    # At most the ttl (from a's last renewal) and one standby's wait.
    assert failover <= TTL + RETRY * (1 + JITTER) + STEP
    await finish(b)


async def test_a_standby_asks_again_just_after_the_holders_lease_ends() -> None:
    """Told the row expires before its next ask, a standby asks just after it
    expires instead of at its next poll: a restarted single scheduler waiting for
    its dead predecessor's row, or a failover, is not delayed by the polling."""
    clock = RecordingClock()
    store = FakeStore(clock)
    store.take("dead", seconds=0.1)
    b = Candidate(store, clock, "b", seed=4)
    took = await run_until(clock, b.leading.is_set, 1.0, "b to lead")
    assert took <= 0.1 + election.EXPIRY_MARGIN + 2 * STEP
    assert clock.slept[0] == pytest.approx(0.1 + election.EXPIRY_MARGIN, abs=STEP)
    await finish(b)


async def test_a_refused_renewal_ends_the_term_and_the_scheduler_stands_by_again() -> None:
    clock = ManualClock()
    store = FakeStore(clock)
    a = Candidate(store, clock, "a")
    await run_until(clock, a.leading.is_set, 1.0, "a to lead")
    store.take("other", seconds=TTL)  # a's row, taken over behind its back
    took = await run_until(clock, a.ended.is_set, TTL, "a to step down")
    assert took <= TTL / 4 + STEP
    assert a.election.term == 0 and not a.task.done()  # standing by, not stopped
    released = store.count("release")
    await run_until(clock, a.leading.is_set, 2 * TTL, "a to lead again once the row expired")
    assert a.terms == [1, 3] and store.count("release") == released  # never released another's row
    await finish(a)


async def test_a_leader_keeps_leading_through_a_short_store_outage_and_steps_down_after_a_long_one() -> None:
    clock = ManualClock()
    store = FakeStore(clock)
    a = Candidate(store, clock, "a")
    await run_until(clock, a.leading.is_set, 1.0, "a to lead")
    store.reachable = False
    failed = store.count("renew")
    # Short of STEP_DOWN_AFTER ttls: renewals fail, a leads on.
    await run_until(clock, lambda: store.count("renew") >= failed + 5, 1.5 * TTL, "renewals to fail")
    assert a.leading.is_set() and not a.ended.is_set() and a.election.term == 1
    store.reachable = True  # the row expired meanwhile, but nobody took it: still a's
    kept = store.count("renew")
    await run_until(clock, lambda: store.count("renew") > kept, TTL, "a renewal")
    assert a.leading.is_set() and store.expires > clock.monotonic() and store.term == 1

    store.reachable = False  # for good, this time
    began = clock.monotonic()
    await run_until(clock, a.ended.is_set, 4 * TTL, "a to step down")
    took = clock.monotonic() - began
    assert election.STEP_DOWN_AFTER * TTL <= took <= election.STEP_DOWN_AFTER * TTL + TTL / 4 + STEP
    assert a.election.term == 0 and not a.task.done()  # standing by, not stopped
    store.reachable = True
    await run_until(clock, lambda: a.terms == [1, 2], 2 * TTL, "a to lead again, in a new term")
    await finish(a)


async def test_a_stop_releases_the_row_after_the_term_ended_so_a_standby_takes_it_at_once() -> None:
    clock = ManualClock()
    store = FakeStore(clock)
    order: list[str] = []
    a = Candidate(store, clock, "a")
    await run_until(clock, a.leading.is_set, 1.0, "a to lead")
    b = Candidate(store, clock, "b", seed=3)
    await run_until(clock, lambda: store.count("acquire") >= 3, 2.0, "b to stand by")

    original: Callable[..., Awaitable[Any]] = store.call

    async def spy(method: contract.Method[Any, Any], request: Any, **kw: Any) -> Any:
        if request.release:
            order.append(f"release while a leads: {a.leading.is_set()}")
        return await original(method, request, **kw)

    store.call = spy  # type: ignore[method-assign]
    a.stop.set()
    await settle()
    await asyncio.wait_for(a.task, 1.0)
    assert order == ["release while a leads: False"]
    took = await run_until(clock, b.leading.is_set, TTL, "b to take over")
    assert took <= RETRY * (1 + JITTER) + STEP and b.terms == [2]
    await finish(b)


class RecordingClock(ManualClock):
    def __init__(self) -> None:
        super().__init__()
        self.slept: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        await super().sleep(seconds)


async def test_standbys_ask_about_every_quarter_second_not_in_step() -> None:
    clock = RecordingClock()
    store = FakeStore(clock)
    store.take("elsewhere", seconds=3600.0)
    b, c = Candidate(store, clock, "b", seed=4), Candidate(store, clock, "c", seed=5)
    await run_until(clock, lambda: store.count("acquire") >= 80, 30.0, "80 requests")
    waits = clock.slept
    assert all(RETRY * (1 - JITTER) <= w <= RETRY * (1 + JITTER) for w in waits)
    assert sum(waits) / len(waits) == pytest.approx(RETRY, rel=0.15)
    assert len(set(waits)) > len(waits) // 2  # jittered, not one fixed period
    # Over ~10 s, each asked about 40 times (every 0.25 s on average).
    asked = {h: sum(1 for r in store.asked if r.holder == h) for h in ("b", "c")}
    assert all(30 <= n <= 50 for n in asked.values()), asked
    assert not b.leading.is_set() and not c.leading.is_set()
    await finish(b, c)
