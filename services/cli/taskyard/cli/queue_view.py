"""How queues and worker pools look in a table (``taskyard queue ...``)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Group, RenderableType
from rich.text import Text

from taskyard.cli import durations
from taskyard.cli.output import table, when
from taskyard.v1 import queue_service_pb2 as qs

# The per-state counts of a queue, in the API's field order (the int64 fields between
# "paused" and "mean_duration"), so a state the API adds shows up here by itself.
_INFO_FIELDS = [f.name for f in qs.QueueInfo.DESCRIPTOR.fields]
STATE_COLUMNS = tuple(_INFO_FIELDS[_INFO_FIELDS.index("paused") + 1 : _INFO_FIELDS.index("mean_duration")])
# A column is headed by the state it counts, as tasks show it (SUCCESS, not SUCCEEDED).
_STATE_HEADERS = {"succeeded": "success", "failed": "failure"}
_MIB = 1024 * 1024


def queue_table(queues: Iterable[qs.QueueInfo]) -> RenderableType:
    """Tasks per queue and state, and whether the queue is paused."""
    return table(
        ("queue", *(_STATE_HEADERS.get(c, c) for c in STATE_COLUMNS), "paused"),
        ([q.name, *(str(getattr(q, c)) for c in STATE_COLUMNS), "yes" if q.paused else ""] for q in queues),
    )


def status_view(reply: qs.GetQueueStatusResponse) -> RenderableType:
    footer = (
        f"servers: {reply.servers}, capacity: {reply.capacity}, running: {reply.running_tasks}, "
        f"late completions: {reply.late_completions}"
    )
    return Group(queue_table(reply.queues), Text(footer))


def stats_view(reply: qs.GetQueueStatusResponse) -> RenderableType:
    """Mean run time of the last hour, failures today, tasks done and waiting, per queue."""
    return table(
        ("queue", "mean", "failed today", "done", "waiting"),
        (
            (
                q.name,
                durations.format_proto(q.mean_duration),
                str(q.failed_today),
                str(q.succeeded + q.failed + q.cancelled),
                str(q.pending + q.queued + q.scheduled + q.retrying),
            )
            for q in reply.queues
        ),
    )


def servers_view(reply: qs.ListServersResponse) -> RenderableType:
    """The pools, then their worker processes."""
    if not reply.servers:
        return Text("no server")
    pools = table(
        ("server", "pool", "state", "running", "workers", "rss", "last beat"),
        (
            (
                s.server_name,
                s.pool_id,
                s.state,
                f"{s.running_tasks}/{s.capacity}",
                f"{s.max_workers} x {s.concurrency}",
                f"{s.rss_bytes // _MIB} MiB",
                when(s, "last_heartbeat", timespec="seconds"),
            )
            for s in reply.servers
        ),
    )
    workers = table(
        ("server", "worker", "pid", "state", "running", "rss", "last beat"),
        (
            (
                s.server_name,
                f"w{w.index}",
                str(w.pid),
                w.state,
                str(w.running_tasks),
                f"{w.rss_bytes // _MIB} MiB",
                when(w, "last_beat", timespec="seconds"),
            )
            for s in reply.servers
            for w in s.workers
        ),
    )
    return Group(pools, Text(""), workers)
