"""A task that fails with one of three causes until "the downstream is fixed" (the
redrive tests and docs/failures.md's walkthrough).

``charge(kind, n)`` raises, by ``kind``: ``timeout`` a TimeoutError, ``declined`` a
ValueError (marked not retryable), anything else a LookupError; its message carries ``n``
and a quoted value, which the fingerprint masks, so each kind is one failure group.
Every attempt appends ``charge <kind>-<n> <attempt>`` to TASKYARD_TEST_JOURNAL (a test
counts the runs of each task); once the file TASKYARD_TEST_FIXED names exists, it
succeeds instead.
"""

from __future__ import annotations

import os

from taskyard.worker_pool import current_task, task


def _journal(line: str) -> None:
    path = os.environ.get("TASKYARD_TEST_JOURNAL")
    if not path:
        return
    # O_APPEND writes of one short line are atomic across processes.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def _fixed() -> bool:
    flag = os.environ.get("TASKYARD_TEST_FIXED", "")
    return bool(flag) and os.path.exists(flag)


@task(max_retries=0, dont_retry=(ValueError,))
def charge(kind: str, n: int) -> str:
    _journal(f"charge {kind}-{n} {current_task().attempt}")
    if _fixed():
        return f"charged {kind}-{n}"
    if kind == "timeout":
        raise TimeoutError(f"payments API timed out after {1000 + n} ms")
    if kind == "declined":
        raise ValueError(f"card 'tok_{n:06d}' declined by the issuer")
    raise LookupError(f"no customer {n} in region 'eu-{n % 3}'")
