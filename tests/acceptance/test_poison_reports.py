"""A task failure whose text PostgreSQL refuses (a NUL byte) on a real cluster: it is
stored escaped, and the pool's later reports keep flowing (one such
failure used to block every completion the pool sent, forever)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(60)]


def test_a_nul_in_a_failure_does_not_block_the_pool(cluster_factory: Callable[..., Any]) -> None:
    cluster = cluster_factory(task_modules=("taskyard.examples", "support.tasks"), workers=1, concurrency=2)
    client = cluster.client()
    bad = client.submit("fail_with_nul")
    final = client.wait(bad.id, timeout=20)
    assert final.state.name == "FAILURE", final
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    got: task_pb2.Task = stub.GetTask(task_service_pb2.GetTaskRequest(id=bad.id), timeout=10).task
    (failure,) = got.failures
    assert failure.type == "ValueError" and failure.message == "before\\u0000after"
    assert "before\\u0000after" in failure.traceback
    # The same pool's later reports are stored.
    ok = client.submit("add", 2, 3)
    assert client.wait(ok.id, timeout=20).result == 5

    cancelled = client.submit("cancelled_unasked")
    after = client.wait(cancelled.id, timeout=20)
    assert after.state.name == "FAILURE" and after.attempt == 1
