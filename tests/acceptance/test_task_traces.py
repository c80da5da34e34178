"""One trace per task in a real Jaeger: the caller's span, the gateway, a send
span per task, an attempt span per attempt, the task's own spans, and children."""

from __future__ import annotations

import os
import re
import secrets
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Tracer
from support.observability import (
    is_error,
    parent_of,
    service_of,
    spans_named,
    tags,
    trace_by_id,
    tracing_env,
    wait_for_spans,
)
from support.waiting import wait_until

from taskyard.cli.jaeger import Jaeger
from taskyard.client import TaskState
from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = pytest.mark.acceptance

TASKS = "taskyard.examples,support.traced_tasks"


@pytest.fixture
def traced(jaeger: Jaeger, cluster_factory: Any) -> Any:
    # Jaeger first: fixtures end in reverse, so the services flush their last
    # spans to a Jaeger still running instead of waiting on a closed port.
    return cluster_factory(task_modules=TASKS, env=tracing_env(jaeger))


@pytest.fixture
def app_tracer(jaeger: Jaeger) -> Iterator[Tracer]:
    """The test plays an application that traces its own work and calls Taskyard in it."""
    provider = TracerProvider(resource=Resource.create({"service.name": "test-app"}))
    provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{jaeger.otlp_http_endpoint}/v1/traces"))
    )
    try:
        yield provider.get_tracer("test-app")
    finally:
        provider.shutdown()


def _trace_id(span: Any) -> str:
    return f"{span.get_span_context().trace_id:032x}"


def test_a_task_retried_twice_is_one_trace_under_the_callers_span(
    traced: Any,
    jaeger: Jaeger,
    app_tracer: Tracer,
) -> None:
    with traced.client() as client, app_tracer.start_as_current_span("checkout") as root:
        submitted = client.submit("fails_twice_then_succeeds")
    trace_id = _trace_id(root)
    with traced.client() as client:
        done = client.wait(submitted.id, timeout=30)
    assert done.state == TaskState.SUCCESS, done

    def complete(found: dict[str, Any]) -> bool:
        # Every process exports on its own schedule: wait for each one's spans.
        return (
            len(spans_named(found, "process ")) == 3
            and len(spans_named(found, "queue wait")) == 3
            and bool(spans_named(found, "own work"))
            and bool(spans_named(found, "send "))
            and any(s["operationName"].endswith("/SubmitTask") for s in found["spans"])
            and any(s["operationName"] == "checkout" for s in found["spans"])
        )

    found = wait_for_spans(jaeger, trace_id, complete)
    by_id = {s["spanID"]: s for s in found["spans"]}
    (app,) = [s for s in found["spans"] if s["operationName"] == "checkout"]
    assert parent_of(app) is None  # the caller's span is the trace's root
    (server,) = [s for s in found["spans"] if s["operationName"].endswith("/SubmitTask")]
    assert service_of(found, server) == "taskyard-gateway"
    assert parent_of(server) == app["spanID"]
    (send,) = spans_named(found, "send ")
    assert parent_of(send) == server["spanID"]
    assert tags(send)["messaging.message.id"] == submitted.id

    attempts = sorted(spans_named(found, "process "), key=lambda s: tags(s)["taskyard.task.attempt"])
    assert [tags(s)["taskyard.task.attempt"] for s in attempts] == [1, 2, 3]
    for span in attempts:
        assert parent_of(span) == send["spanID"]
        assert service_of(found, span) == "taskyard-worker-pool"
        t = tags(span)
        assert t["messaging.message.id"] == submitted.id
        assert t["taskyard.task.name"] == "fails_twice_then_succeeds"
        assert t["messaging.destination.name"] == "default"
        assert t["taskyard.worker.id"]
    assert [is_error(s) for s in attempts] == [True, True, False]
    assert [tags(s)["taskyard.task.outcome"] for s in attempts] == ["retry", "retry", "success"]
    for failed in attempts[:2]:
        assert tags(failed)["error.type"] == "RuntimeError"
        (event,) = [
            log
            for log in failed["logs"]
            if {"key": "event", "type": "string", "value": "exception"} in log["fields"]
        ]
        fields = {f["key"]: f["value"] for f in event["fields"]}
        assert fields["exception.type"] == "RuntimeError"
        assert "fails on purpose" in fields["exception.message"]
    (own,) = spans_named(found, "own work")
    assert parent_of(own) == attempts[2]["spanID"]
    # The wait before each attempt is visible.
    waits = spans_named(found, "queue wait")
    assert len(waits) == 3 and all(parent_of(w) == send["spanID"] for w in waits)
    # Every parent a span names is in the trace: nothing hangs from a span never exported.
    assert all(parent_of(s) in by_id for s in found["spans"] if parent_of(s) is not None)

    # The task's log lines carry the trace too.
    with traced.client() as client:
        page = client.logs.page(submitted.id)
    assert page.lines and {line.trace_id for line in page.lines} == {trace_id}


def test_one_tasks_trace_shows_the_gateway_scheduler_store_and_worker(traced: Any, jaeger: Jaeger) -> None:
    with traced.client() as client:
        # The pool is busy with the first: the second waits in a lane, so it is
        # leased by the scheduler's dispatcher (the first, leased at its insert).
        tasks = [client.submit("fails_twice_then_succeeds") for _ in range(2)]
        done = [client.wait(t.id, timeout=30) for t in tasks]
    assert [t.state for t in done] == [TaskState.SUCCESS] * 2
    for task in done:
        assert task.trace_id

        def complete(found: dict[str, Any]) -> bool:
            return (
                len(spans_named(found, "process ")) == 3
                and len(spans_named(found, "dispatch ")) == 3
                and len(spans_named(found, "commit report")) >= 3
                and bool(spans_named(found, "commit insert"))
            )

        found = wait_for_spans(jaeger, task.trace_id, complete)
        by_service: dict[str, list[str]] = {}
        for span in found["spans"]:
            by_service.setdefault(service_of(found, span), []).append(span["operationName"])
        assert {
            "taskyard-gateway",
            "taskyard-scheduler",
            "taskyard-result-store",
            "taskyard-worker-pool",
        } <= set(by_service), by_service
        (send,) = spans_named(found, "send ")
        # Every attempt was dispatched, each in the task's trace under its send span.
        dispatches = sorted(spans_named(found, "dispatch "), key=lambda s: tags(s)["taskyard.task.attempt"])
        assert [tags(s)["taskyard.task.attempt"] for s in dispatches] == [1, 2, 3]
        for span in dispatches:
            assert service_of(found, span) == "taskyard-scheduler"
            assert parent_of(span) == send["spanID"]
            assert tags(span)["messaging.message.id"] == task.id
            assert tags(span)["taskyard.dispatch.path"] in ("lanes", "insert")
        commits = [s for s in found["spans"] if s["operationName"].startswith("commit ")]
        for span in commits:
            assert service_of(found, span) == "taskyard-result-store"
            assert parent_of(span) == send["spanID"]
            assert tags(span)["messaging.message.id"] == task.id
        # Its outcomes, as the store committed them: two retries, then the success.
        reported = sorted(
            (tags(s)["taskyard.task.attempt"], tags(s)["taskyard.task.state"])
            for s in spans_named(found, "commit report")
        )
        assert [r for r in reported if r[1] in ("RETRYING", "SUCCESS")] == [
            (1, "RETRYING"),
            (2, "RETRYING"),
            (3, "SUCCESS"),
        ]
    paths = {
        tags(s)["taskyard.dispatch.path"]
        for task in done
        for s in spans_named(trace_by_id(jaeger, task.trace_id) or {"spans": []}, "dispatch ")
    }
    assert "lanes" in paths
    # The lanes path leases in a write of its own: its commit is in the trace too.
    assert any(
        spans_named(trace_by_id(jaeger, task.trace_id) or {"spans": []}, "commit lease") for task in done
    )


def test_the_last_failing_attempt_ends_as_a_failure(traced: Any, jaeger: Jaeger) -> None:
    with traced.client() as client:
        submitted = client.submit("fail", "for good", max_retries=1)
        done = client.wait(submitted.id, timeout=30)
    assert done.state == TaskState.FAILURE
    found = wait_for_spans(jaeger, done.trace_id, lambda f: len(spans_named(f, "process ")) == 2)
    attempts = sorted(spans_named(found, "process "), key=lambda s: tags(s)["taskyard.task.attempt"])
    assert [tags(s)["taskyard.task.outcome"] for s in attempts] == ["retry", "failure"]
    assert all(is_error(s) and tags(s)["error.type"] == "ValueError" for s in attempts)


def test_a_task_not_sampled_gets_no_span_anywhere(traced: Any, jaeger: Jaeger) -> None:
    stub = task_service_pb2_grpc.TaskServiceStub(traced.channel())
    unsampled = os.urandom(16).hex()
    spec = task_pb2.TaskSpec(name="leaf")
    spec.args.append(1)
    reply = stub.SubmitTask(
        task_service_pb2.SubmitTaskRequest(task=spec),
        # The caller did not sample its trace (flags 00): nor does any service.
        metadata=(("traceparent", f"00-{unsampled}-{os.urandom(8).hex()}-00"),),
    )
    assert reply.task.trace_id == ""  # no trace context stored: nothing to look at
    with traced.client() as client:
        assert client.wait(reply.task.id, timeout=30).state == TaskState.SUCCESS
        # A sampled task after it: once its spans from every service are in, the
        # first task's would be too (each process exports its spans in order).
        sampled = client.submit("leaf", 2)
        client.wait(sampled.id, timeout=30)
    wait_for_spans(
        jaeger,
        sampled.trace_id,
        lambda f: (
            {service_of(f, s) for s in f["spans"]}
            >= {"taskyard-gateway", "taskyard-scheduler", "taskyard-result-store", "taskyard-worker-pool"}
        ),
    )
    assert trace_by_id(jaeger, unsampled) is None


def test_children_join_the_parents_trace(traced: Any, jaeger: Jaeger, app_tracer: Tracer) -> None:
    with traced.client() as client, app_tracer.start_as_current_span("order") as root:
        parent = client.submit("submits_two_children")
    with traced.client() as client:
        done = client.wait(parent.id, timeout=30)
        children = done.result
        for child in children:
            assert client.wait(child, timeout=30).state == TaskState.SUCCESS

    def complete(found: dict[str, Any]) -> bool:
        return (
            len(spans_named(found, "process ")) == 3
            and len(spans_named(found, "send ")) == 3
            and any(s["operationName"] == "order" for s in found["spans"])
        )

    found = wait_for_spans(jaeger, _trace_id(root), complete)
    processed = {tags(s)["messaging.message.id"] for s in spans_named(found, "process ")}
    assert processed == {parent.id, *children}
    (parent_attempt,) = [
        s for s in spans_named(found, "process ") if tags(s)["messaging.message.id"] == parent.id
    ]
    child_sends = [s for s in spans_named(found, "send ") if tags(s)["messaging.message.id"] in children]
    assert len(child_sends) == 2 and all(parent_of(s) == parent_attempt["spanID"] for s in child_sends)
    roots = [s for s in found["spans"] if parent_of(s) is None]
    assert [s["operationName"] for s in roots] == ["order"]


def test_an_attempt_whose_worker_was_killed_is_in_the_trace(traced: Any, jaeger: Jaeger) -> None:
    with traced.client() as client:
        submitted = client.submit("dies_on_first_attempt")
        done = client.wait(submitted.id, timeout=60)
    assert done.state == TaskState.SUCCESS, done
    (row,) = traced.query(
        "SELECT trace_headers->>'traceparent' AS p FROM tasks WHERE id = $1::uuid", submitted.id
    )
    trace_id = row["p"].split("-")[1]

    def complete(found: dict[str, Any]) -> bool:
        return len(spans_named(found, "process ")) == 2 and bool(spans_named(found, "send "))

    found = wait_for_spans(jaeger, trace_id, complete)
    attempts = sorted(spans_named(found, "process "), key=lambda s: tags(s)["taskyard.task.attempt"])
    assert [tags(s)["taskyard.task.outcome"] for s in attempts] == ["died", "success"]
    assert is_error(attempts[0]) and not is_error(attempts[1])
    # The pool's log of the death names the task's trace.
    assert re.search(rf"died.*trace_id={trace_id}", traced.log_text("worker-pool"))


def test_a_batch_gives_each_task_its_own_trace_linked_to_the_call(traced: Any, jaeger: Jaeger) -> None:
    with traced.client() as client:
        batch = client.submit_many([{"name": "leaf", "args": [i]} for i in range(3)])
        for item in batch:
            client.wait(item.id, timeout=30)
    rows = traced.query(
        "SELECT trace_headers->>'traceparent' AS p FROM tasks WHERE id = ANY($1::uuid[])",
        [t.id for t in batch],
    )
    trace_ids = {r["p"].split("-")[1] for r in rows}
    assert len(trace_ids) == 3
    for trace_id in trace_ids:
        found = wait_for_spans(
            jaeger, trace_id, lambda f: bool(spans_named(f, "process ")) and bool(spans_named(f, "send "))
        )
        (send,) = spans_named(found, "send ")
        assert parent_of(send) is None
        (link,) = [ref for ref in send["references"] if ref["refType"] == "FOLLOWS_FROM"]
        batch_trace = wait_for_spans(jaeger, link["traceID"], lambda f: bool(f["spans"]))
        (call,) = [s for s in batch_trace["spans"] if s["spanID"] == link["spanID"]]
        assert call["operationName"].endswith("/BatchSubmitTasks")
        # ...and the call links back to each task's send span.
        assert {
            (r["traceID"], r["spanID"]) for r in call["references"] if r["refType"] == "FOLLOWS_FROM"
        } >= {(trace_id, send["spanID"])}


def test_refused_calls_keep_their_status_with_tracing_on(
    jaeger: Jaeger, cluster_factory: Any, tmp_path: Path
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{secrets.token_urlsafe(24)}  read  dashboard\n")
    cluster = cluster_factory(
        start=False, env={**tracing_env(jaeger), "TASKYARD_AUTH_TOKENS_FILE": str(tokens)}
    )
    cluster.start()  # its readiness probe has no token: health (open to all) says when it serves
    health = health_pb2_grpc.HealthStub(cluster.channel())
    wait_until(
        lambda: health.Check(health_pb2.HealthCheckRequest(), timeout=5).status == 1,
        45,
        lambda: f"health SERVING\n{cluster.logs_tail()}",
    )
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    with pytest.raises(grpc.RpcError) as unary:
        stub.GetTask(task_service_pb2.GetTaskRequest(id=str(uuid.uuid4())), timeout=10)
    assert unary.value.code() == grpc.StatusCode.UNAUTHENTICATED
    # A streaming call refused before it starts: the tracing interceptor iterates it.
    stream = stub.StreamTaskLogs(task_service_pb2.StreamTaskLogsRequest(id=str(uuid.uuid4())), timeout=10)
    with pytest.raises(grpc.RpcError) as streamed:
        next(iter(stream))
    assert streamed.value.code() == grpc.StatusCode.UNAUTHENTICATED
