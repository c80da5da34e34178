"""The attempt's span: "process <task name>" (kind CONSUMER), a child of the task's trace
(W3C ``traceparent``/``tracestate`` in ``Attempt.trace_headers``), so a worker's work
continues the trace its submitter began. Without the OpenTelemetry API installed the
body runs without a span (the API is the client's optional ``tracing`` extra)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

try:
    from opentelemetry import propagate, trace
    from opentelemetry.trace import SpanKind, Status, StatusCode
except ImportError:  # optional, as for the client's calls
    trace = None  # type: ignore[assignment]

TRACER = "taskyard.client.worker"


class AttemptSpan:
    """What the worker tells the span once the attempt ended (nothing without tracing)."""

    def __init__(self, span: Any) -> None:
        self._span = span

    def failed(self, kind: str, message: str) -> None:
        if self._span is not None:
            self._span.set_attribute("taskyard.failure_type", kind)
            self._span.set_status(Status(StatusCode.ERROR, f"{kind}: {message}"))

    def succeeded(self) -> None:
        if self._span is not None:
            self._span.set_status(Status(StatusCode.OK))

    def cancelled(self) -> None:
        if self._span is not None:
            self._span.set_attribute("taskyard.cancelled", True)


def _tracer() -> Any:
    return trace.get_tracer(TRACER)


@contextlib.contextmanager
def attempt_span(name: str, headers: Mapping[str, str], task_id: str, attempt: int) -> Iterator[AttemptSpan]:
    """The span, current inside the block: a task or thread started in it continues it."""
    if trace is None:
        yield AttemptSpan(None)
        return
    parent = propagate.extract(dict(headers))
    with _tracer().start_as_current_span(
        f"process {name}",
        context=parent,
        kind=SpanKind.CONSUMER,
        attributes={"taskyard.task_id": task_id, "taskyard.attempt": attempt, "taskyard.task_name": name},
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        yield AttemptSpan(span)
