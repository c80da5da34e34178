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
from typing import Any

from cachetools import LRUCache

from taskyard.gateway import event_wire as wire
from taskyard.gateway.event_filter import EventFilter
from taskyard.v1 import event_service_pb2 as pub

# The events of a segment by the values a filter tests: (field, value) -> the
# positions of the events that have it, ascending.
Index = dict[tuple[str, object], list[int]]

# Filters whose picks and response a segment keeps, the most recently used: streams
# with equal filters share them, but a gateway's many streams with filters of their
# own (one task id each) would otherwise keep an entry per filter in every segment
# of the ring. A filter let go is found again at its next look (an index lookup).
CACHED_FILTERS = 32


def index_of(events: Sequence[pub.Event]) -> Index:
    """Where each filterable value occurs among ``events``. A state is indexed
    for task events only (a state filter passes task events only)."""
    index: Index = {}
    for i, e in enumerate(events):
        kind = e.kind
        keys = [("kind", kind), ("queue", e.queue), ("task_name", e.task_name), ("tenant", e.tenant)]
        keys += [("task_id", e.task_id), ("root_id", e.root_id)]
        if kind == pub.EVENT_KIND_TASK:
            keys.append(("state", e.state))
        for key in keys:
            at = index.get(key)
            if at is None:
                index[key] = [i]
            else:
                at.append(i)
    return index


def _filter_cache() -> LRUCache[EventFilter, Any]:
    return LRUCache(CACHED_FILTERS)


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
    # Made at the first filtered stream's look, then shared by all of them: the
    # index, and per filter the positions it picks and its response from ``start``.
    _index: Index | None = None
    # A read (get, []) counts as a use; ``in`` does not.
    _picks: LRUCache[EventFilter, list[int]] = dataclasses.field(default_factory=_filter_cache)
    _picked: LRUCache[EventFilter, bytes | None] = dataclasses.field(default_factory=_filter_cache)

    def entries(self) -> list[bytes]:
        if self._entries is None:
            self._entries = [wire.entry(e) for e in self.events]
        return self._entries

    def whole(self) -> bytes:
        if self._whole is None:
            self._whole = wire.response(self.entries(), self.end)
        return self._whole

    def index(self) -> Index:
        if self._index is None:
            self._index = index_of(self.events)
        return self._index

    def picks(self, f: EventFilter) -> list[int]:
        """The positions of the events ``f`` passes, ascending: found in the
        index, at a cost that grows with the filter's values and its matches,
        not with the segment."""
        found = self._picks.get(f)
        if found is None:
            found = _pick(self.index(), f, len(self.events))
            self._picks[f] = found
        return found

    def response_for(self, f: EventFilter, after: str) -> bytes | None:
        """The response of what ``f`` passes after ``after`` (None: nothing);
        from ``start`` it is made once for every stream with the same filter."""
        if after == self.start and f in self._picked:
            return self._picked[f]
        first = self.index_after(after)
        picks = self.picks(f)
        if first:
            picks = picks[bisect.bisect_left(picks, first) :]
        if picks:
            entries = self.entries() if self._entries is not None else None
            data: bytes | None = wire.response(
                [entries[i] if entries else wire.entry(self.events[i]) for i in picks], self.end
            )
        else:
            data = None
        if after == self.start:
            self._picked[f] = data
        return data

    def index_after(self, cursor: str) -> int:
        """The index of its first event after ``cursor``."""
        return bisect.bisect_right(self.cursors, cursor)


def _pick(index: Index, f: EventFilter, n: int) -> list[int]:
    """The positions among ``n`` events that every set filter of ``f`` matches:
    the union of its values' positions per filter, intersected across filters,
    the smallest first."""
    wanted: tuple[tuple[str, frozenset[Any]], ...] = (
        ("task_id", f.task_ids),
        ("root_id", f.root_ids),
        ("task_name", f.task_names),
        ("queue", f.queues),
        ("state", f.states),
        ("kind", f.kinds),
        ("tenant", frozenset(()) if f.tenant is None else frozenset((f.tenant,))),
    )
    sets: list[set[int]] = []
    for field, values in wanted:
        if not values:
            continue
        at: set[int] = set()
        for v in values:
            at.update(index.get((field, v), ()))
        if not at:
            return []
        sets.append(at)
    if not sets:  # no filter: everything
        return list(range(n))
    sets.sort(key=len)
    return sorted(sets[0].intersection(*sets[1:]))


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

    def interrupt(self) -> None:
        """Wake every stream waiting for events, with none new: something else
        changed (the gateway stops, the log cannot be read)."""
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()
