"""The pool's log shipper: an outcome waits for its own attempt's lines only.

The store is a stand-in whose replies the test releases one by one (a unit test of
the shipper's bookkeeping; the real REQ/REP path runs in tests/acceptance/test_logs.py)."""

from __future__ import annotations

import asyncio
from typing import Any

from taskyard.bus.v1 import leases_pb2, logs_pb2
from taskyard.core import contract, errors
from taskyard.core.config import Settings
from taskyard.worker_pool.relay import ReportRelay
from taskyard.worker_pool.reports import StoreOutlets
from taskyard.worker_pool.shipper import LogShipper
from taskyard.worker_pool.state import Outbox, PoolState


class HeldStore:
    """Each request waits until the test releases it; records what was sent."""

    def __init__(self) -> None:
        self.sent: list[logs_pb2.LogBatch] = []
        self.gates: list[asyncio.Event] = []
        self.arrived = asyncio.Event()

    async def call(self, method: contract.Method[Any, Any], request: Any, **_: Any) -> Any:
        self.sent.append(request)
        gate = asyncio.Event()
        self.gates.append(gate)
        self.arrived.set()
        await gate.wait()
        return method.reply()

    async def release_next(self) -> None:
        """Answer the oldest unanswered request (waiting for it to be sent first)."""
        while not (held := [g for g in self.gates if not g.is_set()]):
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 5)
        held[0].set()
        await asyncio.sleep(0)  # the shipper takes the reply


async def settled(shipper: LogShipper, limit: float, keys: list[tuple[str, int]]) -> bool:
    return await shipper.reached(shipper.target(keys), limit)


def lines(task_id: str, n: int, attempt: int = 1) -> logs_pb2.LogBatch:
    return logs_pb2.LogBatch(
        lines=[logs_pb2.LogLine(task_id=task_id, attempt=attempt, message=f"{task_id} {i}") for i in range(n)]
    )


async def test_a_quiet_attempt_does_not_wait_for_a_chatty_one() -> None:
    store = HeldStore()
    shipper = LogShipper(store)  # type: ignore[arg-type]
    shipper.add(lines("chatty", 3))
    await asyncio.sleep(0)  # the pump sends its request; the store holds it
    assert len(store.sent) == 1
    assert await settled(shipper, 1.0, [("quiet", 1)]) is True
    assert await settled(shipper, 0.05, [("chatty", 1)]) is False  # its lines are not stored yet
    shipper.add(lines("chatty", 1))  # re-add its key (settled forgot it)
    waiting = asyncio.create_task(settled(shipper, 5.0, [("chatty", 1)]))
    await store.release_next()  # the first request
    await asyncio.sleep(0)
    assert not waiting.done()  # its newest line is in the second request
    await store.release_next()
    assert await asyncio.wait_for(waiting, 5) is True


async def test_lines_received_later_from_others_do_not_hold_an_attempt_back() -> None:
    store = HeldStore()
    shipper = LogShipper(store, batch_lines=2)  # type: ignore[arg-type]
    shipper.add(lines("a", 2))
    shipper.add(lines("b", 5))
    await asyncio.sleep(0)
    waiting = asyncio.create_task(settled(shipper, 5.0, [("a", 1)]))
    await store.release_next()  # a's two lines were the first request
    assert await asyncio.wait_for(waiting, 5) is True
    assert [line.task_id for line in store.sent[0].lines] == ["a", "a"]


async def test_context_updates_wait_for_a_full_drain() -> None:
    """Context updates go out with the request that drains every queued line, so an
    attempt that sent one waits for everything received before its outcome."""
    store = HeldStore()
    shipper = LogShipper(store, batch_lines=1)  # type: ignore[arg-type]
    shipper.add(lines("x", 1))
    shipper.add(logs_pb2.LogBatch(context=[logs_pb2.ContextUpdate(task_id="b", attempt=1)]))
    shipper.add(lines("y", 1))
    await asyncio.sleep(0)
    waiting = asyncio.create_task(settled(shipper, 5.0, [("b", 1)]))
    await store.release_next()  # x's line: the context is not in it
    await asyncio.sleep(0)
    assert not waiting.done()
    await store.release_next()  # y's line and the context (the drain)
    assert await asyncio.wait_for(waiting, 5) is True
    assert [len(b.context) for b in store.sent] == [0, 1]


async def test_forget_drops_the_bookkeeping_of_attempts_without_outcome() -> None:
    store = HeldStore()
    shipper = LogShipper(store)  # type: ignore[arg-type]
    shipper.add(lines("died", 2))
    shipper.forget([("died", 1)])
    assert await settled(shipper, 0.05, [("died", 1)]) is True  # nothing to wait for any more


class RecordingOutcomes:
    def __init__(self) -> None:
        self.reports: list[Any] = []
        self.arrived = asyncio.Event()

    def submit(self, report: Any) -> None:
        self.reports.append(report)
        self.arrived.set()

    def withdraw_starts(self, keys: Any) -> int:
        return 0  # no start notice waits here


def relay_with(outcomes: RecordingOutcomes, logs: LogShipper) -> tuple[ReportRelay, PoolState, Outbox]:
    """A report relay whose outcomes are recorded and whose slot notices go nowhere."""
    settings = Settings()
    pool, outbox, outlets = PoolState(settings), Outbox(), StoreOutlets(settings)
    outlets.logs = logs
    outlets.reports = outcomes  # type: ignore[assignment]
    return (
        ReportRelay(pool, outbox, outlets, notify_scheduler=lambda report: None, start_notice_delay=0.05),
        pool,
        outbox,
    )


async def test_a_drain_stops_an_outcome_waiting_for_its_log_lines() -> None:
    """The manager gives the report loop a second to hand its last outcomes over when
    it drains; an outcome still waiting for slow log lines must go at once (a lost
    outcome runs the task again), not after the whole 2 s settle limit."""
    from taskyard.bus.v1 import dispatch_pb2, task_record_pb2

    store = HeldStore()  # never answers: the log lines stay unacknowledged
    logs = LogShipper(store)  # type: ignore[arg-type]
    outcomes = RecordingOutcomes()
    relay, pool, outbox = relay_with(outcomes, logs)
    logs.add(lines("chatty", 2))
    # A quiet outcome beside it: its report is the relay's pass over both.
    for tid in ("chatty", "quiet"):
        ref = task_record_pb2.AttemptRef(task_id=tid, attempt=1)
        outbox.report.completed.append(leases_pb2.Completion(ref=ref, success=True))
    outbox.slots_changed()
    sender = asyncio.create_task(relay.run())
    try:
        await asyncio.wait_for(outcomes.arrived.wait(), 5)
        # Held back: its lines are not stored yet.
        assert [c.ref.task_id for r in outcomes.reports for c in r.completed] == ["quiet"]
        outcomes.arrived.clear()
        pool.closing = True
        outbox.slots_changed()
        await asyncio.wait_for(outcomes.arrived.wait(), 0.5)  # within a step, not 2 s
        assert [c.ref.task_id for c in outcomes.reports[-1].completed] == ["chatty"]
        assert isinstance(outcomes.reports[-1], dispatch_pb2.PoolReport)
    finally:
        sender.cancel()
        await asyncio.gather(sender, return_exceptions=True)


async def test_a_quiet_outcome_goes_while_a_chatty_one_waits_for_its_lines() -> None:
    from taskyard.bus.v1 import task_record_pb2

    store = HeldStore()
    logs = LogShipper(store)  # type: ignore[arg-type]
    outcomes = RecordingOutcomes()
    relay, _, outbox = relay_with(outcomes, logs)
    logs.add(lines("chatty", 2))
    for tid in ("chatty", "quiet"):
        ref = task_record_pb2.AttemptRef(task_id=tid, attempt=1)
        outbox.report.completed.append(leases_pb2.Completion(ref=ref, success=True))
    outbox.slots_changed()
    sender = asyncio.create_task(relay.run())
    try:
        await asyncio.wait_for(outcomes.arrived.wait(), 1.0)
        assert [c.ref.task_id for r in outcomes.reports for c in r.completed] == ["quiet"]
        outcomes.arrived.clear()
        await store.release_next()  # chatty's lines are stored: its outcome follows
        await asyncio.wait_for(outcomes.arrived.wait(), 1.0)
        assert [c.ref.task_id for r in outcomes.reports for c in r.completed] == ["quiet", "chatty"]
    finally:
        sender.cancel()
        await asyncio.gather(sender, return_exceptions=True)


class FlakyStore:
    """Fails the first ``failures`` requests with UNAVAILABLE, then stores."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    async def call(self, method: contract.Method[Any, Any], request: Any, **_: Any) -> Any:
        self.calls += 1
        if self.calls <= self.failures:
            raise errors.unavailable("store away")
        return method.reply()


async def test_lines_the_store_failed_to_take_are_sent_again_after_a_pause() -> None:
    store = FlakyStore(failures=2)
    shipper = LogShipper(store)  # type: ignore[arg-type]
    shipper.add(lines("a", 3))
    assert await settled(shipper, 5.0, [("a", 1)]) is True
    assert store.calls == 3 and shipper.shipped == 3
