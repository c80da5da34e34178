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
