"""The scheduler's span of a task: ``dispatch <queue>``, from the lease it asked of
the store to the attempt handed to its pool, in the task's own trace.

One span per sampled task, a child of the context stored with the task (its
``send`` span), like the store's ``commit`` spans and the pool's ``process``
spans: one task, one readable trace. A lease batch spans many traces; one span
for the batch with a link to each task would keep the task's own trace without
its dispatch, so each sampled task gets its own, built after the fact from the
reply the hot path has anyway (timestamps taken around the call, no extra round
trip, nothing held open across an await). A task its producer did not sample
carries no trace headers (``tracing.sending`` clears them), so it costs one test
per record; with tracing off, nothing at all.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from taskyard.bus.v1 import task_record_pb2, views_pb2
from taskyard.core import tracing
from taskyard.v1 import task_pb2

_tracer = trace.get_tracer("taskyard.scheduler")

POOL_ID = "taskyard.pool.id"
# How the attempt was leased: "lanes" (taken from a priority lane, leased, sent),
# or "insert" (leased in the transaction of its insert, sent by the store's stream).
DISPATCH_PATH = "taskyard.dispatch.path"

Record = task_record_pb2.TaskRecord | views_pb2.TaskRecordHead


def now_ns() -> int:
    """When a dispatch begins (0 while tracing is off: no span will want it)."""
    return time.time_ns() if tracing.enabled() else 0


def dispatched(records: Sequence[Record], *, pool_id: str, path: str, started_ns: int) -> None:
    """One ``dispatch`` span per sampled task of ``records`` (leased to ``pool_id``),
    from ``started_ns`` to now."""
    if not started_ns or not tracing.enabled():
        return
    ended_ns = time.time_ns()
    count = len(records)
    for rec in records:
        headers = rec.trace_headers
        if not headers:
            continue
        queue = rec.queue or "default"
        span = _tracer.start_span(
            f"dispatch {queue}",
            context=tracing.context_of(headers),
            kind=SpanKind.PRODUCER,
            start_time=started_ns,
            attributes={
                "messaging.system": tracing.SYSTEM,
                tracing.OPERATION_TYPE: "send",
                tracing.OPERATION_NAME: "dispatch",
                tracing.DESTINATION: queue,
                tracing.MESSAGE_ID: rec.id,
                tracing.TASK_NAME: rec.name,
                tracing.PRIORITY: task_pb2.Priority.Name(rec.priority or task_pb2.PRIORITY_NORMAL),
                tracing.ATTEMPT: rec.attempt,
                tracing.BATCH_COUNT: count,
                POOL_ID: pool_id,
                DISPATCH_PATH: path,
            },
        )
        span.end(end_time=ended_ns)
