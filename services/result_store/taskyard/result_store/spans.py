"""The store's span of a task: ``commit <write>``, from the moment the writer took
the group commit that wrote the task's row to its COMMIT, in the task's own trace.

A group commit writes the rows of many tasks, each of its own trace. One span for
the drain, linked to every task, would leave each task's trace without it; so each
sampled task written gets a span of its own, a child of the context stored with
the task (its ``send`` span), built after COMMIT and after the replies went out,
with the drain's timestamps: no extra statement, nothing on the latency path. A
task its producer did not sample carries no trace headers, so it costs one test
per record; with tracing off, nothing at all (``committed`` is not called).

Writes traced: an insert (the task accepted), a lease (its attempt handed to a
pool) and a report (an attempt's start aside, its outcome: retried, final,
released or dead).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from taskyard.bus.v1 import envelope_pb2, task_record_pb2
from taskyard.bus.v1.leases_pb2 import LeaseTasksReply
from taskyard.core import tracing
from taskyard.v1 import task_pb2

if TYPE_CHECKING:
    from .appliers import Outcome

_tracer = trace.get_tracer("taskyard.result_store")

K = envelope_pb2
OPERATIONS: dict[int, str] = {
    K.KIND_STORE_INSERT: "insert",
    K.KIND_STORE_LEASE: "lease",
    K.KIND_STORE_REPORT: "report",
}
STATE = "taskyard.task.state"
DRAIN_ROWS = "db.operation.batch.size"


def traced_records(kind: int, requests: Iterable[Any], out: Outcome) -> Iterator[task_record_pb2.TaskRecord]:
    """The records a write of ``kind`` wrote that carry a trace context."""
    if kind == K.KIND_STORE_INSERT:
        records: Iterable[task_record_pb2.TaskRecord] = (r for req, _ in requests for r in req.tasks)
    elif kind == K.KIND_STORE_LEASE:
        records = (r for reply in out.replies if isinstance(reply, LeaseTasksReply) for r in reply.tasks)
    else:
        records = out.traced  # the applier names them (writes/reports.py)
    return (r for r in records if r.trace_headers)


def committed(
    groups: Sequence[tuple[int, Sequence[Any], Outcome]], *, started_ns: int, committed_ns: int, rows: int
) -> None:
    """The ``commit`` spans of one drain: ``groups`` as (kind, requests, outcome)."""
    for kind, requests, out in groups:
        operation = OPERATIONS.get(kind)
        if operation is None:
            continue
        for rec in traced_records(kind, requests, out):
            span = _tracer.start_span(
                f"commit {operation}",
                context=tracing.context_of(rec.trace_headers),
                kind=SpanKind.CLIENT,
                start_time=started_ns,
                attributes={
                    "db.system.name": "postgresql",
                    "db.operation.name": "COMMIT",
                    DRAIN_ROWS: rows,
                    tracing.MESSAGE_ID: rec.id,
                    tracing.TASK_NAME: rec.name,
                    tracing.ATTEMPT: _attempt_of(rec),
                    STATE: task_pb2.TaskState.Name(rec.state).removeprefix("TASK_STATE_"),
                },
            )
            span.end(end_time=committed_ns)


def _attempt_of(rec: task_record_pb2.TaskRecord) -> int:
    """The attempt the write was about: a retry's row already names the next one,
    its failure the attempt that failed."""
    if rec.state == task_pb2.TASK_STATE_RETRYING and rec.failure.attempt:
        return rec.failure.attempt
    return rec.attempt
