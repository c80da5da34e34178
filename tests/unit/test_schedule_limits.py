"""A schedule's task is checked against the limits that exist (gateway/schedules.py):
when the store cannot say which exist, the schedule is refused with the store's
error, never saved unchecked."""

from __future__ import annotations

from typing import Any

import pytest

from taskyard.bus.v1 import schedule_pb2 as bus_schedule
from taskyard.core import codec, contract, errors
from taskyard.core.config import Settings
from taskyard.gateway.schedules import ScheduleService
from taskyard.v1 import limit_pb2, schedule_pb2, task_pb2
from taskyard.v1 import schedule_service_pb2 as svc


class UnavailableLimits:
    """A store whose limits read fails; it records every save it is asked for."""

    def __init__(self) -> None:
        self.saved: list[bus_schedule.SaveSchedulesRequest] = []

    async def call(self, method: contract.Method[Any, Any], request: Any, **_: Any) -> Any:
        if method is contract.STORE_LIMITS:
            raise errors.unavailable("store: no answer in time")
        assert method is contract.STORE_SCHEDULE_SAVE
        self.saved.append(request)
        return bus_schedule.SaveSchedulesReply(schedules=list(request.schedules))


class Names:
    async def ensure(self, names: set[str]) -> None:
        pass

    def snapshot(self) -> frozenset[str]:
        return frozenset({"noop"})


async def test_a_store_error_reading_the_limits_refuses_the_schedule() -> None:
    store = UnavailableLimits()
    service = ScheduleService(
        store=store,
        lane=store,
        names=Names(),  # type: ignore[arg-type]
        limits=codec.Limits.from_settings(Settings()),
    )
    schedule = schedule_pb2.Schedule(
        name="tick",
        cron="* * * * *",
        task=task_pb2.TaskSpec(name="noop", limits=[limit_pb2.LimitUse(limit="no-such-limit")]),
    )
    with pytest.raises(errors.TaskyardError) as info:
        await service._create(svc.CreateScheduleRequest(schedule=schedule))
    assert info.value.code == errors.Code.UNAVAILABLE
    assert store.saved == []
