"""``GET /api/pulse``: one ``WatchEvents`` stream per gateway, summed up by the
``Aggregator`` and sent to every page as one summary every ``PULSE_INTERVAL``.

However many pages are open, the gateway reads the suite's events once: the
stream (over the dashboard's private socket, read as bytes and parsed once per
response) is opened when the first page connects and closed ``PULSE_LINGER``
seconds after the last one went. Each summary is encoded once and the same bytes
go to every connection. A connection holds at most one summary not yet written:
a browser that reads slower than pulses come skips to the latest, and is told
so (``event: lagged``) so that its page fetches afresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

import grpc
from aiohttp import web

from taskyard.core import errors
from taskyard.gateway.dashboard import calls, pulse
from taskyard.v1 import event_service_pb2

log = logging.getLogger(__name__)

# Seconds the stream stays open after the last page went (a page switching views).
PULSE_LINGER = 2.0
# A pulse goes out at least this often (seconds), even when nothing changed.
PULSE_IDLE = 5.0
# Reopening the stream after it failed: the first wait, doubled up to the last.
RETRY_FIRST = 0.5
RETRY_MAX = 10.0
WATCH_PATH = "/taskyard.v1.EventService/WatchEvents"
LAGGED = b"event: lagged\ndata: {}\n\n"
SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
# The browser's Authorization header -> None when it may watch events, else why not.
Authorize = Callable[[str | None], errors.TaskyardError | None]


def frame(kind: str, cursor: str, data: dict[str, Any]) -> bytes:
    head = f"event: {kind}\nid: {cursor}\n" if cursor else f"event: {kind}\n"
    return (head + "data: " + json.dumps(data, separators=(",", ":")) + "\n\n").encode()


class Listener:
    """One page's connection: the latest frame not yet written, and nothing older."""

    def __init__(self, authorization: str | None) -> None:
        self.authorization = authorization
        self.dropped = 0
        self._pending: bytes | None = None
        self._lagged = False
        self._end: bytes | None = None
        self._ended = False
        self._ready = asyncio.Event()

    def offer(self, data: bytes) -> None:
        if self._pending is not None:
            self.dropped += 1
            self._lagged = True
        self._pending = data
        self._ready.set()

    def end(self, last: bytes | None = None) -> None:
        """Write ``last`` (if any) after what is pending, then close."""
        self._ended, self._end = True, last
        self._ready.set()

    async def next(self) -> bytes | None:
        """The next bytes to write; None once ended."""
        while True:
            await self._ready.wait()
            self._ready.clear()
            data, self._pending = self._pending, None
            if data is not None:
                if self._lagged:
                    self._lagged = False
                    data = LAGGED + data
                if self._ended:
                    self._ready.set()  # the end comes next
                return data
            if self._ended:
                last, self._end = self._end, None
                if last is not None:
                    self._ready.set()  # then None: the end
                return last


def refusal_answer(refusal: errors.TaskyardError) -> web.Response:
    status = calls.HTTP_STATUS.get(grpc.StatusCode[refusal.code.name], 500)
    body = {"code": refusal.code.name, "message": refusal.message, "reason": refusal.reason}
    return web.json_response(body, status=status)


class PulseHub:
    """The pages listening, the one stream feeding them, and the beat."""

    def __init__(
        self,
        loopback: calls.Loopback,
        *,
        authorize: Authorize | None = None,
        aggregator: pulse.Aggregator | None = None,
        interval: float = pulse.PULSE_INTERVAL,
    ) -> None:
        # Raw bytes (no response deserializer): ``_follow`` parses each one once.
        self._watch = loopback.channel.unary_stream(
            WATCH_PATH,
            request_serializer=event_service_pb2.WatchEventsRequest.SerializeToString,
            response_deserializer=None,
        )
        self._authorize = authorize
        self.aggregator = aggregator or pulse.Aggregator()
        self._interval = interval
        self.listeners: set[Listener] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._linger: asyncio.TimerHandle | None = None
        self._dirty = asyncio.Event()
        self.streams_opened = 0

    @property
    def following(self) -> bool:
        """Whether the stream is wanted (a page listens, or one left less than PULSE_LINGER ago)."""
        return bool(self._tasks)

    async def serve(self, request: web.Request) -> web.StreamResponse:
        authorization = request.headers.get("Authorization")
        refusal = self._authorize(authorization) if self._authorize is not None else None
        if refusal is not None:
            return refusal_answer(refusal)
        response = web.StreamResponse(headers=SSE_HEADERS)
        await response.prepare(request)
        await response.write(b": open\n\n")
        listener = Listener(authorization)
        self._join(listener)
        try:
            while (data := await listener.next()) is not None:
                await response.write(data)
        finally:
            self._leave(listener)
        return response

    def _join(self, listener: Listener) -> None:
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None
        self.listeners.add(listener)
        listener.offer(frame("pulse", self.aggregator.cursor, self.aggregator.snapshot()))
        if not self._tasks:
            self.streams_opened += 1
            self._tasks = [
                asyncio.create_task(self._follow(), name="dashboard-pulse-stream"),
                asyncio.create_task(self._beat(), name="dashboard-pulse-beat"),
            ]

    def _leave(self, listener: Listener) -> None:
        self.listeners.discard(listener)
        if not self.listeners and self._tasks and self._linger is None:
            self._linger = asyncio.get_running_loop().call_later(PULSE_LINGER, self._stop_if_unused)

    def _stop_if_unused(self) -> None:
        self._linger = None
        if not self.listeners:
            self._stop()

    def _stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._tasks = []

    async def close(self) -> None:
        """The gateway stops: every page's stream ends."""
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None
        for listener in list(self.listeners):
            listener.end()
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _credential(self) -> str | None:
        """The stream is opened with the token of a page listening (each was checked)."""
        return next(iter(self.listeners)).authorization if self.listeners else None

    async def _follow(self) -> None:
        resume = ""  # a stream opened afresh starts now, not where the last one ended
        delay = RETRY_FIRST
        while True:
            if not self.listeners:  # lingering, and the stream failed: nobody to open it for
                await asyncio.sleep(RETRY_FIRST)
                continue
            credential = self._credential()
            request = event_service_pb2.WatchEventsRequest(after=resume)
            call = self._watch(request, metadata=calls.metadata(credential))
            try:
                async for data in call:
                    response = event_service_pb2.WatchEventsResponse.FromString(data)
                    if self.aggregator.add(response):
                        self._dirty.set()
                    resume = self.aggregator.cursor
                    delay = RETRY_FIRST
            except grpc.aio.AioRpcError as exc:
                resume = self._after_error(exc, credential, resume)
            finally:
                call.cancel()
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)

    def _after_error(self, exc: grpc.aio.AioRpcError, credential: str | None, resume: str) -> str:
        """Where to resume after the stream failed; pages whose token it refused are ended."""
        body = calls.error_body(exc)[1]
        if exc.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
            # That token changed since its page was let in: end the pages using it.
            error = frame("error", "", body)
            for listener in [x for x in self.listeners if x.authorization == credential]:
                self.listeners.discard(listener)
                listener.end(error)
            return resume
        if body.get("reason") == "CURSOR_EXPIRED":
            resume = ""
        log.warning("dashboard pulse stream ended (%s: %s); reopening", body["code"], body["message"])
        return resume

    async def _beat(self) -> None:
        loop = asyncio.get_running_loop()
        last = 0.0
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._dirty.wait(), PULSE_IDLE)
            wait = last + self._interval - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)  # at most one pulse per interval
            self._dirty.clear()
            self.broadcast(self.aggregator.take())
            last = loop.time()

    def broadcast(self, summary: dict[str, Any]) -> bytes:
        """One summary, encoded once, offered to every page."""
        data = frame("pulse", summary.get("cursor", ""), summary)
        for listener in self.listeners:
            listener.offer(data)
        return data
