"""The durable event log in the store (real PostgreSQL): written with each
change, read in commit order below the watermark, purged by retention."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest
from support.records import submitted_task
from support.waiting import wait_until_async

from taskyard.bus.v1 import event_log_pb2, leases_pb2, pools_pb2, queues_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import errors, event_cursor
from taskyard.core.clock import ManualClock
from taskyard.result_store.queries import bind
from taskyard.result_store.retention import Purger
from taskyard.v1 import event_service_pb2 as pub
from taskyard.v1 import task_pb2

pytestmark = pytest.mark.asyncio
Read = event_log_pb2.ReadEventsRequest


async def settled(store: Any) -> None:
    """Wait until every transaction committed so far is below the watermark.

    The watermark is the cluster's oldest running transaction, and the other
    tests' databases share the cluster: a clone or a held transaction there
    hides this test's events for a moment."""
    mark = int(await store.pool.fetchval("SELECT pg_current_xact_id()::text"))

    async def passed() -> bool:
        xmin = await store.pool.fetchval("SELECT pg_snapshot_xmin(pg_current_snapshot())::text")
        return int(xmin) > mark

    await wait_until_async(passed, 30, "the watermark to pass this test's transactions")


async def read_all(
    store: Any, after: str = "", *, oldest: bool = False, settle: bool = True
) -> tuple[list[pub.Event], str]:
    if settle:
        await settled(store)
    events: list[pub.Event] = []
    req = Read(after=after, oldest=oldest, limit=2)  # small pages: the paging is read too
    while True:
        reply = await store._read_events(req)
        events.extend(reply.events)
        if not reply.events:
            return events, reply.cursor
        req = Read(after=reply.cursor, limit=2)


async def test_a_change_and_its_events_commit_together_in_order(result_store: Any) -> None:
    start = await result_store._read_events(Read())  # a stream that begins now
    assert not start.events and start.cursor
    rec = submitted_task(queue="q1", priority=task_pb2.PRIORITY_HIGH)
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[rec]))
    await result_store.ops.queue_op(queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_PAUSE, queue="q1"))
    events, cursor = await read_all(result_store, start.cursor)
    assert [e.type for e in events] == ["task.queued", "queue.paused"]
    queued, paused = events
    assert (queued.kind, queued.task_id, queued.task_name, queued.queue) == (
        pub.EVENT_KIND_TASK,
        rec.id,
        "add",
        "q1",
    )
    assert queued.state == task_pb2.TASK_STATE_QUEUED and queued.root_id == rec.id
    assert queued.priority == task_pb2.PRIORITY_HIGH and queued.time.seconds > 0
    assert (paused.kind, paused.queue, paused.task_id) == (pub.EVENT_KIND_QUEUE, "q1", "")
    cursors = [e.cursor for e in events]
    assert cursors == sorted(cursors) and cursor >= cursors[-1]
    # From the oldest: the same events; after the last: nothing.
    assert [e.cursor for e in (await read_all(result_store, oldest=True))[0]] == cursors
    assert (await read_all(result_store, cursors[-1]))[0] == []


async def test_the_watermark_hides_a_running_transaction_until_it_commits(
    result_store: Any, store_settings: Any
) -> None:
    start = (await result_store._read_events(Read())).cursor
    held = await asyncpg.connect(store_settings.database_url)
    try:
        tx = held.transaction()
        await tx.start()
        # An older transaction's event, not committed yet.
        await held.execute("INSERT INTO events (kind, type, queue) VALUES (4, 'queue.paused', 'held')")
        rec = submitted_task()
        await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[rec]))  # commits after it started
        hidden, cursor = await read_all(result_store, start, settle=False)
        assert hidden == []  # the newer commit waits behind the running transaction
        assert cursor <= event_cursor.encode(int(await held.fetchval("SELECT pg_current_xact_id()::text")), 0)
        await tx.commit()
        events, _ = await read_all(result_store, cursor)
        assert [(e.type, e.task_id or e.queue) for e in events] == [
            ("queue.paused", "held"),
            ("task.queued", rec.id),
        ]
    finally:
        await held.close()


async def test_retention_expires_old_cursors(result_store: Any) -> None:
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[submitted_task(), submitted_task()]))
    events, _ = await read_all(result_store, oldest=True)
    assert len(events) == 2
    purger = Purger(result_store.pool, ManualClock(4e9), retention_days=30, chunk=1)
    assert await purger.purge_events() == 2
    with pytest.raises(errors.TaskyardError) as refused:
        await result_store._read_events(Read(after=event_cursor.ORIGIN_CURSOR))
    assert (refused.value.code, refused.value.reason) == (errors.Code.OUT_OF_RANGE, "CURSOR_EXPIRED")
    # The last purged cursor is still good, and so is starting from the oldest kept.
    assert (await read_all(result_store, events[-1].cursor))[0] == []
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[submitted_task()]))
    assert len((await read_all(result_store, oldest=True))[0]) == 1


async def test_an_event_committed_after_the_purge_looked_is_kept(result_store: Any) -> None:
    """The purge reads its bound, then deletes below it: with no event recent
    enough to bound it, its bound is the watermark, so what commits in between
    stays (all of the log went, once: the store's first purge ran as it started)."""
    bound = await result_store.pool.fetchrow(*bind("event_purge_bound", before_us=4_000_000_000_000_000))
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[submitted_task()]))
    await settled(result_store)
    purged = await result_store.pool.fetchval(
        *bind("purge_events", bound_xid=bound["xid"], bound_id=bound["id"], limit=10)
    )
    assert purged is None  # nothing deleted, the horizon unmoved
    assert await result_store.pool.fetchval("SELECT count(*) FROM events") == 1


async def test_a_malformed_cursor_is_invalid(result_store: Any) -> None:
    with pytest.raises(errors.TaskyardError) as refused:
        await result_store._read_events(Read(after="nope"))
    assert refused.value.code is errors.Code.INVALID_ARGUMENT


async def test_heartbeats_log_the_lifecycle_of_worker_processes_and_the_pool(result_store: Any) -> None:
    start = await result_store._read_events(Read())

    def beat(state: str, *procs: tuple[int, int, str]) -> pools_pb2.HeartbeatRequest:
        return pools_pb2.HeartbeatRequest(
            pool_id="pool-life",
            server_name="s",
            state=state,
            is_running=state == "RUNNING",
            processes=[pools_pb2.WorkerProcess(index=i, pid=pid, state=st) for i, pid, st in procs],
        )

    await result_store.heartbeat(beat("RUNNING", (0, 10, "idle"), (1, 11, "idle")))
    await result_store.heartbeat(beat("RUNNING", (0, 10, "busy"), (1, 11, "idle")))  # nothing new
    await result_store.heartbeat(beat("RUNNING", (0, 10, "recycling"), (1, 12, "starting")))  # 11 died
    await result_store.heartbeat(beat("RUNNING", (0, 13, "idle"), (1, 12, "idle")))  # 10 recycled
    await result_store.heartbeat(beat("STOPPING", (0, 13, "stopping"), (1, 12, "stopping")))
    await result_store.heartbeat(beat("STOPPED"))
    await result_store.heartbeat(beat("STOPPED"))  # the pool stops once
    events, _ = await read_all(result_store, start.cursor)
    got = [(e.type, e.worker_id or e.pool_id) for e in events]
    assert got == [
        ("pool.registered", "pool-life"),
        ("worker.started", "pool-life/w0:10"),
        ("worker.started", "pool-life/w1:11"),
        ("worker.started", "pool-life/w1:12"),
        ("worker.died", "pool-life/w1:11"),
        ("worker.started", "pool-life/w0:13"),
        ("worker.stopped", "pool-life/w0:10"),
        ("worker.stopped", "pool-life/w0:13"),
        ("worker.stopped", "pool-life/w1:12"),
        ("pool.stopped", "pool-life"),
    ]
    assert {e.kind for e in events if e.type.startswith("worker.")} == {pub.EVENT_KIND_WORKER}
    assert all(e.pool_id == "pool-life" for e in events)


Summarize = event_log_pb2.SummarizeEventsRequest


async def test_a_summary_counts_the_events_after_its_cursor_in_the_database(result_store: Any) -> None:
    start = await result_store._summarize_events(Summarize())  # a pulse that begins now
    assert start.caught_up and start.events == 0 and start.cursor
    done, failed, waiting = (submitted_task(queue="q1") for _ in range(3))
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[done, failed, waiting]))
    await result_store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id="pool",
            lease_ms=60_000,
            leases=[leases_pb2.Lease(task_id=t.id, lease_token="tok") for t in (done, failed)],
        )
    )

    def ref(rec: tr.TaskRecord) -> tr.AttemptRef:
        return tr.AttemptRef(task_id=rec.id, attempt=1, lease_token="tok", worker_id="w1")

    await result_store.report(
        leases_pb2.ReportRequest(
            completed=[
                leases_pb2.Completion(ref=ref(done), success=True, result_json=b"5"),
                leases_pb2.Completion(
                    ref=ref(failed), failure=task_pb2.TaskFailure(type="ValueError", message="no")
                ),
            ]
        )
    )
    await result_store.ops.queue_op(queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_PAUSE, queue="q1"))
    events, log_cursor = await read_all(result_store, start.cursor)

    summary = await result_store._summarize_events(
        Summarize(after=start.cursor, max_task_ids=10, max_entered=10)
    )
    # The same window as a read of the log: the same events, up to the same cursor.
    assert summary.caught_up and summary.events == len(events) and summary.cursor == log_cursor
    assert sorted(summary.task_ids) == sorted({done.id, failed.id, waiting.id})
    assert {(e.queue, e.task_name, e.state) for e in summary.entered} == {
        ("q1", "add", e.state) for e in events if e.kind == pub.EVENT_KIND_TASK
    }
    assert not summary.more
    assert set(summary.kinds) == {pub.EVENT_KIND_TASK, pub.EVENT_KIND_QUEUE}
    finals = sorted(zip(summary.finished_states, summary.finished_at_us, summary.latency_us, strict=True))
    assert [s for s, _, _ in finals] == [task_pb2.TASK_STATE_SUCCESS, task_pb2.TASK_STATE_FAILURE]
    final_events = sorted(
        (e.state, e.time.seconds * 1_000_000 + e.time.nanos // 1000) for e in events if e.state in (6, 7)
    )
    assert [(s, at) for s, at, _ in finals] == final_events
    assert all(0 <= latency < 60_000_000 for _, _, latency in finals)

    # Caps: past them the lists stop and the summary says so.
    capped = await result_store._summarize_events(
        Summarize(after=start.cursor, max_task_ids=2, max_entered=1)
    )
    assert len(capped.task_ids) == 2 and len(capped.entered) == 1 and capped.more
    # A limit: the cursor stops at the last event summarized, and the rest follows.
    first = await result_store._summarize_events(Summarize(after=start.cursor, limit=2, max_task_ids=10))
    assert not first.caught_up and first.events == 2 and first.cursor == events[1].cursor
    rest = await result_store._summarize_events(Summarize(after=first.cursor, max_task_ids=10))
    assert rest.caught_up and rest.events == len(events) - 2
    # Nothing new: an empty summary that keeps its place.
    idle = await result_store._summarize_events(Summarize(after=summary.cursor))
    assert idle.caught_up and idle.events == 0 and idle.cursor >= summary.cursor and not idle.kinds


async def test_a_summary_refuses_an_expired_cursor(result_store: Any) -> None:
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[submitted_task()]))
    await settled(result_store)  # retention keeps what a running transaction may still precede
    purger = Purger(result_store.pool, ManualClock(4e9), retention_days=30, chunk=10)
    assert await purger.purge_events() == 1
    with pytest.raises(errors.TaskyardError) as refused:
        await result_store._summarize_events(Summarize(after=event_cursor.ORIGIN_CURSOR))
    assert (refused.value.code, refused.value.reason) == (errors.Code.OUT_OF_RANGE, "CURSOR_EXPIRED")


async def test_the_statement_that_changes_a_task_logs_its_events(result_store: Any) -> None:
    """A task's events are written by its statement (the tasks table's triggers):
    one per state change, none for a change that keeps the state, also for a
    change made by plain SQL outside the store."""
    start = await result_store._read_events(Read())
    born_leased, plain = submitted_task(queue="q1"), submitted_task(queue="q1")
    await result_store.insert(
        tasks_pb2.InsertTasksRequest(
            tasks=[born_leased],
            pool_id="pool-a",
            lease_ms=60_000,
            leases=[leases_pb2.Lease(task_id=born_leased.id, lease_token="tok")],
        )
    )
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[plain]))
    async with result_store.pool.acquire() as conn:
        await conn.execute('UPDATE tasks SET labels = \'{"k": "v"}\' WHERE id = $1', plain.id)
        await conn.execute(
            "UPDATE tasks SET state = 'ASSIGNED', worker_id = 'pool-b/w3:77', lease_token = 't'"
            " WHERE id = $1",
            plain.id,
        )
        await conn.execute("UPDATE tasks SET state = 'RUNNING' WHERE id = $1", plain.id)
        await conn.execute(
            "UPDATE tasks SET state = 'FAILURE', failure_type = 'ValueError', lease_token = '' WHERE id = $1",
            plain.id,
        )
    events, _ = await read_all(result_store, start.cursor)
    seen = [(e.task_id, e.type, e.state) for e in events]
    assert seen == [
        (born_leased.id, "task.queued", task_pb2.TASK_STATE_QUEUED),
        (born_leased.id, "task.assigned", task_pb2.TASK_STATE_ASSIGNED),
        (plain.id, "task.queued", task_pb2.TASK_STATE_QUEUED),
        (plain.id, "task.assigned", task_pb2.TASK_STATE_ASSIGNED),
        (plain.id, "task.started", task_pb2.TASK_STATE_RUNNING),
        (plain.id, "task.failed", task_pb2.TASK_STATE_FAILURE),
    ]
    assigned, failed = events[3], events[5]
    assert (assigned.worker_id, assigned.pool_id) == ("pool-b/w3:77", "pool-b")
    assert (events[0].worker_id, events[0].pool_id) == ("", "")
    assert dict(failed.attributes) == {"failure_type": "ValueError"}
    assert all(e.root_id == e.task_id and e.queue == "q1" and e.attempt == 1 for e in events)
