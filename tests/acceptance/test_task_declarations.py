"""What a task declares with @task(...) applies when the submitter leaves it open,
and what the submitter sets wins."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.acceptance


def test_declared_retry_budget_applies(cluster: Any, journal: Any) -> None:
    client = cluster.client()
    none = client.wait(client.submit("fail_without_retry", "boom").id, timeout=30)
    assert none.state.name == "FAILURE" and none.attempt == 1
    one = client.wait(client.submit("fail_with_one_retry", "boom").id, timeout=30)
    assert one.state.name == "FAILURE" and one.attempt == 2
    # The submitter's explicit budget wins over the declaration.
    task = client.submit_many([{"name": "fail_without_retry", "args": ["boom"], "max_retries": 2}])[0]
    assert client.wait(task.id, timeout=30).attempt == 3


def test_declared_timeout_applies(cluster: Any, journal: Any) -> None:
    client = cluster.client()
    task = client.submit_many([{"name": "slow_with_short_timeout", "args": [5.0], "max_retries": 0}])[0]
    final = client.wait(task.id, timeout=30)
    assert final.state.name == "FAILURE"
    assert final.failure is not None and final.failure.type == "TimeoutError"
    # An explicit timeout from the submitter wins: 2 s is enough for 0.5 s of work.
    ok = client.submit_many(
        [{"name": "slow_with_short_timeout", "args": [0.5], "timeout": 2.0, "max_retries": 0}]
    )[0]
    assert client.wait(ok.id, timeout=30).result == "finished"
