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
# Length: run_dev starts the database and the four services in order, stops them in reverse.

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import IO

import click

from taskyard.cli import procs
from taskyard.core import seal
from taskyard.core.config import Settings

EXAMPLES_MODULE = "taskyard.examples"
SUBMIT_JSON = '{"task":{"name":"add","args":[2,3]}}'


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


def _display_host(host: str) -> str:
    return "localhost" if host in ("127.0.0.1", "0.0.0.0", "::", "::1", "") else host


def banner(target: str, settings: Settings, database: str, pids: dict[str, int]) -> str:
    t = target
    lines = [
        "",
        "=" * 78,
        f"Taskyard is ready: gRPC taskyard.v1.TaskService on {t}",
        f"  database:     {database}",
        f"  transport:    {settings.transport}"
        + (f" ({settings.ipc_dir})" if settings.transport == "ipc" else f" (base port {settings.base_port})"),
        f"  worker pool:  {settings.workers} worker(s) x {settings.concurrency}, "
        f"tasks from {', '.join(settings.task_modules)}",
        "  processes:    " + ", ".join(f"{name}={pid}" for name, pid in pids.items()),
        "",
        "Try it with grpcurl:",
        f"  grpcurl -plaintext {t} list",
        f"  grpcurl -plaintext -d '{SUBMIT_JSON}' {t} taskyard.v1.TaskService/SubmitTask",
        f'  grpcurl -plaintext -d \'{{"id":"TASK_ID"}}\' {t} taskyard.v1.TaskService/WaitTask',
        "(replace TASK_ID with the task.id returned by SubmitTask)",
        "",
        "Or with the CLI:",
        f"  taskyard task submit add 2 3 --wait --target {t}",
        "",
        "Ctrl-C stops everything.",
        "=" * 78,
        "",
    ]
    return "\n".join(lines)


def run_dev(
    *,
    data_dir: Path,
    database_url: str | None,
    workers: int | None,
    concurrency: int | None,
    tasks: tuple[str, ...],
    port: int | None,
    grace: float,
    ready_timeout: float,
    out: IO[str] | None = None,
) -> int:
    printer = _Printer(out or sys.stdout)
    say: Callable[[str], None] = lambda text: printer.line("dev", text)  # noqa: E731

    stop = threading.Event()
    received: list[int] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}

    settings = Settings.from_env()
    url = database_url or settings.database_url
    pg: procs.EmbeddedPostgres | None = None
    children: dict[str, _Child] = {}
    status = 0
    try:
        if not url:
            pgdata = data_dir / "pgdata"
            say(f"starting embedded PostgreSQL in {pgdata.resolve()}")
            pg = procs.EmbeddedPostgres(pgdata)
            url = pg.url
            say(f"PostgreSQL ready (pid {pg.pid}): {url}")
        else:
            say("using the given database")
        modules = tuple(dict.fromkeys((EXAMPLES_MODULE, *settings.task_modules, *tasks)))
        changes: dict[str, object] = {"database_url": url, "task_modules": modules, "development": True}
        if not settings.bus_keys and not settings.bus_keys_file:
            # A fresh bus key per run, so dev runs sealed like production (docs/security.md).
            changes["bus_keys"] = seal.generate_keys()
        if workers is not None:
            changes["workers"] = workers
        if concurrency is not None:
            changes["concurrency"] = concurrency
        if port is not None:
            changes["grpc_port"] = port
        settings = dataclasses.replace(settings, **changes)  # type: ignore[arg-type]
        if settings.transport == "ipc":
            Path(settings.ipc_dir).mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **settings.to_env(), "PYTHONUNBUFFERED": "1"}

        for service in procs.START_ORDER:
            if stop.is_set():
                break
            child = _Child(service, env, printer)
            children[service] = child
            say(f"started {service} (pid {child.proc.pid})")
            # Wait for its "ready" line so the listeners come up in order; services
            # redial on their own, so a slow one only costs a warning.
            deadline = time.monotonic() + ready_timeout
            while not child.ready.is_set() and not stop.is_set() and time.monotonic() < deadline:
                if child.proc.poll() is not None:
                    raise _ChildDied(service, child.proc.returncode)
                child.ready.wait(0.1)
            if not child.ready.is_set() and not stop.is_set():
                say(f"warning: {service} did not log 'ready' within {ready_timeout:.0f}s; going on")

        target = f"{_display_host(settings.grpc_host)}:{settings.grpc_port}"
        if not stop.is_set():
            say(f"waiting for the gateway at {target} (health SERVING, a pool serving 'noop')")
            _wait_ready_or_stop(target, ready_timeout, children, stop)
        if not stop.is_set():
            pids = {name: c.proc.pid for name, c in children.items()}
            if pg is not None and pg.pid is not None:
                pids["postgres"] = pg.pid
            printer.block(banner(target, settings, url, pids))

        while not stop.is_set():
            for name, child in children.items():
                if child.proc.poll() is not None:
                    raise _ChildDied(name, child.proc.returncode)
            stop.wait(0.25)
        say(f"received {signal.Signals(received[0]).name}; stopping" if received else "stopping")
    except _ChildDied as died:
        say(f"{died.service} exited unexpectedly with status {died.code}; stopping the suite (exit 1)")
        status = 1
    except procs.NotReady as exc:
        say(f"the suite did not become ready: {exc}")
        status = 1
    except Exception as exc:
        say(f"error: {type(exc).__name__}: {exc}")
        status = 1
    finally:
        # A second Ctrl-C during shutdown must not interrupt the cleanup.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
        ordered = [children[s].proc for s in procs.STOP_ORDER if s in children]
        if ordered:
            killed = procs.stop_processes(ordered, grace=grace)
            for child in children.values():
                child.join_logs()
            if killed:
                say(f"killed after {grace:.0f}s grace: pids {', '.join(map(str, killed))}")
            for name, child in children.items():
                say(f"{name} (pid {child.proc.pid}) exited with status {child.proc.returncode}")
        if pg is not None:
            say("stopping PostgreSQL")
            try:
                pg.stop()
            except Exception as exc:
                say(f"stopping PostgreSQL failed: {exc}")
                status = status or 1
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return status


class _ChildDied(Exception):
    def __init__(self, service: str, code: int | None) -> None:
        super().__init__(f"{service} exited with {code}")
        self.service = service
        self.code = code


def _wait_ready_or_stop(
    target: str, timeout: float, children: dict[str, _Child], stop: threading.Event
) -> None:
    deadline = time.monotonic() + timeout
    while not stop.is_set():
        for name, child in children.items():
            if child.proc.poll() is not None:
                raise _ChildDied(name, child.proc.returncode)
        try:
            procs.wait_ready(target, deadline=min(deadline, time.monotonic() + 1.0))
            return
        except procs.NotReady:
            if time.monotonic() >= deadline:
                raise


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
def dev_command(
    data_dir: Path,
    database_url: str | None,
    workers: int | None,
    concurrency: int | None,
    tasks: tuple[str, ...],
    port: int | None,
    grace: float,
    ready_timeout: float,
) -> None:
    """Run the whole suite on this machine (embedded PostgreSQL, example tasks)."""
    code = run_dev(
        data_dir=data_dir,
        database_url=database_url,
        workers=workers,
        concurrency=concurrency,
        tasks=tasks,
        port=port,
        grace=grace,
        ready_timeout=ready_timeout,
    )
    sys.exit(code)


__all__ = ["banner", "dev_command", "run_dev"]
