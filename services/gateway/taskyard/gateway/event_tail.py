"""A gateway's one reader of the store's event log, for all its WatchEvents streams.

While a stream is open, the tail reads what the store's log has after the
ring's head and appends it to the ring: at once when a committed batch is
published (``nudge``, from the store's PUB), at the latest every
``poll_interval`` (the watermark moves without a batch for this gateway:
another writer's commit, a transaction that ended), never more often than
``MIN_READ_GAP``. With no stream open it reads nothing; the next stream finds
the ring started over where the log ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from taskyard.bus.v1 import event_log_pb2
from taskyard.core import errors
from taskyard.core.clock import Clock, sleep_unless
from taskyard.gateway.event_ring import Ring
from taskyard.gateway.event_stream import LogHealth, ReadStore

log = logging.getLogger(__name__)

# Reads of the log at most this often, however many batches are committed:
# under load each read takes what some twenty drains wrote.
MIN_READ_GAP = 0.02


class EventTail:
    def __init__(
        self,
        ring: Ring,
        read_store: ReadStore,
        *,
        page: int,
        poll_interval: float,
        clock: Clock,
        health: LogHealth,
        outage: float,
    ) -> None:
        self.ring = ring
        self.health = health
        self._outage = outage
        self._read_store = read_store
        self._page = page
        self._poll = poll_interval
        self._clock = clock
        self.streams = 0
        self.reads = 0
        self._wanted = asyncio.Event()
        self._wake = asyncio.Event()

    def nudge(self, _batch: Any = None) -> None:
        """A batch was committed: read soon (a no-op while no stream is open)."""
        self._wake.set()

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        """Held by each open stream."""
        self.streams += 1
        self._wanted.set()
        try:
            yield
        finally:
            self.streams -= 1
            if self.streams == 0:
                # Not followed from now on: the next stream replays from the store
                # until the tail has started the ring over, and an outage is its to find.
                self.ring.ready = False
                self.health.failing_since = None

    def _failed(self) -> None:
        now = self._clock.monotonic()
        if self.health.failing_since is None:
            self.health.failing_since = now
        elif now - self.health.failing_since >= self._outage:
            self.ring.interrupt()  # the streams waiting for events end now, with their cursor

    async def run(self) -> None:
        while True:
            if self.streams == 0:
                self._wanted.clear()
                await self._wanted.wait()
            try:
                if not self.ring.ready:
                    self.ring.reset((await self._read_store(event_log_pb2.ReadEventsRequest())).cursor)
                    self.health.failing_since = None
                else:
                    req = event_log_pb2.ReadEventsRequest(after=self.ring.head, limit=self._page)
                    reply = await self._read_store(req)
                    self.reads += 1
                    self.ring.append(reply.events, reply.cursor)
                    self.health.failing_since = None
                    if len(reply.events) >= self._page:
                        continue  # more is waiting
            except errors.TaskyardError as exc:
                log.debug("reading the event log failed: %s", exc)
                if exc.code is errors.Code.OUT_OF_RANGE:  # the head was purged: start over
                    self.ring.ready = False
                else:
                    self._failed()
            self._wake.clear()
            await sleep_unless(self._clock, self._poll, self._wake)
            await self._clock.sleep(MIN_READ_GAP)
