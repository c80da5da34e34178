"""Periodic schedules: ``client.schedules.create(...)`` and friends (ScheduleService).

with Client() as c:
    s = c.schedules.create("nightly", "report", cron="30 2 * * *", time_zone="Europe/Paris")
    c.schedules.trigger("nightly")
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, TypeVar

import grpc

from taskyard.client._common import request_from
from taskyard.client._types import JSON, Priority, TaskInfo, TaskRequest, list_to_python, struct_to_python
from taskyard.v1 import schedule_pb2, schedule_service_pb2, schedule_service_pb2_grpc

R = TypeVar("R")
OVERLAPS = ("skip", "allow")


@dataclasses.dataclass(frozen=True, kw_only=True)
class ScheduleInfo:
    id: str
    name: str
    task_name: str
    args: tuple[JSON, ...]
    kwargs: Mapping[str, JSON]
    # Exactly one of cron and interval.
    cron: str
    interval: datetime.timedelta | None
    time_zone: str
    paused: bool
    overlap: str
    times_run: int
    times_skipped: int
    next_run_at: datetime.datetime | None
    last_run_at: datetime.datetime | None
    last_task_id: str
    declared: bool
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

    # Whose it is ("" the default tenant): an operator reading every tenant tells them apart by it.
    tenant: str = ""

    @classmethod
    def from_proto(cls, s: schedule_pb2.Schedule) -> ScheduleInfo:
        def when(field: str) -> datetime.datetime | None:
            return getattr(s, field).ToDatetime(tzinfo=datetime.UTC) if s.HasField(field) else None

        return cls(
            id=s.id,
            name=s.name,
            task_name=s.task.name,
            args=tuple(list_to_python(s.task.args)),
            kwargs=struct_to_python(s.task.kwargs),
            cron=s.cron,
            interval=s.interval.ToTimedelta() if s.HasField("interval") else None,
            time_zone=s.time_zone or "UTC",
            paused=s.paused,
            overlap="allow" if s.overlap == schedule_pb2.OVERLAP_POLICY_ALLOW else "skip",
            times_run=s.times_run,
            times_skipped=s.times_skipped,
            next_run_at=when("next_run_at"),
            last_run_at=when("last_run_at"),
            last_task_id=s.last_task_id,
            declared=s.declared,
            created_at=when("created_at"),
            updated_at=when("updated_at"),
            tenant=s.tenant,
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class SchedulePage:
    schedules: tuple[ScheduleInfo, ...]
    next_page_token: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class Triggered:
    schedule: ScheduleInfo
    task: TaskInfo


def create_request(
    name: str,
    task: str,
    *args: JSON,
    cron: str | None = None,
    every: float | datetime.timedelta | None = None,
    time_zone: str = "",
    overlap: str = "skip",
    paused: bool = False,
    priority: Priority | int | str | None = None,
    queue: str = "",
    timeout: float | datetime.timedelta | None = None,
    max_retries: int | None = None,
    **kwargs: JSON,
) -> schedule_service_pb2.CreateScheduleRequest:
    if (cron is None) == (every is None):
        raise ValueError("give exactly one of cron= and every=")
    if overlap not in OVERLAPS:
        raise ValueError(f"overlap must be one of {OVERLAPS}")
    # The mapping form of a TaskRequest: forwarding to submit_request would read a task
    # kwarg named like one of its options (labels=, eta=) as that option.
    template = {"priority": priority, "queue": queue, "timeout": timeout, "max_retries": max_retries}
    spec = TaskRequest.coerce({"name": task, "args": args, "kwargs": kwargs, **template}).to_proto()
    s = schedule_pb2.Schedule(
        name=name,
        task=spec,
        time_zone=time_zone,
        paused=paused,
        overlap=schedule_pb2.OVERLAP_POLICY_ALLOW if overlap == "allow" else schedule_pb2.OVERLAP_POLICY_SKIP,
    )
    if cron is not None:
        s.cron = cron
    else:
        assert every is not None
        s.interval.FromTimedelta(
            every if isinstance(every, datetime.timedelta) else datetime.timedelta(seconds=every)
        )
    return schedule_service_pb2.CreateScheduleRequest(schedule=s)


def _triggered(resp: schedule_service_pb2.TriggerScheduleResponse) -> Triggered:
    return Triggered(schedule=ScheduleInfo.from_proto(resp.schedule), task=TaskInfo.from_proto(resp.task))


def _page(resp: schedule_service_pb2.ListSchedulesResponse) -> SchedulePage:
    return SchedulePage(
        schedules=tuple(ScheduleInfo.from_proto(s) for s in resp.schedules),
        next_page_token=resp.next_page_token,
    )


class Schedules:
    """The blocking client's ``client.schedules``. Ids or names are accepted wherever ``ident`` is."""

    def __init__(self, channel: grpc.Channel, call: Callable[[Callable[..., Any], Any], Any]) -> None:
        self._stub = schedule_service_pb2_grpc.ScheduleServiceStub(channel)
        self._call = call

    @request_from(create_request)
    def create(self, req: schedule_service_pb2.CreateScheduleRequest) -> ScheduleInfo:
        """Schedule ``task(*args, **kwargs)``: exactly one of ``cron`` (in ``time_zone``, default
        UTC) and ``every`` (seconds or timedelta); ``overlap`` "skip" or "allow"."""
        return ScheduleInfo.from_proto(self._call(self._stub.CreateSchedule, req).schedule)

    def get(self, ident: str) -> ScheduleInfo:
        req = schedule_service_pb2.GetScheduleRequest(id=ident)
        return ScheduleInfo.from_proto(self._call(self._stub.GetSchedule, req).schedule)

    def list(self, *, page_size: int = 0, page_token: str = "") -> SchedulePage:
        req = schedule_service_pb2.ListSchedulesRequest(page_size=page_size, page_token=page_token)
        return _page(self._call(self._stub.ListSchedules, req))

    def __iter__(self) -> Iterator[ScheduleInfo]:
        token = ""
        while True:
            page = self.list(page_token=token)
            yield from page.schedules
            token = page.next_page_token
            if not token:
                return

    def pause(self, ident: str) -> ScheduleInfo:
        req = schedule_service_pb2.PauseScheduleRequest(id=ident)
        return ScheduleInfo.from_proto(self._call(self._stub.PauseSchedule, req).schedule)

    def resume(self, ident: str) -> ScheduleInfo:
        req = schedule_service_pb2.ResumeScheduleRequest(id=ident)
        return ScheduleInfo.from_proto(self._call(self._stub.ResumeSchedule, req).schedule)

    def delete(self, ident: str) -> None:
        self._call(self._stub.DeleteSchedule, schedule_service_pb2.DeleteScheduleRequest(id=ident))

    def trigger(self, ident: str) -> Triggered:
        req = schedule_service_pb2.TriggerScheduleRequest(id=ident)
        return _triggered(self._call(self._stub.TriggerSchedule, req))


class AsyncSchedules:
    """The asyncio client's ``client.schedules`` (same methods, awaitable)."""

    def __init__(
        self, channel: grpc.aio.Channel, call: Callable[[Callable[..., Any], Any], Awaitable[Any]]
    ) -> None:
        self._stub = schedule_service_pb2_grpc.ScheduleServiceStub(channel)
        self._call = call

    @request_from(create_request)
    async def create(self, req: schedule_service_pb2.CreateScheduleRequest) -> ScheduleInfo:
        return ScheduleInfo.from_proto((await self._call(self._stub.CreateSchedule, req)).schedule)

    async def get(self, ident: str) -> ScheduleInfo:
        req = schedule_service_pb2.GetScheduleRequest(id=ident)
        return ScheduleInfo.from_proto((await self._call(self._stub.GetSchedule, req)).schedule)

    async def list(self, *, page_size: int = 0, page_token: str = "") -> SchedulePage:
        req = schedule_service_pb2.ListSchedulesRequest(page_size=page_size, page_token=page_token)
        return _page(await self._call(self._stub.ListSchedules, req))

    async def pause(self, ident: str) -> ScheduleInfo:
        req = schedule_service_pb2.PauseScheduleRequest(id=ident)
        return ScheduleInfo.from_proto((await self._call(self._stub.PauseSchedule, req)).schedule)

    async def resume(self, ident: str) -> ScheduleInfo:
        req = schedule_service_pb2.ResumeScheduleRequest(id=ident)
        return ScheduleInfo.from_proto((await self._call(self._stub.ResumeSchedule, req)).schedule)

    async def delete(self, ident: str) -> None:
        await self._call(self._stub.DeleteSchedule, schedule_service_pb2.DeleteScheduleRequest(id=ident))

    async def trigger(self, ident: str) -> Triggered:
        req = schedule_service_pb2.TriggerScheduleRequest(id=ident)
        return _triggered(await self._call(self._stub.TriggerSchedule, req))
