"""``taskyard dev``'s traces and metrics: a local Jaeger (with its web UI when the
UI's assets are installed) when one is installed, and an ops port per service
(/metrics, /livez, /readyz), all on loopback."""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Callable, Mapping
from pathlib import Path

from taskyard.cli import jaeger

# Each service's ops port (/metrics, /livez, /readyz) is the base plus its place here.
METRICS_ORDER: tuple[str, ...] = ("gateway", "scheduler", "result-store", "worker-pool")


@dataclasses.dataclass
class DevObservability:
    """What dev started or found for tracing, and the ops ports it hands out."""

    tracing_env: dict[str, str] = dataclasses.field(default_factory=dict)
    tracing_line: str = "tracing: off"
    metrics_base: int = 0
    local_jaeger: jaeger.Jaeger | None = None
    # Where the dashboard links a task's trace ({trace_id} to fill in); empty: no link.
    trace_url: str = ""

    def service_env(self, service: str) -> dict[str, str]:
        env = dict(self.tracing_env)
        if self.metrics_base:
            env["TASKYARD_METRICS_PORT"] = str(self.metrics_base + METRICS_ORDER.index(service))
        return env

    def lines(self) -> list[str]:
        out = [f"  {self.tracing_line}"]
        if self.metrics_base:
            ports = ", ".join(f"{s} :{self.metrics_base + i}" for i, s in enumerate(METRICS_ORDER))
            out.append(f"  ops ports:    http://127.0.0.1:PORT/metrics, /livez, /readyz ({ports})")
        return out

    def stop(self) -> None:
        if self.local_jaeger is not None:
            self.local_jaeger.stop()
            self.local_jaeger = None


def taken(port: int) -> bool:
    """Whether a server could not listen on ``port`` now. Probed as servers bind, with
    SO_REUSEADDR: a port whose last connections linger in TIME_WAIT (for a minute after a
    Prometheus scrape) is free to them, so it is free here too."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
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
    jaeger_ports: jaeger.Ports | None = None,
) -> DevObservability:
    """Tracing to ``$OTEL_EXPORTER_OTLP_ENDPOINT`` when set, else to a local Jaeger
    (when wanted and installed), else off; a dev run never fails for want of it.
    The local Jaeger listens on its default ports, or on free ones when another process
    holds any of those (``jaeger_ports`` fixes them: no fallback then)."""
    busy = [p for p in range(metrics_base, metrics_base + len(METRICS_ORDER)) if metrics_base and taken(p)]
    if busy:
        say(f"ops ports off: port(s) {', '.join(map(str, busy))} in use (--metrics-port picks others)")
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
    # Absolute before anything is started: Jaeger runs inside its work directory.
    log = (data_dir / "jaeger.log").resolve()
    ui = jaeger.find_ui(binary)
    ports = jaeger_ports or jaeger.Ports()
    held_defaults = ports.taken() if jaeger_ports is None else {}
    if held_defaults:
        # Another Jaeger (another project's dev, say) holds the defaults: this run's own
        # Jaeger takes free ports, and the banner's tracing line names its UI.
        held = ", ".join(map(str, held_defaults.values()))
        ports = jaeger.Ports.free()
        say(f"Jaeger's default port(s) {held} in use; starting it on free ports (UI at :{ports.query})")
    try:
        running = jaeger.start(binary, ports, data_dir.resolve() / "jaeger", log=log, ui_assets=ui)
    except (OSError, RuntimeError) as exc:
        say(f"Jaeger did not start; tracing off: {exc}")
        return found
    say(
        f"Jaeger ready (pid {running.process.pid}): OTLP {running.otlp_http_endpoint}, "
        f"query {running.query_url}"
    )
    found.local_jaeger = running
    found.trace_url = running.trace_url_template
    # Spans within half a second of their end (the SDK's default waits 5 s).
    found.tracing_env = {"OTEL_BSP_SCHEDULE_DELAY": "500", **running.otel_environment()}
    if running.ui_url:
        found.tracing_line = f"tracing:      Jaeger UI at {running.ui_url}"
    else:
        api = f"{running.query_url}/api/traces?service=taskyard-gateway&limit=5"
        found.tracing_line = (
            f"tracing:      Jaeger at {running.query_url}, no UI installed "
            f"(tools/install-tools.sh jaeger installs it; curl '{api}')"
        )
    return found
