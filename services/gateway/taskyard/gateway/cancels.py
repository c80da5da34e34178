"""CancelTask: cancel in the store (children with it), then, for a leased task
(dispatched or running: the store only flags it) and a ``wait``, wait until it
stops so the answer can say which step stopped it (not started, flag, asyncio
cancellation or kill; see docs/dependencies.md). The answer says NOT_STARTED
only when that is sure: the store's for a task no pool holds, else the pool's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from google.protobuf import duration_pb2

from taskyard.bus.v1 import task_record_pb2, tasks_pb2
from taskyard.core import codec, contract, errors, rpc
from taskyard.v1 import task_pb2, task_service_pb2

MAX_CANCEL_REASON_CHARS = 1024
# A cancel wait is a WaitTask: the same 300 s ceiling.
MAX_CANCEL_WAIT_MS = 300_000

Wait = Callable[
    [task_service_pb2.WaitTaskRequest, float | None], Awaitable[task_service_pb2.WaitTaskResponse]
]
Get = Callable[[str], Awaitable[task_record_pb2.TaskRecord]]


def validate(
    request: task_service_pb2.CancelTaskRequest, task_id: str, violations: list[codec.Violation]
) -> None:
    codec.check_text(violations, "reason", request.reason, max_chars=MAX_CANCEL_REASON_CHARS)
    if request.HasField("wait"):
        ms = codec.duration_ms(request.wait)
        if ms is None or ms < 0:
            violations.append(codec.Violation(field="wait", description="must be a non-negative duration"))
        elif ms > MAX_CANCEL_WAIT_MS:
            violations.append(codec.Violation(field="wait", description="must be at most 300s"))
    if violations:
        raise codec.invalid(violations)


async def cancel(
    request: task_service_pb2.CancelTaskRequest,
    task_id: str,
    *,
    store: rpc.Caller,
    wait: Wait,
    get: Get,
    client_remaining: float | None,
) -> task_service_pb2.CancelTaskResponse:
    reply = await store.call(
        contract.STORE_CANCEL, tasks_pb2.CancelTasksRequest(ids=[task_id], reason=request.reason)
    )
    outcome = next((o for o in reply.outcomes if o.id == task_id), None)
    if outcome is None or outcome.not_found:
        raise errors.not_found("task", task_id)
    rec = next((r for r in reply.tasks if r.id == task_id), None)
    if outcome.already_final:
        state = task_pb2.TaskState.Name(rec.state) if rec is not None else "final"
        raise errors.TaskyardError(
            errors.Code.FAILED_PRECONDITION,
            "TASK_ALREADY_FINAL",
            f"task {task_id} is already {state.removeprefix('TASK_STATE_')}",
        )
    if rec is None:
        rec = await get(task_id)
    task = codec.record_to_task(rec)
    if outcome.flagged and request.HasField("wait") and codec.duration_ms(request.wait):
        # Leased: the pool never starts it or stops it in steps, and reports the step.
        waited = await wait(
            task_service_pb2.WaitTaskRequest(
                id=task_id,
                timeout=duration_pb2.Duration(seconds=request.wait.seconds, nanos=request.wait.nanos),
            ),
            client_remaining,
        )
        task = waited.task
    cancelled = task.state == task_pb2.TASK_STATE_CANCELLED
    return task_service_pb2.CancelTaskResponse(
        task=task,
        cancelled=cancelled,
        step=task.cancel_step if task.state in _FINAL else task_pb2.CANCEL_STEP_UNSPECIFIED,
        cancelled_children=reply.cancelled_children,
    )


_FINAL = frozenset({task_pb2.TASK_STATE_SUCCESS, task_pb2.TASK_STATE_FAILURE, task_pb2.TASK_STATE_CANCELLED})
