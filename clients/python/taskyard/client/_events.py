"""The suite's events as they happen: ``client.events.watch(...)`` (docs/events.md).

with Client() as c:
    watch = c.events.watch(queues=["reports"], after=saved_cursor)
    for event in watch:
        print(event.type, event.task_id, event.state)
        saved_cursor = watch.cursor        # how far it read, filtered-out events included

A watch resumes by itself from the last cursor it reached when the stream ends
for a reason that is not the caller's (``_resume``): the gateway stops
(``GATEWAY_STOPPING``), its connection drops or the store's log is unreadable
(``UNAVAILABLE``), or the caller read too slowly (``CONSUMER_TOO_SLOW``). Every event
comes once, in order. A cursor older than the store keeps (``CURSOR_EXPIRED``) and
every other error are raised.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterator, Mapping, Sequence
from typing import Any, Generic, TypedDict, TypeVar, Unpack, cast

import grpc

from taskyard.client._errors import TaskyardError
from taskyard.client._resume import Backoff, resumable
from taskyard.v1 import event_service_pb2 as pub
from taskyard.v1 import event_service_pb2_grpc, task_pb2

_STARTS = {"now": pub.WATCH_START_NOW, "oldest": pub.WATCH_START_OLDEST}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Event:
    cursor: str
    # "task", "worker", "pool", "queue", "schedule", "limit", "breaker" or "tenant".
    kind: str
    # "<subject>.<verb>": "task.succeeded", "queue.paused", ...
    type: str
    time: datetime.datetime | None
    task_id: str = ""
    task_name: str = ""
    queue: str = ""
    # The state a task entered ("SUCCESS"; for task.progress the one it is in), "" for other kinds.
    state: str = ""
    attempt: int = 0
    root_id: str = ""
    worker_id: str = ""
    pool_id: str = ""
    schedule_id: str = ""
    schedule_name: str = ""
    attributes: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # The tenant it belongs to ("" for the default tenant and the suite's own events); a
    # tenant token receives its own only, an operator every tenant's.
    tenant: str = ""

    @classmethod
    def from_proto(cls, e: pub.Event) -> Event:
        return cls(
            cursor=e.cursor,
            kind=pub.EventKind.Name(e.kind).removeprefix("EVENT_KIND_").lower(),
            type=e.type,
            time=e.time.ToDatetime(tzinfo=datetime.UTC) if e.HasField("time") else None,
            task_id=e.task_id,
            task_name=e.task_name,
            queue=e.queue,
            state=task_pb2.TaskState.Name(e.state).removeprefix("TASK_STATE_") if e.state else "",
            attempt=e.attempt,
            root_id=e.root_id,
            worker_id=e.worker_id,
            pool_id=e.pool_id,
            schedule_id=e.schedule_id,
            schedule_name=e.schedule_name,
            attributes=dict(e.attributes),
            tenant=e.tenant,
        )


class WatchFilters(TypedDict, total=False):
    """Where a watch begins and what it keeps (WatchEventsRequest): ``after`` a cursor,
    else ``start`` "now" (the default) or "oldest"; each filter given must match, by
    any of its values (kinds "task", "worker", "pool", "queue", "schedule", "limit", "breaker",
    "tenant"; states "SUCCESS", ...)."""

    after: str
    start: str
    kinds: Sequence[str]
    queues: Sequence[str]
    task_names: Sequence[str]
    states: Sequence[str]
    task_ids: Sequence[str]
    root_ids: Sequence[str]


def watch_request(**filters: Unpack[WatchFilters]) -> pub.WatchEventsRequest:
    if unknown := set(filters) - set(WatchFilters.__annotations__):
        raise TypeError(f"watch() got unknown filters {sorted(unknown)}")
    start = filters.get("start", "now")
    if start not in _STARTS:
        raise ValueError(f"start must be 'now' or 'oldest', not {start!r}")
    return pub.WatchEventsRequest(
        after=filters.get("after", ""),
        start=_STARTS[start],
        kinds=[cast(Any, pub.EventKind.Value("EVENT_KIND_" + k.upper())) for k in filters.get("kinds", ())],
        queues=list(filters.get("queues", ())),
        task_names=list(filters.get("task_names", ())),
        states=[
            cast(Any, task_pb2.TaskState.Value("TASK_STATE_" + x.upper())) for x in filters.get("states", ())
        ],
        task_ids=list(filters.get("task_ids", ())),
        root_ids=list(filters.get("root_ids", ())),
    )


class _Progress:
    """Where a watch has read to, and how long to wait before resuming it."""

    def __init__(self, request: pub.WatchEventsRequest, resume: bool) -> None:
        self.request = request
        self.cursor = request.after
        self.resume = resume
        self.resumed = 0
        self._backoff = Backoff()

    def read(self, response: pub.WatchEventsResponse) -> None:
        if response.cursor:
            self.cursor = response.cursor
        elif response.events:
            self.cursor = response.events[-1].cursor
        self._backoff.reset()

    def next_request(self) -> pub.WatchEventsRequest:
        """The request that continues the stream: after its cursor (if it had reached one)."""
        req = pub.WatchEventsRequest()
        req.CopyFrom(self.request)
        if self.cursor:
            req.after = self.cursor
        return req

    def after_error(self, err: grpc.RpcError) -> float:
        """Seconds to wait before resuming; raises when the stream must not resume."""
        error = TaskyardError.from_rpc_error(err)
        if not (self.resume and resumable(error)):
            raise error from None
        # A cursor in the error (CONSUMER_TOO_SLOW, GATEWAY_STOPPING) is the last one
        # delivered: what this side read, unless a response got lost on the way.
        self.resumed += 1
        return self._backoff.next()


class _Watch:
    def __init__(self, open_call: Callable[[pub.WatchEventsRequest], Any], progress: _Progress) -> None:
        self._open = open_call
        self._progress = progress
        self._call: Any = None

    @property
    def cursor(self) -> str:
        """How far the watch has read, filtered-out events included: pass it as
        ``after=`` to continue from here later."""
        return self._progress.cursor

    @property
    def resumed(self) -> int:
        """How many times the stream was interrupted and resumed."""
        return self._progress.resumed


class EventWatch(_Watch):
    """An iterator of events, resumed by itself when the stream is interrupted."""

    def __init__(self, open_call: Callable[[pub.WatchEventsRequest], Any], progress: _Progress) -> None:
        super().__init__(open_call, progress)
        self._closed = False
        self._events: Generator[Event, None, None] = self._run()

    def __iter__(self) -> Iterator[Event]:
        return self

    def __next__(self) -> Event:
        return next(self._events)

    def close(self) -> None:
        """Ends the stream now (it holds one of the gateway's long-call slots); a
        thread iterating the watch sees it end."""
        self._closed = True
        if self._call is not None:
            self._call.cancel()
        with contextlib.suppress(ValueError):  # iterated by another thread right now: it ends itself
            self._events.close()

    def _run(self) -> Generator[Event, None, None]:
        progress = self._progress
        while not self._closed:
            self._call = self._open(progress.next_request())
            try:
                for response in self._call:
                    for e in response.events:
                        progress.cursor = e.cursor
                        yield Event.from_proto(e)
                    progress.read(response)
                return  # the gateway ended the stream without an error
            except grpc.RpcError as err:
                if self._closed:
                    return
                time.sleep(progress.after_error(err))
            finally:
                self._call.cancel()


class AsyncEventWatch(_Watch):
    """``async for event in client.events.watch(...)``, resumed as EventWatch is."""

    def __init__(self, open_call: Callable[[pub.WatchEventsRequest], Any], progress: _Progress) -> None:
        super().__init__(open_call, progress)
        self._events: AsyncGenerator[Event, None] = self._run()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._events

    async def aclose(self) -> None:
        if self._call is not None:
            self._call.cancel()
        await self._events.aclose()

    async def _run(self) -> AsyncGenerator[Event, None]:
        progress = self._progress
        while True:
            self._call = self._open(progress.next_request())
            try:
                async for response in self._call:
                    for e in response.events:
                        progress.cursor = e.cursor
                        yield Event.from_proto(e)
                    progress.read(response)
                return
            except grpc.RpcError as err:
                await asyncio.sleep(progress.after_error(err))
            finally:
                self._call.cancel()


W = TypeVar("W", EventWatch, AsyncEventWatch)


class Events(Generic[W]):
    """``client.events``: the suite's events (EventService)."""

    def __init__(self, channel: Any, watch_type: type[W]) -> None:
        self._stub = event_service_pb2_grpc.EventServiceStub(channel)
        self._watch_type: type[W] = watch_type

    def watch(self, *, resume: bool = True, **filters: Unpack[WatchFilters]) -> W:
        """Events from ``after``, else from ``start``, filtered (``WatchFilters``), until
        closed; ``resume=False``: an interrupted stream raises instead of resuming."""
        req = watch_request(**filters)
        return self._watch_type(self._stub.WatchEvents, _Progress(req, resume))
