"""``taskyard task explain ID``: why a task is not running yet (ExplainTask)."""

from __future__ import annotations

import click
from rich.console import RenderableType

from taskyard.cli.connection import target_options
from taskyard.cli.gateway import gateway
from taskyard.cli.limit_view import gate_rows
from taskyard.cli.output import Output, fields, output_option, when
from taskyard.cli.task import task_group
from taskyard.cli.task_view import state_name
from taskyard.v1 import task_service_pb2

PREFIX = "WAIT_REASON_"


def _show(reply: task_service_pb2.ExplainTaskResponse) -> RenderableType:
    reason = task_service_pb2.WaitReason.Name(reply.reason).removeprefix(PREFIX)
    rows: list[tuple[str, RenderableType]] = [
        ("id", reply.task.id),
        ("state", state_name(reply.task)),
        ("reason", reason),
        ("why", reply.message),
    ]
    if reply.HasField("until"):
        rows.append(("until", when(reply, "until")))
    if reply.waiting_on:
        rows.append(("waiting_on", ", ".join(reply.waiting_on)))
    if reply.reason in (task_service_pb2.WAIT_REASON_SLOTS_BUSY, task_service_pb2.WAIT_REASON_DISPATCHING):
        rows.append(("ahead", str(reply.lane_depth_ahead)))
    if reply.HasField("gate"):
        rows.extend(gate_rows(reply.gate))
    return fields(rows)


@task_group.command("explain")
@click.argument("task_id", metavar="ID")
@output_option
@target_options
def explain_command(task_id: str, output: Output) -> None:
    """Say why task ID is not running yet.

    \b
    Reasons: ETA, DEPENDENCY, RETRY_DELAY, QUEUE_PAUSED, NO_POOL, SLOTS_BUSY,
    DISPATCHING, RUNNING, FINAL; held by flow control: RATE_LIMITED,
    CONCURRENCY_FULL, FAIR_SHARE, BREAKER_OPEN (with the limit or fairness key that
    holds it; a breaker's next_admission is its next probe); by its tenant:
    TENANT_SUSPENDED, TENANT_QUOTA (limit tenant.concurrency or tenant.rate, key the
    tenant).
    """
    with gateway() as g:
        reply = g.call(g.tasks.ExplainTask, task_service_pb2.ExplainTaskRequest(id=task_id))
    output.emit(reply, _show)
