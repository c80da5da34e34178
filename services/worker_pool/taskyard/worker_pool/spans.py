"""The spans of an attempt: ``queue wait`` and ``process``, parented on the task's stored context.

Every attempt's spans hang from the ``send`` span whose context the task row
keeps, so a task's retries, and an attempt whose worker died (recorded by the
pool manager, see ``died``), all land in the submitter's trace. The task's own
spans (``opentelemetry.trace`` in task code) nest under ``process`` because it
is the current span while the body runs, in its thread too (the body runs in a
copy of the attempt's context).

Nothing here runs when tracing is off (``tracing.enabled()`` is False), nor for a
task whose ``send`` span was not sampled (it carries no trace context): the hot path
pays one test per attempt.
"""

from __future__ import annotations

import contextlib
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from taskyard.bus.v1 import leases_pb2, task_record_pb2
from taskyard.core import tracing
from taskyard.v1 import task_pb2
from taskyard.worker_pool.attempts import outcome_of

_tracer = trace.get_tracer("taskyard.worker_pool")


def enqueued_us(record: task_record_pb2.TaskRecord) -> int:
    """When the attempt began to wait: a retry or a delayed task at its due time
    (run_at), a task submitted to run now at its creation. (A task released by its
    dependencies, or handed back to the queue, counts from the later of those too:
    the row keeps no time of its last QUEUED.)"""
    return max(record.created_at_us, record.run_at_us)


def head_of(record: task_record_pb2.TaskRecord) -> task_record_pb2.TaskRecord:
    """The fields the attempt's metrics and a died span need, apart from the batch."""
    head = task_record_pb2.TaskRecord(
        id=record.id,
        name=record.name,
        queue=record.queue,
        priority=record.priority,
        attempt=record.attempt,
        created_at_us=record.created_at_us,
        run_at_us=record.run_at_us,
    )
    if record.trace_headers:
        head.trace_headers.update(record.trace_headers)
    return head


def start(
    record: task_record_pb2.TaskRecord, worker_id: str, started_at_us: int, *, with_wait: bool = True
) -> trace.Span | None:
    """The attempt's ``process`` span (after a ``queue wait`` span up to its start), or None when off."""
    if not tracing.enabled() or not record.trace_headers:
        return None  # a task its producer did not sample (or did not trace) records nothing
    parent = tracing.context_of(record.trace_headers)
    started_ns = started_at_us * 1000
    waited_from = enqueued_us(record)
    if with_wait and 0 < waited_from <= started_at_us:
        wait = _tracer.start_span(
            "queue wait",
            context=parent,
            start_time=waited_from * 1000,
            attributes={tracing.MESSAGE_ID: record.id, tracing.ATTEMPT: record.attempt},
        )
        wait.end(end_time=started_ns)
    return _tracer.start_span(
        f"process {record.queue or 'default'}",
        context=parent,
        kind=SpanKind.CONSUMER,
        start_time=started_ns,
        attributes=_attributes(record, worker_id, started_at_us),
    )


def current(span: trace.Span | None) -> contextlib.AbstractContextManager[Any]:
    """``span`` as the current span for the block (nothing when None). Its end and
    status are ``finish``'s: an exception leaving the block does not touch them."""
    if span is None:
        return contextlib.nullcontext()
    return trace.use_span(span, end_on_exit=False, record_exception=False, set_status_on_exception=False)


def _attributes(
    record: task_record_pb2.TaskRecord, worker_id: str, started_at_us: int
) -> dict[str, str | int]:
    waited_from = enqueued_us(record)
    return {
        "messaging.system": tracing.SYSTEM,
        tracing.OPERATION_TYPE: "process",
        tracing.OPERATION_NAME: "process",
        tracing.DESTINATION: record.queue or "default",
        tracing.MESSAGE_ID: record.id,
        tracing.TASK_NAME: record.name,
        tracing.PRIORITY: task_pb2.Priority.Name(record.priority),
        tracing.ATTEMPT: record.attempt,
        tracing.WORKER_ID: worker_id,
        tracing.QUEUE_WAIT_MS: max(0, started_at_us - waited_from) // 1000 if waited_from else 0,
    }


def finish(span: trace.Span | None, completion: leases_pb2.Completion, charged: int) -> None:
    """End the span with the attempt's outcome (``attempts.outcome_of``; ``charged``:
    the attempt as the retry budget counts it): ok, or error status with the failure
    as an exception event and its type as ``error.type``."""
    if span is None:
        return
    outcome = outcome_of(completion, charged)
    span.set_attribute(tracing.OUTCOME, outcome)
    if outcome == "cancelled":
        span.add_event(
            "cancelled", {"taskyard.cancel.step": task_pb2.CancelStep.Name(completion.cancel_step)}
        )
    elif outcome != "success":
        failure = completion.failure
        tracing.fail(span, failure.type, failure.message, failure.traceback)
    span.end()


def close(span: trace.Span | None) -> None:
    """End a span that no outcome ended (the attempt raised out of its runner)."""
    if span is not None and span.is_recording():
        span.set_attribute(tracing.OUTCOME, "abandoned")
        span.end()


def released(span: trace.Span | None) -> None:
    """End the span of an attempt handed back to the queue (a shutdown): no outcome, no error."""
    if span is None:
        return
    span.set_attribute(tracing.OUTCOME, "released")
    span.end()


def died(
    record: task_record_pb2.TaskRecord, worker_id: str, started_at_us: int, ended_at_us: int, reason: str
) -> None:
    """The span of an attempt whose worker process died: it never ended its own,
    so the pool manager, which saw the death, records it after the fact."""
    # The worker may have exported the attempt's queue wait already: not twice.
    span = start(record, worker_id, started_at_us, with_wait=False)
    if span is None:
        return
    span.set_attribute(tracing.OUTCOME, "died")
    tracing.fail(span, "WorkerProcessDied", reason)
    span.end(end_time=ended_at_us * 1000)
