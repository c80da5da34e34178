"""``taskyard task explain ID``: why a task is not running yet (ExplainTask)."""

from __future__ import annotations

import json
from typing import Any

import click
from google.protobuf import json_format

from taskyard.cli.connection import Connection
from taskyard.cli.task import _errors_reported, _target_option, json_option, task_group
from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

PREFIX = "WAIT_REASON_"
# The RPC is one store read; a gateway that does not answer in this long is not there.
TIMEOUT = 30.0


def explain(target: str, task_id: str) -> task_service_pb2.ExplainTaskResponse:
    with Connection.current(target).channel() as channel:
        stub = task_service_pb2_grpc.TaskServiceStub(channel)
        reply: task_service_pb2.ExplainTaskResponse = stub.ExplainTask(
            task_service_pb2.ExplainTaskRequest(id=task_id), timeout=TIMEOUT
        )
        return reply


def _lines(reply: task_service_pb2.ExplainTaskResponse) -> list[tuple[str, str]]:
    reason = task_service_pb2.WaitReason.Name(reply.reason).removeprefix(PREFIX)
    state = task_pb2.TaskState.Name(reply.task.state).removeprefix("TASK_STATE_")
    rows = [("id", reply.task.id), ("state", state), ("reason", reason), ("why", reply.message)]
    if reply.HasField("until"):
        rows.append(("until", reply.until.ToDatetime().isoformat(sep=" ", timespec="milliseconds") + "Z"))
    if reply.waiting_on:
        rows.append(("waiting on", ", ".join(reply.waiting_on)))
    if reply.reason in (task_service_pb2.WAIT_REASON_SLOTS_BUSY, task_service_pb2.WAIT_REASON_DISPATCHING):
        rows.append(("ahead", str(reply.lane_depth_ahead)))
    return rows


@task_group.command("explain")
@click.argument("task_id", metavar="ID")
@json_option
@_target_option
@click.pass_context
@_errors_reported
def explain_command(ctx: click.Context, task_id: str, as_json: bool) -> None:
    """Say why task ID is not running yet.

    \b
    Reasons: ETA, DEPENDENCY, RETRY_DELAY, QUEUE_PAUSED, NO_POOL, SLOTS_BUSY,
    DISPATCHING, RUNNING, FINAL.
    """
    reply = explain(ctx.obj["target"], task_id)
    if as_json:
        data: dict[str, Any] = json_format.MessageToDict(reply, preserving_proto_field_name=True)
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    rows = _lines(reply)
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        click.echo(f"{key.ljust(width)}  {value}")
