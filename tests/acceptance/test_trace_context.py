"""W3C trace context follows a task: a caller's traceparent reaches the stored
row (and from there each attempt), so the task joins the caller's trace."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from support.observability import spans_named, tags, tracing_env, wait_for_spans

from taskyard.cli.jaeger import Jaeger
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


def test_the_task_names_its_trace_whoever_reads_it(jaeger: Jaeger, cluster_factory: Any) -> None:
    # Tracing on: the gateway joins the caller's (sampled) trace and stores its context.
    cluster = cluster_factory(env=tracing_env(jaeger))
    trace_id = os.urandom(16).hex()
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    spec = task_pb2.TaskSpec(name="add")
    spec.args.extend([1, 2])
    reply = stub.SubmitTask(
        task_service_pb2.SubmitTaskRequest(task=spec),
        metadata=(("traceparent", f"00-{trace_id}-{os.urandom(8).hex()}-01"),),
    )
    assert reply.task.trace_id == trace_id
    (row,) = cluster.query(
        "SELECT trace_headers->>'traceparent' AS p FROM tasks WHERE id = $1::uuid", reply.task.id
    )
    # The row's own context (the task's send span) is in the caller's trace.
    assert row["p"].split("-")[1] == trace_id
    got = stub.GetTask(task_service_pb2.GetTaskRequest(id=reply.task.id)).task
    assert got.trace_id == trace_id
    with cluster.client() as client:
        done = client.wait(reply.task.id, timeout=30)
        listed = {t.id: t for t in client.list().tasks}
    assert done.trace_id == trace_id  # the Python client's TaskInfo, read after the store's final commit
    assert listed[reply.task.id].trace_id == trace_id
    # The task spans hang from the traceparent's trace: the id leads to them.
    found = wait_for_spans(jaeger, trace_id, lambda f: bool(spans_named(f, "process ")))
    assert {tags(s)["messaging.message.id"] for s in spans_named(found, "process ")} == {reply.task.id}


def test_a_task_without_trace_context_names_no_trace(cluster: Any) -> None:
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    reply = stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name="noop")))
    assert reply.task.trace_id == ""
    assert stub.GetTask(task_service_pb2.GetTaskRequest(id=reply.task.id)).task.trace_id == ""
