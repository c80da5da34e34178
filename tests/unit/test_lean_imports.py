"""What each service's entry point imports before it runs: a package that serves a
feature only when it is on stays out of the processes where it is off (idle memory:
bench/rss), and the pool's worker runtime lives in the fork template, not in the
manager. Each check imports the entry point in a fresh interpreter."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

PROBE = """
import json, sys
import {module}
print(json.dumps(sorted(sys.modules)))
"""


def imported_by(module: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)], capture_output=True, text=True, check=True
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


@pytest.mark.parametrize(
    ("module", "absent"),
    [
        # The probes' HTTP server (http.server) only where probes are served, metrics
        # (prometheus_client) only where /metrics is served.
        ("taskyard.gateway.__main__", {"http.server", "prometheus_client", "asyncpg"}),
        ("taskyard.scheduler.__main__", {"asyncpg", "grpc"}),
        # The manager never runs a worker: the runner is the template's (and each worker's).
        (
            "taskyard.worker_pool.__main__",
            {"taskyard.worker_pool.bootstrap", "taskyard.worker_pool.worker", "asyncpg", "grpc"},
        ),
        # The CLI's commands that talk to the gateway read no settings: pydantic (and
        # pydantic-settings) only for dev and serve, which import them when they run.
        ("taskyard.cli.main", {"pydantic", "pydantic_settings", "taskyard.core.config", "asyncpg"}),
    ],
)
def test_an_entry_point_leaves_out_what_it_does_not_run(module: str, absent: set[str]) -> None:
    assert not imported_by(module) & absent


def test_the_template_preloads_the_worker_runtime() -> None:
    loaded = imported_by("taskyard.worker_pool.template")
    assert {"taskyard.worker_pool.bootstrap", "taskyard.worker_pool.worker"} <= loaded


def test_importing_the_template_elsewhere_changes_nothing() -> None:
    # Only inside multiprocessing's forkserver does the import make the process a template.
    before = signal.getsignal(signal.SIGTERM)
    import taskyard.worker_pool.template  # noqa: F401

    assert signal.getsignal(signal.SIGTERM) == before


def test_the_template_preloads_what_exporting_spans_needs() -> None:
    from taskyard.worker_pool import template

    endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}
    assert template._tracing_modules({}) == ()
    http = template._tracing_modules(endpoint)
    assert {
        "opentelemetry.sdk.trace",
        "opentelemetry.exporter.otlp.proto.http.trace_exporter",
        "requests",
    } <= set(http)
    # gRPC's core is never loaded in the template: it must not be forked.
    on_grpc = template._tracing_modules({**endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    assert "opentelemetry.sdk.trace" in on_grpc and not any("grpc" in m for m in on_grpc)


def test_a_process_started_with_python_c_is_no_template_for_importing_it() -> None:
    """A test runner's worker runs as ``python -c`` too, with threads, and may have
    imported multiprocessing.forkserver: importing the template there changes nothing."""
    code = (
        "import signal, threading, time, multiprocessing.forkserver\n"
        "threading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n"
        "import taskyard.worker_pool.template\n"
        "print(signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "True"), done.stderr
