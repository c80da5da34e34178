"""A WaitTask after RetryTasks waits for the new attempt: the failure it retried
(remembered by the gateway, or its event still on the way) is no answer."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2
from support import ports
from support.waiting import wait_until

from taskyard.v1 import queue_service_pb2 as qs
from taskyard.v1 import queue_service_pb2_grpc, task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.cluster(task_modules=("taskyard.examples", "support.tasks")),
]


def _wait(tasks: Any, task_id: str, seconds: int = 20) -> Any:
    req = task_service_pb2.WaitTaskRequest(id=task_id, timeout=duration_pb2.Duration(seconds=seconds))
    return tasks.WaitTask(req)


def _submit(tasks: Any, message: str) -> str:
    spec = task_pb2.TaskSpec(name="fail_first_attempt")
    spec.args.append(message)
    return str(tasks.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec)).task.id)


def test_a_wait_after_a_retry_answers_the_new_attempt(cluster: Any) -> None:
    ch = cluster.channel()
    tasks = task_service_pb2_grpc.TaskServiceStub(ch)
    queues = queue_service_pb2_grpc.QueueServiceStub(ch)
    # One failure seen through WaitTask (the gateway has its outcome in hand), one
    # through GetTask (its event waits undecoded in the gateway's backlog, or is
    # still on its way there).
    waited = _submit(tasks, "waited")
    failed = _wait(tasks, waited)
    assert failed.task.state == task_pb2.TASK_STATE_FAILURE and failed.task.attempt == 1
    read = _submit(tasks, "read")
    wait_until(
        lambda: (
            tasks.GetTask(task_service_pb2.GetTaskRequest(id=read)).task.state == task_pb2.TASK_STATE_FAILURE
        ),
        20,
        "the second task to fail",
    )

    retried = queues.RetryTasks(qs.RetryTasksRequest(ids=[waited, read]))
    assert sorted(retried.ids) == sorted([waited, read])
    for task_id, message in ((waited, "waited"), (read, "read")):
        done = _wait(tasks, task_id)
        assert not done.timed_out, task_id
        assert (done.task.state, done.task.attempt) == (task_pb2.TASK_STATE_SUCCESS, 2), task_id
        assert done.task.result.string_value == message


def test_a_retry_through_one_gateway_is_waited_for_through_another(cluster: Any) -> None:
    """Both gateways saw the failure on their event streams; the retry goes through
    one of them, and the other hears nothing of it (a QUEUED event is not a result)."""
    (other,) = cluster.start_instances("gateway", [{"TASKYARD_GRPC_PORT": str(ports.free_port())}])
    first = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    with grpc.insecure_channel(cluster.gateway_target(other)) as ch:
        second = task_service_pb2_grpc.TaskServiceStub(ch)
        task_id = _submit(first, "elsewhere")
        for tasks in (first, second):
            failed = _wait(tasks, task_id)
            assert (failed.task.state, failed.task.attempt) == (task_pb2.TASK_STATE_FAILURE, 1)
        queues = queue_service_pb2_grpc.QueueServiceStub(cluster.channel())
        assert list(queues.RetryTasks(qs.RetryTasksRequest(ids=[task_id])).ids) == [task_id]
        done = _wait(second, task_id)
        assert (done.task.state, done.task.attempt) == (task_pb2.TASK_STATE_SUCCESS, 2)
        assert done.task.result.string_value == "elsewhere"
