"""Task logs and queue operations: ``client.logs`` and ``client.queues``.

with Client() as c:
    for line in c.logs.follow(task_id):        # replay, then follow to the end
        print(line.offset, line.type, line.message)
    c.queues.pause("reports"); c.queues.resume("reports")
    print(c.queues.status().queues, c.queues.servers())

A follow interrupted for a reason that is not the caller's (the gateway stops, the
connection drops: ``_resume``) continues by itself from the line after the last one
it gave, so every line comes once, in order.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import grpc

from taskyard.client._errors import TaskyardError
from taskyard.client._resume import Backoff, resumable
from taskyard.v1 import queue_service_pb2 as qs
from taskyard.v1 import queue_service_pb2_grpc, task_pb2, task_service_pb2

R = TypeVar("R")
_COUNTS = (
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


def _when(msg: Any, field: str) -> datetime.datetime | None:
    return getattr(msg, field).ToDatetime(tzinfo=datetime.UTC) if msg.HasField(field) else None


@dataclasses.dataclass(frozen=True, kw_only=True)
class LogLine:
    offset: int
    type: str
    message: str
    created_at: datetime.datetime | None
    attempt: int
    # The task's trace (W3C trace id), "" when it carries none.
    trace_id: str = ""

    @classmethod
    def from_proto(cls, x: task_pb2.TaskLog) -> LogLine:
        return cls(
            offset=x.offset,
            type=x.type,
            message=x.message,
            created_at=_when(x, "created_at"),
            attempt=x.attempt,
            trace_id=x.trace_id,
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class LogPage:
    lines: tuple[LogLine, ...]
    # Where the next page starts; complete: the task is final and this was the end.
    next_offset: int
    complete: bool


@dataclasses.dataclass(frozen=True, kw_only=True)
class QueueInfo:
    name: str
    paused: bool
    # Tasks per state: pending, queued, scheduled, assigned, running, retrying, succeeded, failed, cancelled.
    counts: Mapping[str, int]
    mean_duration: datetime.timedelta
    failed_today: int

    # Whose it is ("" the default tenant): an operator reading every tenant tells them apart by it.
    tenant: str = ""

    @classmethod
    def from_proto(cls, q: qs.QueueInfo) -> QueueInfo:
        return cls(
            name=q.name,
            paused=q.paused,
            counts={k: getattr(q, k) for k in _COUNTS},
            mean_duration=q.mean_duration.ToTimedelta(),
            failed_today=q.failed_today,
            tenant=q.tenant,
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class QueueStatus:
    queues: tuple[QueueInfo, ...]
    servers: int
    capacity: int
    running_tasks: int
    late_completions: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class WorkerProcessInfo:
    index: int
    pid: int
    state: str
    rss_bytes: int
    running_tasks: int
    last_beat: datetime.datetime | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class ServerInfo:
    pool_id: str
    server_name: str
    state: str
    is_running: bool
    capacity: int
    concurrency: int
    max_workers: int
    active_workers: int
    idle_workers: int
    running_tasks: int
    rss_bytes: int
    task_names: tuple[str, ...]
    last_heartbeat: datetime.datetime | None
    last_dispatch_at: datetime.datetime | None
    workers: tuple[WorkerProcessInfo, ...]

    @classmethod
    def from_proto(cls, s: qs.Server) -> ServerInfo:
        return cls(
            pool_id=s.pool_id,
            server_name=s.server_name,
            state=s.state,
            is_running=s.is_running,
            capacity=s.capacity,
            concurrency=s.concurrency,
            max_workers=s.max_workers,
            active_workers=s.active_workers,
            idle_workers=s.idle_workers,
            running_tasks=s.running_tasks,
            rss_bytes=s.rss_bytes,
            task_names=tuple(s.task_names),
            last_heartbeat=_when(s, "last_heartbeat"),
            last_dispatch_at=_when(s, "last_dispatch_at"),
            workers=tuple(
                WorkerProcessInfo(
                    index=w.index,
                    pid=w.pid,
                    state=w.state,
                    rss_bytes=w.rss_bytes,
                    running_tasks=w.running_tasks,
                    last_beat=_when(w, "last_beat"),
                )
                for w in s.workers
            ),
        )


def _status(r: qs.GetQueueStatusResponse) -> QueueStatus:
    return QueueStatus(
        queues=tuple(QueueInfo.from_proto(q) for q in r.queues),
        servers=r.servers,
        capacity=r.capacity,
        running_tasks=r.running_tasks,
        late_completions=r.late_completions,
    )


def _page(r: task_service_pb2.GetTaskLogsResponse) -> LogPage:
    return LogPage(
        lines=tuple(LogLine.from_proto(x) for x in r.logs), next_offset=r.next_offset, complete=r.complete
    )


def _duration(seconds: float | datetime.timedelta | None) -> Any:
    from google.protobuf import duration_pb2

    if seconds is None:
        return None
    d = duration_pb2.Duration()
    d.FromTimedelta(
        seconds if isinstance(seconds, datetime.timedelta) else datetime.timedelta(seconds=seconds)
    )
    return d


def _retry_request(queue: str, name: str, ids: Sequence[str], limit: int) -> qs.RetryTasksRequest:
    return qs.RetryTasksRequest(queue=queue, name=name, ids=list(ids), limit=limit)


class _Follow:
    """Where a log follow has read to, and whether and when it opens the stream again."""

    def __init__(self, task_id: str, from_offset: int, timeout: float | None, resume: bool) -> None:
        self.task_id = task_id
        self.offset = from_offset
        self.resume = resume
        self.backoff = Backoff()
        self._deadline = None if timeout is None else time.monotonic() + timeout

    def request(self) -> task_service_pb2.StreamTaskLogsRequest:
        return task_service_pb2.StreamTaskLogsRequest(id=self.task_id, from_offset=self.offset)

    def time_left(self) -> float | None:
        return None if self._deadline is None else max(0.0, self._deadline - time.monotonic())

    def after_error(self, err: grpc.RpcError) -> float:
        """Seconds to wait before opening the stream again; raises when it must not."""
        error = TaskyardError.from_rpc_error(err)
        if not (self.resume and resumable(error)):
            raise error from None
        wait = self.backoff.next()
        left = self.time_left()
        if left is not None and wait >= left:
            raise error from None  # the follow's time would end while it waits
        return wait


class Logs:
    def __init__(self, stub: Any, call: Callable[..., Any]) -> None:
        self._stub = stub
        self._call = call

    def page(self, task_id: str, from_offset: int = 0, page_size: int = 0) -> LogPage:
        """Lines from ``from_offset`` (at most ``page_size``, 0 = 100)."""
        req = task_service_pb2.GetTaskLogsRequest(id=task_id, from_offset=from_offset, page_size=page_size)
        return _page(self._call(self._stub.GetTaskLogs, req))

    def follow(
        self, task_id: str, from_offset: int = 0, timeout: float | None = None, *, resume: bool = True
    ) -> Iterator[LogLine]:
        """Replay from ``from_offset``, then follow until the task is final and its last line
        sent; ``timeout``: seconds for the whole follow; ``resume=False``: an interrupted
        stream raises instead of continuing."""
        follow = _Follow(task_id, from_offset, timeout, resume)
        while True:
            call = self._stub.StreamTaskLogs(follow.request(), timeout=follow.time_left())
            try:
                for item in call:
                    for x in item.logs:
                        follow.offset = x.offset + 1
                        yield LogLine.from_proto(x)
                    follow.backoff.reset()
                return
            except grpc.RpcError as err:
                time.sleep(follow.after_error(err))
            finally:
                # Leaving the loop early (break, an exception, close()) ends the stream now,
                # not at garbage collection: it holds one of the gateway's follower slots.
                call.cancel()


class AsyncLogs:
    def __init__(self, stub: Any, call: Callable[..., Awaitable[Any]]) -> None:
        self._stub = stub
        self._call = call

    async def page(self, task_id: str, from_offset: int = 0, page_size: int = 0) -> LogPage:
        req = task_service_pb2.GetTaskLogsRequest(id=task_id, from_offset=from_offset, page_size=page_size)
        return _page(await self._call(self._stub.GetTaskLogs, req))

    async def follow(
        self, task_id: str, from_offset: int = 0, deadline: float | None = None, *, resume: bool = True
    ) -> AsyncIterator[LogLine]:
        """Replay, then follow to the end, as Logs.follow; ``deadline``: seconds for the whole
        follow."""
        follow = _Follow(task_id, from_offset, deadline, resume)
        while True:
            call = self._stub.StreamTaskLogs(follow.request(), timeout=follow.time_left())
            try:
                async for item in call:
                    for x in item.logs:
                        follow.offset = x.offset + 1
                        yield LogLine.from_proto(x)
                    follow.backoff.reset()
                return
            except grpc.RpcError as err:
                await asyncio.sleep(follow.after_error(err))
            finally:
                call.cancel()  # as in Logs.follow: an early exit frees the gateway's slot now


class Queues:
    def __init__(self, channel: Any, call: Callable[..., Any]) -> None:
        self._stub = queue_service_pb2_grpc.QueueServiceStub(channel)
        self._call = call

    def pause(self, queue: str = "default") -> QueueInfo:
        return QueueInfo.from_proto(
            self._call(self._stub.PauseQueue, qs.PauseQueueRequest(queue=queue)).queue
        )

    def resume(self, queue: str = "default") -> QueueInfo:
        return QueueInfo.from_proto(
            self._call(self._stub.ResumeQueue, qs.ResumeQueueRequest(queue=queue)).queue
        )

    def clear(self, queue: str = "") -> int:
        """Cancel the waiting tasks of ``queue`` ("" = every queue); development only."""
        return int(self._call(self._stub.ClearQueue, qs.ClearQueueRequest(queue=queue)).cleared)

    def retry(self, *, queue: str = "", name: str = "", ids: Sequence[str] = (), limit: int = 0) -> list[str]:
        """Failed tasks (matching every filter given) become a new attempt; returns their ids."""
        return list(self._call(self._stub.RetryTasks, _retry_request(queue, name, ids, limit)).ids)

    def status(self) -> QueueStatus:
        return _status(self._call(self._stub.GetQueueStatus, qs.GetQueueStatusRequest()))

    def servers(self, max_age: float | datetime.timedelta | None = None) -> list[ServerInfo]:
        req = qs.ListServersRequest(max_age=_duration(max_age))
        return [ServerInfo.from_proto(s) for s in self._call(self._stub.ListServers, req).servers]

    def purge(self, older_than: float | datetime.timedelta | None = None) -> int:
        """Delete final tasks finished more than ``older_than`` ago (default: the retention)."""
        req = qs.PurgeTasksRequest(older_than=_duration(older_than))
        return int(self._call(self._stub.PurgeTasks, req).purged)


class AsyncQueues:
    def __init__(self, channel: Any, call: Callable[..., Awaitable[Any]]) -> None:
        self._stub = queue_service_pb2_grpc.QueueServiceStub(channel)
        self._call = call

    async def pause(self, queue: str = "default") -> QueueInfo:
        r = await self._call(self._stub.PauseQueue, qs.PauseQueueRequest(queue=queue))
        return QueueInfo.from_proto(r.queue)

    async def resume(self, queue: str = "default") -> QueueInfo:
        r = await self._call(self._stub.ResumeQueue, qs.ResumeQueueRequest(queue=queue))
        return QueueInfo.from_proto(r.queue)

    async def clear(self, queue: str = "") -> int:
        return int((await self._call(self._stub.ClearQueue, qs.ClearQueueRequest(queue=queue))).cleared)

    async def retry(
        self, *, queue: str = "", name: str = "", ids: Sequence[str] = (), limit: int = 0
    ) -> list[str]:
        return list((await self._call(self._stub.RetryTasks, _retry_request(queue, name, ids, limit))).ids)

    async def status(self) -> QueueStatus:
        return _status(await self._call(self._stub.GetQueueStatus, qs.GetQueueStatusRequest()))

    async def servers(self, max_age: float | datetime.timedelta | None = None) -> list[ServerInfo]:
        req = qs.ListServersRequest(max_age=_duration(max_age))
        return [ServerInfo.from_proto(s) for s in (await self._call(self._stub.ListServers, req)).servers]

    async def purge(self, older_than: float | datetime.timedelta | None = None) -> int:
        req = qs.PurgeTasksRequest(older_than=_duration(older_than))
        return int((await self._call(self._stub.PurgeTasks, req)).purged)
