"""Reports against a real PostgreSQL (in-process store): every kind of entry a
report carries (start notices, successes, failures, cancel-stopped attempts,
releases, deaths) is applied by its own statement, each applied row goes back
to the request that named it, and what fencing refuses is counted."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from support.records import task

from taskyard.bus.v1 import leases_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core.states import TaskState as S
from taskyard.v1 import task_pb2

pytestmark = pytest.mark.asyncio


def ref(t: str, token: str = "tok") -> tr.AttemptRef:
    return tr.AttemptRef(task_id=t, attempt=1, lease_token=token, worker_id="pool-1/w0:1")


async def leased(store: Any, *tasks: tr.TaskRecord) -> None:
    await store.insert(tasks_pb2.InsertTasksRequest(tasks=list(tasks)))
    reply = await store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id="pool-1",
            lease_ms=30_000,
            leases=[leases_pb2.Lease(task_id=t.id, lease_token="tok") for t in tasks],
        )
    )
    assert len(reply.tasks) == len(tasks)


async def get(store: Any, t: str) -> tr.TaskRecord:
    (rec,) = (await store.get(tasks_pb2.GetTasksRequest(ids=[t]))).tasks
    return rec


async def failure_rows(database_url: str) -> dict[str, list[str]]:
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch("SELECT task_id::text AS id, type FROM task_failures ORDER BY id, attempt")
    finally:
        await conn.close()
    out: dict[str, list[str]] = {}
    for r in rows:
        out.setdefault(r["id"], []).append(r["type"])
    return out


async def test_one_report_of_every_kind_applies_each_to_its_task(
    result_store: Any, database_url: str
) -> None:
    started, succeeded, failed, stopped, released, died = tasks = [task(max_retries=1) for _ in range(6)]
    await leased(result_store, *tasks)
    await result_store.report(leases_pb2.ReportRequest(started=[ref(stopped.id)]))
    assert (await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[stopped.id]))).outcomes[0].flagged
    seen: dict[str, str] = {}
    all_seen = asyncio.Event()

    def listen(batch: Any) -> None:
        seen.update((e.task_id, e.type) for e in batch.events)
        if len(seen) == len(tasks):
            all_seen.set()

    result_store.publisher.listeners.append(listen)

    def stale(t: tr.TaskRecord) -> tr.AttemptRef:
        return ref(t.id, token="old")

    r = await result_store.report(
        leases_pb2.ReportRequest(
            started=[ref(started.id), stale(started)],
            completed=[
                leases_pb2.Completion(ref=ref(succeeded.id), success=True, result_json=b"3"),
                leases_pb2.Completion(ref=stale(succeeded), success=True),
                leases_pb2.Completion(
                    ref=ref(failed.id), retryable=True, retry_delay_ms=60_000, failure={"type": "ValueError"}
                ),
                leases_pb2.Completion(ref=stale(failed), retryable=True),
                leases_pb2.Completion(ref=ref(stopped.id), cancel_step=task_pb2.CANCEL_STEP_FLAG),
                leases_pb2.Completion(ref=stale(stopped), cancel_step=task_pb2.CANCEL_STEP_FLAG),
            ],
            released=[leases_pb2.Release(ref=ref(released.id)), leases_pb2.Release(ref=stale(released))],
            died=[leases_pb2.Death(ref=ref(died.id), started=True), leases_pb2.Death(ref=stale(died))],
        )
    )
    assert list(r.started) == [started.id]
    assert list(r.completed) == [succeeded.id, failed.id, stopped.id]
    assert list(r.released) == [released.id] and list(r.died) == [died.id]
    assert r.refused == 5  # the stale outcomes, releases and deaths; never a start notice

    now = {t.id: await get(result_store, t.id) for t in tasks}
    assert S(now[started.id].state) == S.RUNNING and now[started.id].worker_id == "pool-1/w0:1"
    assert S(now[succeeded.id].state) == S.SUCCESS and now[succeeded.id].result_json == b"3"
    assert S(now[failed.id].state) == S.RETRYING and now[failed.id].attempt == 2
    assert now[failed.id].failure.type == "ValueError"
    assert S(now[stopped.id].state) == S.CANCELLED
    assert now[stopped.id].cancel_step == task_pb2.CANCEL_STEP_FLAG
    assert S(now[released.id].state) == S.QUEUED and now[released.id].attempt == 2
    assert S(now[died.id].state) == S.RETRYING and now[died.id].failure.type == "WorkerProcessDied"
    assert await failure_rows(database_url) == {failed.id: ["ValueError"], died.id: ["WorkerProcessDied"]}
    await asyncio.wait_for(all_seen.wait(), 5)
    assert seen == {
        started.id: "task.started",
        succeeded.id: "task.succeeded",
        failed.id: "task.retrying",
        stopped.id: "task.cancelled",
        released.id: "task.queued",
        died.id: "task.retrying",
    }


async def test_a_success_is_a_success_whatever_was_requested_and_never_a_failure(
    result_store: Any, database_url: str
) -> None:
    """A successful outcome goes to SUCCESS with its result, even while a cancel
    is requested (the body finished first), and leaves no failure row, whether
    or not failures are applied in the same drain."""
    wanted, unwanted, failing = task(), task(), task(max_retries=0)
    await leased(result_store, wanted, unwanted, failing)
    await result_store.report(leases_pb2.ReportRequest(started=[ref(unwanted.id)]))
    assert (await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[unwanted.id]))).outcomes[0].flagged
    r = await result_store.report(
        leases_pb2.ReportRequest(
            completed=[
                leases_pb2.Completion(ref=ref(wanted.id), success=True, result_json=b'{"a": 1}'),
                leases_pb2.Completion(ref=ref(unwanted.id), success=True, result_json=b"2"),
                leases_pb2.Completion(ref=ref(failing.id), failure={"type": "KeyError"}),
            ]
        )
    )
    assert list(r.completed) == [wanted.id, unwanted.id, failing.id] and r.refused == 0
    for t, result in ((wanted, b'{"a": 1}'), (unwanted, b"2")):
        rec = await get(result_store, t.id)
        assert S(rec.state) == S.SUCCESS and rec.result_json == result and not rec.HasField("failure")
    assert S((await get(result_store, failing.id)).state) == S.FAILURE
    assert await failure_rows(database_url) == {failing.id: ["KeyError"]}


async def test_reports_merged_into_one_drain_each_get_their_own_reply(result_store: Any) -> None:
    tasks = [task() for _ in range(8)]
    await leased(result_store, *tasks)
    drains = result_store.stats.drains
    replies = await asyncio.gather(
        *(
            result_store.report(
                leases_pb2.ReportRequest(
                    started=[ref(t.id)], completed=[leases_pb2.Completion(ref=ref(t.id), success=True)]
                )
            )
            for t in tasks
        )
    )
    assert result_store.stats.drains - drains < len(tasks)  # some requests shared a drain
    for t, r in zip(tasks, replies, strict=True):
        assert list(r.started) == [t.id] and list(r.completed) == [t.id] and r.refused == 0
    assert {S((await get(result_store, t.id)).state) for t in tasks} == {S.SUCCESS}
