"""``taskyard queue ...``: the seed's queue commands (status, start, clear, retry, stats, servers)
plus pause, resume and purge. ``queue start`` (a worker pool) lives in queue_start.py."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import click

from taskyard.cli.task import group_target_option

if TYPE_CHECKING:
    from taskyard.client import Client

STATE_COLUMNS = (
    "pending",
    "queued",
    "scheduled",
    "assigned",
    "running",
    "retrying",
    "succeeded",
    "failed",
    "cancelled",
)


# Each queue command takes the gateway as its own option (no group context).
_target = group_target_option


@contextlib.contextmanager
def _client(target: str) -> Iterator[Client]:
    from taskyard.cli.connection import Connection

    client = Connection.current(target).client()
    try:
        yield client
    finally:
        client.close()


def _reported(func: Any) -> Any:
    import functools

    from taskyard.cli.task import _errors_reported

    return functools.wraps(func)(_errors_reported(func))


json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")


def _dump(value: Any) -> None:
    from taskyard.cli.task import _plain

    click.echo(json.dumps(_plain(value), ensure_ascii=False, sort_keys=True))


@click.group("queue")
def queue_group() -> None:
    """Operate queues and the worker pools that serve them."""


@queue_group.command("status")
@json_option
@_target
@_reported
def status_command(target: str, as_json: bool) -> None:
    """Tasks per queue and state, paused queues, servers in brief."""
    with _client(target) as client:
        status = client.queues.status()
    if as_json:
        _dump(status)
        return
    header = ["queue", *STATE_COLUMNS, "paused"]
    rows = [
        [q.name, *(str(q.counts[c]) for c in STATE_COLUMNS), "yes" if q.paused else ""] for q in status.queues
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())
    click.echo(
        f"servers: {status.servers}, capacity: {status.capacity}, running: {status.running_tasks}, "
        f"late completions: {status.late_completions}"
    )


@queue_group.command("stats")
@json_option
@_target
@_reported
def stats_command(target: str, as_json: bool) -> None:
    """Mean run time (last hour) and failures today, per queue."""
    with _client(target) as client:
        status = client.queues.status()
    rows = [
        {
            "queue": q.name,
            "mean_seconds": round(q.mean_duration.total_seconds(), 6),
            "failed_today": q.failed_today,
            "done": q.counts["succeeded"] + q.counts["failed"] + q.counts["cancelled"],
            "waiting": q.counts["pending"]
            + q.counts["queued"]
            + q.counts["scheduled"]
            + q.counts["retrying"],
        }
        for q in status.queues
    ]
    if as_json:
        _dump(rows)
        return
    for r in rows:
        click.echo(
            f"{r['queue']}: mean {r['mean_seconds']:.3f}s, failed today {r['failed_today']}, "
            f"done {r['done']}, waiting {r['waiting']}"
        )


@queue_group.command("servers")
@click.option("--max-age", type=float, default=None, help="Seconds since the last heartbeat (default 60).")
@json_option
@_target
@_reported
def servers_command(target: str, max_age: float | None, as_json: bool) -> None:
    """The worker pools that beat recently, with their worker processes."""
    with _client(target) as client:
        servers = client.queues.servers(max_age)
    if as_json:
        _dump(servers)
        return
    if not servers:
        click.echo("no server")
    for s in servers:
        click.echo(
            f"{s.server_name} {s.pool_id} {s.state}: {s.running_tasks}/{s.capacity} running, "
            f"{s.max_workers} workers x {s.concurrency}, rss {s.rss_bytes // (1024 * 1024)} MiB"
        )
        for w in s.workers:
            mib = w.rss_bytes // (1024 * 1024)
            click.echo(f"  w{w.index} pid {w.pid} {w.state} running {w.running_tasks} rss {mib} MiB")


@queue_group.command("pause")
@click.argument("queue", default="default")
@json_option
@_target
@_reported
def pause_command(target: str, queue: str, as_json: bool) -> None:
    """Stop dispatching from QUEUE (its tasks stay queued)."""
    with _client(target) as client:
        info = client.queues.pause(queue)
    _dump(info) if as_json else click.echo(f"queue {info.name} paused ({info.counts['queued']} queued)")


@queue_group.command("resume")
@click.argument("queue", default="default")
@json_option
@_target
@_reported
def resume_command(target: str, queue: str, as_json: bool) -> None:
    """Dispatch from QUEUE again."""
    with _client(target) as client:
        info = client.queues.resume(queue)
    _dump(info) if as_json else click.echo(f"queue {info.name} resumed ({info.counts['queued']} queued)")


@queue_group.command("clear")
@click.argument("queue", default="")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@_target
@_reported
def clear_command(target: str, queue: str, yes: bool) -> None:
    """Cancel the waiting tasks of QUEUE (every queue when omitted). Development only."""
    if not yes:
        click.confirm(f"Cancel every waiting task of {queue or 'every queue'}?", abort=True)
    with _client(target) as client:
        click.echo(f"cancelled {client.queues.clear(queue)} tasks")


@queue_group.command("retry")
@click.argument("ids", nargs=-1)
@click.option("--queue", default="", help="Only failed tasks of this queue.")
@click.option("--name", default="", help="Only failed tasks of this name.")
@click.option("--limit", type=click.IntRange(0, 10_000), default=0, help="At most this many (0 = 1000).")
@json_option
@_target
@_reported
def retry_command(
    target: str, ids: tuple[str, ...], queue: str, name: str, limit: int, as_json: bool
) -> None:
    """Run failed tasks again as a new attempt (IDS, or every failed task matching the filters)."""
    with _client(target) as client:
        retried = client.queues.retry(queue=queue, name=name, ids=ids, limit=limit)
    if as_json:
        _dump(retried)
        return
    for tid in retried:
        click.echo(tid)
    click.echo(f"retried {len(retried)} tasks", err=True)


@queue_group.command("purge")
@click.option(
    "--older-than", type=float, default=None, help="Days (default: QUEUED_TASK_RETENTION_DAYS, 30)."
)
@_target
@_reported
def purge_command(target: str, older_than: float | None) -> None:
    """Delete final tasks (with their logs) finished more than --older-than days ago."""
    with _client(target) as client:
        purged = client.queues.purge(None if older_than is None else older_than * 86_400)
    click.echo(f"purged {purged} tasks")
