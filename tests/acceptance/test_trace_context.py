"""W3C trace context follows a task: a caller's traceparent reaches the stored
row (and from there each attempt), so the task joins the caller's trace."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = pytest.mark.acceptance


def test_callers_traceparent_is_stored_with_the_task(cluster: Any) -> None:
    trace_id = os.urandom(16).hex()
    parent = f"00-{trace_id}-{os.urandom(8).hex()}-01"
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    spec = task_pb2.TaskSpec(name="add")
    spec.args.extend([1, 2])
    reply = stub.SubmitTask(
        task_service_pb2.SubmitTaskRequest(task=spec),
        metadata=(("traceparent", parent), ("tracestate", "vendor=1")),
    )
    (row,) = cluster.query("SELECT trace_headers::text AS h FROM tasks WHERE id = $1::uuid", reply.task.id)
    headers = json.loads(row["h"])
    # Same trace; the flags are not fixed (sampling decides them).
    assert headers["traceparent"].split("-")[1] == trace_id
    assert headers.get("tracestate") == "vendor=1"
