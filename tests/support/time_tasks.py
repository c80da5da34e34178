"""Task functions of the timing tests (ETA, retries, explain).

A per-key call count lives in a file of the directory named by the
``TASKYARD_TEST_STATE_DIR`` environment variable, so a task can fail its first
calls across worker processes.
"""

from __future__ import annotations

import os
from pathlib import Path

from taskyard.worker_pool import Retry, task


def _calls(key: str) -> int:
    path = Path(os.environ["TASKYARD_TEST_STATE_DIR"]) / f"calls-{key}"
    # O_APPEND writes of one byte are atomic: the file's size is the call count.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, b".")
    finally:
        os.close(fd)
    return path.stat().st_size


class Fatal(Exception):
    """A type the task declares non-retryable by name."""


@task(retry_backoff=0.4, retry_backoff_max=0.6, retry_jitter=0.5, dont_retry=(ValueError, "Fatal"))
def backoff_flaky(key: str, failures: int) -> int:
    """Fail (RuntimeError) the first ``failures`` calls of ``key``, then succeed."""
    calls = _calls(key)
    if calls <= failures:
        raise RuntimeError(f"{key}: failure {calls} of {failures}")
    return calls


@task(retry_backoff=0.4, dont_retry=(ValueError, "Fatal"))
def fatal(kind: str) -> None:
    """Raise a non-retryable error: a ValueError (by class) or Fatal (by name)."""
    raise ValueError("bad input") if kind == "value" else Fatal("fatal")


@task(max_retries=2)
def asks_retry(key: str, delay: float, times: int) -> int:
    """Ask for a retry after ``delay`` seconds the first ``times`` calls."""
    calls = _calls(key)
    if calls <= times:
        raise Retry(delay=delay, reason=f"not ready yet ({calls})")
    return calls


@task
def clock_offset() -> float:
    """How far this worker's wall clock is from the real one (see support/skewed_clock)."""
    import time

    return time.time() - time.clock_gettime(time.CLOCK_REALTIME)
