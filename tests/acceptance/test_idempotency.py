"""Acceptance is exactly-once per request_id, also for concurrent submits."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

pytestmark = pytest.mark.acceptance


def test_same_request_id_twice_is_one_task(cluster: Any) -> None:
    client = cluster.client()
    first = client.submit("add", 2, 3, request_id="order-42")
    second = client.submit("add", 2, 3, request_id="order-42")
    assert first.id == second.id
    assert cluster.count_tasks(request_id="order-42") == 1
    assert client.wait(first.id, timeout=30).result == 5


def test_concurrent_submits_with_one_request_id(cluster: Any) -> None:
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(lambda _: cluster.client().submit("add", 1, 1, request_id="dup"), range(32)))
    assert len({t.id for t in results}) == 1
    assert cluster.count_tasks(request_id="dup") == 1
