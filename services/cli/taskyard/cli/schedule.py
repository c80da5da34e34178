"""``taskyard schedule ...``: periodic tasks (ScheduleService).

Exit status: 0 on success, 1 on an error from the service (code, reason and
field violations on stderr), 2 for bad command-line usage.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import TYPE_CHECKING, Any

import click

from taskyard.cli.task import (
    PRIORITIES,
    _client,
    _emit,
    _errors_reported,
    _json_arg,
    _parse_kwargs,
    _plain,
    _target_option,
    group_target_option,
    json_option,
)

if TYPE_CHECKING:
    from taskyard.client import ScheduleInfo

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_every(text: str) -> dt.timedelta:
    """``90``, ``90s``, ``5m``, ``1.5h``, ``1d`` -> a timedelta."""
    m = _DURATION.match(text)
    if m is None:
        raise click.BadParameter("use a number with an optional unit: 30s, 5m, 2h, 1d", param_hint="--every")
    return dt.timedelta(seconds=float(m.group(1)) * _UNIT_SECONDS[m.group(2)])


def _when(value: dt.datetime | None) -> str:
    return value.isoformat(sep=" ", timespec="seconds") if value else "-"


def _echo_schedule(s: ScheduleInfo, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(_plain(s), ensure_ascii=False, sort_keys=True))
        return
    timing = f"cron {s.cron!r}" if s.cron else f"every {s.interval}"
    rows = [
        ("id", s.id),
        ("name", s.name),
        ("task", f"{s.task_name} args={json.dumps(list(s.args))} kwargs={json.dumps(dict(s.kwargs))}"),
        ("when", f"{timing} ({s.time_zone})"),
        ("overlap", s.overlap),
        ("paused", "yes" if s.paused else "no"),
        ("declared", "yes" if s.declared else "no"),
        ("times_run", str(s.times_run)),
        ("times_skipped", str(s.times_skipped)),
        ("next_run_at", _when(s.next_run_at)),
        ("last_run_at", _when(s.last_run_at)),
        ("last_task_id", s.last_task_id or "-"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        click.echo(f"{key.ljust(width)}  {value}")


@click.group("schedule")
@group_target_option
@click.pass_context
def schedule_group(ctx: click.Context, target: str) -> None:
    """Create and operate periodic tasks."""
    ctx.ensure_object(dict)
    ctx.obj["target"] = target


@schedule_group.command("create")
@click.argument("name")
@click.argument("task")
@click.argument("args", nargs=-1)
@click.option("--cron", default=None, help='5-field cron, e.g. "*/5 * * * *".')
@click.option("--every", default=None, help="Interval: 30s, 5m, 2h, 1d (at least 1s).")
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
@json_option
@_target_option
@click.pass_context
@_errors_reported
def create_command(
    ctx: click.Context,
    name: str,
    task: str,
    args: tuple[str, ...],
    cron: str | None,
    every: str | None,
    time_zone: str,
    overlap: str,
    paused: bool,
    kwargs_json: str | None,
    priority: str | None,
    queue: str,
    as_json: bool,
) -> None:
    """Create schedule NAME running TASK with ARGS (JSON or text) by --cron or --every."""
    if (cron is None) == (every is None):
        raise click.UsageError("give exactly one of --cron and --every")
    with _client(ctx) as c:
        s = c.schedules.create(
            name,
            task,
            *(_json_arg(a) for a in args),
            cron=cron,
            every=parse_every(every) if every is not None else None,
            time_zone=time_zone,
            overlap=overlap,
            paused=paused,
            priority=priority,
            queue=queue,
            **_parse_kwargs(kwargs_json),
        )
    _echo_schedule(s, as_json)


@schedule_group.command("get")
@click.argument("ident", metavar="ID_OR_NAME")
@json_option
@_target_option
@click.pass_context
@_errors_reported
def get_command(ctx: click.Context, ident: str, as_json: bool) -> None:
    """Show one schedule."""
    with _client(ctx) as c:
        _echo_schedule(c.schedules.get(ident), as_json)


@schedule_group.command("list")
@click.option("--page-size", type=click.IntRange(1, 1000), default=100, show_default=True)
@click.option("--all", "all_pages", is_flag=True, help="Every page, not only the first.")
@json_option
@_target_option
@click.pass_context
@_errors_reported
def list_command(ctx: click.Context, page_size: int, all_pages: bool, as_json: bool) -> None:
    """Schedules by name: name, timing, next run, runs."""
    with _client(ctx) as c:
        token = ""
        items: list[ScheduleInfo] = []
        while True:
            page = c.schedules.list(page_size=page_size, page_token=token)
            items.extend(page.schedules)
            token = page.next_page_token
            if not token or not all_pages:
                break
    if as_json:
        click.echo(json.dumps([_plain(s) for s in items], ensure_ascii=False, sort_keys=True))
        return
    for s in items:
        timing = s.cron if s.cron else f"every {s.interval}"
        state = "paused" if s.paused else f"next {_when(s.next_run_at)}"
        click.echo(f"{s.name}\t{s.task_name}\t{timing} {s.time_zone}\t{state}\truns={s.times_run}")
    if token:
        click.echo(f"(more: --all, or page token {token})", err=True)


def _change(ctx: click.Context, ident: str, as_json: bool, action: str) -> None:
    with _client(ctx) as c:
        s = getattr(c.schedules, action)(ident)
    _echo_schedule(s, as_json)


@schedule_group.command("pause")
@click.argument("ident", metavar="ID_OR_NAME")
@json_option
@_target_option
@click.pass_context
@_errors_reported
def pause_command(ctx: click.Context, ident: str, as_json: bool) -> None:
    """Stop firing runs (a manual trigger still works)."""
    _change(ctx, ident, as_json, "pause")


@schedule_group.command("resume")
@click.argument("ident", metavar="ID_OR_NAME")
@json_option
@_target_option
@click.pass_context
@_errors_reported
def resume_command(ctx: click.Context, ident: str, as_json: bool) -> None:
    """Fire runs again, from now on (runs missed while paused are not fired)."""
    _change(ctx, ident, as_json, "resume")


@schedule_group.command("delete")
@click.argument("ident", metavar="ID_OR_NAME")
@_target_option
@click.pass_context
@_errors_reported
def delete_command(ctx: click.Context, ident: str) -> None:
    """Delete a schedule (tasks it already fired are kept)."""
    with _client(ctx) as c:
        c.schedules.delete(ident)
    click.echo(f"deleted {ident}")


@schedule_group.command("trigger")
@click.argument("ident", metavar="ID_OR_NAME")
@json_option
@_target_option
@click.pass_context
@_errors_reported
def trigger_command(ctx: click.Context, ident: str, as_json: bool) -> None:
    """Fire one run now (counts in times_run; next_run_at is unchanged)."""
    with _client(ctx) as c:
        fired = c.schedules.trigger(ident)
    extra: dict[str, Any] = {"schedule": fired.schedule.name, "times_run": fired.schedule.times_run}
    _emit(fired.task, as_json, **extra)
