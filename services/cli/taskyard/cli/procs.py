"""Running Taskyard services as child processes: names, launch, readiness, stop.

Used by ``taskyard dev``, ``taskyard serve``, the test cluster harness and the
benchmarks, so that all of them start the suite the same way. Services are
launched as ``python -m taskyard.<module>``; nothing here imports a service.
"""
# Length: the suite's processes from launch to stop, the embedded PostgreSQL among them
# (its holders and its stop go with the services' stop, which dev runs right before).

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import grpc
import psutil
from grpc_health.v1 import health_pb2, health_pb2_grpc

from taskyard.core import lifecycle
from taskyard.v1 import (
    queue_service_pb2,
    queue_service_pb2_grpc,
    task_pb2,
    task_service_pb2,
    task_service_pb2_grpc,
)

# CLI name -> module under the taskyard namespace.
SERVICES: Mapping[str, str] = {
    "result-store": "result_store",
    "scheduler": "scheduler",
    "worker-pool": "worker_pool",
    "gateway": "gateway",
}
# Listeners first: the store, then the scheduler (lanes, registration, hub), then
# the pool (registers), then the gateway (its edge is what clients wait for).
START_ORDER: tuple[str, ...] = ("result-store", "scheduler", "worker-pool", "gateway")
STOP_ORDER: tuple[str, ...] = tuple(reversed(START_ORDER))

READY_PROBE_NAME = "noop"


class Child(Protocol):
    """What stopping and waiting need of a started service: a ``subprocess.Popen``, or
    a test harness's own handle on a process it forked."""

    @property
    def pid(self) -> int: ...

    @property
    def args(self) -> Any: ...

    @property
    def returncode(self) -> int | Any: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def send_signal(self, sig: int) -> None: ...

    def kill(self) -> None: ...


def canonical(service: str) -> str:
    """Accept ``result-store`` and ``result_store`` alike; return the CLI name."""
    name = service.strip().lower().replace("_", "-")
    if name not in SERVICES:
        raise ValueError(f"unknown service {service!r}; expected one of {', '.join(SERVICES)}")
    return name


def service_argv(service: str) -> list[str]:
    return [sys.executable, "-m", f"taskyard.{SERVICES[canonical(service)]}"]


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


def spawn(
    service: str,
    env: Mapping[str, str],
    *,
    stdout: int | object = subprocess.PIPE,
    stderr: int | object = subprocess.STDOUT,
    die_with_parent: bool = True,
) -> subprocess.Popen[bytes]:
    """Start one service in its own session (a terminal's Ctrl-C reaches only us).

    It starts with its stop signals held (lifecycle.stop_signals_held): a SIGTERM
    sent right after this returns waits for its handler instead of killing it.
    ``die_with_parent`` (Linux): the service is sent SIGTERM when this process dies
    (it asks for that itself: lifecycle.end_with_launcher)."""
    child_env = dict(env)
    child_env.pop(lifecycle.LAUNCHER_PID, None)
    if die_with_parent:
        child_env[lifecycle.LAUNCHER_PID] = str(os.getpid())
    # No preexec_fn, ever: with one, subprocess forks instead of using vfork, and the
    # child runs every at-fork handler; gRPC's deadlocks when another of our threads
    # is inside gRPC (a test runner's client, a grpc.aio poller), so the child never
    # execs and Popen waits for it for good.
    with lifecycle.stop_signals_held():
        return subprocess.Popen(
            service_argv(service),
            env=child_env,
            stdin=subprocess.DEVNULL,
            stdout=stdout,  # type: ignore[arg-type]
            stderr=stderr,  # type: ignore[arg-type]
            start_new_session=True,
        )


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def _signal_pid(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def session_members(session_ids: Iterable[int]) -> list[int]:
    """Every live process in one of these sessions. Services are started in their
    own session (sid = their pid), so this finds every descendant, even one that
    was orphaned (re-parented to init) after its parent exited."""
    sids = set(session_ids)
    found: list[int] = []
    for pid in psutil.pids():
        try:
            if os.getsid(pid) in sids and _alive(pid):
                found.append(pid)
        except OSError:
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        p = psutil.Process(pid)
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def stop_processes(
    procs: Sequence[Child],
    *,
    grace: float = 10.0,
    extra_pids: Iterable[int] = (),
    sequential: bool = True,
) -> list[int]:
    """Stop processes by PID: SIGTERM, then SIGKILL after ``grace`` seconds.

    ``sequential`` (default) stops them one after the other in the given order,
    each with its own grace, so that a process can drain while the ones after
    it (e.g. the scheduler and store behind a draining pool) still run.
    Otherwise all get SIGTERM at once and share the grace. Finally every
    descendant seen (worker processes) that outlived its parent is SIGKILLed.
    Returns the PIDs that had to be killed."""
    tracked: set[int] = set(extra_pids)
    for proc in procs:
        tracked.update(d.pid for d in descendants(proc.pid))
    killed: list[int] = []

    def term(batch: Sequence[Child]) -> None:
        for proc in batch:
            if proc.poll() is None:
                tracked.update(d.pid for d in descendants(proc.pid))
                _signal_pid(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for proc in batch:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        for proc in batch:
            if proc.poll() is None:
                tracked.update(d.pid for d in descendants(proc.pid))
                _signal_pid(proc.pid, signal.SIGKILL)
                killed.append(proc.pid)
        for proc in batch:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)

    if sequential:
        for proc in procs:
            term([proc])
    else:
        term(procs)
    # Grandchildren (worker processes) that outlived their manager, found by
    # what we saw and by session (spawn() starts every service in its own).
    sessions = {proc.pid for proc in procs}
    end = time.monotonic() + min(grace, 5.0)
    while time.monotonic() < end:
        tracked.update(session_members(sessions))
        if not any(_alive(pid) for pid in tracked):
            break
        time.sleep(0.05)
    tracked.update(session_members(sessions))
    for pid in sorted(tracked):
        if _alive(pid):
            _signal_pid(pid, signal.SIGKILL)
            killed.append(pid)
    return killed


# --- readiness --------------------------------------------------------------


def health_status(target: str, service: str = "", timeout: float = 1.0) -> str:
    """The gRPC health status name of ``service`` at ``target`` ("" = the server)."""
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


class NotReady(RuntimeError):
    pass


def _auth(token: str | None) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")] if token else []


def probe_submit(
    target: str, name: str = READY_PROBE_NAME, timeout: float = 2.0, token: str | None = None
) -> None:
    """Is a pool serving ``name`` known to the gateway? Uses a BatchSubmitTasks of
    ``[name, <empty name>]``: a batch is all-or-nothing, so the invalid second entry
    guarantees nothing is inserted, and the first entry is accepted exactly when no
    field violation points at ``tasks[0]``."""
    request = task_service_pb2.BatchSubmitTasksRequest(
        tasks=[task_pb2.TaskSpec(name=name), task_pb2.TaskSpec(name="")]
    )
    with grpc.insecure_channel(target) as channel:
        stub = task_service_pb2_grpc.TaskServiceStub(channel)
        try:
            stub.BatchSubmitTasks(request, timeout=timeout, metadata=_auth(token))
        except grpc.RpcError as exc:
            code = exc.code()
            if code != grpc.StatusCode.INVALID_ARGUMENT:
                raise NotReady(f"{code.name}: {exc.details()}") from exc
            fields = violation_fields(exc)
            if not fields:
                raise NotReady(f"INVALID_ARGUMENT without field violations: {exc.details()}") from exc
            if any(_names_first_entry(f) for f in fields):
                raise NotReady(f"{name!r} not accepted yet: {exc.details()}") from exc
            return
        # Accepted a batch with an empty name? Then the gateway does not validate
        # names at all; there is nothing better to wait for.
        return


def probe_serving(
    target: str, name: str = READY_PROBE_NAME, timeout: float = 2.0, token: str | None = None
) -> None:
    """Does a running pool serve ``name``? A name some pool once declared is accepted
    while no pool serves it (the task waits), so acceptance alone says less."""
    with grpc.insecure_channel(target) as channel:
        stub = queue_service_pb2_grpc.QueueServiceStub(channel)
        try:
            reply = stub.ListServers(
                queue_service_pb2.ListServersRequest(), timeout=timeout, metadata=_auth(token)
            )
        except grpc.RpcError as exc:
            raise NotReady(f"ListServers: {exc.code().name}") from exc
    if not any(s.is_running and name in s.task_names for s in reply.servers):
        raise NotReady(f"no running pool serves {name!r} yet")


def violation_fields(exc: grpc.RpcError) -> list[str]:
    """The ``field`` of every BadRequest violation in a gRPC error's status details."""
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    status: Any = rpc_status.from_call(exc)  # type: ignore[arg-type]
    fields: list[str] = []
    for detail in getattr(status, "details", ()) or ():
        if detail.type_url.endswith("google.rpc.BadRequest"):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            fields.extend(v.field for v in bad.field_violations)
    return fields


def _names_first_entry(field: str) -> bool:
    f = field.replace(" ", "")
    return f.startswith(("tasks[0]", "tasks.0", "tasks/0")) or f in ("name", "task.name")


def wait_ready(
    target: str,
    *,
    deadline: float,
    probe_name: str | None = READY_PROBE_NAME,
    alive: Sequence[Child] = (),
    token: str | None = None,
) -> None:
    """Block until the gateway's health is SERVING and (unless ``probe_name`` is None)
    a pool serving ``probe_name`` is accepted. ``deadline`` is a ``time.monotonic()``
    value; ``token`` (scopes submit and read) is sent when the gateway asks for tokens.
    Raises ``NotReady`` with the last reason, or if a process in ``alive`` exits."""
    last = "not tried"
    while time.monotonic() < deadline:
        for proc in alive:
            if proc.poll() is not None:
                raise NotReady(f"process {proc.pid} ({proc.args!r}) exited with {proc.returncode}")
        try:
            status = health_status(target)
            if status != "SERVING":
                last = f"health {status}"
            elif probe_name is None:
                return
            else:
                probe_submit(target, probe_name, token=token)
                probe_serving(target, probe_name, token=token)
                return
        except NotReady as exc:
            last = str(exc)
        except grpc.RpcError as exc:
            last = f"health check: {exc.code().name}"
        time.sleep(0.2)
    raise NotReady(f"not ready at {target}: {last}")


# --- embedded PostgreSQL ----------------------------------------------------


class EmbeddedPostgresMissing(RuntimeError):
    """The embedded PostgreSQL is an extra of the package: the base install (an image) has none."""

    def __init__(self) -> None:
        super().__init__(
            "no embedded PostgreSQL: the pgserver package is not installed. Install the extra "
            "(in a checkout: make dev, or pip install -e '.[embedded]'; elsewhere: "
            "pip install 'taskyard[embedded]'), or give a database with --database-url"
        )


class EmbeddedPostgres:
    """A PostgreSQL server run by ``pgserver`` on ``pgdata`` (kept between runs).

    Durable by default: fsync and synchronous_commit are left on."""

    def __init__(self, pgdata: Path, database: str = "taskyard", *, delete: bool = False) -> None:
        import warnings

        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI): harmless.
            warnings.simplefilter("ignore")
            try:
                import pgserver
            except ImportError as exc:
                raise EmbeddedPostgresMissing() from exc

        pgdata = pgdata.expanduser().resolve()
        pgdata.parent.mkdir(parents=True, exist_ok=True)
        self.pgdata = pgdata
        with pgserver.PostgresServer._lock:
            self.stale_handles = forget_dead_handles(pgdata)
        self._server = pgserver.get_server(pgdata, cleanup_mode="delete" if delete else "stop")
        exists = self._server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{database}';")
        if "(1 row)" not in exists:
            self._server.psql(f'CREATE DATABASE "{database}";')
        self.url: str = self._server.get_uri(database)

    @property
    def pid(self) -> int | None:
        pid = self._server.get_pid()
        return int(pid) if pid is not None else None

    def stop(self) -> list[int]:
        """Stop the server unless another live process still holds it; those holders' pids
        (empty when it stopped)."""
        self._server.cleanup()
        holders = [pid for pid in _handle_pids(self.pgdata) if _alive(pid)]
        return holders if self._server_running() else []

    def _server_running(self) -> bool:
        pid = self.pid_file_pid()
        return pid is not None and _alive(pid)

    def pid_file_pid(self) -> int | None:
        """The postmaster's pid from ``postmaster.pid`` (None when there is none)."""
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int((self.pgdata / "postmaster.pid").read_text().splitlines()[0])
        return None


# pgserver's list of the processes that hold a server: the last one to let go stops
# it. A holder killed (SIGKILL) stays in it, and then no later holder is ever last.
HANDLE_PIDS_FILE = ".handle_pids.json"


def _handle_pids(pgdata: Path) -> list[int]:
    try:
        pids = json.loads((pgdata / HANDLE_PIDS_FILE).read_text())
    except (OSError, ValueError):
        return []
    return [pid for pid in pids if isinstance(pid, int)] if isinstance(pids, list) else []


def _holder_alive(pid: int, written: float) -> bool:
    """Alive, and not a later process that was given a dead holder's pid: a holder
    started before the list was last written."""
    try:
        p = psutil.Process(pid)
        return p.status() != psutil.STATUS_ZOMBIE and p.create_time() <= written + 1.0
    except psutil.Error:
        return False


def forget_dead_handles(pgdata: Path) -> list[int]:
    """Drop from pgserver's holder list every pid that is no longer alive (call it with
    pgserver's lock held); the pids dropped."""
    path = pgdata / HANDLE_PIDS_FILE
    pids = _handle_pids(pgdata)
    try:
        written = path.stat().st_mtime
    except OSError:
        return []
    dead = [pid for pid in pids if pid != os.getpid() and not _holder_alive(pid, written)]
    if dead:
        path.write_text(json.dumps([pid for pid in pids if pid not in dead]))
    return dead
