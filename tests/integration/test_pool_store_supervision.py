# mypy: disable-error-code="comparison-overlap,list-item,arg-type"
"""The store's side of supervision against a real PostgreSQL (in-process store):
rescue cap (quarantine), cancel steps, cancel flags in renewal replies, late
completions counted, the registry's per-process JSON."""

from __future__ import annotations

import json
from typing import Any

import asyncpg
import pytest
from support.records import task

from taskyard.bus.v1 import lanes_pb2, leases_pb2, pools_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import contract, rpc
from taskyard.core.states import TaskState as S
from taskyard.v1 import task_pb2

pytestmark = pytest.mark.asyncio


def ref(t: str, attempt: int = 1, token: str = "tok") -> tr.AttemptRef:
    return tr.AttemptRef(task_id=t, attempt=attempt, lease_token=token, worker_id="pool-1/w0:1")


async def setup_running(store: Any, rec: tr.TaskRecord, attempt: int = 1, token: str = "tok") -> None:
    if attempt == 1:
        await store.insert(tasks_pb2.InsertTasksRequest(tasks=[rec]))
    else:
        await store.promote_due(lanes_pb2.PromoteDueRequest())
    leased = await store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id="pool-1", lease_ms=30_000, leases=[leases_pb2.Lease(task_id=rec.id, lease_token=token)]
        )
    )
    assert len(leased.tasks) == 1
    r = await store.report(leases_pb2.ReportRequest(started=[ref(rec.id, attempt, token)]))
    assert list(r.started) == [rec.id]


async def get(store: Any, t: str) -> tr.TaskRecord:
    reply = await store.get(tasks_pb2.GetTasksRequest(ids=[t]))
    rec: tr.TaskRecord = reply.tasks[0]
    return rec


async def column(database_url: str, sql: str, *args: Any) -> Any:
    conn = await asyncpg.connect(database_url)
    try:
        return await conn.fetchval(sql, *args)
    finally:
        await conn.close()


async def test_started_deaths_quarantine_at_the_rescue_cap(result_store: Any, database_url: str) -> None:
    a = task(max_retries=10)
    for attempt in (1, 2, 3):
        await setup_running(result_store, a, attempt, token=f"t{attempt}")
        death = leases_pb2.Death(ref=ref(a.id, attempt, f"t{attempt}"), started=True, max_rescues=3)
        r = await result_store.report(leases_pb2.ReportRequest(died=[death]))
        assert list(r.died) == [a.id]
        rec = await get(result_store, a.id)
        if attempt < 3:
            assert rec.state == S.RETRYING and rec.attempt == attempt + 1
            await column(database_url, "UPDATE tasks SET run_at = now() WHERE id = $1::uuid", a.id)
    assert rec.state == S.FAILURE and rec.attempt == 3 and rec.rescues == 3
    assert rec.failure.type == "WorkerProcessDied" and rec.failure.message.startswith("quarantined")
    n = await column(database_url, "SELECT count(*) FROM task_failures WHERE task_id = $1::uuid", a.id)
    assert n == 3


async def test_unstarted_death_is_no_rescue(result_store: Any) -> None:
    a = task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[a]))
    await result_store.lease(
        leases_pb2.LeaseTasksRequest(pool_id="p", leases=[leases_pb2.Lease(task_id=a.id, lease_token="tok")])
    )
    death = leases_pb2.Death(ref=ref(a.id), started=False, max_rescues=1)
    await result_store.report(leases_pb2.ReportRequest(died=[death]))
    rec = await get(result_store, a.id)
    assert rec.state == S.QUEUED and rec.attempt == 2 and rec.uncharged_attempts == 1 and rec.rescues == 0


async def test_cancel_steps_and_renewal_flags(result_store: Any) -> None:
    flag, kill, unflagged = task(), task(), task()
    for t in (flag, kill, unflagged):
        await setup_running(result_store, t)
    await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[flag.id, kill.id], reason="test"))
    renewed = await result_store.renew(
        leases_pb2.RenewLeasesRequest(refs=[ref(flag.id), ref(kill.id), ref(unflagged.id)], lease_ms=30_000)
    )
    assert sorted(renewed.cancel_requested) == sorted([flag.id, kill.id]) and not renewed.lost
    stopped = leases_pb2.Completion(
        ref=ref(flag.id),
        success=False,
        cancel_step=task_pb2.CANCEL_STEP_FLAG,
        failure=task_pb2.TaskFailure(type="Cancelled"),
    )
    # A cancel outcome for a task nobody cancelled is refused (fencing on the flag).
    bogus = leases_pb2.Completion(ref=ref(unflagged.id), success=False, cancel_step=task_pb2.CANCEL_STEP_FLAG)
    killed = leases_pb2.Death(ref=ref(kill.id), started=True, cancel_step=task_pb2.CANCEL_STEP_KILL)
    r = await result_store.report(leases_pb2.ReportRequest(completed=[stopped, bogus], died=[killed]))
    assert list(r.completed) == [flag.id] and list(r.died) == [kill.id] and r.refused == 1
    a, b, c = [await get(result_store, x.id) for x in (flag, kill, unflagged)]
    assert a.state == S.CANCELLED and a.cancel_step == task_pb2.CANCEL_STEP_FLAG
    assert b.state == S.CANCELLED and b.cancel_step == task_pb2.CANCEL_STEP_KILL and b.rescues == 0
    assert c.state == S.RUNNING


async def test_late_completion_is_counted(result_store: Any, database_url: str) -> None:
    a = task()
    await setup_running(result_store, a)
    late = leases_pb2.Completion(ref=ref(a.id, token="superseded"), success=True, result_json=b"1")
    r = await result_store.report(leases_pb2.ReportRequest(completed=[late]))
    assert r.refused == 1
    routes = rpc.route_table(result_store.routes())
    counters = contract.STORE_COUNTERS
    read = routes[counters.kind]
    reply = await read.handler(counters.request(names=["late_completions", "other"]), None)
    assert isinstance(reply, counters.reply)
    assert dict(reply.values) == {"late_completions": 1, "other": 0}
    assert (
        await column(database_url, "SELECT value FROM taskyard_counters WHERE name = 'late_completions'") == 1
    )


async def test_heartbeat_keeps_processes_json(result_store: Any, database_url: str) -> None:
    hb = pools_pb2.HeartbeatRequest(
        pool_id="pool-x",
        server_name="host",
        max_workers=2,
        state="RUNNING",
        concurrency=4,
        last_dispatch_at_us=1_700_000_000_000_000,
        processes=[
            pools_pb2.WorkerProcess(
                index=0, pid=10, state="busy", rss_bytes=5, running_tasks=1, last_beat_us=7
            ),
            pools_pb2.WorkerProcess(index=1, pid=11, state="recycling"),
        ],
    )
    await result_store.heartbeat(hb)
    del hb.processes[1]
    hb.last_dispatch_at_us = 0  # none since: the last one is kept
    await result_store.heartbeat(hb)
    procs = json.loads(
        await column(database_url, "SELECT processes::text FROM workers WHERE pool_id = 'pool-x'")
    )
    assert procs == [
        {"index": 0, "pid": 10, "state": "busy", "rss_bytes": 5, "running_tasks": 1, "last_beat_us": 7}
    ]
    assert await column(database_url, "SELECT concurrency FROM workers WHERE pool_id = 'pool-x'") == 4
    kept = await column(database_url, "SELECT ty_us(last_dispatch_at) FROM workers WHERE pool_id = 'pool-x'")
    assert kept == 1_700_000_000_000_000
