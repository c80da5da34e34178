"""``taskyard schedule ...``: periodic tasks (ScheduleService).

A schedule is addressed by its name or its id everywhere (``schedule pause
nightly``): the API takes either in the same ``id`` field, so the CLI passes
what it is given. ``delete`` asks first (confirmation.py). Exit status: errors.py.
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
from taskyard.cli.durations import DURATION
from taskyard.cli.errors import CommandGroup
from taskyard.cli.gateway import Gateway, gateway
from taskyard.cli.output import Output, output_option
from taskyard.cli.schedule_view import schedule_detail, schedule_table
from taskyard.cli.task_arguments import json_arg, parse_kwargs
from taskyard.cli.task_view import PRIORITIES, task_detail
from taskyard.client import TaskRequest
from taskyard.v1 import schedule_pb2
from taskyard.v1 import schedule_service_pb2 as ss

IDENT = "NAME_OR_ID"


@click.group("schedule", cls=CommandGroup)
@target_options
def schedule_group() -> None:
    """Create and operate periodic tasks (each addressed by name or id)."""


def _show(reply: Any) -> RenderableType:
    """A reply holding one ``schedule``."""
    schedule: schedule_pb2.Schedule = reply.schedule
    return schedule_detail(schedule)


def _schedule(
    name: str, task: str, args: tuple[str, ...], kwargs_json: str | None, priority: str | None, queue: str
) -> schedule_pb2.Schedule:
    template = TaskRequest(
        name=task,
        args=[json_arg(a) for a in args],
        kwargs=parse_kwargs(kwargs_json),
        priority=priority,
        queue=queue,
    )
    try:
        spec = template.to_proto()
    except (TypeError, ValueError) as exc:  # an argument JSON cannot carry (2**60, NaN)
        raise click.UsageError(str(exc)) from None
    return schedule_pb2.Schedule(name=name, task=spec)


@schedule_group.command("create")
@click.argument("name")
@click.argument("task")
@click.argument("args", nargs=-1)
@click.option("--cron", default=None, help='5-field cron, e.g. "*/5 * * * *".')
@click.option("--every", type=DURATION, default=None, help="Interval: 30s, 5m, 1h30m, 1d (at least 1s).")
@click.option("--tz", "time_zone", default="", help="IANA time zone of the cron (default UTC).")
@click.option(
    "--overlap",
    type=click.Choice(["skip", "allow"]),
    default="skip",
    show_default=True,
    help="A due run while the previous one is unfinished: skip it or run anyway.",
)
@click.option("--paused", is_flag=True, help="Create it paused.")
@click.option(
    "--kwargs", "kwargs_json", default=None, help="Keyword arguments as a JSON object: '{\"x\": 1}'."
)
@click.option("--priority", type=click.Choice(PRIORITIES, case_sensitive=False), default=None)
@click.option("--queue", default="", help="Logical queue of the runs (default: default).")
@output_option
@target_options
def create_command(
    name: str,
    task: str,
    args: tuple[str, ...],
    cron: str | None,
    every: dt.timedelta | None,
    time_zone: str,
    overlap: str,
    paused: bool,
    kwargs_json: str | None,
    priority: str | None,
    queue: str,
    output: Output,
) -> None:
    """Create schedule NAME running TASK with ARGS (JSON or text) by --cron or --every."""
    if (cron is None) == (every is None):
        raise click.UsageError("give exactly one of --cron and --every")
    schedule = _schedule(name, task, args, kwargs_json, priority, queue)
    schedule.time_zone = time_zone
    schedule.paused = paused
    schedule.overlap = (
        schedule_pb2.OVERLAP_POLICY_ALLOW if overlap == "allow" else schedule_pb2.OVERLAP_POLICY_SKIP
    )
    if cron is not None:
        schedule.cron = cron
    elif every is not None:
        schedule.interval.FromTimedelta(every)
    with gateway() as g:
        reply = g.call(g.schedules.CreateSchedule, ss.CreateScheduleRequest(schedule=schedule))
    output.emit(reply, _show)


def _by_ident_command(
    verb: str, help_text: str, method: Callable[[Gateway], Any], request: Callable[..., Message]
) -> click.Command:
    """``get``, ``pause`` and ``resume``: one RPC on one schedule, answered by the schedule."""

    @schedule_group.command(verb, help=help_text)
    @click.argument("ident", metavar=IDENT)
    @output_option
    @target_options
    def command(ident: str, output: Output) -> None:
        with gateway() as g:
            reply = g.call(method(g), request(id=ident))
        output.emit(reply, _show)

    return command


get_command = _by_ident_command(
    "get", "Show one schedule.", lambda g: g.schedules.GetSchedule, ss.GetScheduleRequest
)


def _every_page(g: Gateway, page_size: int, all_pages: bool) -> ss.ListSchedulesResponse:
    reply = ss.ListSchedulesResponse()
    request = ss.ListSchedulesRequest(page_size=page_size)
    while True:
        page = g.call(g.schedules.ListSchedules, request)
        reply.schedules.extend(page.schedules)
        reply.next_page_token = request.page_token = page.next_page_token
        if not all_pages or not page.next_page_token:
            return reply


@schedule_group.command("list")
@click.option("--page-size", type=click.IntRange(1, 1000), default=100, show_default=True)
@click.option("--all", "all_pages", is_flag=True, help="Every page, not only the first.")
@output_option
@target_options
def list_command(page_size: int, all_pages: bool, output: Output) -> None:
    """Schedules by name: name, id, task, timing, next run, runs."""
    with gateway() as g:
        reply = _every_page(g, page_size, all_pages)
    output.emit(reply, lambda r: schedule_table(r.schedules))
    if reply.next_page_token:
        output.note(f"(more: --all, or page token {reply.next_page_token})")


pause_command = _by_ident_command(
    "pause",
    "Stop firing runs (a manual trigger still works).",
    lambda g: g.schedules.PauseSchedule,
    ss.PauseScheduleRequest,
)
resume_command = _by_ident_command(
    "resume",
    "Fire runs again, from now on (runs missed while paused are not fired).",
    lambda g: g.schedules.ResumeSchedule,
    ss.ResumeScheduleRequest,
)


@schedule_group.command("delete")
@click.argument("ident", metavar=IDENT)
@yes_option
@output_option
@target_options
def delete_command(ident: str, yes: bool, output: Output) -> None:
    """Delete a schedule (tasks it already fired are kept)."""
    confirm(f"Delete schedule {ident}?", yes=yes)
    with gateway() as g:
        reply = g.call(g.schedules.DeleteSchedule, ss.DeleteScheduleRequest(id=ident))
    output.emit(reply, lambda _r: Text(f"deleted {ident}"))


def _show_fired(reply: ss.TriggerScheduleResponse) -> RenderableType:
    extra: list[tuple[str, RenderableType]] = [
        ("schedule", reply.schedule.name),
        ("times_run", str(reply.schedule.times_run)),
    ]
    return task_detail(reply.task, extra)


@schedule_group.command("trigger")
@click.argument("ident", metavar=IDENT)
@output_option
@target_options
def trigger_command(ident: str, output: Output) -> None:
    """Fire one run now (counts in times_run; next_run_at is unchanged)."""
    with gateway() as g:
        reply = g.call(g.schedules.TriggerSchedule, ss.TriggerScheduleRequest(id=ident))
    output.emit(reply, _show_fired)
