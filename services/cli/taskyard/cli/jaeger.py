"""A local Jaeger for ``taskyard dev`` (and the tracing tests): found, configured, started.

Jaeger (v1.76, the OpenTelemetry-collector-based binary) takes its whole setup
from one YAML file; ours keeps traces in memory and listens on loopback only:
OTLP over gRPC and HTTP, the query API (``/api/traces``), the web UI and a
health check. A binary built from the Go module carries only a placeholder page
("This is not the Jaeger UI"), so the built UI (Jaeger UI v1.68.0) comes
separately: ``tools/install-tools.sh jaeger`` fetches it through the Go module
proxy, checks it against pinned hashes and puts it in ``.tools/share/jaeger-ui``
beside ``.tools/bin/jaeger``; Jaeger serves it from there (``ui.assets_path``).
Without those assets the query API is what there is to look at (and what
Grafana's Jaeger data source reads).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

VERSION = "v1.76.0"
UI_VERSION = "v1.68.0"
# Where tools/install-tools.sh jaeger puts them, relative to a checkout.
CHECKOUT_TOOLS = Path(__file__).resolve().parents[4] / ".tools"
CHECKOUT_BIN = CHECKOUT_TOOLS / "bin" / "jaeger"
CHECKOUT_UI = CHECKOUT_TOOLS / "share" / "jaeger-ui"
# How much of Jaeger's own log a failed start quotes: its last lines, each cut to a length.
LOG_TAIL_LINES = 8
LOG_TAIL_CHARS = 600


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

    def named(self) -> dict[str, int]:
        """Each listener's port by its name in Jaeger's configuration."""
        return {
            "OTLP gRPC receiver": self.otlp_grpc,
            "OTLP HTTP receiver": self.otlp_http,
            "query HTTP (UI and API)": self.query,
            "query gRPC": self.query_grpc,
            "health check": self.health,
        }

    def taken(self) -> dict[str, int]:
        """The listeners whose port another process holds now (probed as servers bind)."""
        from taskyard.cli import dev_observability

        return {name: port for name, port in self.named().items() if dev_observability.taken(port)}


def find_binary() -> Path | None:
    """``$TASKYARD_JAEGER``, then the checkout's .tools/bin, then ``jaeger`` on PATH."""
    given = os.environ.get("TASKYARD_JAEGER")
    if given:
        return Path(given).resolve() if Path(given).is_file() else None
    if CHECKOUT_BIN.is_file():
        return CHECKOUT_BIN
    found = shutil.which("jaeger")
    return Path(found).resolve() if found else None


def _is_ui(directory: Path) -> bool:
    return (directory / "index.html").is_file()


def find_ui(binary: Path | None = None) -> Path | None:
    """The built UI's directory: ``$TASKYARD_JAEGER_UI``, then ``share/jaeger-ui`` beside
    the binary's ``bin/`` (how install-tools.sh lays them out), then the checkout's."""
    given = os.environ.get("TASKYARD_JAEGER_UI")
    if given:
        return Path(given).resolve() if _is_ui(Path(given)) else None
    places = [binary.resolve().parent.parent / "share" / "jaeger-ui"] if binary else []
    return next((p for p in (*places, CHECKOUT_UI) if _is_ui(p)), None)


def config(ports: Ports, *, max_traces: int = 100_000, ui_assets: Path | None = None) -> str:
    """Jaeger's configuration: memory storage, loopback listeners, no own telemetry port,
    and the web UI served from ``ui_assets`` when given (else Jaeger's placeholder page)."""
    # JSON strings are YAML strings: a path with spaces or colons stays one value.
    ui = f"\n    ui:\n      assets_path: {json.dumps(str(ui_assets.resolve()))}" if ui_assets else ""
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
      traces: memstore{ui}
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


class PortsTaken(RuntimeError):
    """Jaeger's ports (some of them) are held by another process; ``ports`` names them."""

    def __init__(self, message: str, ports: dict[str, int]) -> None:
        super().__init__(message)
        self.ports = ports


@dataclasses.dataclass
class Jaeger:
    """A running Jaeger; ``stop()`` ends it (by its PID)."""

    process: subprocess.Popen[bytes]
    ports: Ports
    log: Path
    ui_assets: Path | None = None

    @property
    def otlp_http_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports.otlp_http}"

    @property
    def query_url(self) -> str:
        return f"http://127.0.0.1:{self.ports.query}"

    @property
    def ui_url(self) -> str | None:
        """The web UI's address, when this Jaeger serves the built UI."""
        return self.query_url if self.ui_assets else None

    @property
    def trace_url_template(self) -> str:
        """Where one trace is shown (``{trace_id}`` to fill in): the UI's page, else the API's JSON."""
        if self.ui_url:
            return f"{self.ui_url}/trace/{{trace_id}}"
        return f"{self.query_url}/api/traces/{{trace_id}}"

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


def log_tail(log: Path, since: int = 0) -> str:
    """The last lines Jaeger wrote to ``log`` after byte ``since`` (what it says went wrong)."""
    try:
        with open(log, "rb") as f:
            f.seek(since)
            text = f.read().decode(errors="replace")
    except OSError as exc:
        return f"  (its log {log} cannot be read: {exc})"
    lines = [f"  {line.strip()[:LOG_TAIL_CHARS]}" for line in text.splitlines() if line.strip()]
    return "\n".join(lines[-LOG_TAIL_LINES:]) or "  (its log is empty)"


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as reply:
            return bool(reply.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def start(
    binary: Path,
    ports: Ports,
    workdir: Path,
    *,
    log: Path | None = None,
    ui_assets: Path | None = None,
    timeout: float = 30.0,
) -> Jaeger:
    """Start Jaeger with ``config(ports)`` and wait until it is up: its health check says
    every component started (the query API answers before the OTLP receivers bind, and a
    receiver that cannot bind ends Jaeger) and its query API answers.

    ``workdir`` holds its config (``jaeger.log`` in it too unless ``log`` names a file,
    appended to); every path is made absolute first, so a relative one means the same
    to Jaeger (started in ``workdir``) as to the caller. A Jaeger that exits or never
    answers raises ``RuntimeError`` quoting the end of its log.

    A port another process holds fails the start before Jaeger runs, naming it: that
    process (another Jaeger, say) would answer the health and query checks for it."""
    busy = ports.taken()
    if busy:
        held = ", ".join(f"127.0.0.1:{port} ({name})" for name, port in busy.items())
        raise PortsTaken(f"jaeger cannot listen: {held} already in use by another process", busy)
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    log = (log or workdir / "jaeger.log").resolve()
    config_path = workdir / "jaeger.yaml"
    config_path.write_text(config(ports, ui_assets=ui_assets))
    # Jaeger traces itself with the OTel SDK's defaults (localhost:4317): point
    # that at itself, sampling nothing, instead of a port it does not own.
    own = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{ports.otlp_grpc}",
        "OTEL_TRACES_SAMPLER": "always_off",
    }
    with open(log, "ab") as out:
        since = out.tell()
        process = subprocess.Popen(
            [str(binary), "--config", f"file:{config_path}"],
            env={**os.environ, **own},
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=workdir,
        )
    jaeger = Jaeger(process=process, ports=ports, log=log, ui_assets=ui_assets)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"jaeger exited with {process.returncode} at start; its log ({log}) ends:\n"
                f"{log_tail(log, since)}"
            )
        if _answers(f"http://127.0.0.1:{ports.health}/status") and _answers(
            f"{jaeger.query_url}/api/services"
        ):
            # Healthy means every component started, the OTLP receivers bound; a
            # Jaeger that lost a port in a race since the probe has exited by now.
            if process.poll() is None:
                return jaeger
            continue
        time.sleep(0.1)
    jaeger.stop()
    raise RuntimeError(
        f"jaeger did not answer on {jaeger.query_url} within {timeout:.0f}s; its log ({log}) ends:\n"
        f"{log_tail(log, since)}"
    )
