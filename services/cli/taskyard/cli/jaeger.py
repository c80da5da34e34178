"""A local Jaeger for ``taskyard dev`` (and the tracing tests): found, configured, started.

Jaeger (v1.76, the OpenTelemetry-collector-based binary) takes its whole setup
from one YAML file; ours keeps traces in memory and listens on loopback only:
OTLP over gRPC and HTTP, the query API (``/api/traces``) and a health check.
No UI assets ship with a binary built from the Go module, so the query API is
what there is to look at (and what Grafana's Jaeger data source reads).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

VERSION = "v1.76.0"
# Where tools/install-tools.sh jaeger puts it, relative to a checkout.
CHECKOUT_BIN = Path(__file__).resolve().parents[4] / ".tools" / "bin" / "jaeger"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Ports:
    otlp_grpc: int = 4317
    otlp_http: int = 4318
    query: int = 16686
    query_grpc: int = 16685
    health: int = 13133

    @classmethod
    def free(cls) -> Ports:
        """Free loopback ports for each listener (a run beside the default Jaeger, tests)."""
        from taskyard.cli import procs

        return cls(
            otlp_grpc=procs.free_port(),
            otlp_http=procs.free_port(),
            query=procs.free_port(),
            query_grpc=procs.free_port(),
            health=procs.free_port(),
        )


def find_binary() -> Path | None:
    """``$TASKYARD_JAEGER``, then the checkout's .tools/bin, then ``jaeger`` on PATH."""
    given = os.environ.get("TASKYARD_JAEGER")
    if given:
        return Path(given) if Path(given).is_file() else None
    if CHECKOUT_BIN.is_file():
        return CHECKOUT_BIN
    found = shutil.which("jaeger")
    return Path(found) if found else None


def config(ports: Ports, *, max_traces: int = 100_000) -> str:
    """Jaeger's configuration: memory storage, loopback listeners, no own telemetry port."""
    return f"""\
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:{ports.health}
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:{ports.query}
    grpc:
      endpoint: 127.0.0.1:{ports.query_grpc}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: {max_traces}
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:{ports.otlp_grpc}
      http:
        endpoint: 127.0.0.1:{ports.otlp_http}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
"""


@dataclasses.dataclass
class Jaeger:
    """A running Jaeger; ``stop()`` ends it (by its PID)."""

    process: subprocess.Popen[bytes]
    ports: Ports

    @property
    def otlp_http_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports.otlp_http}"

    @property
    def query_url(self) -> str:
        return f"http://127.0.0.1:{self.ports.query}"

    def otel_environment(self) -> dict[str, str]:
        """What the services need to export here (OTLP over HTTP)."""
        return {
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.otlp_http_endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        }

    def stop(self, timeout: float = 5.0) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start(
    binary: Path, ports: Ports, workdir: Path, *, log: IO[bytes] | None = None, timeout: float = 30.0
) -> Jaeger:
    """Start Jaeger with ``config(ports)`` and wait until its query API answers."""
    workdir.mkdir(parents=True, exist_ok=True)
    config_path = workdir / "jaeger.yaml"
    config_path.write_text(config(ports))
    # Jaeger traces itself with the OTel SDK's defaults (localhost:4317): point
    # that at itself, sampling nothing, instead of a port it does not own.
    own = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{ports.otlp_grpc}",
        "OTEL_TRACES_SAMPLER": "always_off",
    }
    process = subprocess.Popen(
        [str(binary), "--config", f"file:{config_path}"],
        env={**os.environ, **own},
        stdout=log or subprocess.DEVNULL,
        stderr=subprocess.STDOUT if log else subprocess.DEVNULL,
        cwd=workdir,
    )
    jaeger = Jaeger(process=process, ports=ports)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"jaeger exited with {process.returncode} at start (ports in use?)")
        try:
            with urllib.request.urlopen(f"{jaeger.query_url}/api/services", timeout=1) as reply:
                if reply.status == 200:
                    return jaeger
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    jaeger.stop()
    raise RuntimeError(f"jaeger did not answer on {jaeger.query_url} within {timeout:.0f}s")
