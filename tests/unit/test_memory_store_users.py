"""Components tested against ``MemoryStore`` instead of a hand-written fake.

The in-memory store answers as the real one does (tests/integration/
test_store_contract.py runs one suite against both), so these tests drive the
scheduler's maintenance and the gateway's cancel through real store semantics
(leases lapsing, retries coming due, fencing, cancel outcomes) with a clock the
test moves, and no database.
"""

from __future__ import annotations

import functools

import pytest
from support.records import task as add_task

from taskyard.bus.v1 import counters_pb2, dispatch_pb2, leases_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import contract, errors, ids
from taskyard.core.clock import ManualClock, to_us
from taskyard.core.retry import RetryPolicy
from taskyard.gateway import cancels
from taskyard.result_store.testing.memory import MemoryStore
from taskyard.scheduler.dispatcher import Dispatcher
from taskyard.scheduler.lanes import Lanes
from taskyard.scheduler.maintenance import Maintenance
from taskyard.scheduler.pools import Pool, PoolRegistry
from taskyard.v1 import task_pb2, task_service_pb2

pytestmark = pytest.mark.asyncio

LEASE_MS = 30_000
RETRY_SECONDS = 5.0


task = functools.partial(add_task, args_json=b"")


async def _no_report(pool: Pool, report: dispatch_pb2.PoolReport) -> None:
    raise AssertionError("no pool reports in these tests")


def _maintenance(store: MemoryStore, lanes: Lanes) -> tuple[Maintenance, Dispatcher]:
    pools = PoolRegistry(max_message_bytes=1 << 20, on_report=_no_report, on_change=lambda: None)
    dispatcher = Dispatcher(lanes, pools, store, lease_ms=LEASE_MS)
    maintenance = Maintenance(
        lanes=lanes,
        pools=pools,
        dispatcher=dispatcher,
        store=store,
        policy=RetryPolicy(base_seconds=RETRY_SECONDS, jitter=0.0),
        lease_ms=LEASE_MS,
        default_max_retries=2,
    )
    return maintenance, dispatcher


async def _get(store: MemoryStore, task_id: str) -> tr.TaskRecord:
    (rec,) = (await store.call(contract.STORE_GET, tasks_pb2.GetTasksRequest(ids=[task_id]))).tasks
    return rec


async def test_maintenance_puts_lapsed_leases_and_due_retries_back_in_the_lanes() -> None:
    clock = ManualClock()
    store = MemoryStore(clock=clock, task_names=["add"])
    lanes = Lanes()
    maintenance, dispatcher = _maintenance(store, lanes)
    unstarted, running = task(), task(max_retries=-1)
    await store.call(contract.STORE_INSERT, tasks_pb2.InsertTasksRequest(tasks=[unstarted, running]))
    leases = [leases_pb2.Lease(task_id=t.id, lease_token="tok") for t in (unstarted, running)]
    await store.call(
        contract.STORE_LEASE, leases_pb2.LeaseTasksRequest(pool_id="p", lease_ms=LEASE_MS, leases=leases)
    )
    await store.call(
        contract.STORE_REPORT,
        leases_pb2.ReportRequest(started=[tr.AttemptRef(task_id=running.id, attempt=1, lease_token="tok")]),
    )

    await maintenance.rescue_and_promote()
    assert len(lanes) == 0 and not dispatcher.wake.is_set()

    clock.advance(LEASE_MS / 1000 + 1)
    await maintenance.rescue_and_promote()
    # Never started: queued again at once. Started: a failed attempt, due after the backoff.
    assert unstarted.id in lanes and running.id not in lanes and dispatcher.wake.is_set()
    rec = await _get(store, running.id)
    assert (rec.state, rec.attempt, rec.failure.type) == (
        task_pb2.TASK_STATE_RETRYING,
        2,
        "WorkerProcessDied",
    )
    assert rec.run_at_us == to_us(clock.now() + RETRY_SECONDS)

    dispatcher.wake.clear()
    clock.advance(RETRY_SECONDS)
    await maintenance.rescue_and_promote()
    assert running.id in lanes and dispatcher.wake.is_set()
    assert (await _get(store, running.id)).state == task_pb2.TASK_STATE_QUEUED


async def test_maintenance_queues_a_task_when_its_eta_comes() -> None:
    clock = ManualClock()
    store = MemoryStore(clock=clock, task_names=["add"])
    lanes = Lanes()
    maintenance, _ = _maintenance(store, lanes)
    later = task(state=task_pb2.TASK_STATE_SCHEDULED, run_at_us=to_us(clock.now() + 60))
    await store.call(contract.STORE_INSERT, tasks_pb2.InsertTasksRequest(tasks=[later]))
    await maintenance.rescue_and_promote()
    assert later.id not in lanes
    clock.advance(60)
    await maintenance.rescue_and_promote()
    assert later.id in lanes


async def _cancel(store: MemoryStore, task_id: str) -> task_service_pb2.CancelTaskResponse:
    async def wait(
        request: task_service_pb2.WaitTaskRequest, remaining: float | None
    ) -> task_service_pb2.WaitTaskResponse:
        raise AssertionError("a cancel without a wait never waits")

    return await cancels.cancel(
        task_service_pb2.CancelTaskRequest(id=task_id, reason="not needed"),
        task_id,
        store=store,
        wait=wait,
        get=lambda tid: _get(store, tid),
        client_remaining=None,
    )


async def test_the_gateways_cancel_tells_each_outcome() -> None:
    store = MemoryStore(task_names=["add"])
    queued, running = task(), task()
    await store.call(contract.STORE_INSERT, tasks_pb2.InsertTasksRequest(tasks=[queued, running]))
    await store.call(
        contract.STORE_LEASE,
        leases_pb2.LeaseTasksRequest(
            pool_id="p", leases=[leases_pb2.Lease(task_id=running.id, lease_token="t")]
        ),
    )
    await store.call(
        contract.STORE_REPORT,
        leases_pb2.ReportRequest(started=[tr.AttemptRef(task_id=running.id, attempt=1, lease_token="t")]),
    )

    done = await _cancel(store, queued.id)
    assert (done.cancelled, done.step, done.task.state) == (
        True,
        task_pb2.CANCEL_STEP_NOT_STARTED,
        task_pb2.TASK_STATE_CANCELLED,
    )
    flagged = await _cancel(store, running.id)
    assert (flagged.cancelled, flagged.task.state, flagged.task.cancel_requested) == (
        False,
        task_pb2.TASK_STATE_RUNNING,
        True,
    )
    with pytest.raises(errors.TaskyardError) as final:
        await _cancel(store, queued.id)
    assert (final.value.code, final.value.reason) == (errors.Code.FAILED_PRECONDITION, "TASK_ALREADY_FINAL")
    with pytest.raises(errors.TaskyardError) as missing:
        await _cancel(store, ids.new_task_id())
    assert missing.value.code is errors.Code.NOT_FOUND


async def test_what_the_memory_store_does_not_fake_is_unimplemented() -> None:
    store = MemoryStore(task_names=["add"])
    with pytest.raises(errors.TaskyardError) as counters:
        await store.call(contract.STORE_COUNTERS, counters_pb2.CountersRequest())
    assert counters.value.code is errors.Code.UNIMPLEMENTED
    first = task()
    await store.call(contract.STORE_INSERT, tasks_pb2.InsertTasksRequest(tasks=[first]))
    with pytest.raises(errors.TaskyardError) as graph:
        await store.call(
            contract.STORE_INSERT, tasks_pb2.InsertTasksRequest(tasks=[task(depends_on=[first.id])])
        )
    assert graph.value.code is errors.Code.UNIMPLEMENTED
