"""The client's log streams and ETAs: an early exit from a log stream cancels it at once (it holds a
gateway follower slot), an interrupted one continues after its last line, and a naive eta is
refused instead of being guessed as UTC."""

from __future__ import annotations

import datetime
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from typing import Any

import grpc
import pytest
from support.rpc_errors import Ended

from taskyard.client import TaskRequest, TaskyardError
from taskyard.client._ops import AsyncLogs, LogLine, Logs
from taskyard.v1 import task_pb2, task_service_pb2


def _items(offsets: range) -> list[task_service_pb2.StreamTaskLogsResponse]:
    return [
        task_service_pb2.StreamTaskLogsResponse(logs=[task_pb2.TaskLog(offset=i, message=f"l{i}")])
        for i in offsets
    ]


class FakeCall:
    """A StreamTaskLogs stream: lines ``offsets``, then ``end`` raised (None: it ends OK)."""

    def __init__(self, offsets: range, end: Ended | None = None) -> None:
        self.items = _items(offsets)
        self.end = end
        self.cancelled = 0

    def _gen(self) -> Iterator[Any]:
        yield from self.items
        if self.end is not None:
            raise self.end

    def __iter__(self) -> Iterator[Any]:
        return self._gen()

    async def _agen(self) -> AsyncIterator[Any]:
        for x in self._gen():
            yield x

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._agen()

    def cancel(self) -> bool:
        self.cancelled += 1
        return True


class FakeStub:
    """Answers each StreamTaskLogs call with the next of ``script`` (default: 5 lines, then OK)."""

    def __init__(self, *script: FakeCall) -> None:
        self.script = list(script)
        self.calls: list[FakeCall] = []
        self.requests: list[task_service_pb2.StreamTaskLogsRequest] = []

    def StreamTaskLogs(self, req: Any, timeout: Any = None) -> FakeCall:
        self.requests.append(req)
        self.calls.append(self.script.pop(0) if self.script else FakeCall(range(5)))
        return self.calls[-1]


STOPPING = Ended(grpc.StatusCode.UNAVAILABLE, "GATEWAY_STOPPING")


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


def test_a_follow_cut_by_a_stopping_gateway_continues_after_its_last_line() -> None:
    stub = FakeStub(
        FakeCall(range(3), STOPPING),
        FakeCall(range(0), Ended(grpc.StatusCode.UNAVAILABLE)),  # the connection dropped
        FakeCall(range(3, 6)),
    )
    logs = Logs(stub, lambda *a, **k: None)
    assert [line.offset for line in logs.follow("t", from_offset=0)] == list(range(6))
    assert [r.from_offset for r in stub.requests] == [0, 3, 3]
    assert all(call.cancelled for call in stub.calls)


async def test_an_async_follow_cut_by_a_stopping_gateway_continues_after_its_last_line() -> None:
    stub = FakeStub(FakeCall(range(2, 4), STOPPING), FakeCall(range(4, 6)))
    logs = AsyncLogs(stub, lambda *a, **k: None)  # type: ignore[arg-type]
    assert [line.offset async for line in logs.follow("t", from_offset=2)] == [2, 3, 4, 5]
    assert [r.from_offset for r in stub.requests] == [2, 4]


def test_a_follow_raises_what_is_the_callers_and_when_told_not_to_resume() -> None:
    for stub, resume in (
        (FakeStub(FakeCall(range(1), Ended(grpc.StatusCode.NOT_FOUND, "TASK_NOT_FOUND"))), True),
        (FakeStub(FakeCall(range(1), STOPPING)), False),
        # The follow's timeout passed (the gateway's DEADLINE_EXCEEDED is not an interruption).
        (FakeStub(FakeCall(range(1), Ended(grpc.StatusCode.DEADLINE_EXCEEDED))), True),
    ):
        logs = Logs(stub, lambda *a, **k: None)
        lines: list[LogLine] = []
        with pytest.raises(TaskyardError) as raised:
            lines.extend(logs.follow("t", resume=resume))
        assert lines and raised.value.code == stub.calls[0].end.code()  # type: ignore[union-attr]
        assert len(stub.calls) == 1


def test_a_follow_whose_time_is_up_raises_instead_of_waiting_to_resume() -> None:
    stub = FakeStub(FakeCall(range(1), STOPPING))
    logs = Logs(stub, lambda *a, **k: None)
    with pytest.raises(TaskyardError) as raised:
        list(logs.follow("t", timeout=0.0))
    assert raised.value.reason == "GATEWAY_STOPPING"
    assert len(stub.calls) == 1


def test_a_naive_eta_is_refused() -> None:
    with pytest.raises(ValueError, match="eta must be a timezone-aware datetime"):
        TaskRequest(name="add", eta=datetime.datetime(2030, 1, 1, 9, 0)).to_proto()
    aware = datetime.datetime(2030, 1, 1, 9, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    spec = TaskRequest(name="add", eta=aware).to_proto()
    assert spec.eta.ToDatetime(tzinfo=datetime.UTC) == aware
