"""Example tasks for ``taskyard dev``, tests and benchmarks.

Load them with ``TASKYARD_TASK_MODULES=taskyard.examples``.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from taskyard.worker_pool import task


@task
def add(a: float, b: float) -> float:
    return a + b


@task
async def async_add(a: float, b: float) -> float:
    await asyncio.sleep(0)
    return a + b


@task
def noop() -> None:
    return None


@task
def echo(*args: Any, **kwargs: Any) -> dict[str, Any]:
    return {"args": list(args), "kwargs": kwargs}


@task
async def sleep(seconds: float) -> float:
    await asyncio.sleep(seconds)
    return seconds


@task
def busy(seconds: float) -> int:
    """Spin the CPU for ``seconds`` (a sync task: it runs in a thread)."""
    end = time.monotonic() + seconds
    loops = 0
    while time.monotonic() < end:
        loops += 1
    return loops


@task
def fail(message: str = "failed on purpose") -> None:
    raise ValueError(message)


@task
def crash() -> None:
    """Kill the worker process outright (tests the death path)."""
    os._exit(1)


@task
def flaky(key: str, failures: int, state_dir: str) -> int:
    """Fail the first ``failures`` calls for ``key``; the count lives in ``state_dir``."""
    path = Path(state_dir) / f"flaky-{key}"
    calls = int(path.read_text()) + 1 if path.exists() else 1
    path.write_text(str(calls))
    if calls <= failures:
        raise RuntimeError(f"flaky {key}: failure {calls} of {failures}")
    return calls
