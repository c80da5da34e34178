"""A task for a pool that is down waits: every name a pool ever declared stays
submittable (QUEUED, ExplainTask NO_POOL), also through a gateway restarted while
no pool runs; only a name never declared is refused."""

from __future__ import annotations

import signal
import time
from typing import Any

import grpc
import pytest
from support.waiting import wait_until

from taskyard.cli import procs
from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = pytest.mark.acceptance

S = task_service_pb2


def _add(*args: int) -> task_pb2.TaskSpec:
    spec = task_pb2.TaskSpec(name="add")
    spec.args.extend(args)
    return spec


def _explain_until(stub: Any, task_id: str, reason: int, within: float = 30.0) -> S.ExplainTaskResponse:
    """ExplainTask until it gives ``reason`` (the pool's absence reaches the store
    with its last heartbeat)."""
    got: S.ExplainTaskResponse = S.ExplainTaskResponse()

    def explained() -> bool:
        nonlocal got
        got = stub.ExplainTask(S.ExplainTaskRequest(id=task_id))
        return got.reason == reason

    wait_until(
        explained, within, lambda: f"ExplainTask to give reason {reason} (gave {got.reason})", interval=0.1
    )
    return got


def test_a_declared_name_waits_for_its_pool(cluster: Any) -> None:
    assert cluster.query("SELECT name FROM task_names WHERE name = 'add'")  # declared, kept
    assert cluster.kill("worker-pool", signal.SIGTERM) == 0

    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    first = stub.SubmitTask(S.SubmitTaskRequest(task=_add(1, 2))).task
    assert first.state == task_pb2.TASK_STATE_QUEUED
    explained = _explain_until(stub, first.id, S.WAIT_REASON_NO_POOL)
    assert explained.reason == S.WAIT_REASON_NO_POOL, explained
    assert explained.task.state == task_pb2.TASK_STATE_QUEUED and "no live worker pool" in explained.message

    # A gateway started while every pool is down still knows the name (PostgreSQL does).
    assert cluster.kill("gateway", signal.SIGTERM) == 0
    cluster.start_service("gateway")
    procs.wait_ready(cluster.target, deadline=time.monotonic() + 30, probe_name=None)
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    second = stub.SubmitTask(S.SubmitTaskRequest(task=_add(3, 4))).task
    assert second.state == task_pb2.TASK_STATE_QUEUED
    with pytest.raises(grpc.RpcError) as never:
        stub.SubmitTask(S.SubmitTaskRequest(task=task_pb2.TaskSpec(name="never_declared")))
    assert never.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "no worker pool serves a task named 'never_declared'" in (never.value.details() or "")

    cluster.start_service("worker-pool")
    client = cluster.client()
    assert client.wait(first.id, timeout=30).result == 3
    done = client.wait(second.id, timeout=30)
    assert done.state.name == "SUCCESS" and done.result == 7 and done.attempt == 1
    assert cluster.count_tasks() == 2
