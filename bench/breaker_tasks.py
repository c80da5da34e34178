"""The downstream of bench/breaker, loaded by its pools: ``call(key, work_ms)`` takes
``work_ms`` (an async wait, as a call to an API does) and answers like the API of
``key``. The keys that are down are named in the file TASKYARD_BENCH_BREAKER_DOWN, a
line each, ``KEY UNTIL RETRY_AFTER HANG_MS``: until the unix time UNTIL, ``key``
answers "503, retry after RETRY_AFTER s" after HANG_MS (a downstream timing out
holds the worker's slot as long), which the body raises as RetryAfter
(raise_for_throttle). The file is read again when it changes."""

from __future__ import annotations

import asyncio
import os
import time

from taskyard.worker_pool import raise_for_throttle, task

DOWN_ENV = "TASKYARD_BENCH_BREAKER_DOWN"
_seen: tuple[float, dict[str, tuple[float, str, float]]] = (-1.0, {})


def _down() -> dict[str, tuple[float, str, float]]:
    global _seen
    path = os.environ.get(DOWN_ENV, "")
    try:
        mtime = os.stat(path).st_mtime if path else -1.0
    except OSError:
        mtime = -1.0
    if mtime != _seen[0]:
        keys: dict[str, tuple[float, str, float]] = {}
        if mtime >= 0:
            with open(path) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) == 4:
                        keys[parts[0]] = (float(parts[1]), parts[2], float(parts[3]))
        _seen = (mtime, keys)
    return _seen[1]


@task(max_retries=0)
async def call(key: str, work_ms: float) -> str:
    # No retry budget: an attempt the outage charged would end the task FAILURE.
    down = _down().get(key)
    if down is not None and time.time() < down[0]:
        await asyncio.sleep(down[2] / 1000)
        raise_for_throttle(503, {"Retry-After": down[1]})
    await asyncio.sleep(work_ms / 1000)
    return key
