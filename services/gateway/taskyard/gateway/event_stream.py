"""One WatchEvents call: its responses, serialized, in order.

A stream starts at its cursor (or now, or the oldest event kept). While the
ring holds its position it reads from the ring; before that it replays from
the store, page by page, until it reaches the ring. Each response carries the
cursor the stream has reached, filtered-out events included; an idle stream
sends an empty one every ``idle_interval``. A stream whose position falls out
of the ring while it was sending (the client reads slower than events come)
is cut off (``TooSlow``) with the last cursor it delivered. A stream also
ends, with its cursor, when the gateway stops or the log has not been readable
for ``StreamLimits.outage`` seconds (``Interrupted``): its client continues
elsewhere, or later, instead of taking an outage for a quiet suite.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable

from taskyard.bus.v1 import event_log_pb2
from taskyard.core import errors, event_cursor
from taskyard.core.clock import Clock, sleep_unless
from taskyard.gateway import auth
from taskyard.gateway import event_wire as wire
from taskyard.gateway.event_filter import EventFilter
from taskyard.gateway.event_ring import Ring
from taskyard.v1 import event_service_pb2 as pub

ReadStore = Callable[[event_log_pb2.ReadEventsRequest], Awaitable[event_log_pb2.ReadEventsReply]]


class TooSlow(Exception):
    """The stream fell out of the ring while sending; ``cursor``: the last one delivered."""

    def __init__(self, cursor: str) -> None:
        super().__init__(f"consumer too slow at {cursor}")
        self.cursor = cursor


class Interrupted(Exception):
    """The stream ends for a reason of the gateway's (``error``) at ``cursor``."""

    def __init__(self, error: errors.TaskyardError, cursor: str) -> None:
        super().__init__(error.message)
        self.error = error
        self.cursor = cursor


@dataclasses.dataclass(frozen=True, kw_only=True)
class StreamLimits:
    page: int
    idle_interval: float
    poll_interval: float
    # Seconds the log may go unread (the store unreachable) before the streams end.
    outage: float = 5.0


@dataclasses.dataclass(kw_only=True)
class LogHealth:
    """What every stream of a gateway checks before waiting: whether the gateway
    stops, and since when (monotonic) reading the log fails."""

    closing: bool = False
    failing_since: float | None = None


GATEWAY_STOPPING = errors.gateway_stopping(
    "continue (at another one) with after = the cursor in this error's metadata"
)


def log_unavailable(seconds: float) -> errors.TaskyardError:
    return errors.TaskyardError(
        errors.Code.UNAVAILABLE,
        "EVENT_LOG_UNAVAILABLE",
        f"the event log has not been readable for {seconds:g} s; "
        "continue later with after = the cursor in this error's metadata",
    )


def start_of(req: pub.WatchEventsRequest) -> tuple[str, bool]:
    """(cursor, from the oldest) where ``req`` begins; "" with False: now."""
    if req.after:
        try:
            event_cursor.decode(req.after)
        except ValueError:
            raise errors.invalid(
                [errors.FieldViolation(field="after", description="not a cursor this API gave out")]
            ) from None
        return req.after, False
    return "", req.start == pub.WATCH_START_OLDEST


class EventStream:
    def __init__(
        self,
        req: pub.WatchEventsRequest,
        *,
        ring: Ring,
        read_store: ReadStore,
        clock: Clock,
        limits: StreamLimits,
        health: LogHealth | None = None,
    ) -> None:
        self._ring = ring
        self._health = health or LogHealth()
        self._read_store = read_store
        self._clock = clock
        self._limits = limits
        # A tenant's stream (its token's, or an operator's acting as it): its own events.
        self._filter = EventFilter.of(req, auth.identity().within)
        self._request = req
        self._pos, self._oldest = "", False
        self._last_sent = clock.monotonic()

    @property
    def cursor(self) -> str:
        """How far the stream has read."""
        return self._pos

    async def responses(self) -> AsyncIterator[bytes]:
        self._pos, self._oldest = start_of(self._request)
        if not self._pos and not self._oldest:  # now: where the store's log ends
            self._pos = (await self._read_store(event_log_pb2.ReadEventsRequest())).cursor
            yield self._sent(wire.response((), self._pos))
        while True:
            self._check()
            if self._oldest or not self._ring.holds(self._pos):
                async for data in self._replay():
                    yield data
                continue
            changed = self._ring.changed()
            async for data in self._from_ring():
                yield data
                if not self._ring.holds(self._pos):
                    raise TooSlow(self._pos)
            if self._clock.monotonic() - self._last_sent >= self._limits.idle_interval:
                yield self._sent(wire.response((), self._pos))
                continue
            if not self._ring.segments_after(self._pos):
                wait = self._limits.idle_interval - (self._clock.monotonic() - self._last_sent)
                await sleep_unless(self._clock, wait, changed)

    def _check(self) -> None:
        """Raises ``Interrupted`` when the stream must end for the gateway's sake."""
        health = self._health
        if health.closing:
            raise Interrupted(GATEWAY_STOPPING, self._pos)
        since = health.failing_since
        if since is not None and self._clock.monotonic() - since >= self._limits.outage:
            raise Interrupted(log_unavailable(self._limits.outage), self._pos)

    def _sent(self, data: bytes) -> bytes:
        self._last_sent = self._clock.monotonic()
        return data

    async def _replay(self) -> AsyncIterator[bytes]:
        """One page from the store (a stream behind the ring, or from the oldest)."""
        changed = self._ring.changed()
        req = event_log_pb2.ReadEventsRequest(after=self._pos, oldest=self._oldest, limit=self._limits.page)
        reply = await self._read_store(req)
        self._oldest = False
        self._pos = max(self._pos, reply.cursor)
        f = self._filter
        picked = [wire.entry(e) for e in reply.events if f.everything or f.matches(e)]
        if picked or self._clock.monotonic() - self._last_sent >= self._limits.idle_interval:
            yield self._sent(wire.response(picked, self._pos))
        if len(reply.events) < req.limit and not self._ring.holds(self._pos):
            # Caught up with the store, and the ring has not started (or is behind): wait.
            await sleep_unless(self._clock, self._limits.poll_interval, changed)

    async def _from_ring(self) -> AsyncIterator[bytes]:
        """What the ring holds after the stream's position, a response per segment
        with a match; the position moves past every segment read."""
        f = self._filter
        for seg in self._ring.segments_after(self._pos):
            if f.everything and self._pos == seg.start:
                data: bytes | None = seg.whole()
            elif f.everything:  # the rest of a segment it had begun (a resumed stream)
                data = wire.response(seg.entries()[seg.index_after(self._pos) :], seg.end)
            else:  # found in the segment's index, shared with the streams of the same filter
                data = seg.response_for(f, self._pos)
            self._pos = seg.end
            if data is not None:
                yield self._sent(data)
        if self._ring.holds(self._pos) and not self._ring.segments_after(self._pos):
            # Nothing held after it: the stream has read up to the ring's head.
            self._pos = max(self._pos, self._ring.head)
