"""``taskyard task ...``: the task group, with ``get``, ``wait``, ``cancel`` and ``retry``.

``submit`` (submit.py), ``list`` (task_list.py), ``logs``, ``tree`` and
``explain`` register themselves on the group. Exit status: errors.py.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import click
from rich.console import RenderableType

from taskyard.cli.connection import target_options
from taskyard.cli.durations import DURATION
from taskyard.cli.errors import EXIT_TASK_FAILED, EXIT_TIMED_OUT, CommandGroup, fail
from taskyard.cli.gateway import CALL_TIMEOUT, WAIT_SLACK, Gateway, gateway
from taskyard.cli.output import Output, lines, output_option
from taskyard.cli.task_view import cancel_step_name, state_name, task_detail
from taskyard.v1 import queue_service_pb2, task_pb2, task_service_pb2

# RetryTasksRequest.limit at most.
MAX_RETRY_IDS = 10_000
FINAL_STATES = (task_pb2.TASK_STATE_SUCCESS, task_pb2.TASK_STATE_FAILURE, task_pb2.TASK_STATE_CANCELLED)


@click.group("task", cls=CommandGroup)
@target_options
def task_group() -> None:
    """Submit, inspect, wait for, cancel and retry tasks."""


def show_task(reply: Any) -> RenderableType:
    """The table view of a reply holding one ``task``."""
    task: task_pb2.Task = reply.task
    return task_detail(task)


def wait_and_show(g: Gateway, task_id: str, timeout: dt.timedelta, output: Output) -> None:
    """Wait for the task, print it, and end with the status of its outcome (errors.py)."""
    show_outcome(g.wait_task(task_id, timeout), output)


def show_outcome(reply: task_service_pb2.WaitTaskResponse, output: Output) -> None:
    """Print a waited task, and end with the status of its outcome (errors.py)."""
    output.emit(reply, show_task)
    if reply.timed_out or reply.task.state not in FINAL_STATES:
        click.echo(f"timed out waiting: task {reply.task.id} is {state_name(reply.task)}", err=True)
        click.get_current_context().exit(EXIT_TIMED_OUT)
    if reply.task.state != task_pb2.TASK_STATE_SUCCESS:
        click.get_current_context().exit(EXIT_TASK_FAILED)


@task_group.command("get")
@click.argument("task_id", metavar="ID")
@output_option
@target_options
def get_command(task_id: str, output: Output) -> None:
    """Show one task."""
    with gateway() as g:
        reply = g.call(g.tasks.GetTask, task_service_pb2.GetTaskRequest(id=task_id))
    output.emit(reply, show_task)


@task_group.command("wait")
@click.argument("task_id", metavar="ID")
@click.option(
    "--timeout", type=DURATION, default="30s", show_default=True, help="How long to wait: 30s, 5m, 1h."
)
@output_option
@target_options
def wait_command(task_id: str, timeout: dt.timedelta, output: Output) -> None:
    """Wait until a task is final (SUCCESS, FAILURE or CANCELLED) and show it.

    Exit status 3 when it ended FAILURE or CANCELLED, 4 when the wait ran out first.
    """
    with gateway() as g:
        wait_and_show(g, task_id, timeout, output)


def cancel_outcome(reply: task_service_pb2.CancelTaskResponse) -> str:
    """What the cancel did, in words: an accepted request is not a refusal."""
    if reply.cancelled:
        return "cancelled"
    if reply.task.state in FINAL_STATES:  # it ended on its own while the cancel waited
        return f"not cancelled: it ended {state_name(reply.task)} first"
    return f"requested: the {state_name(reply.task)} task is being stopped in steps (--wait shows which)"


def _show_cancellation(reply: task_service_pb2.CancelTaskResponse) -> RenderableType:
    extra: list[tuple[str, RenderableType]] = [("outcome", cancel_outcome(reply))]
    if reply.step:
        extra.append(("step", cancel_step_name(reply.step)))
    if reply.cancelled_children:
        extra.append(("cancelled_children", ", ".join(reply.cancelled_children)))
    return task_detail(reply.task, extra)


@task_group.command("cancel")
@click.argument("task_id", metavar="ID")
@click.option("--reason", default="", help="Why (kept with the task).")
@click.option(
    "--wait",
    "wait_",
    type=DURATION,
    default=None,
    help="How long to wait for a running task to stop (e.g. 10s), to see which step stopped it.",
)
@output_option
@target_options
def cancel_command(task_id: str, reason: str, wait_: dt.timedelta | None, output: Output) -> None:
    """Cancel a task and its unfinished children. One that has not started is
    cancelled at once; a running one is stopped in steps (--wait to see which)."""
    request = task_service_pb2.CancelTaskRequest(id=task_id, reason=reason)
    deadline = CALL_TIMEOUT
    if wait_ is not None:
        request.wait.FromTimedelta(wait_)
        deadline = wait_.total_seconds() + WAIT_SLACK
    with gateway() as g:
        reply = g.call(g.tasks.CancelTask, request, timeout=deadline)
    output.emit(reply, _show_cancellation)


def _same_id(raw: str) -> str:
    """An id as the gateway answers it (lower-case UUID); unchanged when it is not one."""
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        return raw


@task_group.command("retry")
@click.argument("task_ids", metavar="ID...", nargs=-1, required=True)
@output_option
@target_options
def retry_command(task_ids: tuple[str, ...], output: Output) -> None:
    """Run FAILURE tasks again, each as a new attempt (RetryTasks).

    Prints the ids retried. Exit status 1 when one of them was not retried (it
    is not FAILURE, or there is no such task). ``queue retry`` retries by filter."""
    # Every id given (the API's limit otherwise defaults to 1,000; past its 10,000 it names the ids).
    request = queue_service_pb2.RetryTasksRequest(ids=list(task_ids), limit=min(len(task_ids), MAX_RETRY_IDS))
    with gateway() as g:
        reply = g.call(g.queues.RetryTasks, request)
    output.emit(reply, lambda r: lines(r.ids))
    output.note(f"retried {len(reply.ids)} of {len(task_ids)} tasks")
    retried = set(reply.ids)
    left = [raw for raw in task_ids if _same_id(raw) not in retried]
    if left:
        fail(f"not retried (not FAILURE, or no such task): {', '.join(left)}")
