"""GetTaskLogs and StreamTaskLogs.

A stream replays from its offset, page by page, then follows: it sleeps until
the store's event stream says the task logged (``task.log``) or ended, and
reads again. The follower is registered before the first read, so nothing
committed in between is missed; events are only wake-ups (a periodic re-read
covers a lost one). The stream ends once the task is final and every line up to
its last offset was sent, or when the gateway stops (UNAVAILABLE,
``GATEWAY_STOPPING``: the client resumes at another gateway from the offset after its
last line). Resources are bounded: one page in memory per stream, at most
``MAX_FOLLOWERS`` streams per gateway.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any, TypeVar

from google.protobuf.message import Message

from taskyard.bus.v1 import event_pb2, logs_pb2
from taskyard.core import codec, contract, errors, rpc, transport
from taskyard.v1 import task_service_pb2

M = TypeVar("M", bound=Message)

PAGE_MAX = 1000
PAGE_DEFAULT = 100
STREAM_PAGE = 500
MAX_FOLLOWERS = 10_000
# A page's lines are also capped by size (half the gRPC message cap; the store
# pages by count only): 500 lines of 16 KiB would be over gRPC's 4 MiB.
PAGE_BYTES = 2 * 1024 * 1024
# A follower re-reads this often even without an event (events may be lost).
RECHECK_SECONDS = 2.0


# How a stream the gateway's stop ends continues (a fresh error per raise: raising one
# instance from many streams would chain their tracebacks).
CONTINUE_ELSEWHERE = "continue (at another one) with from_offset = the offset after the last line"


class Followers:
    """Streams waiting for news of a task, woken by the store's events."""

    def __init__(self) -> None:
        self._by_id: dict[str, set[asyncio.Event]] = {}
        self.count = 0
        self.closed = False

    def tap(self, batch: event_pb2.EventBatch) -> None:
        if not self._by_id:
            return
        for ev in batch.events:
            group = self._by_id.get(ev.task_id)
            if group and transport.is_result_event(ev):
                for e in group:
                    e.set()

    def active(self) -> bool:
        return bool(self._by_id)

    def gap(self) -> None:
        """The event stream dropped: everyone re-reads."""
        for group in self._by_id.values():
            for e in group:
                e.set()

    def close(self) -> None:
        """The gateway stops: every stream wakes, sends what is there and ends."""
        self.closed = True
        self.gap()

    def add(self, task_id: str) -> asyncio.Event:
        if self.count >= MAX_FOLLOWERS:
            raise errors.TaskyardError(
                errors.Code.RESOURCE_EXHAUSTED,
                "TOO_MANY_LOG_STREAMS",
                f"this gateway already serves {MAX_FOLLOWERS} log streams",
            )
        e = asyncio.Event()
        self._by_id.setdefault(task_id, set()).add(e)
        self.count += 1
        return e

    def remove(self, task_id: str, e: asyncio.Event) -> None:
        group = self._by_id.get(task_id)
        if group is not None and e in group:
            group.discard(e)
            self.count -= 1
            if not group:
                del self._by_id[task_id]


class TaskLogs:
    def __init__(self, store: rpc.Caller, followers: Followers, *, page_bytes: int = PAGE_BYTES) -> None:
        self._store = store
        self.followers = followers
        self.page_bytes = page_bytes

    async def _read(self, task_id: str, offset: int, limit: int) -> logs_pb2.GetLogsReply:
        reply = await self._store.call(
            contract.STORE_GET_LOGS, logs_pb2.GetLogsRequest(task_id=task_id, from_offset=offset, limit=limit)
        )
        return cap_page(reply, self.page_bytes)

    async def page(
        self, request: task_service_pb2.GetTaskLogsRequest
    ) -> task_service_pb2.GetTaskLogsResponse:
        task_id = _check(request.id, request.from_offset)
        if request.page_size < 0 or request.page_size > PAGE_MAX:
            raise codec.invalid(
                [
                    codec.Violation(
                        field="page_size", description=f"must be 0..{PAGE_MAX} (0 = {PAGE_DEFAULT})"
                    )
                ]
            )
        reply = await self._read(task_id, request.from_offset, request.page_size or PAGE_DEFAULT)
        if not reply.found:
            raise errors.not_found("task", task_id)
        return task_service_pb2.GetTaskLogsResponse(
            logs=reply.logs,
            next_offset=reply.next_offset,
            complete=reply.final and reply.next_offset >= reply.log_seq,
        )

    async def stream(
        self, request: task_service_pb2.StreamTaskLogsRequest
    ) -> AsyncIterator[task_service_pb2.StreamTaskLogsResponse]:
        task_id = _check(request.id, request.from_offset)
        wake = self.followers.add(task_id)  # before the first read: nothing slips between
        try:
            offset = request.from_offset
            first = True
            while True:
                wake.clear()
                reply = await self._read(task_id, offset, STREAM_PAGE)
                if not reply.found:
                    if first:
                        raise errors.not_found("task", task_id)
                    return  # purged meanwhile
                first = False
                if reply.logs:
                    offset = reply.next_offset
                    yield task_service_pb2.StreamTaskLogsResponse(logs=reply.logs)
                    continue
                if reply.final and offset >= reply.log_seq:
                    return
                if self.followers.closed:
                    raise errors.gateway_stopping(CONTINUE_ELSEWHERE)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), RECHECK_SECONDS)
        finally:
            self.followers.remove(task_id, wake)


def cap_page(reply: logs_pb2.GetLogsReply, max_bytes: int) -> logs_pb2.GetLogsReply:
    """``reply`` cut after the lines that fit in ``max_bytes`` (at least one line);
    ``next_offset`` then resumes right after the last line kept."""
    total = 0
    for i, line in enumerate(reply.logs):
        total += line.ByteSize() + 8  # field tag and length prefix
        if total > max_bytes and i > 0:
            del reply.logs[i:]
            reply.next_offset = reply.logs[-1].offset + 1
            break
    return reply


def _check(raw_id: str, offset: int) -> str:
    violations: list[codec.Violation] = []
    task_id = ""
    if not raw_id:
        violations.append(codec.Violation(field="id", description="required"))
    else:
        canonical = codec.canonical_uuid(raw_id)
        if canonical is None:
            violations.append(
                codec.Violation(
                    field="id", description=f"must be a task id (UUID), got {codec.quote(raw_id)}"
                )
            )
        else:
            task_id = canonical
    if offset < 0:
        violations.append(codec.Violation(field="from_offset", description="must be >= 0"))
    if violations:
        raise codec.invalid(violations)
    return task_id


def attach(waiters: Any, followers: Followers) -> None:
    """Feed ``followers`` from the gateway's event subscriber (see waiters.Waiters.taps)."""
    waiters.taps.append(followers.tap)
    waiters.tap_wanted.append(followers.active)
    waiters.gap_taps.append(followers.gap)
