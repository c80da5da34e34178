"""How a task looks in a table: one task field per line, or one task per row."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.console import Group, RenderableType
from rich.text import Text

from taskyard.cli import durations
from taskyard.cli.limit_view import uses_text
from taskyard.cli.output import fields, payload, state, table, when
from taskyard.v1 import task_pb2

Row = tuple[str, RenderableType]

# Choices for --state and --priority: the API's enums without prefix (or UNSPECIFIED).
STATES = tuple(v.name.removeprefix("TASK_STATE_") for v in task_pb2.TaskState.DESCRIPTOR.values if v.number)
PRIORITIES = tuple(
    v.name.removeprefix("PRIORITY_").lower() for v in task_pb2.Priority.DESCRIPTOR.values if v.number
)


def state_name(task: task_pb2.Task) -> str:
    return task_pb2.TaskState.Name(task.state).removeprefix("TASK_STATE_")


def priority_name(task: task_pb2.Task) -> str:
    return task_pb2.Priority.Name(task.priority).removeprefix("PRIORITY_") if task.priority else ""


def cancel_step_name(step: int) -> str:
    return task_pb2.CancelStep.Name(step).removeprefix("CANCEL_STEP_") if step else ""


def _identity(task: task_pb2.Task) -> list[Row]:
    rows: list[Row] = [("id", task.id), ("name", task.name), ("state", state(state_name(task)))]
    given = {
        "tenant": task.tenant,
        "attempt": str(task.attempt) if task.attempt else "",
        "priority": priority_name(task),
        "queue": task.queue,
        "timeout": durations.format_proto(task.timeout) if task.HasField("timeout") else "",
        # -1: the task's declared budget or the deployment's, not known here.
        "max_retries": str(task.max_retries) if task.max_retries >= 0 else "",
        "labels": ", ".join(f"{k}={v}" for k, v in sorted(task.labels.items())),
        "limits": uses_text(task.limits),
        "fairness_key": task.fairness_key,
        "request_id": task.request_id,
        "parent_id": task.parent_id,
        "schedule_id": task.schedule_id,
        "worker_id": task.worker_id,
    }
    rows.extend((key, value) for key, value in given.items() if value)
    return rows


def _outcome(task: task_pb2.Task) -> list[Row]:
    rows: list[Row] = []
    if task.args.values:
        rows.append(("args", payload(task.args)))
    if task.kwargs.fields:
        rows.append(("kwargs", payload(task.kwargs)))
    if task.state == task_pb2.TASK_STATE_SUCCESS and task.HasField("result"):
        rows.append(("result", payload(task.result)))
    if task.HasField("failure"):
        rows.append(("failure", f"{task.failure.type}: {task.failure.message}"))
    if task.dead_letter_reason:
        # Its group is the one `taskyard failures list --group` and `taskyard redrive` take.
        reason = task_pb2.DeadLetterReason.Name(task.dead_letter_reason).removeprefix("DEAD_LETTER_REASON_")
        group = f" (group {task.failure.group_id})" if task.failure.group_id else ""
        rows.append(("dead_letter", reason.lower().replace("_", "-") + group))
    if task.redrive_id:
        rows.append(("redriven", f"from attempt {task.redriven_from_attempt} by redrive {task.redrive_id}"))
    if task.cancel_requested:
        rows.append(("cancel", "requested"))
    if task.depends_on:
        rows.append(("after", ", ".join(task.depends_on)))
    for key, value in (
        ("idempotency_key", task.idempotency_key),
        ("cancel_reason", task.cancel_reason),
        ("cancel_step", cancel_step_name(task.cancel_step)),
    ):
        if value:
            rows.append((key, value))
    for key in ("created_at", "started_at", "finished_at", "run_at"):
        if task.HasField(key):
            rows.append((key.removesuffix("_at"), when(task, key)))
    return rows


def task_detail(task: task_pb2.Task, extra: Iterable[Row] = ()) -> RenderableType:
    """Every field worth reading, then the failure's traceback (if any) as it was raised."""
    grid = fields([*_identity(task), *_outcome(task), *extra])
    traceback = task.failure.traceback.rstrip() if task.HasField("failure") else ""
    return Group(grid, Text(traceback)) if traceback else grid


def task_table(tasks: Sequence[task_pb2.Task], *, acting_tenant: str | None = None) -> RenderableType:
    """One task per row; with a TENANT column when the rows may be of several tenants: the
    caller acts as no one tenant (``--tenant``) and a row is of a tenant other than the
    default one (an operator listing across tenants)."""
    by_tenant = acting_tenant is None and any(t.tenant for t in tasks)
    headers = (
        "id",
        *(("tenant",) if by_tenant else ()),
        "name",
        "state",
        "att",
        "priority",
        "queue",
        "created",
    )
    return table(
        headers,
        (
            (
                t.id,
                *((t.tenant or "(default)",) if by_tenant else ()),
                t.name,
                state(state_name(t)),
                str(t.attempt or ""),
                priority_name(t),
                t.queue,
                when(t, "created_at", timespec="seconds"),
            )
            for t in tasks
        ),
    )
