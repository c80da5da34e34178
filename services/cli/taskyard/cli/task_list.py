"""``taskyard task list``: tasks, newest first, one per row.

With ``--all`` the pages are fetched one after the other and printed as one
ListTasksResponse (every task, no next_page_token), so ``--output json`` is
still a single response message.
"""

from __future__ import annotations

import click
from rich.console import RenderableType

from taskyard.cli.connection import Connection, target_options
from taskyard.cli.gateway import gateway
from taskyard.cli.output import Output, output_option
from taskyard.cli.task import task_group
from taskyard.cli.task_view import PRIORITIES, STATES, task_table
from taskyard.v1 import task_service_pb2


def _request(
    states: tuple[str, ...], name: str, queue: str, priority: str | None, page_size: int
) -> task_service_pb2.ListTasksRequest:
    return task_service_pb2.ListTasksRequest(
        states=["TASK_STATE_" + s.upper() for s in states],
        name=name,
        queue=queue,
        priority="PRIORITY_" + priority.upper() if priority else None,
        page_size=page_size,
    )


def _show(reply: task_service_pb2.ListTasksResponse) -> RenderableType:
    return task_table(reply.tasks, acting_tenant=Connection.current().tenant)


@task_group.command("list")
@click.option(
    "--state",
    "states",
    multiple=True,
    type=click.Choice(STATES, case_sensitive=False),
    help="Only tasks in this state (repeatable).",
)
@click.option("--name", default="", help="Only tasks of this name.")
@click.option("--queue", default="", help="Only tasks of this queue.")
@click.option("--priority", type=click.Choice(PRIORITIES, case_sensitive=False), default=None)
@click.option("--page-size", type=click.IntRange(1, 1000), default=50, show_default=True)
@click.option("--all", "all_pages", is_flag=True, help="Every page, not only the first.")
@output_option
@target_options
def list_command(
    states: tuple[str, ...],
    name: str,
    queue: str,
    priority: str | None,
    page_size: int,
    all_pages: bool,
    output: Output,
) -> None:
    """List tasks, newest first."""
    request = _request(states, name, queue, priority, page_size)
    reply = task_service_pb2.ListTasksResponse()
    with gateway() as g:
        while True:
            page = g.call(g.tasks.ListTasks, request)
            reply.tasks.extend(page.tasks)
            reply.next_page_token = page.next_page_token
            if not all_pages or not page.next_page_token:
                break
            request.page_token = page.next_page_token
    output.emit(reply, _show)
    count = len(reply.tasks)
    more = " (more: --all)" if reply.next_page_token else ""
    output.note(f"({count} task{'s' if count != 1 else ''}){more}")
