"""Trace-context propagation across NNG envelopes and task rows.

Span export (OTLP) is configured by the standard ``OTEL_*`` variables; here we
only carry W3C trace context so every hop can join the task's trace.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, MutableMapping

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace

TRACEPARENT = "traceparent"
W3C_KEYS = frozenset({"traceparent", "tracestate"})
_HEX = frozenset("0123456789abcdef")
_NO_TRACE = "0" * 32


def trace_id_of(traceparent: str | None) -> str:
    """The trace id of a W3C ``traceparent`` (version-traceid-spanid-flags): 32
    lowercase hex digits, or "" for a missing or malformed one (an all-zero id is
    invalid in the spec), so no reader is ever sent to a trace that cannot exist."""
    parts = (traceparent or "").split("-")
    if len(parts) != 4:
        return ""
    trace_id = parts[1]
    if len(trace_id) != 32 or trace_id == _NO_TRACE or not _HEX.issuperset(trace_id):
        return ""
    return trace_id


def trace_id_in(headers: Mapping[str, str]) -> str:
    """``trace_id_of`` the ``traceparent`` among a task's stored trace headers."""
    return trace_id_of(headers.get(TRACEPARENT)) if headers else ""


def inject(carrier: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """The current trace context as W3C headers (empty when there is none)."""
    out: dict[str, str] = {} if carrier is None else dict(carrier)
    propagate.inject(out)
    return out


@contextlib.contextmanager
def attached(headers: Mapping[str, str]) -> Iterator[None]:
    """Make the context carried in ``headers`` current for the block."""
    if not headers:
        yield
        return
    token = otel_context.attach(propagate.extract(dict(headers)))
    try:
        yield
    finally:
        otel_context.detach(token)


def tracer(name: str) -> trace.Tracer:
    return trace.get_tracer(name)
