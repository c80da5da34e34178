"""Framing on the manager <-> worker socketpair.

A frame is a 4-byte big-endian length, then one type byte, then a protobuf body:
- manager -> worker: ``DISPATCH`` (bus.v1.Dispatch), ``STOP`` (empty body);
- worker -> manager: ``HELLO`` (empty: imports done, ready for work),
  ``REPORT`` (bus.v1.PoolReport without pool_id/free_slots: the manager adds them).
- supervision: ``BEAT`` and ``RECYCLE`` (worker -> manager), ``CANCEL`` (manager -> worker).
"""

from __future__ import annotations

import asyncio
import struct

DISPATCH = b"D"
STOP = b"S"
HELLO = b"H"
REPORT = b"R"
# Supervision (see supervision.py): the worker's heartbeat (JSON {"rss_bytes",
# "running"}), a cancel request for some of its attempts (JSON [[task_id,
# attempt], ...]) and a worker's own request to be replaced (UTF-8 reason).
BEAT = b"B"
CANCEL = b"C"
RECYCLE = b"Y"
# ops (see tasklogs.py): log lines and context updates, worker -> manager,
# always written before the REPORT of the same flush (bus.v1.LogBatch).
LOGS = b"L"

_HEADER = struct.Struct(">I")
# A frame never carries more than one NNG message's worth, plus slack.
MAX_FRAME_BYTES = 64 * 1024 * 1024


class FrameError(Exception):
    """The peer sent something that is not a frame."""


def pack(kind: bytes, body: bytes = b"") -> bytes:
    return _HEADER.pack(len(body) + 1) + kind + body


async def read(reader: asyncio.StreamReader, limit: int = MAX_FRAME_BYTES) -> tuple[bytes, bytes] | None:
    """The next (kind, body), or None when the peer closed the pipe."""
    try:
        header = await reader.readexactly(_HEADER.size)
        (size,) = _HEADER.unpack(header)
        if size < 1 or size > limit:
            raise FrameError(f"bad frame size {size}")
        data = await reader.readexactly(size)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    return data[:1], data[1:]
