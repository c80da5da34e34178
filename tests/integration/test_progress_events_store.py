"""Progress on the durable event log (real PostgreSQL, in-process store): a log
batch whose context sets a running task's progress logs one ``task.progress``
event per task, in the batch's own transaction (docs/events.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from integration.test_event_log_store import Read, read_all
from support.records import submitted_task

from taskyard.bus.v1 import logs_pb2, tasks_pb2
from taskyard.v1 import event_service_pb2 as pub
from taskyard.v1 import task_pb2

pytestmark = pytest.mark.asyncio


def update(tid: str, *pairs: Any, attempt: int = 1) -> logs_pb2.ContextUpdate:
    return logs_pb2.ContextUpdate(task_id=tid, attempt=attempt, patch_json=json.dumps(list(pairs)).encode())


def progress(fraction: float, message: str) -> list[Any]:
    return [["progress"], {"fraction": fraction, "message": message, "at_us": 1}]


async def running(store: Any, *, queue: str = "q1", worker: str = "pool-a/w0:7") -> str:
    rec = submitted_task(queue=queue, priority=task_pb2.PRIORITY_HIGH)
    await store.insert(tasks_pb2.InsertTasksRequest(tasks=[rec]))
    async with store.pool.acquire() as conn:
        assign = "UPDATE tasks SET state = 'ASSIGNED', worker_id = $2, lease_token = 't' WHERE id = $1"
        await conn.execute(assign, rec.id, worker)
        await conn.execute("UPDATE tasks SET state = 'RUNNING' WHERE id = $1", rec.id)
    return rec.id


async def progress_events(store: Any, after: str) -> list[pub.Event]:
    events, _ = await read_all(store, after)
    return [e for e in events if e.type == "task.progress"]


async def test_a_burst_of_progress_is_one_event_with_the_last_of_it(result_store: Any) -> None:
    a, b = await running(result_store), await running(result_store, queue="q2")
    start = await result_store._read_events(Read())
    # Lines and context in one batch (one transaction), two reports for a, none for b.
    await result_store.ops.write_logs(
        logs_pb2.LogBatch(
            lines=[logs_pb2.LogLine(task_id=a, attempt=1, at_us=1, type="progress", message="25% a quarter")],
            context=[
                update(a, progress(0.25, "a quarter")),
                update(b, [["step"], 3]),
                update(a, progress(0.5, "half"), [["other"], True]),
            ],
        )
    )
    (ev,) = await progress_events(result_store, start.cursor)
    assert (ev.kind, ev.task_id, ev.task_name, ev.root_id) == (pub.EVENT_KIND_TASK, a, "add", a)
    assert ev.queue == "q1"
    assert (ev.state, ev.attempt, ev.priority) == (task_pb2.TASK_STATE_RUNNING, 1, task_pb2.PRIORITY_HIGH)
    assert (ev.worker_id, ev.pool_id) == ("pool-a/w0:7", "pool-a")
    assert dict(ev.attributes) == {"fraction": "0.5", "message": "half"}
    # Each batch that sets it again is one more event.
    await result_store.ops.write_logs(logs_pb2.LogBatch(context=[update(a, progress(1.0, ""))]))
    (ev,) = await progress_events(result_store, ev.cursor)
    assert dict(ev.attributes) == {"fraction": "1.0", "message": ""}


async def test_progress_of_an_attempt_not_running_changes_only_the_context(result_store: Any) -> None:
    queued = submitted_task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[queued]))
    done = await running(result_store)
    finish = "UPDATE tasks SET state = 'SUCCESS', lease_token = '' WHERE id = $1"
    await result_store.pool.execute(finish, done)
    live = await running(result_store)
    start = await result_store._read_events(Read())
    await result_store.ops.write_logs(
        logs_pb2.LogBatch(
            context=[
                update(queued.id, progress(0.1, "early")),
                update(done, progress(0.9, "late")),
                update(live, progress(0.3, "stale"), attempt=0),  # a superseded attempt
                update(live, [["progress"], "not a fraction"]),
            ]
        )
    )
    assert await progress_events(result_store, start.cursor) == []
    reply = await result_store.get(tasks_pb2.GetTasksRequest(ids=[queued.id, done]))
    assert [json.loads(t.context_json)["progress"]["message"] for t in reply.tasks] == ["early", "late"]
