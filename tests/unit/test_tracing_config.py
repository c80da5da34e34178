"""Tracing's configuration by the OTEL_* variables, the trace ids in log lines,
and the send spans stamped into task records."""

from __future__ import annotations

import logging

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter

from taskyard.bus.v1 import task_record_pb2
from taskyard.core import tracing

ENDPOINT = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
        {**ENDPOINT, "OTEL_SDK_DISABLED": "true"},
        {**ENDPOINT, "OTEL_TRACES_EXPORTER": "none"},
    ],
    ids=["no endpoint", "a protocol but no endpoint", "sdk disabled", "exporter none"],
)
def test_tracing_stays_off(env: dict[str, str]) -> None:
    assert tracing.exporter_for(env) is None


def test_the_exporter_follows_the_protocol() -> None:
    assert isinstance(tracing.exporter_for(ENDPOINT), HttpExporter)
    assert isinstance(tracing.exporter_for({**ENDPOINT, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}), GrpcExporter)
    only_traces = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://x:4317",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc",
    }
    assert isinstance(tracing.exporter_for(only_traces), GrpcExporter)
    assert isinstance(tracing.exporter_for({"OTEL_TRACES_EXPORTER": "console"}), ConsoleSpanExporter)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({**ENDPOINT, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "grpc or http/protobuf"),
        ({**ENDPOINT, "OTEL_TRACES_EXPORTER": "zipkin"}, "otlp, console or none"),
    ],
)
def test_an_unknown_choice_is_refused_clearly(env: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tracing.exporter_for(env)


def test_a_bad_setting_leaves_tracing_off_and_the_service_running(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="taskyard.core.tracing"):
        assert tracing.configure("gateway", {**ENDPOINT, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}) is False
    assert not tracing.enabled()
    assert "tracing off: OTLP protocol 'http/json'" in caplog.text


def test_an_empty_or_listed_exporter_setting_is_read_as_the_spec_says() -> None:
    assert (
        tracing.exporter_for({"OTEL_TRACES_EXPORTER": ""}) is None
    )  # the default, otlp, without an endpoint
    assert isinstance(tracing.exporter_for({**ENDPOINT, "OTEL_TRACES_EXPORTER": ""}), HttpExporter)
    assert isinstance(
        tracing.exporter_for({**ENDPOINT, "OTEL_TRACES_EXPORTER": "console, otlp"}), HttpExporter
    )


def _record(msg: str, **extra: object) -> logging.LogRecord:
    record = logging.LogRecord("t", logging.INFO, __file__, 1, msg, None, None)
    record.__dict__.update(extra)
    tracing.TraceIds().filter(record)
    return record


def test_log_lines_carry_the_trace_of_their_span_or_task() -> None:
    assert _record("plain").trace == ""  # type: ignore[attr-defined]
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    about = _record("x", task_trace={"traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"})
    assert about.trace == f" trace_id={trace_id}"  # type: ignore[attr-defined]
    assert _record("x", task_trace={"traceparent": "garbage"}).trace == ""  # type: ignore[attr-defined]
    tracer = TracerProvider().get_tracer("t")
    with tracer.start_as_current_span("s") as span:
        ctx = span.get_span_context()
        inside = _record("x")
    assert inside.trace == f" trace_id={ctx.trace_id:032x} span_id={ctx.span_id:016x}"  # type: ignore[attr-defined]


def test_sending_does_nothing_while_tracing_is_off() -> None:
    assert not tracing.enabled()
    rec = task_record_pb2.TaskRecord(id="t1", name="add", queue="default")
    rec.trace_headers["traceparent"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    before = rec.SerializeToString()
    with tracing.sending([rec]):
        pass
    assert rec.SerializeToString() == before
    assert not trace.get_current_span().get_span_context().is_valid
