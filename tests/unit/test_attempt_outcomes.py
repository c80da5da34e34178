"""How an attempt's span and run-time metric name its end: ``retry`` only when
another attempt follows (the store's rule), and a failed span says its
``error.type``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from prometheus_client.registry import REGISTRY

from taskyard.bus.v1 import leases_pb2, task_record_pb2
from taskyard.core import ids, tracing
from taskyard.core import metrics as core_metrics
from taskyard.v1 import task_pb2
from taskyard.worker_pool import metrics as pool_metrics
from taskyard.worker_pool import spans
from taskyard.worker_pool.attempts import outcome_of


def failed(*, retryable: bool, max_retries: int, kind: str = "ValueError") -> leases_pb2.Completion:
    return leases_pb2.Completion(
        success=False,
        retryable=retryable,
        max_retries=max_retries,
        failure=task_pb2.TaskFailure(type=kind, message="boom", traceback="Traceback ..."),
    )


@pytest.mark.parametrize(
    ("completion", "charged", "outcome"),
    [
        (leases_pb2.Completion(success=True), 1, "success"),
        (failed(retryable=True, max_retries=2), 1, "retry"),
        (failed(retryable=True, max_retries=2), 2, "retry"),
        # The budget is spent: the store makes it FAILURE, so does its span.
        (failed(retryable=True, max_retries=2), 3, "failure"),
        (failed(retryable=True, max_retries=0), 1, "failure"),
        (failed(retryable=False, max_retries=5), 1, "failure"),
        (leases_pb2.Completion(success=False, cancel_step=task_pb2.CANCEL_STEP_FLAG), 1, "cancelled"),
    ],
)
def test_retry_only_when_another_attempt_follows(
    completion: leases_pb2.Completion, charged: int, outcome: str
) -> None:
    assert outcome_of(completion, charged) == outcome


@pytest.fixture
def exported() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    yield exporter
    exporter.shutdown()


def _finished(
    exporter: InMemorySpanExporter, completion: leases_pb2.Completion, charged: int
) -> ReadableSpan:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spans.finish(provider.get_tracer("t").start_span("process default"), completion, charged)
    (span,) = exporter.get_finished_spans()
    exporter.clear()
    return span


def test_the_last_failing_attempts_span_is_a_failure_with_its_error_type(
    exported: InMemorySpanExporter,
) -> None:
    last = _finished(exported, failed(retryable=True, max_retries=2), 3)
    assert last.attributes is not None
    assert last.attributes["taskyard.task.outcome"] == "failure"
    assert last.attributes["error.type"] == "ValueError"
    assert last.status.status_code == StatusCode.ERROR
    (event,) = last.events
    assert event.attributes is not None and event.attributes["exception.type"] == "ValueError"

    retried = _finished(exported, failed(retryable=True, max_retries=2, kind="TimeoutError"), 1)
    assert retried.attributes is not None
    assert retried.attributes["taskyard.task.outcome"] == "retry"
    assert retried.attributes["error.type"] == "TimeoutError"

    ok = _finished(exported, leases_pb2.Completion(success=True), 1)
    assert ok.attributes is not None and "error.type" not in ok.attributes


def test_a_died_attempts_span_names_its_error_type(
    exported: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    monkeypatch.setattr(spans, "_tracer", provider.get_tracer("t"))
    monkeypatch.setattr(tracing, "enabled", lambda: True)
    record = task_record_pb2.TaskRecord(id=ids.new_task_id(), name="add", queue="default", attempt=1)
    record.trace_headers["traceparent"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    spans.died(record, "pool/w0:1", 1_000, 2_000, "exit code -9")
    (span,) = exported.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["taskyard.task.outcome"] == "died"
    assert span.attributes["error.type"] == "WorkerProcessDied"


def test_the_run_time_metric_counts_the_last_failing_attempt_as_a_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(core_metrics, "_serving", True)
    queue = f"outcomes-{ids.new_task_id()[-8:]}"

    def count(outcome: str) -> float:
        labels = {"queue": queue, "name": "add", "outcome": outcome}
        return REGISTRY.get_sample_value("taskyard_task_run_seconds_count", labels) or 0.0

    for charged in (1, 2, 3):
        completion = failed(retryable=True, max_retries=2)
        completion.started_at_us, completion.ref.at_us = 1_000, 2_000
        pool_metrics.attempt_ended(queue, "add", 500, completion, charged)
    assert (count("retry"), count("failure")) == (2, 1)
