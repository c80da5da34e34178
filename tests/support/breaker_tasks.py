"""A downstream call for the circuit-breaker tests: key KEY answers "503, retry after
1 s" while a file named KEY exists in ``down_dir`` (the test creates and removes it)."""

from __future__ import annotations

import os

from taskyard.worker_pool import raise_for_throttle, task


@task(max_retries=0)
def call_downstream(key: str, down_dir: str) -> str:
    # No retry at all: a throttled attempt that spent one would end the task FAILURE.
    status = 503 if os.path.exists(os.path.join(down_dir, key)) else 200
    raise_for_throttle(status, {"Retry-After": "1"})
    return key
