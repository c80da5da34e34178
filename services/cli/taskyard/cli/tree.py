"""``taskyard task tree ID``: a task's hierarchy (GetTaskTree), indented.

One line per task, depth-first from the root, children in creation order::

    01a2...  SUCCESS    fan_out
      01a3...  SUCCESS    add
      01a4...  PENDING    add  after: 01a3...

Dependencies are not tree edges: a task that waits on others shows them as
``after: <ids>``.
"""

from __future__ import annotations

import json
from typing import Any

import click
from google.protobuf import json_format

from taskyard.cli.connection import Connection
from taskyard.cli.task import _errors_reported, _target_option, json_option, task_group
from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

TIMEOUT = 30.0
INDENT = "  "


def task_tree(target: str, task_id: str) -> task_service_pb2.GetTaskTreeResponse:
    with Connection.current(target).channel() as channel:
        stub = task_service_pb2_grpc.TaskServiceStub(channel)
        reply: task_service_pb2.GetTaskTreeResponse = stub.GetTaskTree(
            task_service_pb2.GetTaskTreeRequest(id=task_id), timeout=TIMEOUT
        )
        return reply


def lines(reply: task_service_pb2.GetTaskTreeResponse, *, marked: str = "") -> list[str]:
    out: list[str] = []
    for node in reply.nodes:
        t = node.task
        state = task_pb2.TaskState.Name(t.state).removeprefix("TASK_STATE_")
        text = f"{INDENT * node.depth}{t.id}  {state:<9}  {t.name}"
        if t.depends_on:
            text += "  after: " + ", ".join(t.depends_on)
        if t.cancel_reason and t.state == task_pb2.TASK_STATE_CANCELLED:
            text += f"  ({t.cancel_reason})"
        if marked and t.id == marked:
            text += "  <"
        out.append(text)
    if reply.truncated:
        out.append(f"... truncated at {len(reply.nodes)} tasks")
    return out


@task_group.command("tree")
@click.argument("task_id", metavar="ID")
@json_option
@_target_option
@click.pass_context
@_errors_reported
def tree_command(ctx: click.Context, task_id: str, as_json: bool) -> None:
    """Print the tree of task ID (from its root), indented, with state and name."""
    reply = task_tree(ctx.obj["target"], task_id)
    if as_json:
        data: dict[str, Any] = json_format.MessageToDict(reply, preserving_proto_field_name=True)
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    asked = reply.nodes[0].task.id if reply.nodes else ""
    for line in lines(reply, marked=task_id if task_id != asked else ""):
        click.echo(line)
