"""The client's log streams and ETAs: an early exit from a log stream cancels it at once (it holds a
gateway follower slot), an interrupted one continues after its last line, and a naive eta is
refused instead of being guessed as UTC."""

from __future__ import annotations

import datetime
from collections.abc import AsyncGenerator

import grpc
import pytest
from support.log_streams import FakeCall, FakeStub
from support.rpc_errors import Ended

from taskyard.client import TaskRequest, TaskyardError
from taskyard.client._ops import AsyncLogs, LogLine, Logs

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
