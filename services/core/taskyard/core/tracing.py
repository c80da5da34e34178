"""Span export and the span model of a task.

Configured only by the standard ``OTEL_*`` variables, as every OpenTelemetry SDK
is: ``OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT`` turns export on (OTLP over
``http/protobuf`` unless ``OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL`` says ``grpc``),
``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES`` name the process,
``OTEL_TRACES_SAMPLER(_ARG)`` samples and ``OTEL_SDK_DISABLED=true`` turns it all
off. Without an endpoint nothing is installed: the API's no-op tracer answers,
and the hot path skips every per-task span (``enabled()`` is False).

A task's trace (messaging semantic conventions, operation names ``send`` and
``process``): the caller's span, the gateway's server span, one ``send`` span per
task (its context stored with the task), a ``queue wait`` span from enqueue to
start, and one ``process`` span per attempt, parented through the stored context
so retries land in the same trace.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from taskyard.core import telemetry

if TYPE_CHECKING:
    from taskyard.bus.v1 import task_record_pb2

log = logging.getLogger(__name__)
_tracer = trace.get_tracer("taskyard")

SYSTEM = "taskyard"
# Attribute names: the messaging conventions where one fits, taskyard.* for the rest.
DESTINATION = "messaging.destination.name"
OPERATION_TYPE = "messaging.operation.type"
OPERATION_NAME = "messaging.operation.name"
MESSAGE_ID = "messaging.message.id"
BATCH_COUNT = "messaging.batch.message_count"
TASK_NAME = "taskyard.task.name"
PRIORITY = "taskyard.task.priority"
ATTEMPT = "taskyard.task.attempt"
WORKER_ID = "taskyard.worker.id"
OUTCOME = "taskyard.task.outcome"
SCHEDULE = "taskyard.schedule.name"
QUEUE_WAIT_MS = "taskyard.task.queue_wait_ms"
ERROR_TYPE = "error.type"

_TRUE = {"true", "1", "yes", "on"}
_lock = threading.Lock()
_provider: Any = None


def enabled() -> bool:
    """True once ``configure`` installed an exporting provider in this process."""
    return _provider is not None


def configure(service: str, environ: Mapping[str, str] | None = None) -> bool:
    """Install the SDK's tracer provider with an OTLP exporter, per ``OTEL_*``.

    ``service`` is the default ``service.name`` (``taskyard-<service>``) when
    neither ``OTEL_SERVICE_NAME`` nor ``OTEL_RESOURCE_ATTRIBUTES`` names one, so
    the four services of one deployment show as four services. Returns whether
    spans are exported. Idempotent: a second call keeps the first provider.
    """
    global _provider
    env = os.environ if environ is None else environ
    try:
        exporter = exporter_for(env)
    except ValueError as exc:
        # As the OpenTelemetry spec asks: a bad setting is reported, the service runs.
        log.error("tracing off: %s", exc)
        return False
    if exporter is None:
        return False
    with _lock:
        if _provider is not None:
            return True
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        attributes: dict[str, str] = {"service.namespace": SYSTEM}
        named = env.get("OTEL_SERVICE_NAME") or "service.name=" in env.get("OTEL_RESOURCE_ATTRIBUTES", "")
        if not named:
            attributes["service.name"] = f"taskyard-{service}"
        # Resource.create reads OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES;
        # the attributes given here win, so service.name is given only when unnamed.
        provider = TracerProvider(resource=Resource.create(attributes))
        provider.add_span_processor(BatchSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        _provider = provider
    log.info("tracing: exporting spans to %s", _endpoint(env) or type(exporter).__name__)
    return True


def _endpoint(env: Mapping[str, str]) -> str:
    return env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or ""


def exporter_for(env: Mapping[str, str]) -> Any:
    """The span exporter ``env`` asks for, or None when tracing stays off: the SDK
    disabled, ``OTEL_TRACES_EXPORTER=none``, or OTLP without an endpoint."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE:
        return None
    # A list ("otlp,console") is allowed by the spec; one exporter is used, OTLP first.
    chosen = {n.strip() for n in env.get("OTEL_TRACES_EXPORTER", "").lower().split(",") if n.strip()} or {
        "otlp"
    }
    names = "otlp" if "otlp" in chosen else "console" if "console" in chosen else ",".join(sorted(chosen))
    if names == "none" or (names == "otlp" and not _endpoint(env)):
        return None
    if names == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    if names != "otlp":
        raise ValueError(f"OTEL_TRACES_EXPORTER={names!r}: taskyard exports otlp, console or none")
    protocol = (
        env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    )
    # Both exporters read their endpoint, headers, certificates, compression and
    # timeout from the same OTEL_EXPORTER_OTLP_* variables themselves.
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

        return GrpcExporter()
    if protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

        return HttpExporter()
    raise ValueError(f"OTLP protocol {protocol!r}: taskyard exports grpc or http/protobuf")


def shutdown(timeout_ms: int = 5_000) -> None:
    """Flush and stop the exporter (at a service's exit; spans still queued are sent),
    waiting at most about ``timeout_ms`` for a collector that does not answer."""
    global _provider
    with _lock:
        provider, _provider = _provider, None
    if provider is None:
        return
    provider.force_flush(timeout_ms)
    # The SDK's shutdown waits for its exporter without a limit of its own.
    stopper = threading.Thread(target=provider.shutdown, name="tracing-shutdown", daemon=True)
    stopper.start()
    stopper.join(timeout_ms / 1000)


class TraceIds(logging.Filter):
    """Adds `` trace_id=… span_id=…`` (or nothing) as ``%(trace)s`` to a log record:
    from the current span, or from the ``task_trace`` headers a caller passes in
    ``extra`` when it logs about a task outside that task's span."""

    def filter(self, record: logging.LogRecord) -> bool:
        span_context = trace.get_current_span().get_span_context()
        if span_context.is_valid:
            record.trace = f" trace_id={span_context.trace_id:032x} span_id={span_context.span_id:016x}"
            return True
        headers = getattr(record, "task_trace", None)
        trace_id = telemetry.trace_id_in(headers) if isinstance(headers, Mapping) else ""
        record.trace = f" trace_id={trace_id}" if trace_id else ""
        return True


def context_of(headers: Mapping[str, str]) -> otel_context.Context:
    """The context stored with a task (its ``send`` span), for spans parented on it."""
    return propagate.extract(dict(headers)) if headers else otel_context.Context()


def link_to(headers: Mapping[str, str]) -> list[Link]:
    """A link to the span whose context ``headers`` carry (none when they carry none)."""
    span_context = trace.get_current_span(context_of(headers)).get_span_context()
    return [Link(span_context)] if span_context.is_valid else []


@contextlib.contextmanager
def sending(
    records: Sequence[task_record_pb2.TaskRecord],
    *,
    own_traces: bool = False,
    attributes: Mapping[str, str | int] | None = None,
) -> Iterator[None]:
    """Each record's ``send`` span over the block (the hand-off to the scheduler
    and the store's commit), its context stored in the record first.

    Parented on the current span (a submission's server span, a running task's
    ``process`` span), or, with ``own_traces``, each the root of a trace of its
    own linked to the current span (a batch: one trace per task, not one trace
    of ten thousand; a periodic run: its own trace); the current span then links
    to each of them in return (up to the SDK's link limit). Nothing when off.
    """
    if not enabled():
        yield
        return
    spans = _open_sends(records, own_traces=own_traces, attributes=attributes or {})
    try:
        yield
    except BaseException as exc:
        for span in spans:
            span.record_exception(exc)
            span.set_attribute(ERROR_TYPE, type(exc).__qualname__)
            span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
        raise
    finally:
        for span in spans:
            span.end()


def _open_sends(
    records: Sequence[task_record_pb2.TaskRecord], *, own_traces: bool, attributes: Mapping[str, str | int]
) -> list[trace.Span]:
    current = trace.get_current_span()
    current_context = current.get_span_context()
    links = [Link(current_context)] if own_traces and current_context.is_valid else []
    parent = otel_context.Context() if own_traces else None
    spans = []
    for rec in records:
        span = _tracer.start_span(
            f"send {rec.queue or 'default'}", context=parent, kind=SpanKind.PRODUCER, links=links
        )
        span_context = span.get_span_context()
        if not span_context.trace_flags.sampled:
            # Nothing downstream would record it either: the task carries no context,
            # so its attempts open no spans at all (the cost of a 1 % sample is the 1 %).
            rec.trace_headers.clear()
            continue
        span.set_attributes(
            {
                "messaging.system": SYSTEM,
                OPERATION_TYPE: "send",
                OPERATION_NAME: "send",
                DESTINATION: rec.queue or "default",
                MESSAGE_ID: rec.id,
                TASK_NAME: rec.name,
                **attributes,
            }
        )
        headers: dict[str, str] = {}
        propagate.inject(headers, context=trace.set_span_in_context(span))
        rec.trace_headers.clear()
        rec.trace_headers.update(headers)
        if links:
            current.add_link(span_context)
        spans.append(span)
    return spans


def fail(span: trace.Span, kind: str, message: str, traceback: str = "") -> None:
    """Mark a span failed the way the conventions expect: error status, ``error.type``
    (the exception's type, which the semantic conventions ask of every failed
    span), and an exception event with the task's own type, message and traceback."""
    kind = kind or "Error"
    attributes = {"exception.type": kind, "exception.message": message}
    if traceback:
        attributes["exception.stacktrace"] = traceback
    span.set_attribute(ERROR_TYPE, kind)
    span.add_event("exception", attributes)
    span.set_status(Status(StatusCode.ERROR, f"{kind}: {message}"))


__all__ = [
    "ATTEMPT",
    "BATCH_COUNT",
    "DESTINATION",
    "ERROR_TYPE",
    "MESSAGE_ID",
    "OPERATION_NAME",
    "OPERATION_TYPE",
    "OUTCOME",
    "PRIORITY",
    "QUEUE_WAIT_MS",
    "SCHEDULE",
    "SYSTEM",
    "TASK_NAME",
    "WORKER_ID",
    "SpanKind",
    "TraceIds",
    "configure",
    "context_of",
    "enabled",
    "fail",
    "link_to",
    "sending",
    "shutdown",
]
