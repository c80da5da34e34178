"""``taskyard task logs ID [--follow]``: a task's log lines (registered on ``task``)."""

from __future__ import annotations

import json
import sys

import click

from taskyard.cli.task import _client, _errors_reported, _plain, _target_option, json_option, task_group


def _echo_line(line: object, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(_plain(line), ensure_ascii=False, sort_keys=True))
        return
    when = getattr(line, "created_at", None)
    stamp = when.isoformat(sep=" ", timespec="milliseconds") if when else "-"
    offset, kind, message = (
        getattr(line, "offset", 0),
        getattr(line, "type", ""),
        getattr(line, "message", ""),
    )
    click.echo(f"{offset:>6} {stamp} {kind:<8} {message}")


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
@json_option
@_target_option
@click.pass_context
@_errors_reported
def logs_command(
    ctx: click.Context, task_id: str, follow: bool, from_offset: int, limit: int | None, as_json: bool
) -> None:
    """Print the lines task ID logged (offset, time, type, message)."""
    with _client(ctx) as client:
        if follow:
            for line in client.logs.follow(task_id, from_offset=from_offset):
                _echo_line(line, as_json)
                sys.stdout.flush()
            return
        offset, shown = from_offset, 0
        while limit is None or shown < limit:
            size = 1000 if limit is None else min(1000, limit - shown)
            page = client.logs.page(task_id, from_offset=offset, page_size=size)
            for line in page.lines:
                _echo_line(line, as_json)
            shown += len(page.lines)
            if not page.lines:
                break
            offset = page.next_offset
