"""Where the chart's window begins in the event log, so a page opened on a
quiet suite shows the last minutes at once instead of an empty chart.

The log is ordered by (transaction id, row id), not by time, and the store
answers only "the events after a cursor". Transactions that begin later take
larger ids, so the time of the first event at or after an id grows with the
id (up to the length of a transaction): a binary search over transaction ids,
one one-event read a step (an index lookup each), finds the first event of
the window in about 30 reads however long the log is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from taskyard.bus.v1 import event_log_pb2
from taskyard.core import event_cursor
from taskyard.v1 import event_service_pb2

# The store's ReadEvents.
Read = Callable[[event_log_pb2.ReadEventsRequest], Awaitable[event_log_pb2.ReadEventsReply]]
# Reads of one search, at most: a 64-bit id space is halved 64 times.
MAX_PROBES = 64


def _seconds(event: event_service_pb2.Event) -> float:
    return event.time.seconds + event.time.nanos / 1e9


def _just_before(event: event_service_pb2.Event) -> str:
    """The cursor a read continues after to return ``event`` first."""
    xid, row = event_cursor.decode(event.cursor)
    return event_cursor.encode(xid, row - 1)


async def _first_from(read: Read, xid: int) -> event_service_pb2.Event | None:
    """The first final event of a transaction ``xid`` or later."""
    request = event_log_pb2.ReadEventsRequest(after=event_cursor.encode(xid, 0), limit=1)
    reply = await read(request)
    return reply.events[0] if reply.events else None


async def start_after(read: Read, since: float) -> str:
    """The cursor after which the events at or after ``since`` (seconds since the
    epoch) begin; "" when the log kept none of them."""
    oldest = await read(event_log_pb2.ReadEventsRequest(oldest=True, limit=1))
    if not oldest.events:
        return ""
    first = oldest.events[0]
    if _seconds(first) >= since:
        return _just_before(first)
    end = await read(event_log_pb2.ReadEventsRequest())  # no cursor: where the log ends now
    # Invariant: an event of transaction `low` is older than `since`; the window's
    # first event is below `high` (the end) or there is none; `found` is the
    # earliest event of the window seen so far.
    low, high = event_cursor.decode(first.cursor)[0], event_cursor.decode(end.cursor)[0]
    found: event_service_pb2.Event | None = None
    for _ in range(MAX_PROBES):
        if high - low <= 1:
            break
        middle = (low + high) // 2
        event = await _first_from(read, middle)
        if event is None:
            high = middle
        elif _seconds(event) >= since:
            found, high = event, middle
        else:
            low = event_cursor.decode(event.cursor)[0]
    return _just_before(found) if found is not None else ""
