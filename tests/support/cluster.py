"""A real Taskyard cluster for integration and acceptance tests (and benchmarks).

Four services run as subprocesses (each as ``python -m taskyard.<service>`` would,
forked by this process's fork server: support.forkserver) over NNG
``ipc://`` sockets in a short private directory, with the gateway on a free
loopback port::

    c = Cluster(database_url, tmp_path, workers=2, concurrency=8, lease_seconds=5)
    c.start(); c.wait_ready()
    with c.client() as client: ...
    c.kill("worker-pool", signal.SIGKILL); c.start_service("worker-pool")
    c.stop()        # SIGTERM, then SIGKILL after a grace, by PID; idempotent

Overrides are ``Settings`` field names (``workers``, ``concurrency``,
``lease_seconds``, ``renew_interval``, ``polling_interval``,
``fallback_polling_interval``, ``task_modules``, ...) plus ``env={...}`` for raw
environment variables applied last. Each service logs to
``<tmp_path>/logs/<service>.log``; ``logs_tail()`` formats their tails.

Several instances of a role, each with an environment of its own (over tcp, each
listening on its own loopback address: ipc names one socket file per role)::

    hosts = ("127.0.0.2", "127.0.0.3")
    c = Cluster(database_url, tmp_path, transport="tcp", base_port=..., store_hosts=hosts)
    stores = c.start_instances("result-store", [{"TASKYARD_BIND_HOST": h} for h in hosts])
    ...
    c.kill(stores[0])   # pid, kill, is_running, process, log_text take an instance's name too
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import grpc
import psutil

from support import forkserver, ports
from support.waiting import wait_until
from taskyard.cli import bus_key, procs
from taskyard.core import seal
from taskyard.core.config import Settings

SERVICES = procs.START_ORDER
TESTS_DIR = Path(__file__).resolve().parent.parent

# Fast but realistic defaults for tests; every one can be overridden.
TEST_DEFAULTS: dict[str, Any] = {
    "workers": 1,
    "concurrency": 4,
    "task_modules": ("taskyard.examples",),
    "polling_interval": 0.5,
    "retry_base_seconds": 0.1,
    "renew_interval": 1.0,
    "announce_interval": 0.5,
    "shutdown_timeout": 5.0,
    "request_timeout": 5.0,
    "server_name": "test-cluster",
    "development": True,
}

_FIELDS = {f.name for f in dataclasses.fields(Settings)}
# Environment variables of the outer process that must not leak into a cluster.
_SCRUB_PREFIXES = ("TASKYARD_", "QUEUE_", "QUEUED_TASK_", "OTEL_")


class _Launch:
    # Under pytest, services are forked by the test process's fork server (the imports
    # paid once: support.forkserver); benchmarks start each with ``python -m``, so that
    # what they measure (memory above all: a fork shares its server's pages) is real.
    forked = False


def fork_services(forked: bool) -> None:
    """Start the services of clusters made from now on by the fork server, or not."""
    _Launch.forked = forked


class ClusterError(RuntimeError):
    pass


def shared_bus_keys() -> str:
    """This process's bus keys (tests/conftest.py sets them), made here when unset:
    a cluster runs sealed, and the test's own sockets must share its key."""
    keys = os.environ.get("TASKYARD_BUS_KEYS", "")
    if not keys:
        keys = os.environ["TASKYARD_BUS_KEYS"] = seal.generate_keys("test")
        seal.install(seal.from_env(os.environ))
    return keys


class Cluster:
    def __init__(
        self,
        database_url: str,
        tmp_path: Path | str,
        *,
        env: dict[str, str] | None = None,
        grace: float = 10.0,
        metrics: bool = False,
        **overrides: Any,
    ) -> None:
        unknown = set(overrides) - _FIELDS
        if unknown:
            raise TypeError(f"unknown Settings override(s): {', '.join(sorted(unknown))}")
        self.tmp_path = Path(tmp_path)
        self.log_dir = self.tmp_path / "logs"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        # Unix socket paths are limited to ~100 bytes: keep the ipc dir short.
        self.ipc_dir = Path(tempfile.mkdtemp(prefix="ty-", dir="/tmp"))
        values: dict[str, Any] = {
            **TEST_DEFAULTS,
            "transport": "ipc",
            "ipc_dir": str(self.ipc_dir),
            "grpc_host": "127.0.0.1",
            "grpc_port": ports.free_port(),
            "http_port": 0,  # the dashboard only where a test asks for it
            "database_url": database_url,
            "bus_keys": shared_bus_keys(),
            **overrides,
        }
        if isinstance(values.get("task_modules"), str):
            values["task_modules"] = tuple(m for m in values["task_modules"].split(",") if m)
        self.settings = dataclasses.replace(Settings(), **values)
        self.grace = grace
        base = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUB_PREFIXES)}
        # tests/ on the path, so pools can load test-only task modules (support.tasks).
        pythonpath = [str(TESTS_DIR), *filter(None, base.get("PYTHONPATH", "").split(os.pathsep))]
        self.env: dict[str, str] = {
            **base,
            **self.settings.to_env(),
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": os.pathsep.join(dict.fromkeys(pythonpath)),
            **(env or {}),
        }
        # With metrics, each service (and each extra instance, on its first
        # start) serves its ops port (/metrics, /livez, /readyz) on a port of its own.
        self.metrics = metrics
        self.metrics_ports: dict[str, int] = {}
        self.procs: dict[str, procs.Child] = {}
        # Each instance's role, and the environment of its own it (re)starts with.
        self.kinds: dict[str, str] = {}
        self._own_env: dict[str, dict[str, str]] = {}
        self._logs: dict[str, IO[bytes]] = {}
        self._all_pids: set[int] = set()
        self._stopped = False
        self._channels: list[grpc.Channel] = []

    # --- addresses ------------------------------------------------------------
    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.settings.grpc_port}"

    @property
    def database_url(self) -> str:
        return self.settings.database_url

    def log_path(self, service: str) -> Path:
        """The log of a service, or of an extra instance by its own name."""
        name = (
            service if service in self.procs and service not in procs.SERVICES else procs.canonical(service)
        )
        return self.log_dir / f"{name}.log"

    # --- lifecycle ------------------------------------------------------------
    def start(self) -> Cluster:
        for service in SERVICES:
            self.start_service(service)
        return self

    def start_service(
        self,
        service: str,
        *,
        wait_log: str | None = "ready",
        timeout: float = 30.0,
        instance: str | None = None,
        env: dict[str, str] | None = None,
    ) -> int:
        """Start (or restart) one service; waits for its "ready" log line unless
        ``wait_log`` is None. Returns its PID. ``instance`` names an extra copy
        (e.g. a second worker pool) and ``env`` overrides its environment (a
        restart without ``env`` keeps the one it had)."""
        kind = procs.canonical(service)
        name = instance or kind
        if env is None:
            env = self._own_env.get(name)
        self.kinds[name] = kind
        self._own_env[name] = dict(env or {})
        old = self.procs.get(name)
        if old is not None and old.poll() is None:
            raise ClusterError(f"{name} is still running (pid {old.pid})")
        log_path = self.log_dir / f"{name}.log"
        offset = log_path.stat().st_size if log_path.exists() else 0
        if name in self._logs:
            self._logs[name].close()
        log = open(log_path, "ab")  # noqa: SIM115 - kept open for the child's life
        log.write(f"----- {name} starting at {time.strftime('%H:%M:%S')} -----\n".encode())
        log.flush()
        offset = log.tell()
        self._logs[name] = log
        own: dict[str, str] = {}
        if self.metrics:
            port = self.metrics_ports.setdefault(name, ports.free_port())
            own["TASKYARD_METRICS_PORT"] = str(port)
        # Keys bound to roles: each service its own keyring, as taskyard dev hands them out.
        own["TASKYARD_BUS_KEYS"] = bus_key.service_keys(self.settings.bus_keys, kind)
        child_env = {**self.env, **own, **(env or {})}
        proc: procs.Child
        if _Launch.forked:
            proc = forkserver.server().spawn(f"taskyard.{procs.SERVICES[kind]}", child_env, log_path)
        else:
            proc = procs.spawn(kind, child_env, stdout=log, stderr=subprocess.STDOUT)
        self.procs[name] = proc
        self._all_pids.add(proc.pid)
        self._stopped = False
        if wait_log:
            self._wait_log(name, wait_log, offset, timeout)
        return proc.pid

    def start_instances(
        self,
        service: str,
        envs: Sequence[Mapping[str, str]],
        *,
        wait_log: str | None = "ready",
        timeout: float = 30.0,
    ) -> list[str]:
        """Start one more instance of ``service`` per entry of ``envs`` (each over the
        cluster's environment), one after the other, and return their names: the
        role's own name for its first instance, then ``<role>-2``, ``<role>-3``, ..."""
        kind = procs.canonical(service)
        names: list[str] = []
        for env in envs:
            name = kind
            number = 1
            while name in self.procs:
                number += 1
                name = f"{kind}-{number}"
            self.start_service(kind, instance=name, env=dict(env), wait_log=wait_log, timeout=timeout)
            names.append(name)
        return names

    def instances(self, service: str) -> list[str]:
        """The names of the instances of a role started so far, in start order."""
        kind = procs.canonical(service)
        return [name for name, k in self.kinds.items() if k == kind]

    def gateway_target(self, name: str = "gateway") -> str:
        """The gRPC target of one gateway instance (its own TASKYARD_GRPC_HOST/PORT, if set)."""
        own = self._own_env.get(self._name(name), {})
        host = own.get("TASKYARD_GRPC_HOST", self.settings.grpc_host)
        return f"{host}:{own.get('TASKYARD_GRPC_PORT', self.settings.grpc_port)}"

    def _name(self, service: str) -> str:
        """An instance's name as given, else the role's canonical name."""
        return service if service in self.procs else procs.canonical(service)

    def _wait_log(self, service: str, needle: str, offset: int, timeout: float) -> None:
        proc = self.procs[service]
        path = self.log_path(service)

        def logged() -> bool:
            with open(path, "rb") as f:
                f.seek(offset)
                text = f.read().decode("utf-8", "replace")
            if needle in text:
                return True
            if proc.poll() is not None:
                raise ClusterError(
                    f"{service} exited with {proc.returncode} before logging {needle!r}\n{self.logs_tail()}"
                )
            return False

        try:
            wait_until(logged, timeout, f"{service} to log {needle!r}")
        except AssertionError as exc:
            raise ClusterError(f"{exc}\n{self.logs_tail()}") from None

    def wait_ready(self, timeout: float = 30.0, probe_name: str | None = procs.READY_PROBE_NAME) -> Cluster:
        """Gateway health SERVING and a task named ``probe_name`` accepted (no row is
        written: see ``procs.probe_submit``)."""
        try:
            procs.wait_ready(
                self.target,
                deadline=time.monotonic() + timeout,
                probe_name=probe_name,
                alive=list(self.procs.values()),
            )
        except procs.NotReady as exc:
            raise ClusterError(f"cluster not ready: {exc}\n{self.logs_tail()}") from exc
        return self

    def stop(self) -> None:
        """Stop every service (gateway first), SIGKILL after the grace; always by PID."""
        for channel in self._channels:
            channel.close()
        if self._stopped:
            return
        ordered = [self.procs[name] for name in self._stop_order()]
        extra = set(self._all_pids)
        for p in ordered:
            extra.update(d.pid for d in procs.descendants(p.pid))
        try:
            procs.stop_processes(ordered, grace=self.grace, extra_pids=extra - {p.pid for p in ordered})
        finally:
            for log in self._logs.values():
                with contextlib.suppress(OSError):
                    log.close()
            self._logs.clear()
            shutil.rmtree(self.ipc_dir, ignore_errors=True)
            self._stopped = True

    def _stop_order(self) -> list[str]:
        """Role by role (gateways first), each role's instances in start order; a
        process of no known role (a subclass's) right after the gateways."""
        by_kind: dict[str, list[str]] = {kind: [] for kind in procs.STOP_ORDER}
        unknown: list[str] = []
        for name in self.procs:
            kind = self.kinds.get(name, name)
            if kind in by_kind:
                by_kind[kind].append(name)
            else:
                unknown.append(name)
        first, *rest = procs.STOP_ORDER
        return [*by_kind[first], *unknown, *(name for kind in rest for name in by_kind[kind])]

    def __enter__(self) -> Cluster:
        try:
            self.start()
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- processes ------------------------------------------------------------
    # Each takes a role ("result-store": its first instance) or an instance's name.
    def pid(self, service: str) -> int:
        return self.procs[self._name(service)].pid

    def process(self, service: str) -> procs.Child:
        return self.procs[self._name(service)]

    def is_running(self, service: str) -> bool:
        p = self.procs.get(self._name(service))
        return p is not None and p.poll() is None

    def kill(
        self, service: str, sig: int = signal.SIGKILL, *, wait: bool = True, timeout: float = 30.0
    ) -> int | None:
        """Send ``sig`` to one service by PID; with ``wait`` return its exit status."""
        proc = self.procs[self._name(service)]
        self._all_pids.update(d.pid for d in procs.descendants(proc.pid))
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, sig)
        if not wait:
            return None
        return proc.wait(timeout=timeout)

    def kill_pid(self, pid: int, sig: int = signal.SIGKILL) -> None:
        """Signal any process of this cluster (e.g. one of ``worker_pids()``) by PID."""
        known = set(self._all_pids)
        for p in self.procs.values():
            known.update(d.pid for d in procs.descendants(p.pid))
        if pid not in known:
            raise ClusterError(f"pid {pid} is not a process of this cluster")
        self._all_pids.add(pid)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)

    def worker_pids(self, pool: str = "worker-pool") -> list[int]:
        """PIDs of a pool manager's worker processes (the children of its fork
        template, or its own children minus multiprocessing helpers where workers
        are spawned); ``pool`` names another instance."""
        proc = self.procs.get(self._name(pool))
        if proc is None or proc.poll() is not None:
            return []
        pids: list[int] = []
        try:
            children = psutil.Process(proc.pid).children(recursive=False)
        except psutil.Error:
            return []
        for child in children:
            try:
                cmdline = " ".join(child.cmdline())
                if child.status() == psutil.STATUS_ZOMBIE:
                    continue
            except psutil.Error:
                continue
            if "forkserver" in cmdline:  # the template: the workers are its children
                try:
                    forked = [c for c in child.children() if c.status() != psutil.STATUS_ZOMBIE]
                except psutil.Error:
                    continue
                pids.extend(c.pid for c in forked)
                self._all_pids.update(c.pid for c in forked)
                continue
            if "resource_tracker" in cmdline:
                continue
            pids.append(child.pid)
            self._all_pids.add(child.pid)
        return sorted(pids)

    def template_pid(self, pool: str = "worker-pool") -> int | None:
        """The PID of a pool manager's fork template (None: its workers are spawned)."""
        proc = self.procs.get(self._name(pool))
        if proc is None or proc.poll() is not None:
            return None
        try:
            for child in psutil.Process(proc.pid).children(recursive=False):
                if "forkserver" in " ".join(child.cmdline()) and child.status() != psutil.STATUS_ZOMBIE:
                    return child.pid
        except psutil.Error:
            return None
        return None

    def wait_workers(self, count: int | None = None, timeout: float = 30.0) -> list[int]:
        """Wait until the pool has ``count`` (default: settings.workers) workers."""
        want = self.settings.workers if count is None else count

        def enough() -> list[int] | None:
            pids = self.worker_pids()
            return pids if len(pids) >= want else None

        try:
            return wait_until(enough, timeout, f"{want} worker processes")
        except AssertionError as exc:
            raise ClusterError(f"{exc}\n{self.logs_tail()}") from None

    # --- the database (read-only, for assertions) ---------------------------------
    def query(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        """Run one read-only SQL statement against the cluster's database."""

        async def run() -> list[dict[str, Any]]:
            import asyncpg

            conn = await asyncpg.connect(self.database_url)
            try:
                return [dict(r) for r in await conn.fetch(sql, *args)]
            finally:
                await conn.close()

        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as ex:
            return ex.submit(asyncio.run, run()).result()

    def count_tasks(
        self,
        *,
        states: tuple[str, ...] | list[str] | None = None,
        name: str | None = None,
        request_id: str | None = None,
        queue: str | None = None,
    ) -> int:
        """``SELECT count(*) FROM tasks`` with optional filters (state names)."""
        where: list[str] = []
        args: list[Any] = []
        if states is not None:
            args.append([str(getattr(s, "name", s)) for s in states])
            where.append(f"state::text = ANY(${len(args)}::text[])")
        for column, value in (("name", name), ("request_id", request_id), ("queue", queue)):
            if value is not None:
                args.append(value)
                where.append(f"{column} = ${len(args)}")
        sql = "SELECT count(*) AS n FROM tasks" + (" WHERE " + " AND ".join(where) if where else "")
        return int(self.query(sql, *args)[0]["n"])

    # --- clients & diagnostics -------------------------------------------------
    def channel(self) -> grpc.Channel:
        """A raw gRPC channel to the gateway (closed with the cluster)."""
        channel = grpc.insecure_channel(self.target)
        self._channels.append(channel)
        return channel

    def client(self, **kwargs: Any) -> Any:
        """A ``taskyard.client.Client`` connected to the gateway."""
        from taskyard.client import Client

        return Client(self.target, **kwargs)

    def async_client(self, **kwargs: Any) -> Any:
        from taskyard.client import AsyncClient

        return AsyncClient(self.target, **kwargs)

    def log_text(self, service: str) -> str:
        path = self.log_path(service)
        return path.read_text("utf-8", "replace") if path.exists() else ""

    def logs_tail(self, lines: int = 40) -> str:
        parts: list[str] = []
        for service in [*SERVICES, *(name for name in self.procs if name not in SERVICES)]:
            path = self.log_path(service)
            if not path.exists():
                continue
            tail = path.read_text("utf-8", "replace").splitlines()[-lines:]
            state = "not started"
            proc = self.procs.get(service)
            if proc is not None:
                state = f"pid {proc.pid}, " + (
                    "running" if proc.poll() is None else f"exit {proc.returncode}"
                )
            parts.append(f"===== {service} ({state}): last {len(tail)} lines of {path} =====")
            parts.extend(tail)
        return "\n".join(parts)
