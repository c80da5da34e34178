"""``taskyard dev``: the whole suite on one machine.

An embedded PostgreSQL (``pgserver``, data in ``<data-dir>/pgdata``) unless a
database URL is given, then result-store, scheduler, worker-pool and gateway as
child processes sharing one environment (``Settings.to_env()``), their log
lines prefixed with the service name. Ctrl-C / SIGTERM stops every child
(SIGTERM, then SIGKILL after a grace, by PID) and the embedded PostgreSQL.

A child that dies on its own is reported with its exit code, and then the
whole suite is stopped and ``taskyard dev`` exits with status 1: a crash loop
hidden behind automatic restarts is worse than a loud stop in development.
"""
# Length: one supervisor (start, wait until ready, watch, stop), in start order; its banner is
# in dev_banner.py, the Jaeger and metrics parts in dev_observability.py.

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING, Any

import click

from taskyard.cli import bus_key, dev_observability, procs
from taskyard.cli.dev_banner import banner, display_host, pool_command
from taskyard.cli.stop_request import StopRequest

if TYPE_CHECKING:  # imported where used: the other commands start without pydantic-settings
    from taskyard.core.config import Settings

EXAMPLES_MODULE = "taskyard.examples"
DASHBOARD_PORT = 8080


_COLORS = {
    "result-store": "magenta",
    "scheduler": "cyan",
    "worker-pool": "yellow",
    "gateway": "green",
    "dev": "white",
}


class _Printer:
    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._color = stream.isatty()
        self._width = max(len(s) for s in _COLORS)

    def line(self, who: str, text: str) -> None:
        prefix = f"{who:<{self._width}} | "
        if self._color:
            prefix = click.style(prefix, fg=_COLORS.get(who, "white"))
        with self._lock:
            self._stream.write(prefix + text + "\n")
            self._stream.flush()

    def block(self, text: str) -> None:
        with self._lock:
            self._stream.write(text)
            self._stream.flush()


class _Child:
    def __init__(self, service: str, env: dict[str, str], printer: _Printer) -> None:
        self.service = service
        self.ready = threading.Event()
        self.tail: list[str] = []
        self.proc = procs.spawn(service, env)
        self._printer = printer
        self._thread = threading.Thread(target=self._pump, name=f"log-{service}", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in iter(self.proc.stdout.readline, b""):
            text = raw.decode("utf-8", "replace").rstrip("\n")
            self.tail = ([*self.tail, text])[-40:]
            if "ready" in text and self.service.replace("-", "") in text.replace("-", "").replace("_", ""):
                self.ready.set()
            self._printer.line(self.service, text)

    def join_logs(self, timeout: float = 2.0) -> None:
        self._thread.join(timeout)


def dashboard_port(wanted: int | None, environ: Mapping[str, str]) -> int:
    """``--http-port``, else TASKYARD_HTTP_PORT, else the usual 8080 or, when that
    is taken, a free port (0 = off)."""
    if wanted is None and environ.get("TASKYARD_HTTP_PORT"):
        wanted = int(environ["TASKYARD_HTTP_PORT"])
    if wanted is not None:
        return wanted
    return DASHBOARD_PORT if not dev_observability.taken(DASHBOARD_PORT) else procs.free_port()


@dataclasses.dataclass(frozen=True, kw_only=True)
class DevOptions:
    """What ``taskyard dev`` was asked for: one field per command-line option."""

    data_dir: Path
    database_url: str | None
    workers: int | None
    concurrency: int | None
    tasks: tuple[str, ...]
    port: int | None
    grace: float
    ready_timeout: float
    jaeger: bool = True
    metrics_port: int = 0
    http_port: int | None = None


def key_origin(key: bus_key.DevKey) -> str:
    """Where dev's bus key came from, and why a file found in its place was not used."""
    if key.distrusted:
        return f"written to {key.path} (0600) in place of a file that {key.distrusted}, not used"
    return f"{'written to' if key.created else 'read from'} {key.path} (0600)"


# What stops a dev run (make forwards its SIGTERM, and the process group gets one too).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def stop_on_signals(suite: _Suite) -> dict[signal.Signals, signal._HANDLER]:
    """Install the suite's stop handler for ``STOP_SIGNALS``; the handlers it replaced."""
    return {sig: signal.signal(sig, suite.on_signal) for sig in STOP_SIGNALS}


def run_dev(options: DevOptions, out: IO[str] | None = None) -> int:
    from taskyard.core.config import Settings

    suite = _Suite(options, _Printer(out or sys.stdout))
    previous = stop_on_signals(suite)
    base = Settings.from_env()
    status = 0
    try:
        suite.run(base)
    except _ChildDied as died:
        suite.say(f"{died.service} exited unexpectedly with status {died.code}; stopping the suite (exit 1)")
        status = 1
    except procs.NotReady as exc:
        suite.say(f"the suite did not become ready: {exc}")
        status = 1
    except Exception as exc:
        suite.say(f"error: {type(exc).__name__}: {exc}")
        status = 1
    finally:
        # A second Ctrl-C during shutdown must not interrupt the cleanup.
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)
        if not suite.shutdown():
            status = status or 1
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        suite.close()
    return status


class _ChildDied(Exception):
    def __init__(self, service: str, code: int | None) -> None:
        super().__init__(f"{service} exited with {code}")
        self.service = service
        self.code = code


class _Suite:
    """One run: the database, the services started in order, and the request to stop."""

    def __init__(self, options: DevOptions, printer: _Printer) -> None:
        self._options = options
        self._printer = printer
        # Set by signals: no lock is taken in the handler, so any number of them is safe.
        self._stop = StopRequest()
        self._key: bus_key.DevKey | None = None
        self._pg: procs.EmbeddedPostgres | None = None
        self._children: dict[str, _Child] = {}
        self._observed = dev_observability.DevObservability()

    def say(self, text: str) -> None:
        self._printer.line("dev", text)

    def close(self) -> None:
        self._stop.close()

    def on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._stop.on_signal(signum, frame)

    @property
    def stop_request(self) -> StopRequest:
        """What ``on_signal`` sets and the run waits on."""
        return self._stop

    def run(self, base: Settings) -> None:
        """Start everything, then watch until a signal; a child's death is raised."""
        url = self._database(self._options.database_url or base.database_url)
        settings = self._settings(base, url)
        if settings.transport == "ipc":
            Path(settings.ipc_dir).mkdir(parents=True, exist_ok=True)
        self._options.data_dir.mkdir(parents=True, exist_ok=True)
        self._observed = dev_observability.start(
            want_jaeger=self._options.jaeger,
            metrics_base=self._options.metrics_port,
            data_dir=self._options.data_dir,
            environ=os.environ,
            say=self.say,
        )
        if self._observed.trace_url and not settings.dashboard_trace_url:
            # The local Jaeger's UI page for the trace (its query API's JSON when no UI is installed).
            settings = dataclasses.replace(settings, dashboard_trace_url=self._observed.trace_url)
        self._start_services({**os.environ, **settings.to_env(), "PYTHONUNBUFFERED": "1"})
        target = f"{display_host(settings.grpc_host)}:{settings.grpc_port}"
        if not self._stop.is_set():
            self._wait_ready(target, settings)
        if not self._stop.is_set():
            extra = [*self._observed.lines()]
            self._printer.block(
                banner(target, settings, url, self._pids(), extra, pool=self._pool_command(settings))
            )
        while not self._stop.is_set():
            self._check_children()
            self._stop.wait(0.25)
        received = self._stop.first_signal()
        self.say(f"received {received.name}; stopping" if received else "stopping")

    def _database(self, url: str | None) -> str:
        """``url``, or when none is given an embedded PostgreSQL's."""
        if url:
            self.say("using the given database")
            return url
        pgdata = self._options.data_dir / "pgdata"
        self.say(f"starting embedded PostgreSQL in {pgdata.resolve()}")
        self._pg = procs.EmbeddedPostgres(pgdata)
        if self._pg.stale_handles:
            self.say(f"forgot dead PostgreSQL holders {self._pg.stale_handles} (an earlier run killed)")
        self.say(f"PostgreSQL ready (pid {self._pg.pid}): {self._pg.url}")
        return self._pg.url

    def _settings(self, base: Settings, url: str) -> Settings:
        """The environment's settings with the command line's overrides and the example tasks."""
        options = self._options
        modules = tuple(dict.fromkeys((EXAMPLES_MODULE, *base.task_modules, *options.tasks)))
        changes: dict[str, object] = {"database_url": url, "task_modules": modules, "development": True}
        if not base.bus_keys and not base.bus_keys_file:
            # Sealed like production (docs/security.md), with a key kept in the data dir so
            # that another pool started from this directory can join (bus_key.py).
            self._key = bus_key.dev_key(options.data_dir)
            changes["bus_keys"] = self._key.keys
            self.say(
                f"bus keys (one per role) {key_origin(self._key)}; "
                "taskyard serve / taskyard queue start run from this directory use them"
            )
        else:
            self.say(f"bus key from {bus_key.explicit_source(os.environ) or 'the settings'}")
        overrides = {
            "workers": options.workers,
            "concurrency": options.concurrency,
            "grpc_port": options.port,
            "http_port": dashboard_port(options.http_port, os.environ),
        }
        changes.update((key, value) for key, value in overrides.items() if value is not None)
        return dataclasses.replace(base, **changes)  # type: ignore[arg-type]

    def _start_services(self, env: dict[str, str]) -> None:
        timeout = self._options.ready_timeout
        for service in procs.START_ORDER:
            if self._stop.is_set():
                return
            child = _Child(
                service, {**env, **self._observed.service_env(service), **self._keys(service)}, self._printer
            )
            self._children[service] = child
            self.say(f"started {service} (pid {child.proc.pid})")
            # Wait for its "ready" line so the listeners come up in order; services
            # redial on their own, so a slow one only costs a warning.
            deadline = time.monotonic() + timeout
            while not child.ready.is_set() and not self._stop.is_set() and time.monotonic() < deadline:
                if child.proc.poll() is not None:
                    raise _ChildDied(service, child.proc.returncode)
                child.ready.wait(0.1)
            if not child.ready.is_set() and not self._stop.is_set():
                self.say(f"warning: {service} did not log 'ready' within {timeout:.0f}s; going on")

    def _keys(self, service: str) -> dict[str, str]:
        """The bus keyring of ``service``: its own role's key and those it verifies,
        when dev made the keys (keys given to dev go to every service as they are)."""
        if self._key is None:
            return {}
        return {bus_key.KEYS_VARIABLE: bus_key.service_keys(self._key.keys, service)}

    def _wait_ready(self, target: str, settings: Settings) -> None:
        # With a tokens file the probe needs a token: the user's own ($TASKYARD_TOKEN, as the
        # CLI and the Python client read it); without one, only the gateway's health is known.
        token = os.environ.get("TASKYARD_TOKEN") or None
        probe: str | None = procs.READY_PROBE_NAME
        if settings.grpc_tokens_file and token is None:
            probe = None
            self.say(
                f"waiting for the gateway at {target} (health SERVING; "
                "set TASKYARD_TOKEN to wait for a pool too)"
            )
        else:
            self.say(f"waiting for the gateway at {target} (health SERVING, a pool serving {probe!r})")
        deadline = time.monotonic() + self._options.ready_timeout
        while not self._stop.is_set():
            self._check_children()
            try:
                procs.wait_ready(
                    target, deadline=min(deadline, time.monotonic() + 1.0), probe_name=probe, token=token
                )
                return
            except procs.NotReady:
                if time.monotonic() >= deadline:
                    raise

    def _pool_command(self, settings: Settings) -> str:
        """The command that starts another pool joining this suite, from this directory."""
        return pool_command(settings, self._key, Path.cwd())

    def _check_children(self) -> None:
        for name, child in self._children.items():
            if child.proc.poll() is not None:
                raise _ChildDied(name, child.proc.returncode)

    def _pids(self) -> dict[str, int]:
        pids = {name: c.proc.pid for name, c in self._children.items()}
        if self._pg is not None and self._pg.pid is not None:
            pids["postgres"] = self._pg.pid
        return pids

    def shutdown(self) -> bool:
        """Stop the services in reverse order, then PostgreSQL; False when PostgreSQL would not stop."""
        grace = self._options.grace
        ordered = [self._children[s].proc for s in procs.STOP_ORDER if s in self._children]
        if ordered:
            killed = procs.stop_processes(ordered, grace=grace)
            for child in self._children.values():
                child.join_logs()
            if killed:
                self.say(f"killed after {grace:.0f}s grace: pids {', '.join(map(str, killed))}")
            for name, child in self._children.items():
                self.say(f"{name} (pid {child.proc.pid}) exited with status {child.proc.returncode}")
        self._observed.stop()
        if self._pg is None:
            return True
        self.say(f"stopping PostgreSQL (pid {self._pg.pid})")
        try:
            holders = self._pg.stop()
        except Exception as exc:
            self.say(f"stopping PostgreSQL failed: {exc}")
            return False
        if holders:
            self.say(f"PostgreSQL left running: other processes still use it (pids {holders})")
        else:
            self.say("PostgreSQL stopped")
        return True


@click.command("dev")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".taskyard"),
    show_default=True,
    help="Where the embedded PostgreSQL keeps its data (<data-dir>/pgdata).",
)
@click.option(
    "--database-url",
    envvar="TASKYARD_DATABASE_URL",
    default=None,
    help="Use this PostgreSQL instead of the embedded one.",
)
@click.option(
    "--workers", "-w", type=click.IntRange(min=1), default=None, help="Worker processes in the pool."
)
@click.option(
    "--concurrency", "-c", type=click.IntRange(min=1), default=None, help="Tasks per worker process."
)
@click.option(
    "--tasks",
    "tasks",
    multiple=True,
    metavar="MODULE",
    help="Extra module(s) of task functions to load (taskyard.examples is always loaded).",
)
@click.option(
    "--port",
    type=click.IntRange(min=1, max=65535),
    default=None,
    help="gRPC port of the gateway (default TASKYARD_GRPC_PORT or 50051).",
)
@click.option(
    "--grace",
    type=float,
    default=10.0,
    show_default=True,
    help="Seconds between SIGTERM and SIGKILL when stopping.",
)
@click.option(
    "--ready-timeout",
    type=float,
    default=60.0,
    show_default=True,
    help="Seconds to wait for the suite to become ready.",
)
@click.option(
    "--jaeger/--no-jaeger",
    default=True,
    show_default=True,
    help="Start a local Jaeger (when installed) and export traces to it; "
    "an OTEL_EXPORTER_OTLP_ENDPOINT already set wins.",
)
@click.option(
    "--metrics-port",
    type=click.IntRange(min=0, max=65532),
    default=9464,
    show_default=True,
    help="First of the services' ops ports, each serving /metrics, /livez and /readyz "
    "(gateway, scheduler, result-store, worker-pool); 0 = off.",
)
@click.option(
    "--http-port",
    type=click.IntRange(min=0, max=65535),
    default=None,
    help="The web dashboard's port (default TASKYARD_HTTP_PORT, else 8080, or a free one when taken; "
    "0 = off).",
)
def dev_command(**options: Any) -> None:
    """Run the whole suite on this machine (embedded PostgreSQL, example tasks)."""
    sys.exit(run_dev(DevOptions(**options)))


__all__ = ["DevOptions", "banner", "dev_command", "pool_command", "run_dev"]
