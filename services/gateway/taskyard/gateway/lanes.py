"""Submission to the scheduler's priority lanes, coalesced per lane.

While a lane request is in flight, new submissions accumulate and leave together
in the next request: no timer, so no added latency at low load, and big batches
under load.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import operator
from collections.abc import Mapping, Sequence

from taskyard.bus.v1 import dispatch_pb2, task_record_pb2, tasks_pb2
from taskyard.core import contract, errors, rpc
from taskyard.core.background import Background
from taskyard.core.priority import Priority

log = logging.getLogger(__name__)

# Read with map() in C: a generator's frame per record showed in the gateway's profile.
_ARGS_JSON = operator.attrgetter("args_json")
_KWARGS_JSON = operator.attrgetter("kwargs_json")


@dataclasses.dataclass(slots=True)
class _Pending:
    records: Sequence[task_record_pb2.TaskRecord]
    size: int
    future: asyncio.Future[list[tasks_pb2.InsertedTask]]


class Lane:
    """One scheduler lane: at most ``max_in_flight`` SubmitRequests at a time."""

    def __init__(
        self,
        backend: rpc.Caller,
        *,
        max_records: int = 5000,
        max_bytes: int = 8 * 1024 * 1024,
        max_in_flight: int = 1,
    ) -> None:
        self._backend = backend
        self._max_records = max_records
        self._max_bytes = max_bytes
        self._max_in_flight = max_in_flight
        self._pending: list[_Pending] = []
        self._in_flight = 0
        self._sends = Background("gateway lanes")
        # Counters, for tests and metrics.
        self.requests_sent = 0
        self.records_sent = 0

    async def submit(self, records: Sequence[task_record_pb2.TaskRecord]) -> list[tasks_pb2.InsertedTask]:
        """Send ``records`` (with whatever else is waiting) and return their outcomes, in order."""
        loop = asyncio.get_running_loop()
        size = sum(map(len, map(_ARGS_JSON, records))) + sum(map(len, map(_KWARGS_JSON, records)))
        size += 256 * len(records)
        fut: asyncio.Future[list[tasks_pb2.InsertedTask]] = loop.create_future()
        fut.add_done_callback(_consume)
        self._pending.append(_Pending(records, size, fut))
        self._kick()
        # shield: a caller going away must not cancel the shared request.
        return await asyncio.shield(fut)

    def _kick(self) -> None:
        while self._pending and self._in_flight < self._max_in_flight:
            batch = self._take()
            self._in_flight += 1
            self._sends.spawn(self._send(batch), name="lane send")

    def _take(self) -> list[_Pending]:
        batch = [self._pending[0]]
        records = len(batch[0].records)
        size = batch[0].size
        i = 1
        while i < len(self._pending):
            p = self._pending[i]
            if records + len(p.records) > self._max_records or size + p.size > self._max_bytes:
                break
            batch.append(p)
            records += len(p.records)
            size += p.size
            i += 1
        del self._pending[:i]
        return batch

    async def _send(self, batch: list[_Pending]) -> None:
        try:
            request = dispatch_pb2.SubmitRequest()
            for p in batch:
                request.tasks.extend(p.records)
            self.requests_sent += 1
            self.records_sent += len(request.tasks)
            try:
                reply = await self._backend.call(contract.SUBMIT, request)
            except errors.TaskyardError as exc:
                _fail(batch, exc)
                return
            except Exception as exc:  # never leave a caller hanging
                log.exception("lane request failed")
                _fail(batch, errors.internal(f"lane request failed: {type(exc).__name__}: {exc}"))
                return
            if len(reply.tasks) != len(request.tasks):
                _fail(
                    batch,
                    errors.internal(
                        f"lane replied {len(reply.tasks)} outcomes for {len(request.tasks)} tasks"
                    ),
                )
                return
            start = 0
            outcomes = list(reply.tasks)
            for p in batch:
                end = start + len(p.records)
                if not p.future.done():
                    p.future.set_result(outcomes[start:end])
                start = end
        finally:
            self._in_flight -= 1
            self._kick()

    async def drain(self) -> None:
        """Wait for every request already started."""
        await self._sends.drain()


def _consume(fut: asyncio.Future[list[tasks_pb2.InsertedTask]]) -> None:
    """Mark the outcome retrieved: its caller may have gone away."""
    if not fut.cancelled():
        fut.exception()


def _fail(batch: list[_Pending], exc: BaseException) -> None:
    for p in batch:
        if not p.future.done():
            p.future.set_exception(exc)


class Lanes:
    """One ``Lane`` per priority."""

    def __init__(self, lanes: Mapping[Priority, Lane]) -> None:
        self._lanes = dict(lanes)

    def __getitem__(self, priority: Priority) -> Lane:
        return self._lanes[priority]

    async def submit(self, records: Sequence[task_record_pb2.TaskRecord]) -> list[tasks_pb2.InsertedTask]:
        """Group ``records`` by priority, one lane request each, concurrently; outcomes in input order."""
        groups: dict[int, list[int]] = {}
        for i, r in enumerate(records):
            groups.setdefault(r.priority, []).append(i)
        if not groups:
            return []
        if len(groups) == 1:
            ((prio, _),) = groups.items()
            return await self._lanes[Priority(prio)].submit(records)
        prios = list(groups)
        results = await asyncio.gather(
            *(self._lanes[Priority(p)].submit([records[i] for i in groups[p]]) for p in prios),
            return_exceptions=True,
        )
        out: list[tasks_pb2.InsertedTask | None] = [None] * len(records)
        for p, res in zip(prios, results, strict=True):
            if isinstance(res, BaseException):
                raise res
            for i, ins in zip(groups[p], res, strict=True):
                out[i] = ins
        return [x for x in out if x is not None]

    async def drain(self) -> None:
        for lane in self._lanes.values():
            await lane.drain()
