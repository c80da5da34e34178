"""Example tasks for ``taskyard dev``, tests and benchmarks.

Load them with ``TASKYARD_TASK_MODULES=taskyard.examples``.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from taskyard.worker_pool import TaskContext, task


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


# --- logs, progress, context --------------------------------------------
@task
async def chatty(lines: int = 10, batch: int = 100, pause: float = 0.01) -> int:
    """Log ``lines`` lines ("line 0", "line 1", ...), ``pause`` seconds between
    batches of ``batch``, with progress and a context key along the way."""
    from taskyard.worker_pool import current_task

    ctx = current_task()
    ctx.set_context("chatty.total", lines)
    for i in range(lines):
        ctx.log(f"line {i}")
        if (i + 1) % max(1, batch) == 0:
            ctx.progress((i + 1) / lines, f"{i + 1} of {lines}")
            await asyncio.sleep(pause)
    ctx.set_context("chatty.done", True)
    return lines


@task
def report(steps: int = 3, *, ctx: TaskContext) -> str:
    """A sync task (in a thread) given its context as a parameter, logging through its logger."""
    for step in range(steps):
        ctx.logger.info("step %d of %d", step + 1, steps)
        ctx.progress((step + 1) / steps)
    ctx.logger.warning("done after %d steps", steps)
    return f"{steps} steps"


# --- children -----------------------------------------------------------------
@task
async def fan_out(n: int = 2, child: str = "add", *, ctx: TaskContext) -> list[str]:
    """Submit ``n`` children (``child(i, i)``) and return their ids; with
    ``child="fan_out"`` they fan out again (one level, n = 1)."""
    ids = []
    for i in range(n):
        if child == "fan_out":
            ids.append(await ctx.asubmit("fan_out", 1))
        else:
            ids.append(await ctx.asubmit(child, i, i))
    return ids


@task
def spawn_sync(n: int = 1, *, ctx: TaskContext) -> list[str]:
    """A sync task (in a thread) submitting ``n`` ``add`` children."""
    return [ctx.submit("add", i, 1) for i in range(n)]


@task
async def parent_sleep(seconds: float = 30.0, children: int = 2, *, ctx: TaskContext) -> float:
    """Submit ``children`` long ``sleep`` children, then sleep (a parent to cancel)."""
    for _ in range(children):
        await ctx.asubmit("sleep", seconds)
    await asyncio.sleep(seconds)
    return seconds
