"""A cancel that reaches a pool before an attempt's body began: the body never
runs, and the attempt's report says so (CANCEL_STEP_NOT_STARTED), whether the
cancel finds it in the manager (a flagged copy of its dispatch) or in a worker
(not yet run, waiting for a slot, or waiting for its start notice to go out)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any, cast

import pytest
from support.fake_scheduler import make_record

from taskyard.bus.v1 import dispatch_pb2, leases_pb2, task_record_pb2
from taskyard.core.background import Background
from taskyard.core.config import Settings
from taskyard.core.states import WorkerState
from taskyard.v1 import task_pb2
from taskyard.worker_pool import processes, registry, task
from taskyard.worker_pool.attempts import key_of, ref_of
from taskyard.worker_pool.processes import Workers
from taskyard.worker_pool.reports import StoreOutlets
from taskyard.worker_pool.state import Outbox, PoolState
from taskyard.worker_pool.worker import Runner

NOT_STARTED = task_pb2.CANCEL_STEP_NOT_STARTED


class Bodies:
    """The bodies that began, and a gate the blocking one waits on."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.began = asyncio.Event()
        self.gate = asyncio.Event()


@pytest.fixture
def bodies() -> Iterator[Bodies]:
    seen = Bodies()

    @task(name="unit.recorded")
    async def recorded(tag: str) -> str:
        seen.ran.append(tag)
        seen.began.set()
        await seen.gate.wait()
        return tag

    yield seen
    registry.unregister("unit.recorded")


async def ended(runner: Runner, record: task_record_pb2.TaskRecord) -> dispatch_pb2.PoolReport:
    """The runner's report once ``record``'s attempt has ended."""
    running = runner.tasks.get(key_of(record))
    if running is not None:
        await asyncio.wait([running])
    report = runner.take_report()
    assert report is not None
    return report


def the_completion(report: dispatch_pb2.PoolReport, record: task_record_pb2.TaskRecord) -> int:
    (c,) = [c for c in report.completed if c.ref.task_id == record.id]
    assert (c.success, c.retryable, c.failure.type) == (False, False, "Cancelled")
    return int(c.cancel_step)


async def test_a_cancel_before_the_attempt_ran_at_all(bodies: Bodies) -> None:
    runner = Runner(concurrency=1, default_timeout=30, worker="w")
    record = make_record("unit.recorded", "a")
    runner.submit(record)
    runner.cancel(key_of(record))  # its coroutine has not run yet
    report = await ended(runner, record)
    assert the_completion(report, record) == NOT_STARTED
    assert not report.started and not report.released and bodies.ran == []
    runner.close()


async def test_a_record_dispatched_with_its_flag_set_never_starts(bodies: Bodies) -> None:
    runner = Runner(concurrency=1, default_timeout=30, worker="w")
    record = make_record("unit.recorded", "a")
    record.cancel_requested = True
    runner.submit(record)
    report = await ended(runner, record)
    assert the_completion(report, record) == NOT_STARTED
    assert not report.started and bodies.ran == []
    runner.close()


async def test_a_cancel_while_it_waits_for_a_slot(bodies: Bodies) -> None:
    runner = Runner(concurrency=1, default_timeout=30, worker="w")
    first, second = make_record("unit.recorded", "first"), make_record("unit.recorded", "second")
    runner.submit(first)
    await bodies.began.wait()
    runner.submit(second)
    await asyncio.sleep(0)  # one turn of the loop: its coroutine runs, up to the slot
    assert key_of(second) in runner.waiting
    runner.cancel(key_of(second))
    report = await ended(runner, second)
    assert the_completion(report, second) == NOT_STARTED
    assert [s.task_id for s in report.started] == [first.id]
    bodies.gate.set()
    await ended(runner, first)
    assert bodies.ran == ["first"]
    runner.close()


async def test_a_cancel_while_its_start_notice_goes_out(bodies: Bodies) -> None:
    """With a flusher, the body waits for its start notice to be on the pipe: a
    cancel meanwhile stops it there, and the notice is followed by NOT_STARTED."""
    changed = asyncio.Event()
    runner = Runner(concurrency=1, default_timeout=30, worker="w", on_change=changed.set)
    record = make_record("unit.recorded", "a")
    runner.submit(record)
    await changed.wait()  # the start notice is in the report; never flushed
    assert [s.task_id for s in runner.report.started] == [record.id]
    runner.cancel(key_of(record))
    report = await ended(runner, record)
    assert the_completion(report, record) == NOT_STARTED
    assert bodies.ran == []
    runner.close()


async def test_a_cancel_after_the_body_began_is_not_called_not_started(bodies: Bodies) -> None:
    runner = Runner(concurrency=1, default_timeout=30, worker="w", cancel_grace=0)
    record = make_record("unit.recorded", "a")
    runner.submit(record)
    await bodies.began.wait()
    runner.cancel(key_of(record))
    report = await ended(runner, record)
    assert the_completion(report, record) == task_pb2.CANCEL_STEP_ASYNCIO
    assert bodies.ran == ["a"]
    runner.close()


# ------------------------------------------------------------ the manager


def manager_workers() -> tuple[Workers, Outbox]:
    settings = Settings()
    pool = PoolState(settings, pool_id="p")
    pool.state = WorkerState.RUNNING
    outbox = Outbox()
    return Workers(settings, pool, outbox, Background("worker-pool"), StoreOutlets(settings)), outbox


def flagged(record: task_record_pb2.TaskRecord) -> task_record_pb2.TaskRecord:
    """The flagged copy of ``record``'s dispatch the store sends with its cancel."""
    copy = task_record_pb2.TaskRecord()
    copy.CopyFrom(record)
    copy.cancel_requested = True
    return copy


async def test_a_flagged_copy_the_manager_holds_nothing_of_ends_not_started() -> None:
    """The store sends a dispatched attempt's cancel as a flagged copy of its
    dispatch, which may overtake the dispatch: the manager reports the attempt
    not started, and drops the dispatch that comes after as a second copy."""
    workers, outbox = manager_workers()
    record = make_record("add", 1, 2)
    workers.route(dispatch_pb2.Dispatch(tasks=[flagged(record)]))
    report = outbox.take()
    assert the_completion(report, record) == NOT_STARTED
    assert report.completed[0].ref.lease_token == record.lease_token
    workers.route(dispatch_pb2.Dispatch(tasks=[record]))
    # Routed, it would go back to the queue (no worker here to take it): it is dropped.
    late = outbox.take()
    assert not (late.completed or late.released or late.started), late


async def test_a_dispatch_while_a_live_worker_is_started_again_waits_for_it() -> None:
    """While a worker that died is started again (a fork server's round trip), an
    attempt dispatched with no other slot waits for the replacement instead of going
    back to the queue (each bounce is a new attempt); if the replacement will not
    come, it goes back once."""
    workers, outbox = manager_workers()
    record = make_record("add", 1, 2)
    workers._respawning.add(0)
    workers.route(dispatch_pb2.Dispatch(tasks=[record]))
    assert not outbox.take().released
    assert [t.id for t in workers._parked.tasks] == [record.id]
    workers._release_parked()
    assert [r.ref.task_id for r in outbox.take().released] == [record.id]
    # With nobody being started again: back to the queue at once, as before.
    workers.route(dispatch_pb2.Dispatch(tasks=[make_record("add", 3, 4)]))
    assert len(outbox.take().released) == 1


async def test_the_earliest_ended_attempt_is_forgotten_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The manager remembers FINISHED_REMEMBERED ended attempts: past that the
    earliest goes (a late dispatch of it is routed like any other), and one ended
    again keeps its place."""
    monkeypatch.setattr(processes, "FINISHED_REMEMBERED", 2)
    workers, outbox = manager_workers()
    a, b, c = (make_record("add", i, i) for i in range(3))
    workers.route(dispatch_pb2.Dispatch(tasks=[flagged(a), flagged(b)]))
    # A worker's word that a ended, once more: a is not remembered any later for it.
    again = dispatch_pb2.PoolReport(completed=[leases_pb2.Completion(ref=ref_of(a, ""))])
    workers._apply_worker_report(cast(Any, SimpleNamespace(held={})), again)
    workers.route(dispatch_pb2.Dispatch(tasks=[flagged(c)]))
    outbox.take()
    workers.route(dispatch_pb2.Dispatch(tasks=[b]))
    assert not outbox.take().released  # b is still remembered: its dispatch is dropped
    workers.route(dispatch_pb2.Dispatch(tasks=[a]))
    # a is forgotten: routed, with no worker here, it goes back to the queue.
    assert [r.ref.task_id for r in outbox.take().released] == [a.id]
