"""The flat JSON of the hidden, deprecated ``--json``: what earlier releases printed.

One compact object per task, log line, queue or schedule, as the Python
client's dataclasses see it (states without prefix, durations in seconds).
New scripts should read ``--output json``, the API's own mapping; this stays
so the scripts written against the old shape keep working.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from collections.abc import Mapping
from typing import Any

from taskyard.cli.task_view import cancel_step_name
from taskyard.client import LogLine, QueueInfo, QueueStatus, ScheduleInfo, ServerInfo, TaskInfo
from taskyard.v1 import queue_service_pb2, schedule_service_pb2, task_pb2, task_service_pb2


def plain(value: Any) -> Any:
    """A client dataclass (and whatever it holds) as JSON-ready data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def task(reply: Any) -> list[Any]:
    """A reply holding one ``task`` (submit, get, wait)."""
    message: task_pb2.Task = reply.task
    return [plain(TaskInfo.from_proto(message))]


def cancellation(reply: task_service_pb2.CancelTaskResponse) -> list[Any]:
    data: dict[str, Any] = {**plain(TaskInfo.from_proto(reply.task)), "cancelled": reply.cancelled}
    if reply.step:
        data["step"] = cancel_step_name(reply.step)
    if reply.cancelled_children:
        data["cancelled_children"] = list(reply.cancelled_children)
    return [data]


def tasks(reply: task_service_pb2.ListTasksResponse) -> list[Any]:
    return [plain(TaskInfo.from_proto(t)) for t in reply.tasks]


def log_lines(reply: Any) -> list[Any]:
    """A logs page or a stream message: one object per line."""
    return [plain(LogLine.from_proto(x)) for x in reply.logs]


def queue_status(reply: queue_service_pb2.GetQueueStatusResponse) -> list[Any]:
    status = QueueStatus(
        queues=tuple(QueueInfo.from_proto(q) for q in reply.queues),
        servers=reply.servers,
        capacity=reply.capacity,
        running_tasks=reply.running_tasks,
        late_completions=reply.late_completions,
    )
    return [plain(status)]


def queue_stats(reply: queue_service_pb2.GetQueueStatusResponse) -> list[Any]:
    def waiting(q: queue_service_pb2.QueueInfo) -> int:
        return q.pending + q.queued + q.scheduled + q.retrying

    rows = [
        {
            "queue": q.name,
            "mean_seconds": round(q.mean_duration.ToTimedelta().total_seconds(), 6),
            "failed_today": q.failed_today,
            "done": q.succeeded + q.failed + q.cancelled,
            "waiting": waiting(q),
        }
        for q in reply.queues
    ]
    return [rows]


def servers(reply: queue_service_pb2.ListServersResponse) -> list[Any]:
    return [[plain(ServerInfo.from_proto(s)) for s in reply.servers]]


def queue(reply: Any) -> list[Any]:
    """A reply holding one ``queue`` (pause, resume)."""
    message: queue_service_pb2.QueueInfo = reply.queue
    return [plain(QueueInfo.from_proto(message))]


def retried(reply: queue_service_pb2.RetryTasksResponse) -> list[Any]:
    return [list(reply.ids)]


def schedule(reply: Any) -> list[Any]:
    """A reply holding one ``schedule`` (create, get, pause, resume)."""
    return [plain(ScheduleInfo.from_proto(reply.schedule))]


def schedules(reply: schedule_service_pb2.ListSchedulesResponse) -> list[Any]:
    return [[plain(ScheduleInfo.from_proto(s)) for s in reply.schedules]]


def triggered(reply: schedule_service_pb2.TriggerScheduleResponse) -> list[Any]:
    data = plain(TaskInfo.from_proto(reply.task))
    return [{**data, "schedule": reply.schedule.name, "times_run": reply.schedule.times_run}]
