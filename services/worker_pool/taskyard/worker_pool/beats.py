"""The worker side of supervision: heartbeats over the pipe, cancel frames.

A worker beats from its own event loop (so a loop that stops turning stops
beating) every ``Settings.worker_heartbeat_interval`` with its resident memory;
the manager's watchdog (watchdog.py) decides what silence and memory mean.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable

import psutil

from taskyard.worker_pool import pipe

Key = tuple[str, int]


def rss_bytes(pid: int | None = None) -> int:
    try:
        return int(psutil.Process(pid or os.getpid()).memory_info().rss)
    except (psutil.Error, OSError):
        return 0


def beat_frame(running: int) -> bytes:
    return pipe.pack(pipe.BEAT, json.dumps({"rss_bytes": rss_bytes(), "running": running}).encode())


def parse_beat(body: bytes) -> tuple[int, int]:
    """(rss_bytes, running) of a BEAT body; zeros for a malformed one."""
    try:
        data = json.loads(body)
        return int(data.get("rss_bytes", 0)), int(data.get("running", 0))
    except (ValueError, TypeError, AttributeError):
        return 0, 0


def cancel_frame(keys: Iterable[Key]) -> bytes:
    return pipe.pack(pipe.CANCEL, json.dumps([[tid, attempt] for tid, attempt in keys]).encode())


def parse_cancel(body: bytes) -> list[Key]:
    try:
        return [(str(tid), int(attempt)) for tid, attempt in json.loads(body)]
    except (ValueError, TypeError):
        return []


async def beat_loop(writer: asyncio.StreamWriter, running: object, interval: float) -> None:
    """Beat now, then every ``interval`` seconds, until cancelled or the pipe closes.

    ``running`` is a sized collection of the attempts in flight (len() is sent).
    """
    while not writer.is_closing():
        writer.write(beat_frame(len(running)))  # type: ignore[arg-type]
        await asyncio.sleep(interval)
