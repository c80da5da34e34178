"""The report relay's sending decisions, with a clock of the test's own and a store
that answers when the test says: an outcome with nothing ahead of it goes at
once, what arrives while a request is in flight goes together in the next one,
a start notice waits for its attempt's outcome (which carries it, one request),
and only the start of an attempt that outlives the hold-back goes as a notice,
before its outcome (taken back when the attempt ends before the notice has left)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from taskyard.bus.v1 import dispatch_pb2, leases_pb2, task_record_pb2
from taskyard.core import contract, errors
from taskyard.core.config import Settings
from taskyard.core.retry import RetryPolicy
from taskyard.worker_pool.relay import ReportRelay
from taskyard.worker_pool.reports import ReportForwarder, StoreOutlets
from taskyard.worker_pool.state import Outbox, PoolState

pytestmark = pytest.mark.asyncio


class Clock:
    """``call_later`` whose callbacks run when the test calls ``tick``."""

    def __init__(self) -> None:
        self.armed: list[asyncio.Handle] = []
        self.delays: list[float] = []

    def call_later(self, delay: float, callback: Callable[[], None]) -> asyncio.Handle:
        self.delays.append(delay)
        handle = asyncio.Handle(callback, (), asyncio.get_running_loop())
        self.armed.append(handle)
        return handle

    @property
    def pending(self) -> int:
        return sum(1 for h in self.armed if not h.cancelled())

    def tick(self) -> None:
        """Run the callbacks armed so far (those they arm wait for the next tick)."""
        due, self.armed = self.armed, []
        for handle in due:
            if not handle.cancelled():
                handle._run()


class Store:
    """Records each report request; answers them in order when the test says so
    (``answer``), or fails one (``fail``)."""

    def __init__(self) -> None:
        self.requests: list[leases_pb2.ReportRequest] = []
        self._replies: list[asyncio.Future[None]] = []
        self._arrived = asyncio.Condition()

    async def call(self, method: contract.Method[Any, Any], req: Any, **_: Any) -> leases_pb2.ReportReply:
        assert method is contract.STORE_REPORT
        copy = leases_pb2.ReportRequest()
        copy.CopyFrom(req)
        self.requests.append(copy)
        reply = asyncio.get_running_loop().create_future()
        self._replies.append(reply)
        async with self._arrived:
            self._arrived.notify_all()
        await reply
        return leases_pb2.ReportReply()

    async def requested(self, count: int) -> leases_pb2.ReportRequest:
        """The ``count``-th request, once it has been sent."""
        async with self._arrived:
            await asyncio.wait_for(self._arrived.wait_for(lambda: len(self.requests) >= count), 5)
        return self.requests[count - 1]

    def answer(self) -> None:
        """The oldest request still unanswered gets its reply."""
        next(r for r in self._replies if not r.done()).set_result(None)

    def fail(self) -> None:
        """The oldest request still unanswered fails (as one left unanswered does)."""
        next(r for r in self._replies if not r.done()).set_exception(errors.unavailable("no reply"))


def ref(task_id: str, at_us: int = 1_000) -> task_record_pb2.AttemptRef:
    return task_record_pb2.AttemptRef(
        task_id=task_id, attempt=1, lease_token="tok", at_us=at_us, worker_id="pool-1/w0:1"
    )


def done(task_id: str) -> leases_pb2.Completion:
    return leases_pb2.Completion(ref=ref(task_id, 2_000), success=True, started_at_us=1_000)


def entries(req: leases_pb2.ReportRequest) -> dict[str, list[str]]:
    """The task ids of each kind of entry in ``req`` (kinds it has none of left out)."""
    kinds = {
        "started": [r.task_id for r in req.started],
        "completed": [c.ref.task_id for c in req.completed],
        "released": [r.ref.task_id for r in req.released],
        "died": [d.ref.task_id for d in req.died],
    }
    return {k: v for k, v in kinds.items() if v}


class Pool:
    """A relay, its outbox (where the worker processes' reports land), the clock
    of its hold-back and the store its one report stream goes to."""

    def __init__(self) -> None:
        settings = Settings(start_notice_delay=0.25)
        self.clock, self.store = Clock(), Store()
        self.state, self.outbox, outlets = PoolState(settings), Outbox(), StoreOutlets(settings)
        self.forwarder = outlets.reports = ReportForwarder(self.store, RetryPolicy())  # type: ignore[arg-type]
        self.relay = ReportRelay(
            self.state,
            self.outbox,
            outlets,
            lambda report: None,
            start_notice_delay=settings.start_notice_delay,
            call_later=self.clock.call_later,
        )

    def worker_reports(self, report: dispatch_pb2.PoolReport) -> None:
        """What ``Workers._apply_worker_report`` does with a worker's report."""
        self.outbox.report.MergeFrom(report)
        if report.completed or report.released or report.died:
            self.outbox.slots_changed()
        else:
            self.outbox.news.set()

    async def settled(self) -> None:
        """The relay has taken every report handed to it, and what it gave the
        forwarder has been handed on (no clock runs here: a turn of the loop each)."""
        for _ in range(20):
            await asyncio.sleep(0)
        assert not self.outbox.news.is_set()


@pytest.fixture
async def pool() -> AsyncIterator[Pool]:
    p = Pool()
    relay = asyncio.create_task(p.relay.run())
    try:
        yield p
    finally:
        relay.cancel()
        await asyncio.gather(relay, return_exceptions=True)


async def test_a_lone_outcome_goes_at_once_carrying_its_held_start(pool: Pool) -> None:
    pool.worker_reports(dispatch_pb2.PoolReport(started=[ref("a")]))
    await pool.settled()
    assert pool.store.requests == [] and pool.clock.pending == 1  # the start is held

    pool.worker_reports(dispatch_pb2.PoolReport(completed=[done("a")]))
    req = await pool.store.requested(1)  # no tick of the clock: at once
    assert entries(req) == {"completed": ["a"]}
    assert req.completed[0].started_at_us == 1_000 and req.completed[0].ref.worker_id == "pool-1/w0:1"
    assert pool.relay.starts_carried == 1

    pool.store.answer()
    await asyncio.wait_for(pool.forwarder.idle.wait(), 5)
    pool.clock.tick()
    pool.clock.tick()
    await pool.settled()
    assert len(pool.store.requests) == 1 and pool.forwarder.starts_sent == 0  # carried, never sent
    assert pool.clock.pending == 0  # nothing held: no timer


async def test_a_start_in_the_same_report_as_its_outcome_goes_in_that_one_request(pool: Pool) -> None:
    pool.worker_reports(dispatch_pb2.PoolReport(started=[ref("a")], completed=[done("a")]))
    assert entries(await pool.store.requested(1)) == {"completed": ["a"]}
    assert pool.relay.starts_carried == 1 and pool.clock.pending == 0


async def test_what_arrives_while_a_request_is_in_flight_goes_together_in_the_next(pool: Pool) -> None:
    pool.worker_reports(dispatch_pb2.PoolReport(completed=[done("a")]))
    assert entries(await pool.store.requested(1)) == {"completed": ["a"]}
    pool.worker_reports(dispatch_pb2.PoolReport(completed=[done("b")]))
    await pool.settled()
    pool.worker_reports(dispatch_pb2.PoolReport(released=[leases_pb2.Release(ref=ref("c"))]))
    await pool.settled()
    assert len(pool.store.requests) == 1  # one in flight: the others wait for its answer

    pool.store.answer()
    assert entries(await pool.store.requested(2)) == {"completed": ["b"], "released": ["c"]}
    pool.store.answer()
    await asyncio.wait_for(pool.forwarder.idle.wait(), 5)
    assert len(pool.store.requests) == 2


async def test_the_start_of_an_attempt_that_outlives_the_hold_back_goes_before_its_outcome(
    pool: Pool,
) -> None:
    pool.worker_reports(dispatch_pb2.PoolReport(started=[ref("long")]))
    await pool.settled()
    pool.clock.tick()  # held a whole tick: not yet due
    await pool.settled()
    assert pool.store.requests == []
    pool.clock.tick()
    assert entries(await pool.store.requested(1)) == {"started": ["long"]}
    assert pool.clock.pending == 0  # nothing held any more
    assert pool.clock.delays == [0.25, 0.25]  # a tick is the configured start-notice delay

    pool.worker_reports(dispatch_pb2.PoolReport(completed=[done("long")]))
    await pool.settled()
    assert len(pool.store.requests) == 1  # behind its start, which the store has not answered
    pool.store.answer()
    assert entries(await pool.store.requested(2)) == {"completed": ["long"]}
    assert pool.forwarder.starts_sent == 1 and pool.relay.starts_carried == 0


async def test_a_due_start_that_has_not_left_when_its_attempt_ends_is_carried_by_its_outcome(
    pool: Pool,
) -> None:
    pool.worker_reports(dispatch_pb2.PoolReport(completed=[done("other")]))
    await pool.store.requested(1)  # in flight, unanswered
    pool.worker_reports(dispatch_pb2.PoolReport(started=[ref("a")]))
    await pool.settled()
    pool.clock.tick()
    pool.clock.tick()  # due: handed to the stream, which waits for the first answer
    pool.worker_reports(dispatch_pb2.PoolReport(completed=[done("a")]))
    await pool.settled()
    assert len(pool.store.requests) == 1

    pool.store.answer()
    assert entries(await pool.store.requested(2)) == {"completed": ["a"]}  # one request, one row write
    assert pool.relay.starts_carried == 1
    pool.store.answer()
    await asyncio.wait_for(pool.forwarder.idle.wait(), 5)
    assert pool.forwarder.starts_sent == 0 and len(pool.store.requests) == 2


async def test_a_held_start_is_carried_by_a_release_or_a_death_too(pool: Pool) -> None:
    pool.worker_reports(dispatch_pb2.PoolReport(started=[ref("drained"), ref("killed")]))
    await pool.settled()
    pool.worker_reports(
        dispatch_pb2.PoolReport(
            released=[leases_pb2.Release(ref=ref("drained"), resume_requested=True)],
            died=[leases_pb2.Death(ref=ref("killed"), started=True)],
        )
    )
    assert entries(await pool.store.requested(1)) == {"released": ["drained"], "died": ["killed"]}
    pool.store.answer()
    pool.clock.tick()
    pool.clock.tick()
    await pool.settled()
    assert len(pool.store.requests) == 1 and pool.relay.starts_carried == 2


async def test_a_failed_request_is_sent_again_with_what_came_meanwhile(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("taskyard.worker_pool.reports.RETRY_PAUSE", (0.001, 0.001))
    pool.worker_reports(dispatch_pb2.PoolReport(completed=[done("a")]))
    await pool.store.requested(1)
    pool.worker_reports(dispatch_pb2.PoolReport(completed=[done("b")]))
    await pool.settled()
    pool.store.fail()
    assert entries(await pool.store.requested(2)) == {"completed": ["a", "b"]}
    pool.store.answer()
    await asyncio.wait_for(pool.forwarder.idle.wait(), 5)
    assert pool.forwarder.requests == 2
