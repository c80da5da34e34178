"""StreamTaskLogs without a gateway: a stub that answers each call with the next
scripted stream, for the log follows of the client and the CLI."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from support.rpc_errors import Ended
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
