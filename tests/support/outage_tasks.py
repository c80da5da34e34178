"""A downstream that is down for a while, for the breaker refund tests: key KEY
raises ConnectionError (an ordinary failure, not a throttling answer) while a
file named KEY exists in ``down_dir`` (the test creates and removes it)."""

from __future__ import annotations

import os

from taskyard.worker_pool import task


@task(max_retries=1, retry_backoff=0.05, retry_backoff_max=0.05, retry_jitter=0)
def call_flaky(key: str, down_dir: str) -> str:
    # One retry: two charged failures end the task FAILURE.
    if os.path.exists(os.path.join(down_dir, key)):
        raise ConnectionError(f"connection refused by {key}")
    return key
