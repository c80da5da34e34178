"""``taskyard task tree ID``: a task's hierarchy (GetTaskTree), indented.

One line per task, depth-first from the root, children in creation order::

    01a2...  SUCCESS    fan_out
      01a3...  SUCCESS    add
      01a4...  PENDING    add  after: 01a3...

Dependencies are not tree edges: a task that waits on others shows them as
``after: <ids>``.
"""

from __future__ import annotations

import click
from rich.console import RenderableType

from taskyard.cli.connection import target_options
from taskyard.cli.gateway import gateway
from taskyard.cli.output import Output, lines, output_option
from taskyard.cli.task import task_group
from taskyard.cli.task_view import state_name
from taskyard.v1 import task_pb2, task_service_pb2

INDENT = "  "


def tree_lines(reply: task_service_pb2.GetTaskTreeResponse, *, marked: str = "") -> list[str]:
    out: list[str] = []
    for node in reply.nodes:
        t = node.task
        text = f"{INDENT * node.depth}{t.id}  {state_name(t):<9}  {t.name}"
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
@output_option
@target_options
def tree_command(task_id: str, output: Output) -> None:
    """Print the tree of task ID (from its root), indented, with state and name."""
    with gateway() as g:
        reply = g.call(g.tasks.GetTaskTree, task_service_pb2.GetTaskTreeRequest(id=task_id))

    def show(reply: task_service_pb2.GetTaskTreeResponse) -> RenderableType:
        asked = reply.nodes[0].task.id if reply.nodes else ""
        return lines(tree_lines(reply, marked=task_id if task_id != asked else ""))

    output.emit(reply, show)
