"""Request building shared by the sync and async clients."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from typing import Any

from google.protobuf import duration_pb2

from taskyard.client._types import (
    JSON,
    Cancellation,
    Priority,
    TaskInfo,
    TaskRequest,
    TaskState,
    _cancel_step,
)
from taskyard.v1 import task_service_pb2

DEFAULT_TARGET = "localhost:50051"
# The server waits at most this long per WaitTask call; longer waits loop.
MAX_SERVER_WAIT = 300.0
# Extra time on a WaitTask call's deadline beyond the wait itself.
WAIT_SLACK = 10.0


def submit_request(
    name: str,
    args: tuple[JSON, ...],
    kwargs: Mapping[str, JSON],
    *,
    priority: Priority | int | str | None,
    queue: str,
    timeout: float | datetime.timedelta | None,
    max_retries: int | None,
    request_id: str,
    parent_id: str,
    labels: Mapping[str, str] | None,
    depends_on: Iterable[str] = (),
    idempotency_key: str = "",
    idempotency_window: float | datetime.timedelta | None = None,
    eta: datetime.datetime | None = None,
    countdown: float | datetime.timedelta | None = None,
) -> task_service_pb2.SubmitTaskRequest:
    spec = TaskRequest(
        name=name,
        args=args,
        kwargs=kwargs,
        priority=priority,
        queue=queue,
        timeout=timeout,
        max_retries=max_retries,
        request_id=request_id,
        parent_id=parent_id,
        labels=labels or {},
        depends_on=tuple(depends_on),
        idempotency_key=idempotency_key,
        idempotency_window=idempotency_window,
        eta=eta,
        countdown=countdown,
    ).to_proto()
    return task_service_pb2.SubmitTaskRequest(task=spec)


def batch_request(
    items: Iterable[TaskRequest | Mapping[str, Any]],
) -> task_service_pb2.BatchSubmitTasksRequest:
    return task_service_pb2.BatchSubmitTasksRequest(tasks=[TaskRequest.coerce(i).to_proto() for i in items])


def wait_request(task_id: str, seconds: float) -> task_service_pb2.WaitTaskRequest:
    d = duration_pb2.Duration()
    d.FromNanoseconds(int(max(0.0, seconds) * 1e9))
    return task_service_pb2.WaitTaskRequest(id=task_id, timeout=d)


def list_request(
    *,
    state: TaskState | str | Iterable[TaskState | str] | None,
    name: str,
    queue: str,
    priority: Priority | int | str | None,
    page_size: int,
    page_token: str,
) -> task_service_pb2.ListTasksRequest:
    states: list[int] = []
    if state is not None:
        items: Iterable[TaskState | str] = [state] if isinstance(state, (str, TaskState)) else state
        for s in items:
            states.append(int(TaskState[s.upper().removeprefix("TASK_STATE_")] if isinstance(s, str) else s))
    req = task_service_pb2.ListTasksRequest(
        states=states,  # type: ignore[arg-type]
        name=name,
        queue=queue,
        page_size=page_size,
        page_token=page_token,
    )
    if priority is not None:
        req.priority = int(Priority.parse(priority))  # type: ignore[assignment]
    return req


def get_request(task_id: str) -> task_service_pb2.GetTaskRequest:
    return task_service_pb2.GetTaskRequest(id=task_id)


def cancel_request(
    task_id: str, reason: str, wait: float | None = None
) -> task_service_pb2.CancelTaskRequest:
    req = task_service_pb2.CancelTaskRequest(id=task_id, reason=reason)
    if wait is not None:
        req.wait.FromNanoseconds(int(max(0.0, wait) * 1e9))
    return req


def cancellation(resp: task_service_pb2.CancelTaskResponse) -> Cancellation:
    return Cancellation(
        task=TaskInfo.from_proto(resp.task),
        cancelled=resp.cancelled,
        step=_cancel_step(resp.step),
        cancelled_children=tuple(resp.cancelled_children),
    )


def tree_request(task_id: str) -> task_service_pb2.GetTaskTreeRequest:
    return task_service_pb2.GetTaskTreeRequest(id=task_id)


def explain_request(task_id: str) -> task_service_pb2.ExplainTaskRequest:
    return task_service_pb2.ExplainTaskRequest(id=task_id)
