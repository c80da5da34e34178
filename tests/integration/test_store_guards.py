# mypy: disable-error-code="comparison-overlap,list-item,arg-type"
"""Guards of the result-store and the scheduler on a real PostgreSQL (in-process store)."""

from __future__ import annotations

from typing import Any

import pytest
from support.records import submitted_task as task
from support.waiting import wait_until_async

from taskyard.bus.v1 import envelope_pb2, leases_pb2, pools_pb2, queues_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import contract, ids, rpc
from taskyard.core.priority import Priority
from taskyard.core.states import TaskState as S
from taskyard.scheduler import pauses
from taskyard.scheduler.lanes import Lanes, Ref

pytestmark = pytest.mark.asyncio


class StoreRequester:
    """The scheduler's Requester, answered by the in-process store's routes."""

    def __init__(self, store: Any) -> None:
        self.routes = rpc.route_table(store.routes())
        self.kinds: list[int] = []
        self.before_reply: Any = None

    async def call(self, method: contract.Method[Any, Any], msg: Any, **_: Any) -> Any:
        self.kinds.append(method.kind)
        reply = await self.routes[method.kind].handler(msg, envelope_pb2.Envelope())
        if self.before_reply is not None:
            self.before_reply()
        return reply


async def queue_op(store: Any, op: int, queue: str) -> queues_pb2.QueueOpReply:
    reply: queues_pb2.QueueOpReply = await store.ops.queue_op(queues_pb2.QueueOpRequest(op=op, queue=queue))
    return reply


def ref(queue: str) -> Ref:
    return Ref(id=ids.new_task_id(), name="add", priority=Priority.NORMAL, queue=queue)


# --- 1: a lost queue.resumed event ------------------------------------------------
async def test_reload_reconcile_resumes_a_queue_whose_resume_event_was_lost(result_store: Any) -> None:
    await queue_op(result_store, queues_pb2.QUEUE_OP_PAUSE, "mail")
    req = StoreRequester(result_store)
    lanes = Lanes()
    assert await pauses.load(req, lanes) is False
    assert lanes.paused == {"mail"}
    lanes.push(ref("mail"))
    assert len(lanes) == 0 and lanes.parked("mail") == 1
    # Resumed in the store; the queue.resumed event never reaches this scheduler.
    await queue_op(result_store, queues_pb2.QUEUE_OP_RESUME, "mail")
    assert await pauses.load(req, lanes) is True
    assert lanes.paused == set() and len(lanes) == 1
    # Paused again in the store, event lost too: the next reconcile parks it.
    await queue_op(result_store, queues_pb2.QUEUE_OP_PAUSE, "mail")
    assert await pauses.load(req, lanes) is False
    assert lanes.paused == {"mail"} and len(lanes) == 0 and lanes.parked("mail") == 1


async def test_reload_reconcile_yields_to_an_event_applied_meanwhile(result_store: Any) -> None:
    req = StoreRequester(result_store)
    lanes = Lanes()
    # The reply says "nothing paused", but a queue.paused event arrived while it was out.
    req.before_reply = lambda: lanes.pause("mail")
    await pauses.load(req, lanes)
    assert lanes.paused == {"mail"}


async def test_paused_only_status_reads_only_the_names(result_store: Any) -> None:
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[task(queue="mail")]))
    await queue_op(result_store, queues_pb2.QUEUE_OP_PAUSE, "mail")
    reply = await result_store.ops.status(queues_pb2.QueueStatusRequest(paused_only=True))
    assert list(reply.paused) == ["mail"] and len(reply.queues) == 0
    full = await result_store.ops.status(queues_pb2.QueueStatusRequest())
    assert list(full.paused) == ["mail"] and [q.name for q in full.queues] == ["mail"]


# --- a running task whose cancel was requested -------------------------------------
async def running_with_cancel_requested(store: Any, **kw: Any) -> tr.TaskRecord:
    """A RUNNING task (leased with token "tok", started) whose cancel was requested,
    plus a dependent waiting on it."""
    t = task(**kw)
    dep = task(depends_on=[t.id])
    await store.insert(tasks_pb2.InsertTasksRequest(tasks=[t, dep]))
    await grant_lease(store, t.id)
    r = await store.report(leases_pb2.ReportRequest(started=[attempt(t.id)]))
    assert list(r.started) == [t.id]
    out = await store.cancel(tasks_pb2.CancelTasksRequest(ids=[t.id], reason="stop it"))
    assert out.outcomes[0].flagged
    return dep


async def grant_lease(store: Any, t: str) -> None:
    """Lease ``t`` to pool-1 under the token ``attempt`` names."""
    await store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id="pool-1", lease_ms=30_000, leases=[leases_pb2.Lease(task_id=t, lease_token="tok")]
        )
    )


def attempt(t: str) -> tr.AttemptRef:
    return tr.AttemptRef(task_id=t, attempt=1, lease_token="tok", worker_id="w-1")


async def row(store: Any, t: str) -> tr.TaskRecord:
    rec: tr.TaskRecord = (await store.get(tasks_pb2.GetTasksRequest(ids=[t]))).tasks[0]
    return rec


async def dependent_cancelled(store: Any, t: str, within: float = 5.0) -> tr.TaskRecord:
    rec = await row(store, t)

    async def cancelled() -> bool:
        nonlocal rec
        rec = await row(store, t)
        return rec.state == S.CANCELLED

    await wait_until_async(cancelled, within, lambda: f"{t} to be cancelled (is {S(rec.state).name})")
    return rec


async def test_release_of_a_cancel_requested_task_cancels_it(result_store: Any) -> None:
    dep = await running_with_cancel_requested(result_store)
    t = dep.depends_on[0]
    r = await result_store.report(
        leases_pb2.ReportRequest(released=[leases_pb2.Release(ref=attempt(t), resume_requested=True)])
    )
    assert list(r.released) == [t] and r.refused == 0
    rec = await row(result_store, t)
    assert rec.state == S.CANCELLED and rec.cancel_step == 3  # CANCEL_STEP_ASYNCIO
    assert rec.cancel_reason == "stop it" and not rec.resume_requested and rec.lease_token == ""
    assert (await dependent_cancelled(result_store, dep.id)).cancel_reason == f"dependency {t} cancelled"


async def test_release_without_a_cancel_request_still_requeues(result_store: Any) -> None:
    t = task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[t]))
    await grant_lease(result_store, t.id)
    r = await result_store.report(
        leases_pb2.ReportRequest(released=[leases_pb2.Release(ref=attempt(t.id), resume_requested=True)])
    )
    assert list(r.released) == [t.id]
    rec = await row(result_store, t.id)
    # A new attempt that spends no retry (the drained body ran).
    assert rec.state == S.QUEUED and rec.resume_requested and rec.attempt == 2 and rec.pool_id == ""
    assert rec.uncharged_attempts == 1


async def test_a_not_started_release_never_requeues_a_running_task(result_store: Any) -> None:
    """A scheduler whose PAIR send failed releases its lease as "not started"; if the
    pool got the dispatch from the store's stream and started it, the release is
    refused: the attempt is the death/lapse path's to count."""
    started, fresh = task(), task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[started, fresh]))
    for t in (started, fresh):
        await grant_lease(result_store, t.id)
    await result_store.report(leases_pb2.ReportRequest(started=[attempt(started.id)]))
    r = await result_store.report(
        leases_pb2.ReportRequest(
            released=[leases_pb2.Release(ref=attempt(started.id)), leases_pb2.Release(ref=attempt(fresh.id))]
        )
    )
    assert list(r.released) == [fresh.id] and r.refused == 1
    assert (await row(result_store, started.id)).state == S.RUNNING
    assert (await row(result_store, fresh.id)).state == S.QUEUED


async def test_failure_of_a_cancel_requested_task_cancels_instead_of_retrying(result_store: Any) -> None:
    dep = await running_with_cancel_requested(result_store, max_retries=3)
    t = dep.depends_on[0]
    failure = leases_pb2.Completion(
        ref=attempt(t),
        success=False,
        retryable=True,
        failure={"type": "ValueError", "message": "boom", "traceback": "tb"},
    )
    r = await result_store.report(leases_pb2.ReportRequest(completed=[failure]))
    assert list(r.completed) == [t]
    rec = await row(result_store, t)
    assert rec.state == S.CANCELLED and rec.attempt == 1 and rec.cancel_step == 2  # FLAG
    assert rec.failure.type == "ValueError"
    await dependent_cancelled(result_store, dep.id)


async def test_death_of_a_cancel_requested_task_cancels_instead_of_retrying(result_store: Any) -> None:
    dep = await running_with_cancel_requested(result_store, max_retries=3)
    t = dep.depends_on[0]
    r = await result_store.report(
        leases_pb2.ReportRequest(died=[leases_pb2.Death(ref=attempt(t), started=True, max_retries=3)])
    )
    assert list(r.died) == [t]
    rec = await row(result_store, t)
    assert rec.state == S.CANCELLED and rec.attempt == 1 and rec.cancel_step == 4  # KILL
    await dependent_cancelled(result_store, dep.id)


# --- 4: children submitted after their parent was cancelled ------------------------
async def test_child_of_a_cancelled_parent_is_cancelled_at_insert(result_store: Any) -> None:
    parent = task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[parent]))
    await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[parent.id], reason="no"))
    child = task(parent_id=parent.id)
    after = task(depends_on=[child.id])
    reply = await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[child]))
    assert reply.tasks[0].created and reply.tasks[0].state == S.CANCELLED
    rec = await row(result_store, child.id)
    assert rec.cancel_reason == f"parent {parent.id} cancelled" and rec.cancel_step == 1
    # A dependent of the cancelled child follows it (it was a final of the insert).
    reply = await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[after]))
    assert reply.tasks[0].state == S.CANCELLED


async def test_child_of_a_parent_with_a_cancel_request_is_cancelled_at_insert(result_store: Any) -> None:
    dep = await running_with_cancel_requested(result_store)
    parent = dep.depends_on[0]
    child, sibling = task(parent_id=parent), task()
    reply = await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[child, sibling]))
    assert [t.state for t in reply.tasks] == [S.CANCELLED, S.QUEUED]


async def test_child_of_a_live_parent_is_inserted_as_usual(result_store: Any) -> None:
    parent = task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[parent]))
    reply = await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[task(parent_id=parent.id)]))
    assert reply.tasks[0].state == S.QUEUED


# --- 7: the fast path and paused queues ---------------------------------------------
async def test_fast_path_does_not_lease_in_a_paused_queue(result_store: Any) -> None:
    await queue_op(result_store, queues_pb2.QUEUE_OP_PAUSE, "mail")
    held, free = task(queue="mail"), task(queue="other")
    reply = await result_store.insert(
        tasks_pb2.InsertTasksRequest(
            tasks=[held, free],
            pool_id="pool-1",
            lease_ms=30_000,
            leases=[leases_pb2.Lease(task_id=t.id, lease_token=f"tok-{t.id}") for t in (held, free)],
        )
    )
    assert [t.id for t in reply.leased] == [free.id]
    assert [t.state for t in reply.tasks] == [S.QUEUED, S.ASSIGNED]
    rec = await row(result_store, held.id)
    assert rec.state == S.QUEUED and rec.lease_token == "" and rec.pool_id == ""


# --- 5: ClearQueue finals; retry and the cache --------------------------------------
@pytest.fixture
async def dev_store(store_settings: Any) -> Any:
    import dataclasses

    from taskyard.result_store.store import ResultStore

    store = await ResultStore.open(dataclasses.replace(store_settings, development=True))
    store.start()
    try:
        yield store
    finally:
        await store.close()


async def test_clear_queue_cancels_dependents_at_once_and_caches_the_records(dev_store: Any) -> None:
    a = task(queue="mail")
    b = task(depends_on=[a.id])  # another queue: not cleared itself
    await dev_store.insert(tasks_pb2.InsertTasksRequest(tasks=[a, b]))
    reply = await queue_op(dev_store, queues_pb2.QUEUE_OP_CLEAR, "mail")
    assert list(reply.ids) == [a.id]
    assert a.id in dev_store.cache  # a final of the write, like any cancel
    # The resolver follows right after the commit (well within the 30 s sweep).
    rec = await dependent_cancelled(dev_store, b.id, within=3.0)
    assert rec.cancel_reason == f"dependency {a.id} cancelled"


async def test_a_read_racing_a_retry_does_not_cache_the_old_failure(result_store: Any) -> None:
    t = task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[t]))
    await grant_lease(result_store, t.id)
    failure = leases_pb2.Completion(ref=attempt(t.id), success=False, retryable=False)
    await result_store.report(leases_pb2.ReportRequest(completed=[failure]))
    cache = result_store.cache
    cache.invalidate(t.id)
    epoch = cache.epoch
    old = await row(result_store, t.id)  # a read that fetched the row before the retry committed
    assert old.state == S.FAILURE
    # The retry's invalidation came between: the old FAILURE is not cached.
    await queue_op(result_store, queues_pb2.QUEUE_OP_RETRY, "")
    assert cache.put_if_current(old, epoch) is False and t.id not in cache
    assert (await row(result_store, t.id)).state == S.QUEUED


# --- 2: pause/resume replies still carry the counts (read after the commit) ---------
async def test_pause_reply_has_the_queue_counts(result_store: Any) -> None:
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[task(queue="mail"), task(queue="mail")]))
    reply = await queue_op(result_store, queues_pb2.QUEUE_OP_PAUSE, "mail")
    assert reply.queue.name == "mail" and reply.queue.paused and reply.queue.queued == 2
    reply = await queue_op(result_store, queues_pb2.QUEUE_OP_RESUME, "mail")
    assert not reply.queue.paused and reply.queue.queued == 2


# --- 3: a missing dependency or parent is refused before the writer --------------------
async def test_missing_refs_are_refused_outside_the_group_commit(result_store: Any) -> None:
    from taskyard.core import errors

    stats = result_store.committer.stats
    drains = stats.drains
    for bad in (task(depends_on=[ids.new_task_id()]), task(parent_id=ids.new_task_id())):
        with pytest.raises(errors.TaskyardError) as info:
            await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[bad]))
        assert info.value.code.name == "INVALID_ARGUMENT" and "no task" in str(info.value)
    assert stats.drains == drains and stats.failed_drains == 0  # never reached the writer
    ok = task()
    child = task(parent_id=ok.id)
    reply = await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[ok, child]))  # same request
    assert all(t.created for t in reply.tasks)


# --- 8: a lone cancel is atomic ----------------------------------------------------------
async def test_a_lone_cancel_that_fails_midway_changes_nothing(
    result_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from taskyard.core import errors
    from taskyard.result_store.writes import cancels

    parent = task()
    child = task(parent_id=parent.id)
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[parent, child]))

    async def broken(*args: Any) -> None:
        raise RuntimeError("children step failed")

    monkeypatch.setattr(cancels, "_cancel_children", broken)
    with pytest.raises(errors.TaskyardError):
        await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[parent.id], reason="no"))
    assert (await row(result_store, parent.id)).state == S.QUEUED  # rolled back with the rest
    monkeypatch.undo()
    reply = await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[parent.id], reason="no"))
    assert reply.outcomes[0].cancelled and list(reply.cancelled_children) == [child.id]


# --- 9: late_completions counts superseded attempts only ------------------------------
async def late_count(store: Any) -> int:

    counters = contract.STORE_COUNTERS
    reply = await StoreRequester(store).call(counters, counters.request(names=["late_completions"]))
    assert isinstance(reply, counters.reply)
    return int(reply.values["late_completions"])


async def test_duplicates_and_resent_reports_are_not_late(result_store: Any) -> None:
    t = task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[t]))
    await grant_lease(result_store, t.id)
    done = leases_pb2.Completion(ref=attempt(t.id), success=True, result_json=b"3")
    r = await result_store.report(leases_pb2.ReportRequest(completed=[done, done]))  # duplicate in one drain
    assert list(r.completed) == [t.id]
    await result_store.report(leases_pb2.ReportRequest(completed=[done]))  # re-sent after it committed
    assert await late_count(result_store) == 0
    stale = leases_pb2.Completion(
        ref=tr.AttemptRef(task_id=t.id, attempt=0, lease_token="old", worker_id="w-0"), success=True
    )
    await result_store.report(leases_pb2.ReportRequest(completed=[stale]))  # an older attempt: late
    assert await late_count(result_store) == 1


async def test_no_lease_for_a_draining_pool_and_its_hand_back(result_store: Any) -> None:
    """A pool beats DRAINING before stopping its workers: from then on neither the
    lease statement nor the insert fast path leases to it; what was leased to it
    before and never reached it goes back to the queue with its final hand-back."""
    early, late, born = task(), task(), task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[early, late]))
    lease = leases_pb2.LeaseTasksRequest(
        pool_id="pool-1", lease_ms=30_000, leases=[leases_pb2.Lease(task_id=early.id, lease_token="tok")]
    )
    assert [t.id for t in (await result_store.lease(lease)).tasks] == [early.id]
    await result_store.heartbeat(pools_pb2.HeartbeatRequest(pool_id="pool-1", state="DRAINING"))
    lease = leases_pb2.LeaseTasksRequest(
        pool_id="pool-1", lease_ms=30_000, leases=[leases_pb2.Lease(task_id=late.id, lease_token="tok2")]
    )
    assert not (await result_store.lease(lease)).tasks
    reply = await result_store.insert(
        tasks_pb2.InsertTasksRequest(
            tasks=[born],
            pool_id="pool-1",
            lease_ms=30_000,
            leases=[leases_pb2.Lease(task_id=born.id, lease_token="tok3")],
        )
    )
    assert reply.tasks[0].state == S.QUEUED and not reply.leased
    back = await result_store._submit(
        contract.STORE_RECONCILE, leases_pb2.ReconcileRequest(pool_ids=["pool-1"])
    )
    assert [r.id for r in back.released] == [early.id]
    assert (await row(result_store, early.id)).state == S.QUEUED
