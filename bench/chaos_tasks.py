"""Task functions of the fault-schedule runner (bench/chaos), loaded by its pools.

Every body execution appends ``start`` and then ``ok`` or ``raise`` lines to the
journal named by TASKYARD_CHAOS_JOURNAL, with the task id, the attempt number the
worker was given, its pid and the time (and, for ``chaos_flow``, the limit key). A
database row cannot tell how often a body really ran; the journal can, and a
``start`` without an end marks a run that a fault cut short.
"""

from __future__ import annotations

import asyncio
import os
import time

from taskyard.worker_pool import current_task, task

JOURNAL_ENV = "TASKYARD_CHAOS_JOURNAL"


class PlannedFailure(RuntimeError):
    """Raised on purpose: the retries it causes are the design, not duplicates."""


def _journal(event: str, key: str = "") -> None:
    ctx = current_task()
    # The flow-control schedule's lines end with the task's limit key (bench/flow_check.py).
    tail = f" {key}" if key else ""
    line = f"{event} {ctx.task_id} {ctx.attempt} {os.getpid()} {time.time():.3f}{tail}\n"
    # One O_APPEND write per line: lines from concurrent workers never interleave.
    fd = os.open(os.environ[JOURNAL_ENV], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


@task
async def chaos_noop() -> str:
    _journal("start")
    _journal("ok")
    return "ok"


@task
async def chaos_sleep(seconds: float) -> float:
    _journal("start")
    await asyncio.sleep(seconds)
    _journal("ok")
    return seconds


@task(max_retries=3, retry_backoff=0.2, retry_backoff_max=1.0, retry_jitter=0.0)
def chaos_flaky(seconds: float) -> str:
    """Fails its first attempt, succeeds on a retry (a sync body, in a worker thread)."""
    _journal("start")
    time.sleep(seconds)
    if current_task().attempt <= 1:
        _journal("raise")
        raise PlannedFailure("first attempt fails on purpose")
    _journal("ok")
    return "recovered"


@task(max_retries=2, retry_backoff=0.2, retry_backoff_max=1.0, retry_jitter=0.0)
async def chaos_failing() -> None:
    """Fails every attempt: ends FAILURE once its retries are spent."""
    _journal("start")
    _journal("raise")
    raise PlannedFailure("always fails")


@task(max_retries=3, retry_backoff=0.2, retry_backoff_max=1.0, retry_jitter=0.0)
async def chaos_flow(customer: str, seconds: float, fail_first: bool) -> str:
    """The flow-control schedule's task (bench/chaos --flow): ``customer`` is its limit
    and fairness key, journalled with each run; ``fail_first`` fails its first attempt,
    so a retry takes units again."""
    _journal("start", customer)
    await asyncio.sleep(seconds)
    if fail_first and current_task().attempt <= 1:
        _journal("raise", customer)
        raise PlannedFailure("first attempt fails on purpose")
    _journal("ok", customer)
    return customer
