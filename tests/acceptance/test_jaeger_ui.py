"""The Jaeger that ``tools/install-tools.sh jaeger`` installs serves the real web UI,
and a trace shows in that UI, span by span, in headless chromium: one sent over OTLP,
and a task's through a real suite."""

from __future__ import annotations

import secrets
import urllib.request
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from support.jaeger_ui import chromium_page, services_shown_on, spans_shown_on
from support.observability import get_json, service_of, spans_named, trace_by_id, tracing_env, wait_for_spans

from taskyard.cli import jaeger as jaeger_launcher
from taskyard.cli.jaeger import Jaeger
from taskyard.client import TaskState

pytestmark = pytest.mark.timeout(180)

PLACEHOLDER = "This is not the Jaeger UI"


def _ui_url(running: Jaeger) -> str:
    if running.ui_url is None:
        pytest.fail("no Jaeger UI assets: run `tools/install-tools.sh jaeger` (CI does)")
    return running.ui_url


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return str(reply.read().decode())


def test_the_installed_ui_is_the_real_one(jaeger: Jaeger) -> None:
    assert jaeger.ui_assets == jaeger_launcher.find_ui(jaeger_launcher.find_binary())
    page = _get(f"{_ui_url(jaeger)}/")
    assert PLACEHOLDER not in page
    assert "<title>Jaeger UI</title>" in page
    # Jaeger filled in its own settings, so the UI talks to this query service.
    assert "JAEGER_VERSION = DEFAULT_VERSION" not in page
    # And a trace's address serves the same application (the UI routes it itself).
    assert "<title>Jaeger UI</title>" in _get(f"{jaeger.ui_url}/trace/{secrets.token_hex(16)}")


def test_a_trace_shows_in_the_ui(jaeger: Jaeger) -> None:
    ui_url = _ui_url(jaeger)
    service = f"ui-check-{secrets.token_hex(4)}"
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{jaeger.otlp_http_endpoint}/v1/traces"))
    )
    tracer = provider.get_tracer("ui-check")
    try:
        with tracer.start_as_current_span("checkout order") as root:
            with tracer.start_as_current_span("charge card"):
                pass
            with tracer.start_as_current_span("ship parcel"):
                pass
    finally:
        provider.shutdown()
    trace_id = format(root.get_span_context().trace_id, "032x")
    wanted = {"checkout order", "charge card", "ship parcel"}
    wait_for_spans(jaeger, trace_id, lambda found: all(spans_named(found, n) for n in wanted))

    with chromium_page() as page:
        shown = spans_shown_on(page, ui_url, trace_id, expect=wanted)
        assert sorted(shown) == sorted(wanted)
        assert set(services_shown_on(page)) == {service}
        assert PLACEHOLDER not in page.content()


def _exporting(jaeger: Jaeger, service: str) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{jaeger.otlp_http_endpoint}/v1/traces"))
    )
    return provider


def test_a_tasks_trace_shows_in_the_ui(jaeger: Jaeger, cluster_factory: Any) -> None:
    ui_url = _ui_url(jaeger)
    suite = cluster_factory(env=tracing_env(jaeger))
    provider = _exporting(jaeger, "shop")
    try:
        with suite.client() as client:
            with provider.get_tracer("shop").start_as_current_span("checkout") as root:
                submitted = client.submit("add", 2, 3)
            assert client.wait(submitted.id, timeout=30).state == TaskState.SUCCESS
    finally:
        provider.shutdown()
    trace_id = format(root.get_span_context().trace_id, "032x")

    def complete(found: dict[str, Any]) -> bool:
        # Each service exports on its own schedule: wait for the gateway's and the pool's.
        return bool(spans_named(found, "process ")) and bool(spans_named(found, "send "))

    found = wait_for_spans(jaeger, trace_id, complete)
    in_api = {s["operationName"] for s in found["spans"]}
    # docs/observability.md's query (on this Jaeger's port) finds it too.
    listed = get_json(f"{jaeger.query_url}/api/traces?service=taskyard-worker-pool&limit=5")
    assert trace_id in {t["traceID"] for t in listed["data"]}
    with chromium_page() as page:
        shown = spans_shown_on(page, ui_url, trace_id, expect=in_api)
        services = set(services_shown_on(page))
    # The caller's span, the gateway's, the send and the attempt: the task end to end.
    assert "checkout" in shown and any(n.endswith("/SubmitTask") for n in shown), shown
    assert any(n.startswith("send ") for n in shown) and any(n.startswith("process ") for n in shown)
    assert {"shop", "taskyard-gateway", "taskyard-worker-pool"} <= services
    # Nothing the trace does not hold (a late batch may have added spans since the first read).
    later = trace_by_id(jaeger, trace_id)
    assert later is not None
    assert set(shown) <= {s["operationName"] for s in later["spans"]}
    assert services <= {service_of(later, s) for s in later["spans"]}
