"""``taskyard queue ...``: status, stats and servers; pause, resume, clear, retry and purge.

``queue start`` (a worker pool) lives in queue_start.py. ``clear`` and ``purge``
remove work or data and ask first (confirmation.py).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import click
from google.protobuf.message import Message
from rich.console import RenderableType
from rich.text import Text

from taskyard.cli.confirmation import confirm, yes_option
from taskyard.cli.connection import target_options
from taskyard.cli.durations import DURATION, DurationType
from taskyard.cli.errors import CommandGroup
from taskyard.cli.gateway import Gateway, gateway
from taskyard.cli.output import Output, lines, output_option
from taskyard.cli.queue_view import queue_table, servers_view, stats_view, status_view
from taskyard.v1 import queue_service_pb2 as qs

# `purge --older-than 30` has always meant days.
DAYS = DurationType(bare_unit="d", minimum=dt.timedelta())


@click.group("queue", cls=CommandGroup)
@target_options
def queue_group() -> None:
    """Operate queues and the worker pools that serve them."""


def _queue_status() -> qs.GetQueueStatusResponse:
    """The one reply behind ``status`` and ``stats``, which only view it differently."""
    with gateway() as g:
        reply: qs.GetQueueStatusResponse = g.call(g.queues.GetQueueStatus, qs.GetQueueStatusRequest())
    return reply


@queue_group.command("status")
@output_option
@target_options
def status_command(output: Output) -> None:
    """Tasks per queue and state, paused queues, servers in brief."""
    output.emit(_queue_status(), status_view)


@queue_group.command("stats")
@output_option
@target_options
def stats_command(output: Output) -> None:
    """Mean run time (last hour) and failures today, per queue (GetQueueStatus)."""
    output.emit(_queue_status(), stats_view)


@queue_group.command("servers")
@click.option(
    "--max-age", type=DURATION, default=None, help="Since the last heartbeat: 30s, 5m (default 60s)."
)
@output_option
@target_options
def servers_command(max_age: dt.timedelta | None, output: Output) -> None:
    """The worker pools that beat recently, with their worker processes."""
    request = qs.ListServersRequest()
    if max_age is not None:
        request.max_age.FromTimedelta(max_age)
    with gateway() as g:
        reply = g.call(g.queues.ListServers, request)
    output.emit(reply, servers_view)


def _show_queue(reply: Any) -> RenderableType:
    """A reply holding one ``queue`` (pause, resume)."""
    info: qs.QueueInfo = reply.queue
    return queue_table([info])


def _pause_resume_command(
    verb: str, help_text: str, method: Callable[[Gateway], Any], request: Callable[..., Message]
) -> click.Command:
    """``queue pause`` and ``queue resume``: one RPC on QUEUE, answered by the queue as it now is."""

    @queue_group.command(verb, help=help_text)
    @click.argument("queue", default="default")
    @output_option
    @target_options
    def command(queue: str, output: Output) -> None:
        with gateway() as g:
            reply = g.call(method(g), request(queue=queue))
        output.emit(reply, _show_queue)

    return command


pause_command = _pause_resume_command(
    "pause",
    "Stop dispatching from QUEUE (its tasks stay queued).",
    lambda g: g.queues.PauseQueue,
    qs.PauseQueueRequest,
)
resume_command = _pause_resume_command(
    "resume", "Dispatch from QUEUE again.", lambda g: g.queues.ResumeQueue, qs.ResumeQueueRequest
)


@queue_group.command("clear")
@click.argument("queue", default="")
@yes_option
@output_option
@target_options
def clear_command(queue: str, yes: bool, output: Output) -> None:
    """Cancel the waiting tasks of QUEUE (every queue when omitted). Development only."""
    confirm(f"Cancel every waiting task of {f'queue {queue}' if queue else 'every queue'}?", yes=yes)
    with gateway() as g:
        reply = g.call(g.queues.ClearQueue, qs.ClearQueueRequest(queue=queue))
    output.emit(reply, lambda r: Text(f"cancelled {r.cleared} tasks"))


@queue_group.command("retry")
@click.argument("ids", nargs=-1)
@click.option("--queue", default="", help="Only failed tasks of this queue.")
@click.option("--name", default="", help="Only failed tasks of this name.")
@click.option("--limit", type=click.IntRange(0, 10_000), default=0, help="At most this many (0 = 1000).")
@output_option
@target_options
def retry_command(ids: tuple[str, ...], queue: str, name: str, limit: int, output: Output) -> None:
    """Run failed tasks again as a new attempt (IDS, or every failed task matching the filters)."""
    request = qs.RetryTasksRequest(queue=queue, name=name, ids=list(ids), limit=limit)
    with gateway() as g:
        reply = g.call(g.queues.RetryTasks, request)
    output.emit(reply, lambda r: lines(r.ids))
    output.note(f"retried {len(reply.ids)} tasks")


@queue_group.command("purge")
@click.option(
    "--older-than",
    type=DAYS,
    default=None,
    help="Finished longer ago than this: 30d, 12h; a bare number is days "
    "(default: QUEUED_TASK_RETENTION_DAYS, 30).",
)
@yes_option
@output_option
@target_options
def purge_command(older_than: dt.timedelta | None, yes: bool, output: Output) -> None:
    """Delete final tasks (with their logs) finished more than --older-than ago."""
    confirm("Delete the final tasks past retention, with their logs?", yes=yes)
    request = qs.PurgeTasksRequest()
    if older_than is not None:
        request.older_than.FromTimedelta(older_than)
    with gateway() as g:
        reply = g.call(g.queues.PurgeTasks, request)
    output.emit(reply, lambda r: Text(f"purged {r.purged} tasks"))
