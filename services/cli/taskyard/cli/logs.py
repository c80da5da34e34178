"""``taskyard task logs ID [--follow]``: a task's log lines (registered on ``task``).

Without ``--follow`` the pages are read up to ``--limit`` and printed as one
GetTaskLogsResponse; with it, each StreamTaskLogsResponse is printed as it
arrives (``--output json``: one JSON object per line), and a stream the gateway
cuts (it stops, the connection drops) continues after the last line printed.
"""

from __future__ import annotations

from functools import partial

import click
from rich.console import RenderableType

from taskyard.cli.connection import target_options
from taskyard.cli.gateway import Gateway, gateway
from taskyard.cli.output import Output, lines, output_option, when
from taskyard.cli.task import task_group
from taskyard.client import TaskyardError
from taskyard.v1 import task_pb2, task_service_pb2

# The most lines the gateway returns in one page.
PAGE_LIMIT = 1000


def _line(x: task_pb2.TaskLog) -> str:
    return f"{x.offset:>6} {when(x, 'created_at') or '-'} {x.type:<8} {x.message}"


def _show(
    reply: task_service_pb2.GetTaskLogsResponse | task_service_pb2.StreamTaskLogsResponse,
) -> RenderableType:
    return lines(_line(x) for x in reply.logs)


def _resuming(output: Output, error: TaskyardError, wait: float) -> None:
    why = f"{error.code.name} {error.reason}" if error.reason else error.code.name
    output.note(f"the stream was cut ({why}); following again in {wait:.1f}s")


def _pages(
    g: Gateway, task_id: str, from_offset: int, limit: int | None
) -> task_service_pb2.GetTaskLogsResponse:
    reply = task_service_pb2.GetTaskLogsResponse(next_offset=from_offset)
    while limit is None or len(reply.logs) < limit:
        size = PAGE_LIMIT if limit is None else min(PAGE_LIMIT, limit - len(reply.logs))
        request = task_service_pb2.GetTaskLogsRequest(
            id=task_id, from_offset=reply.next_offset, page_size=size
        )
        page = g.call(g.tasks.GetTaskLogs, request)
        reply.logs.extend(page.logs)
        reply.next_offset, reply.complete = page.next_offset, page.complete
        if not page.logs or page.complete:
            break
    return reply


@task_group.command("logs")
@click.argument("task_id", metavar="ID")
@click.option(
    "--follow", "-f", is_flag=True, help="Keep following until the task is final and its last line shown."
)
@click.option(
    "--from", "from_offset", type=click.IntRange(min=0), default=0, show_default=True, help="First offset."
)
@click.option(
    "--limit", type=click.IntRange(1, 1000), default=None, help="Without --follow: at most this many lines."
)
@output_option
@target_options
def logs_command(task_id: str, follow: bool, from_offset: int, limit: int | None, output: Output) -> None:
    """Print the lines task ID logged (offset, time, type, message)."""
    with gateway() as g:
        if follow:
            output.emit_each(g.follow_logs(task_id, from_offset, partial(_resuming, output)), _show)
            return
        reply = _pages(g, task_id, from_offset, limit)
    output.emit(reply, _show)
