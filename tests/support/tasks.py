"""Task functions used only by the acceptance tests (loaded into real worker pools).

Each execution appends a line to the journal file named by TASKYARD_TEST_JOURNAL,
so a test can count how many times a task really ran: the one thing a database
row cannot tell.
"""

from __future__ import annotations

import asyncio
import os

from taskyard.worker_pool import current_task, task


def _journal(line: str) -> None:
    path = os.environ["TASKYARD_TEST_JOURNAL"]
    # O_APPEND writes of one short line are atomic across processes.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def _starts(key: str) -> int:
    with open(os.environ["TASKYARD_TEST_JOURNAL"]) as fh:
        return sum(1 for line in fh if line == f"start {key}\n")


@task
async def journal(key: str, seconds: float = 0.0, first_run_only: bool = False) -> str:
    """Record one execution of ``key``, optionally taking some time (on the
    first run only, when asked, so a re-run after a crash is quick)."""
    _journal(f"start {key}")
    if seconds and not (first_run_only and _starts(key) > 1):
        await asyncio.sleep(seconds)
    _journal(f"done {key}")
    return key


@task
async def journal_attempt(key: str, seconds: float = 0.0) -> str:
    """As ``journal``, with the attempt number on each line: a body run twice under one
    attempt number is what the task record cannot show."""
    attempt = current_task().attempt
    _journal(f"start {key} {attempt} {os.getpid()}")
    if seconds:
        await asyncio.sleep(seconds)
    _journal(f"done {key} {attempt} {os.getpid()}")
    return key


@task(max_retries=0)
def fail_without_retry(message: str) -> None:
    """Declares its own retry budget: none."""
    raise ValueError(message)


@task(max_retries=1)
def fail_with_one_retry(message: str) -> None:
    raise ValueError(message)


@task(timeout=0.3)
async def slow_with_short_timeout(seconds: float) -> str:
    """Declares its own timeout, shorter than the deployment default."""
    await asyncio.sleep(seconds)
    return "finished"


@task(max_retries=0)
def fail_with_nul() -> None:
    """Fails with a NUL in its message (and traceback), which PostgreSQL text refuses."""
    raise ValueError("before\x00after")


@task
async def cancelled_unasked() -> None:
    """Raises Cancelled though nobody asked for a cancel: fails, never retried."""
    from taskyard.worker_pool.attempts import Cancelled

    raise Cancelled("gave up on my own")


@task
async def wide_lines(lines: int, width: int) -> int:
    """Log ``lines`` lines of ``width`` characters each (log pages over the gRPC cap)."""
    from taskyard.worker_pool import current_task

    ctx = current_task()
    for i in range(lines):
        ctx.log(f"{i:06d}" + "x" * (width - 6))
    return lines


@task(retry_backoff=30.0, retry_backoff_max=40.0, retry_jitter=0.0)
def crash_with_own_backoff() -> None:
    """Kills its worker; a death's backoff is this task's own (30 s for attempt 1)."""
    os._exit(1)


@task(max_retries=2)
def nested_result(depth: int) -> object:
    """A result nested ``depth`` lists deep: past the nesting limit its attempt
    fails with ResultTooDeep, never retried (it would be again)."""
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


@task(max_retries=0)
def fail_first_attempt(message: str) -> str:
    """Fails its first attempt; a later one (a manual retry) returns ``message``."""
    if current_task().attempt == 1:
        raise ValueError(message)
    return message
