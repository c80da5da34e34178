"""The recent events a gateway holds for its WatchEvents streams.

One tail (``event_tail.py``) appends what it reads from the store's log; every
stream reads from here at its own pace. The ring holds every event after
``floor`` up to ``head`` (the store's high-water cursor when last read), in
segments as they were read; past ``capacity`` events the oldest segments go
and ``floor`` moves up. A stream whose position is below ``floor`` must read
from the store instead (or, if it fell there while sending, is cut off).

Cursors compare as strings in log order (``core.event_cursor``).
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
from collections.abc import Sequence

from taskyard.gateway import event_wire as wire
from taskyard.v1 import event_service_pb2 as pub


@dataclasses.dataclass(eq=False, slots=True)
class Segment:
    """Events of one read, in order, and the cursor the read reached (``end``)."""

    events: list[pub.Event]
    cursors: list[str]
    # The ring's head before it (every event after ``start`` up to ``end`` is here).
    start: str
    end: str
    # Each event as an element of WatchEventsResponse.events, and the whole
    # segment as one response: made once, for every stream that sends them.
    _entries: list[bytes] | None = None
    _whole: bytes | None = None

    def entries(self) -> list[bytes]:
        if self._entries is None:
            self._entries = [wire.entry(e) for e in self.events]
        return self._entries

    def whole(self) -> bytes:
        if self._whole is None:
            self._whole = wire.response(self.entries(), self.end)
        return self._whole

    def index_after(self, cursor: str) -> int:
        """The index of its first event after ``cursor``."""
        return bisect.bisect_right(self.cursors, cursor)


class Ring:
    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("the event ring needs room for at least one event")
        self.capacity = capacity
        self.floor = ""
        self.head = ""
        self.size = 0
        self.ready = False
        # Segments from index _first on (evicted ones are dropped in bulk), and their ends.
        self._segments: list[Segment] = []
        self._ends: list[str] = []
        self._first = 0
        self._changed = asyncio.Event()

    def reset(self, cursor: str) -> None:
        """Start over at ``cursor`` (empty): after a time without streams, the
        tail does not read what no one waits for."""
        self._segments, self._ends, self._first = [], [], 0
        self.size = 0
        self.floor = self.head = cursor
        self.ready = True
        self._wake()

    def append(self, events: Sequence[pub.Event], end: str) -> None:
        """What a read of the store returned: ``events`` after ``head``, and how far it reached."""
        if end <= self.head:
            return
        if events:
            self._segments.append(Segment(list(events), [e.cursor for e in events], self.head, end))
            self._ends.append(end)
            self.size += len(events)
            self._evict()
        elif self._first == len(self._segments):
            self.floor = end  # nothing held: the ring begins where the store has reached
        self.head = end
        self._wake()

    def _evict(self) -> None:
        while self.size > self.capacity and len(self._segments) - self._first > 1:
            gone = self._segments[self._first]
            self._first += 1
            self.size -= len(gone.events)
            self.floor = gone.end
        if self._first > 64 and self._first * 2 > len(self._segments):
            del self._segments[: self._first]
            del self._ends[: self._first]
            self._first = 0

    def holds(self, cursor: str) -> bool:
        """Whether every event after ``cursor`` is here (or not yet read)."""
        return self.ready and cursor >= self.floor

    def segments_after(self, cursor: str) -> list[Segment]:
        """The segments with events after ``cursor`` (which ``holds``), oldest first."""
        return self._segments[bisect.bisect_right(self._ends, cursor, self._first) :]

    def changed(self) -> asyncio.Event:
        """Set at the next append (take it before reading, wait on it after)."""
        return self._changed

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()
