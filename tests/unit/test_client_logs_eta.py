"""The client's log streams and ETAs: an early exit from a log stream cancels it at once (it holds a
gateway follower slot), and a naive eta is refused instead of being guessed as UTC."""

from __future__ import annotations

import datetime
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from typing import Any

import pytest

from taskyard.client import TaskRequest
from taskyard.client._ops import AsyncLogs, Logs
from taskyard.v1 import task_pb2, task_service_pb2


def _items(n: int) -> list[task_service_pb2.StreamTaskLogsResponse]:
    return [
        task_service_pb2.StreamTaskLogsResponse(logs=[task_pb2.TaskLog(offset=i, message=f"l{i}")])
        for i in range(n)
    ]


class FakeCall:
    def __init__(self, n: int) -> None:
        self.items = _items(n)
        self.cancelled = 0

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items)

    async def _agen(self) -> AsyncIterator[Any]:
        for x in self.items:
            yield x

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._agen()

    def cancel(self) -> bool:
        self.cancelled += 1
        return True


class FakeStub:
    def __init__(self) -> None:
        self.calls: list[FakeCall] = []

    def StreamTaskLogs(self, req: Any, timeout: Any = None) -> FakeCall:
        self.calls.append(FakeCall(5))
        return self.calls[-1]


def test_breaking_out_of_follow_cancels_the_stream() -> None:
    stub = FakeStub()
    logs = Logs(stub, lambda *a, **k: None)
    for line in logs.follow("t"):
        if line.offset == 1:
            break
    assert stub.calls[0].cancelled == 1


async def test_breaking_out_of_async_follow_cancels_the_stream() -> None:
    stub = FakeStub()
    logs = AsyncLogs(stub, lambda *a, **k: None)  # type: ignore[arg-type]
    gen = logs.follow("t")
    assert isinstance(gen, AsyncGenerator)
    async for line in gen:
        if line.offset == 1:
            break
    await gen.aclose()  # what `async for` leaves to the caller (or to the loop's shutdown)
    assert stub.calls[0].cancelled == 1


def test_a_naive_eta_is_refused() -> None:
    with pytest.raises(ValueError, match="eta must be a timezone-aware datetime"):
        TaskRequest(name="add", eta=datetime.datetime(2030, 1, 1, 9, 0)).to_proto()
    aware = datetime.datetime(2030, 1, 1, 9, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    spec = TaskRequest(name="add", eta=aware).to_proto()
    assert spec.eta.ToDatetime(tzinfo=datetime.UTC) == aware
