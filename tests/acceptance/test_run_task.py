"""RunTask on a real suite: one call submits a task and answers with its final state;
a wait shorter than the task answers with the task as it stands (not an error), and
a repeated request_id waits on the first submission's task."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from google.protobuf import duration_pb2

from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = [pytest.mark.timeout(120)]


def _spec(name: str, *args: float, request_id: str = "") -> task_pb2.TaskSpec:
    spec = task_pb2.TaskSpec(name=name, request_id=request_id)
    for a in args:
        spec.args.append(a)
    return spec


def _run(tasks: Any, spec: task_pb2.TaskSpec, seconds: float) -> Any:
    timeout = duration_pb2.Duration()
    timeout.FromNanoseconds(int(seconds * 1e9))
    return tasks.RunTask(task_service_pb2.RunTaskRequest(task=spec, timeout=timeout), timeout=seconds + 10)


def test_run_task_answers_with_the_final_state_or_the_task_as_it_stands(cluster: Any) -> None:
    tasks = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    request_id = str(uuid.uuid4())
    done = _run(tasks, _spec("add", 2, 3, request_id=request_id), 30)
    assert (done.final, done.created) == (True, True)
    assert done.task.state == task_pb2.TASK_STATE_SUCCESS and done.task.result.number_value == 5
    # Exactly once per request_id: the same task, final, nothing run again.
    again = _run(tasks, _spec("add", 2, 3, request_id=request_id), 30)
    assert (again.final, again.created, again.task.id) == (True, False, done.task.id)
    assert again.task.result.number_value == 5
    assert cluster.count_tasks(request_id=request_id) == 1

    # A wait shorter than the task: the task's id and state, not final, and no error.
    slow = _run(tasks, _spec("sleep", 30), 0.3)
    assert not slow.final and slow.created and slow.task.id
    assert slow.task.state not in (
        task_pb2.TASK_STATE_SUCCESS,
        task_pb2.TASK_STATE_FAILURE,
        task_pb2.TASK_STATE_CANCELLED,
    )
    # It goes on: cancelled, a later WaitTask sees its end.
    tasks.CancelTask(task_service_pb2.CancelTaskRequest(id=slow.task.id))
    waited = tasks.WaitTask(task_service_pb2.WaitTaskRequest(id=slow.task.id))
    assert not waited.timed_out and waited.task.state == task_pb2.TASK_STATE_CANCELLED

    # A task that fails is an outcome of the call, not an error.
    failing = task_pb2.TaskSpec(name="fail", max_retries=0)
    failing.args.append("boom-run")
    failed = _run(tasks, failing, 30)
    assert failed.final and failed.task.state == task_pb2.TASK_STATE_FAILURE
    assert "boom-run" in failed.task.failure.message


def test_the_python_clients_run(cluster: Any) -> None:
    with cluster.client() as client:
        done = client.run("add", 2, 3)
        assert done.is_final and done.state.name == "SUCCESS" and done.result == 5
        slow = client.run("sleep", 30, wait=0.3)
        assert not slow.is_final and slow.id
        client.cancel(slow.id)

    async def run_async() -> None:
        async with cluster.async_client() as client:
            done = await client.run("add", 20, 3, request_id="async-run")
            assert done.is_final and done.result == 23
            again = await client.run("add", 20, 3, request_id="async-run", wait=0)
            assert again.id == done.id and again.result == 23

    asyncio.run(run_async())
