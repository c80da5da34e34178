"""Gateway submission against fake lanes over real NNG: records, lanes, coalescing, idempotency."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import grpc
import pytest_asyncio
from google.protobuf import duration_pb2, struct_pb2
from integration.gateway_fakes import GatewayEnv, gateway_env
from support.waiting import wait_until_async

from taskyard.core import ids
from taskyard.core.priority import Priority
from taskyard.v1 import task_pb2, task_service_pb2


@pytest_asyncio.fixture
async def gw() -> AsyncIterator[GatewayEnv]:
    async with gateway_env() as env:
        yield env


def _args(*values: object) -> struct_pb2.ListValue:
    lv = struct_pb2.ListValue()
    lv.extend(values)  # type: ignore[arg-type]
    return lv


async def test_submit_sends_a_full_record_to_the_normal_lane(gw: GatewayEnv) -> None:
    spec = task_pb2.TaskSpec(name="add", args=_args(1, 2.5, "x"), request_id="r-1", labels={"team": "a"})
    spec.kwargs.update({"scale": 3, "opts": {"deep": [True, None]}})
    resp = await gw.stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec))
    assert resp.created
    task = resp.task
    assert ids.is_uuid(task.id)
    assert task.state == task_pb2.TASK_STATE_QUEUED
    assert task.priority == task_pb2.PRIORITY_NORMAL
    assert task.queue == "default"
    assert task.attempt == 1
    assert task.args == spec.args and task.kwargs == spec.kwargs
    assert task.created_at.seconds > 0
    # Left open (the task's declaration or the deployment default applies).
    assert not task.HasField("timeout") and task.max_retries == -1

    assert len(gw.backend.submits[Priority.NORMAL]) == 1
    (rec,) = gw.backend.submits[Priority.NORMAL][0].tasks
    assert rec.id == task.id
    assert rec.name == "add"
    assert rec.args_json == b'[1,2.5,"x"]'
    assert json.loads(rec.kwargs_json) == {"scale": 3, "opts": {"deep": [True, None]}}
    assert b" " not in rec.kwargs_json  # compact
    assert rec.state == task_pb2.TASK_STATE_QUEUED and rec.attempt == 1
    assert rec.max_retries == -1  # left to the task declaration or the deployment default
    assert rec.timeout_ms == 0  # likewise
    assert rec.request_id == "r-1" and dict(rec.labels) == {"team": "a"}
    assert rec.created_at_us > 0


async def test_explicit_fields_and_priority_lane(gw: GatewayEnv) -> None:
    spec = task_pb2.TaskSpec(
        name="echo",
        priority=task_pb2.PRIORITY_CRITICAL,
        queue="emails",
        timeout=duration_pb2.Duration(seconds=2, nanos=500_000_000),
        max_retries=0,
    )
    resp = await gw.stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec))
    (rec,) = gw.backend.submits[Priority.CRITICAL][0].tasks
    assert rec.queue == "emails" and rec.timeout_ms == 2500 and rec.max_retries == 0
    assert rec.args_json == b"[]" and rec.kwargs_json == b"{}"
    assert resp.task.priority == task_pb2.PRIORITY_CRITICAL
    assert gw.backend.submits[Priority.NORMAL] == []


async def test_batch_is_grouped_by_priority_and_answered_in_order(gw: GatewayEnv) -> None:
    prios = [
        task_pb2.PRIORITY_LOW,
        task_pb2.PRIORITY_CRITICAL,
        task_pb2.PRIORITY_UNSPECIFIED,
        task_pb2.PRIORITY_LOW,
        task_pb2.PRIORITY_HIGH,
        task_pb2.PRIORITY_CRITICAL,
    ]
    specs = [task_pb2.TaskSpec(name="add", args=_args(i), priority=p) for i, p in enumerate(prios)]
    resp = await gw.stub.BatchSubmitTasks(task_service_pb2.BatchSubmitTasksRequest(tasks=specs))
    assert len(resp.tasks) == 6
    assert all(t.created and t.state == task_pb2.TASK_STATE_QUEUED for t in resp.tasks)
    # One request per lane, each holding exactly that lane's tasks.
    b = gw.backend
    assert [len(b.submits[p]) for p in Priority] == [1, 1, 1, 1]
    lane_args = {p: [r.args_json for r in b.submits[p][0].tasks] for p in Priority}
    assert lane_args[Priority.CRITICAL] == [b"[1]", b"[5]"]
    assert lane_args[Priority.HIGH] == [b"[4]"]
    assert lane_args[Priority.NORMAL] == [b"[2]"]
    assert lane_args[Priority.LOW] == [b"[0]", b"[3]"]
    # The response is in request order: the i-th id is the record with args [i].
    by_id = {r.id: r for r in b.submitted}
    assert [by_id[t.id].args_json for t in resp.tasks] == [f"[{i}]".encode() for i in range(6)]


async def test_concurrent_single_submits_are_coalesced(gw: GatewayEnv) -> None:
    b = gw.backend
    b.lane_gate = asyncio.Event()
    first = asyncio.ensure_future(
        gw.stub.SubmitTask(
            task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name="add", args=_args(-1)))
        )
    )
    await asyncio.wait_for(b.lane_entered.wait(), 5)  # the first request is in flight, held by the gate
    rest = [
        asyncio.ensure_future(
            gw.stub.SubmitTask(
                task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name="add", args=_args(i)))
            )
        )
        for i in range(50)
    ]
    lane = gw.gateway.lanes[Priority.NORMAL]
    await wait_until_async(
        lambda: lane.records_sent + sum(len(p.records) for p in lane._pending) >= 51,
        5,
        "all 51 submissions to reach the lane",
    )
    b.lane_gate.set()
    results = await asyncio.gather(first, *rest)
    assert all(r.created for r in results)
    assert len({r.task.id for r in results}) == 51
    reqs = b.submits[Priority.NORMAL]
    # The first went alone (no timer: no added latency); the other 50 went together.
    assert [len(r.tasks) for r in reqs] == [1, 50]
    # Each caller got its own task back.
    by_id = {rec.id: rec for rec in b.submitted}
    for i, r in enumerate(results[1:]):
        assert by_id[r.task.id].args_json == f"[{i}]".encode()


async def test_repeated_request_id_returns_the_existing_task(gw: GatewayEnv) -> None:
    spec = task_pb2.TaskSpec(name="add", args=_args(2, 3), request_id="order-42")
    first = await gw.stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec))
    second = await gw.stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec))
    assert first.created and not second.created
    assert second.task.id == first.task.id
    assert second.task.name == "add" and second.task.args == spec.args


async def test_names_from_the_store_are_known(gw: GatewayEnv) -> None:
    gw.backend.store_names = ["only_in_store"]

    async def submitted() -> task_service_pb2.SubmitTaskResponse | None:
        try:
            return await gw.stub.SubmitTask(
                task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name="only_in_store"))
            )
        except grpc.aio.AioRpcError as exc:
            # Refused until the gateway's next refresh: a miss refreshes at most every 0.5 s.
            assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT, exc
            return None

    resp = await wait_until_async(submitted, 5, "the store's name to be accepted", 0.1)
    assert resp.created


async def test_empty_batch_is_a_no_op(gw: GatewayEnv) -> None:
    resp = await gw.stub.BatchSubmitTasks(task_service_pb2.BatchSubmitTasksRequest())
    assert list(resp.tasks) == []
    assert gw.backend.lane_requests() == 0
