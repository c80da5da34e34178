"""The cursor of the durable event log: a position (xid, id) as opaque text.

An event's position is its transaction's 64-bit id (``xid8``) and its row id,
in that order. Both are written as 16 hex digits, so cursors compare as
strings in the order of the positions they encode: the gateway orders events
and streams by cursor without decoding them.
"""

from __future__ import annotations

import re

# The position before every event.
ORIGIN = (0, 0)
_FORM = re.compile(r"[0-9a-f]{32}")


def encode(xid: int, row_id: int) -> str:
    return f"{xid:016x}{row_id:016x}"


def decode(cursor: str) -> tuple[int, int]:
    """(xid, id) of ``cursor``; ValueError when it is not a cursor."""
    if not _FORM.fullmatch(cursor):
        raise ValueError("not an event cursor")
    return int(cursor[:16], 16), int(cursor[16:], 16)


ORIGIN_CURSOR = encode(*ORIGIN)
