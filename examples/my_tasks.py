"""Task functions of your own, for a worker pool to load.

    PYTHONPATH=. TASKYARD_TASK_MODULES=examples.my_tasks taskyard serve worker-pool

Arguments and results are JSON (str, int, float, bool, None, list, dict). A task's
name is its function name unless ``@task(name=...)`` says otherwise, and must be
unique across every module the pool loads.
"""

from __future__ import annotations

import asyncio
import os

from taskyard.worker_pool import is_worker_process, task


@task
def word_count(text: str) -> dict[str, int]:
    """A sync task: the worker runs it in a thread, so blocking calls are fine."""
    counts: dict[str, int] = {}
    for word in text.lower().split():
        counts[word] = counts.get(word, 0) + 1
    return counts


@task(name="shout", timeout=10)
async def shout_later(text: str, delay: float = 0.1) -> str:
    """An async task: it runs on the worker's event loop, so await, never block."""
    await asyncio.sleep(delay)
    return text.upper() + "!"


@task
def where_am_i() -> dict[str, object]:
    """is_worker_process() is True in a worker process (the pool's manager imports
    this module too, only to learn the task names)."""
    return {"pid": os.getpid(), "in_worker": is_worker_process()}
