"""Live views shared by every page (``Feed``: one polling per gateway, one encoding
of each frame for all pages), and the first of them, ``GET /api/pulse``: the
suite's event log, summed up once per gateway and sent to every page as one
summary every ``PULSE_INTERVAL`` (the Limits page's is usage.py).

However many pages are open, the gateway asks the store once per interval what
the log's events since its cursor add up to (``SummarizeEvents``: the database
counts, so the pages cost the same at ten events a second or ten thousand).
Polling starts when the first page connects and stops ``PULSE_LINGER`` seconds
after the last one went. Each summary is encoded once and the same bytes go to
every connection. A connection holds at most one summary not yet written: a
browser that reads slower than pulses come skips to the latest, and is told so
(``event: lagged``) so that its page fetches afresh. Every page's token is
judged again at each pulse: a token revoked since ends its pages.

Polling that starts afresh first counts the chart's window of the log (the
last five minutes, found by ``history``), so the first page opened on a quiet
suite shows what it did, not an empty chart; past ``HISTORY_CALLS`` summaries
of it (a suite too busy for that to be cheap) the chart starts empty instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from aiohttp import web

from taskyard.bus.v1 import event_log_pb2
from taskyard.core import errors
from taskyard.core.retry import Backoff
from taskyard.gateway.dashboard import calls, history, pulse

log = logging.getLogger(__name__)

# Seconds the polling goes on after the last page went (a page switching views).
PULSE_LINGER = 2.0
# A pulse goes out at least this often (seconds), even when nothing changed.
PULSE_IDLE = 5.0
# Asking the store again after it failed: the first pause and the cap (core.retry.Backoff).
RETRY_FIRST = 0.5
RETRY_MAX = 10.0
# Summaries of the chart's window read before the first pulse, at most (each up to
# the store's 50,000 events).
HISTORY_CALLS = 4
# Pages follow the suite's events: a token that may watch them may watch the pulse.
WATCH_PATH = "/taskyard.v1.EventService/WatchEvents"
LAGGED = b"event: lagged\ndata: {}\n\n"
SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
# The browser's Authorization header -> None when it may watch events, else why not.
Authorize = Callable[[str | None], errors.TaskyardError | None]
# The store's SummarizeEvents.
Summarize = Callable[[event_log_pb2.SummarizeEventsRequest], Awaitable[event_log_pb2.SummarizeEventsReply]]


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


def refusal_body(refusal: errors.TaskyardError) -> dict[str, str]:
    return {"code": refusal.code.name, "message": refusal.message, "reason": refusal.reason}


def refusal_answer(refusal: errors.TaskyardError) -> web.Response:
    status = calls.HTTP_STATUS.get(grpc.StatusCode[refusal.code.name], 500)
    return web.json_response(refusal_body(refusal), status=status)


class Feed:
    """A live view shared by every page: the pages listening, one polling task feeding
    them (started by the first page, stopped ``PULSE_LINGER`` seconds after the last
    went), their tokens judged at each poll, and one encoding of each frame for all."""

    def __init__(self, *, authorize: Authorize | None = None, name: str = "dashboard-feed") -> None:
        self._authorize = authorize
        self._name = name
        self.listeners: set[Listener] = set()
        self._task: asyncio.Task[None] | None = None
        self._linger: asyncio.TimerHandle | None = None
        self.polls_started = 0

    @property
    def following(self) -> bool:
        """Whether the source is followed (a page listens, or one left less than PULSE_LINGER ago)."""
        return self._task is not None

    def greeting(self) -> bytes | None:
        """What a page that just connected is sent first (None: nothing until the next frame)."""
        return None

    async def _poll(self) -> None:
        raise NotImplementedError

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
        greeting = self.greeting()
        if greeting is not None:
            listener.offer(greeting)
        if self._task is None:
            self.polls_started += 1
            self._task = asyncio.create_task(self._poll(), name=self._name)

    def _leave(self, listener: Listener) -> None:
        self.listeners.discard(listener)
        if not self.listeners and self._task is not None and self._linger is None:
            self._linger = asyncio.get_running_loop().call_later(PULSE_LINGER, self._stop_if_unused)

    def _stop_if_unused(self) -> None:
        self._linger = None
        if not self.listeners and self._task is not None:
            self._task.cancel()
            self._task = None

    async def close(self) -> None:
        """The gateway stops: every page's stream ends."""
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None
        for listener in list(self.listeners):
            listener.end()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _judge_tokens(self) -> None:
        """Pages whose token no longer may read this view are ended, told why."""
        if self._authorize is None:
            return
        verdicts: dict[str | None, errors.TaskyardError | None] = {}
        for listener in list(self.listeners):
            if listener.authorization not in verdicts:
                verdicts[listener.authorization] = self._authorize(listener.authorization)
            refusal = verdicts[listener.authorization]
            if refusal is not None:
                self.listeners.discard(listener)
                listener.end(frame("error", "", refusal_body(refusal)))

    def offer(self, data: bytes) -> bytes:
        """One frame, encoded once, offered to every page."""
        for listener in self.listeners:
            listener.offer(data)
        return data


class PulseHub(Feed):
    """The pages listening, the polling of the store feeding them, and the beat."""

    def __init__(
        self,
        summarize: Summarize,
        *,
        read: history.Read | None = None,
        authorize: Authorize | None = None,
        aggregator: pulse.Aggregator | None = None,
        interval: float = pulse.PULSE_INTERVAL,
    ) -> None:
        super().__init__(authorize=authorize, name="dashboard-pulse")
        self._summarize = summarize
        self._read = read
        self.aggregator = aggregator or pulse.Aggregator()
        self._interval = interval

    def greeting(self) -> bytes:
        return frame("pulse", self.aggregator.cursor, self.aggregator.snapshot())

    async def _poll(self) -> None:
        """Summaries of the log, one pulse per interval when something happened
        (and at least every ``PULSE_IDLE`` seconds)."""
        loop = asyncio.get_running_loop()
        # Polling started afresh begins now, not where the last one ended (with the chart's window counted).
        after = await self._history()
        backoff = Backoff(first=RETRY_FIRST, cap=RETRY_MAX)
        last = loop.time()
        while True:
            started = loop.time()
            try:
                after, changed = await self._catch_up(after)
            except errors.TaskyardError as exc:
                # On from what was counted: summaries added before the failure are not counted twice.
                after = "" if exc.reason == "CURSOR_EXPIRED" else self.aggregator.cursor
                log.warning("dashboard pulse: the store's summary failed (%s); asking again", exc)
                await asyncio.sleep(backoff.next_delay())
                continue
            backoff.reset()
            self._judge_tokens()
            if changed or started - last >= PULSE_IDLE:
                self.broadcast(self.aggregator.take())
                last = started
            await asyncio.sleep(max(0.0, started + self._interval - loop.time()))

    async def _history(self) -> str:
        """The chart's window of the log, counted into the chart and sent as a pulse;
        the cursor polling goes on after ("": from now, with an empty chart)."""
        if self._read is None:
            return ""
        agg = self.aggregator
        agg.forget_chart()  # what an earlier polling counted may have gaps since
        try:
            after = await history.start_after(self._read, agg.window_start())
            for _ in range(HISTORY_CALLS if after else 0):
                reply = await self._summarize(event_log_pb2.SummarizeEventsRequest(after=after))
                agg.add_history(reply)
                after = reply.cursor
                if reply.caught_up:
                    self.broadcast(agg.take())
                    return after
        except errors.TaskyardError as exc:
            log.warning("dashboard pulse: the chart's last minutes could not be read (%s)", exc)
        agg.forget_chart()
        return ""

    async def _catch_up(self, after: str) -> tuple[str, bool]:
        """Every summary after ``after`` until caught up: the new cursor, and whether any held events."""
        agg = self.aggregator
        changed = False
        while True:
            request = event_log_pb2.SummarizeEventsRequest(
                after=after, max_task_ids=agg.max_ids, max_entered=agg.max_entered
            )
            reply = await self._summarize(request)
            changed |= agg.add(reply)
            after = reply.cursor
            if reply.caught_up:
                return after, changed

    def broadcast(self, summary: dict[str, Any]) -> bytes:
        """One summary, encoded once, offered to every page."""
        return self.offer(frame("pulse", summary.get("cursor", ""), summary))
