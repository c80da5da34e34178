"""WatchEventsResponse bytes written by hand from each event's own
serialization: a response shared by many streams, or picked from a shared
segment, is encoded once, not once per stream."""

from __future__ import annotations

from collections.abc import Iterable

from taskyard.core.transport import varint
from taskyard.v1 import event_service_pb2 as pub

# WatchEventsResponse.events (1) and .cursor (2), both length-delimited.
_EVENTS_TAG = bytes(((pub.WatchEventsResponse.EVENTS_FIELD_NUMBER << 3) | 2,))
_CURSOR_TAG = bytes(((pub.WatchEventsResponse.CURSOR_FIELD_NUMBER << 3) | 2,))


def entry(event: pub.Event) -> bytes:
    """``event`` as one element of WatchEventsResponse.events."""
    data = event.SerializeToString()
    return _EVENTS_TAG + varint(len(data)) + data


def response(entries: Iterable[bytes], cursor: str) -> bytes:
    """A WatchEventsResponse of ``entries`` (from ``entry``) and ``cursor``."""
    tail = cursor.encode()
    return b"".join(entries) + _CURSOR_TAG + varint(len(tail)) + tail
