"""Tasks served only by the second pool of tests/acceptance/test_two_pools.py."""

from __future__ import annotations

from taskyard.worker_pool import task


@task
async def only_on_b(x: int) -> int:
    return x * 10
