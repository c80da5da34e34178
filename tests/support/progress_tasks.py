"""A task that reports progress once it is let go (loaded into real worker pools by
the tests of progress on the event log): the test lets it go once it has seen the
task start, so its progress is reported while the task is RUNNING, whatever the
pool's hold-back of start notices (core/held_starts.py)."""

from __future__ import annotations

import os
import time

from taskyard.worker_pool import TaskContext, task


@task
def progress_when_let(gate: str, steps: int = 2, *, ctx: TaskContext) -> int:
    """Wait (in its thread) for the file ``gate``, then report ``steps`` steps of
    progress ("step i of n")."""
    while not os.path.exists(gate):
        time.sleep(0.01)
    for i in range(1, steps + 1):
        ctx.progress(i / steps, f"step {i} of {steps}")
    return steps
