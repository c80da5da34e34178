"""Task functions of the supervision acceptance tests (tests/acceptance/test_supervision_*.py).

Loaded into real worker pools next to ``taskyard.examples``.
"""

from __future__ import annotations

import asyncio
import os
import time

from taskyard.worker_pool import Cancelled, current_task, is_worker_process, task

_HOARD: list[bytearray] = []


@task
async def block_loop(seconds: float) -> str:
    """Blocks its worker's event loop (no await): asyncio cannot time it out."""
    time.sleep(seconds)  # noqa: ASYNC251 - the point: a body that blocks its loop
    return "woke"


@task
def long_sync(seconds: float) -> str:
    """A long sync task in its executor thread: its worker keeps beating."""
    time.sleep(seconds)
    return "done"


@task
async def forever_async() -> None:
    await asyncio.sleep(3600)


@task
def spin_sync(seconds: float) -> int:
    """Busy-loops, ignoring everything (no flag polling): only a kill stops it early."""
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
    return n


@task
def grow(mib: int, hold_seconds: float = 1.0) -> int:
    """Allocates ``mib`` MiB that stay allocated (a leak), then keeps running a little."""
    block = bytearray(mib * 1024 * 1024)
    for i in range(0, len(block), 4096):  # touch every page: resident, not just reserved
        block[i] = 1
    _HOARD.append(block)
    time.sleep(hold_seconds)
    return len(_HOARD)


@task
async def cooperative(seconds: float = 60.0) -> str:
    """Polls its cancel flag and stops itself."""
    ctx = current_task()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if ctx.cancelled:
            raise Cancelled()
        await asyncio.sleep(0.05)
    return "finished"


@task
async def where() -> bool:
    return is_worker_process()


@task
def pid() -> int:
    return os.getpid()


def _journal_execution() -> int:
    """Journals this execution of a body as "run <task id> <attempt> <pid>"
    (TASKYARD_TEST_JOURNAL): the executions a test maps to attempts and late
    reports. Returns the attempt."""
    ctx = current_task()
    fd = os.open(os.environ["TASKYARD_TEST_JOURNAL"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:  # one short O_APPEND write: atomic across processes
        os.write(fd, f"run {ctx.task_id} {ctx.attempt} {os.getpid()}\n".encode())
    finally:
        os.close(fd)
    return ctx.attempt


@task
async def journal_run(seconds: float = 0.0) -> int:
    """Journals its execution, then takes ``seconds``."""
    attempt = _journal_execution()
    await asyncio.sleep(seconds)
    return attempt


@task
def journal_until_released(release: str) -> int:
    """Journals its execution, then runs until the file ``release`` exists: a test
    stops or freezes its pool while every body runs, however slow the machine,
    and lets the bodies end when it is done. A sync body (a thread of its worker),
    as a task that waits on something outside it would be."""
    attempt = _journal_execution()
    while not os.path.exists(release):
        time.sleep(0.05)
    return attempt
