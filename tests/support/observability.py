"""A real Jaeger and a real Prometheus for the observability tests, and reads of both.

Jaeger is the binary ``tools/install-tools.sh jaeger`` builds (``taskyard.cli.jaeger``
finds and configures it); Prometheus is Debian's. Each test gets its own, on
free loopback ports, stopped by PID at the end.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import ports as ports_module
from support.waiting import wait_until
from taskyard.cli import jaeger as jaeger_launcher

# Tries at starting a Jaeger on ports another process took first.
START_ATTEMPTS = 3


@contextlib.contextmanager
def running_jaeger(workdir: Path) -> Iterator[jaeger_launcher.Jaeger]:
    """A Jaeger on free ports, serving the built UI when installed, its data and log in
    ``workdir``, stopped at the end."""
    binary = jaeger_launcher.find_binary()
    if binary is None:
        pytest.fail("no Jaeger binary: run `tools/install-tools.sh jaeger` (CI does)")
    for attempt in range(START_ATTEMPTS):
        # A block below the ephemeral range: an ephemeral port found free can be taken
        # by any outgoing connection before Jaeger binds it (it was, under xdist). Another
        # test process may still pick the same block: then again, on other ports.
        first = ports_module.free_port_block(5)
        ports = jaeger_launcher.Ports(
            otlp_grpc=first, otlp_http=first + 1, query=first + 2, query_grpc=first + 3, health=first + 4
        )
        try:
            running = jaeger_launcher.start(
                binary,
                ports,
                workdir / f"jaeger-{attempt}",
                log=workdir / "jaeger.log",
                ui_assets=jaeger_launcher.find_ui(binary),
            )
            break
        except RuntimeError as exc:  # PortsTaken, or taken between the check and its bind
            if attempt == START_ATTEMPTS - 1 or "already in use" not in str(exc):
                raise
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def jaeger(tmp_path: Path) -> Iterator[jaeger_launcher.Jaeger]:
    with running_jaeger(tmp_path) as running:
        yield running


def tracing_env(running: jaeger_launcher.Jaeger) -> dict[str, str]:
    """What a suite needs to export to ``running`` quickly (batches every 100 ms)."""
    return {**running.otel_environment(), "OTEL_BSP_SCHEDULE_DELAY": "100"}


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as reply:
        return json.load(reply)


def trace_by_id(running: jaeger_launcher.Jaeger, trace_id: str) -> dict[str, Any] | None:
    try:
        found = get_json(f"{running.query_url}/api/traces/{trace_id}")
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise
    data = found.get("data") or []
    return data[0] if data else None


def wait_for_spans(
    running: jaeger_launcher.Jaeger,
    trace_id: str,
    enough: Any,
    timeout: float = 20.0,
) -> dict[str, Any]:
    """The trace once ``enough(trace)`` holds (spans arrive in batches, from several processes)."""
    seen: list[dict[str, Any]] = []

    def ready() -> bool:
        found = trace_by_id(running, trace_id)
        if found is None:
            return False
        seen[:] = [found]
        return bool(enough(found))

    wait_until(ready, timeout, lambda: f"trace {trace_id}: {summary(seen)}", interval=0.2)
    return seen[0]


def summary(traces: list[dict[str, Any]]) -> str:
    if not traces:
        return "not in Jaeger"
    return ", ".join(sorted(f"{service_of(traces[0], s)}:{s['operationName']}" for s in traces[0]["spans"]))


def service_of(found: dict[str, Any], span: dict[str, Any]) -> str:
    return str(found["processes"][span["processID"]]["serviceName"])


def tags(span: dict[str, Any]) -> dict[str, Any]:
    return {t["key"]: t["value"] for t in span.get("tags", [])}


def parent_of(span: dict[str, Any]) -> str | None:
    for ref in span.get("references", []):
        if ref["refType"] == "CHILD_OF":
            return str(ref["spanID"])
    return None


def spans_named(found: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    return [s for s in found["spans"] if s["operationName"].startswith(prefix)]


def is_error(span: dict[str, Any]) -> bool:
    t = tags(span)
    return t.get("otel.status_code") == "ERROR" or t.get("error") is True


# --- Prometheus ------------------------------------------------------------------


class Prometheus:
    def __init__(self, process: subprocess.Popen[bytes], port: int) -> None:
        self.process = process
        self.url = f"http://127.0.0.1:{port}"

    def query(self, promql: str) -> list[dict[str, Any]]:
        found = get_json(f"{self.url}/api/v1/query?{urllib.parse.urlencode({'query': promql})}")
        assert found["status"] == "success", found
        return list(found["data"]["result"])

    def targets_up(self) -> dict[str, str]:
        found = get_json(f"{self.url}/api/v1/targets")
        return {t["labels"]["instance"]: t["health"] for t in found["data"]["activeTargets"]}

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_prometheus(workdir: Path, targets: dict[str, int], *, interval: str = "1s") -> Prometheus:
    """Prometheus scraping ``targets`` (job name -> loopback port) every ``interval``."""
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail("no prometheus binary: run `tools/install-tools.sh prometheus` (CI does)")
    workdir.mkdir(parents=True, exist_ok=True)
    jobs = "\n".join(
        f"  - job_name: {job}\n    static_configs:\n      - targets: ['127.0.0.1:{port}']"
        for job, port in targets.items()
    )
    config = workdir / "prometheus.yml"
    settings = f"global:\n  scrape_interval: {interval}\n  evaluation_interval: {interval}\n"
    config.write_text(f"{settings}scrape_configs:\n{jobs}\n")
    port = ports_module.free_port()
    log = open(workdir / "prometheus.log", "wb")  # noqa: SIM115 - the child's for its life
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={workdir / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    running = Prometheus(process, port)

    def ready() -> bool:
        if process.poll() is not None:
            raise RuntimeError(
                f"prometheus exited with {process.returncode}: {(workdir / 'prometheus.log').read_text()}"
            )
        try:
            with urllib.request.urlopen(f"{running.url}/-/ready", timeout=1) as reply:
                return bool(reply.status == 200)
        except OSError:
            return False

    try:
        wait_until(ready, 30, "prometheus to be ready")
    except AssertionError:
        running.stop()
        raise
    return running


def scrape(port: int, token: str | None = None) -> str:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=5) as reply:
        return str(reply.read().decode())


def promtool_check(text: str) -> subprocess.CompletedProcess[str]:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("no promtool: run `tools/install-tools.sh prometheus` (CI does)")
    return subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=30
    )
