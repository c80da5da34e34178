"""``taskyard dev``'s traces and metrics: a local Jaeger when one is installed, and
a /metrics port per service, all on loopback."""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Callable, Mapping
from pathlib import Path

from taskyard.cli import jaeger

# Each service's /metrics port is this plus its place here.
METRICS_ORDER: tuple[str, ...] = ("gateway", "scheduler", "result-store", "worker-pool")


@dataclasses.dataclass
class DevObservability:
    """What dev started or found for tracing, and the metrics ports it hands out."""

    tracing_env: dict[str, str] = dataclasses.field(default_factory=dict)
    tracing_line: str = "tracing: off"
    metrics_base: int = 0
    local_jaeger: jaeger.Jaeger | None = None

    def service_env(self, service: str) -> dict[str, str]:
        env = dict(self.tracing_env)
        if self.metrics_base:
            env["TASKYARD_METRICS_PORT"] = str(self.metrics_base + METRICS_ORDER.index(service))
        return env

    def lines(self) -> list[str]:
        out = [f"  {self.tracing_line}"]
        if self.metrics_base:
            ports = ", ".join(f"{s} :{self.metrics_base + i}" for i, s in enumerate(METRICS_ORDER))
            out.append(f"  metrics:      http://127.0.0.1:PORT/metrics ({ports})")
        return out

    def stop(self) -> None:
        if self.local_jaeger is not None:
            self.local_jaeger.stop()
            self.local_jaeger = None


def taken(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def start(
    *,
    want_jaeger: bool,
    metrics_base: int,
    data_dir: Path,
    environ: Mapping[str, str],
    say: Callable[[str], None],
) -> DevObservability:
    """Tracing to ``$OTEL_EXPORTER_OTLP_ENDPOINT`` when set, else to a local Jaeger
    (when wanted and installed), else off; a dev run never fails for want of it."""
    busy = [p for p in range(metrics_base, metrics_base + len(METRICS_ORDER)) if metrics_base and taken(p)]
    if busy:
        say(f"metrics off: port(s) {', '.join(map(str, busy))} in use (--metrics-port picks others)")
        metrics_base = 0
    found = DevObservability(metrics_base=metrics_base)
    given = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if given:
        found.tracing_line = f"tracing:      exporting to {given} (OTEL_EXPORTER_OTLP_ENDPOINT)"
        return found
    if not want_jaeger:
        return found
    binary = jaeger.find_binary()
    if binary is None:
        say("no Jaeger installed (make dev builds one: tools/install-tools.sh jaeger); tracing off")
        return found
    try:
        with open(data_dir / "jaeger.log", "ab") as log:
            running = jaeger.start(binary, jaeger.Ports(), data_dir / "jaeger", log=log)
    except (OSError, RuntimeError) as exc:
        say(f"Jaeger did not start ({exc}; see {data_dir / 'jaeger.log'}); tracing off")
        return found
    say(
        f"Jaeger ready (pid {running.process.pid}): OTLP {running.otlp_http_endpoint}, "
        f"query {running.query_url}"
    )
    found.local_jaeger = running
    # Spans within half a second of their end (the SDK's default waits 5 s).
    found.tracing_env = {"OTEL_BSP_SCHEDULE_DELAY": "500", **running.otel_environment()}
    found.tracing_line = (
        f"tracing:      Jaeger at {running.query_url} "
        f"(curl '{running.query_url}/api/traces?service=taskyard-gateway&limit=5')"
    )
    return found
