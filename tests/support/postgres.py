"""A throw-away PostgreSQL cluster for tests.

``PostgresCluster`` runs ``initdb``/``pg_ctl`` from ``pg_config --bindir`` in a
temporary directory (in memory where /dev/shm is, see MEMORY_DIR), listening on a
free loopback TCP port, with settings that trade durability for speed (fsync,
synchronous_commit and full_page_writes off). When we are root the server runs as
the ``postgres`` user (PostgreSQL refuses to run as root). It is stopped by the PID
in ``postmaster.pid``.

When no server binaries exist it falls back to the ``pgserver`` package
(an embedded PostgreSQL shipped as a wheel).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import psycopg

from support.waiting import wait_until

TEST_SETTINGS: dict[str, str] = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "300",
    "shared_buffers": "128MB",
    "max_locks_per_transaction": "256",
    "log_min_messages": "warning",
    "autovacuum": "on",
    # The WAL a data directory in memory (MEMORY_DIR) may hold: every clone of a test
    # database writes the whole template to it (CREATE DATABASE's WAL_LOG strategy).
    "max_wal_size": "256MB",
}

# Data directories go to memory when the machine has a tmpfs there. On ext4, creating
# files where many were just deleted is slow in the kernel (ext4's inode allocator
# skips recently deleted inodes, one bitmap read at a time): a test database's clone
# creates some 300 files and each drop deletes them, and a clone cost 270 ms of CPU on
# disk against 16 ms in memory (perf: two thirds in ext4_create's recently_deleted).
MEMORY_DIR = Path("/dev/shm")


def data_parent() -> str | None:
    """Where a cluster's temporary directory goes: MEMORY_DIR if it is a writable
    directory, else the default temporary directory (None)."""
    if MEMORY_DIR.is_dir() and os.access(MEMORY_DIR, os.W_OK | os.X_OK):
        return str(MEMORY_DIR)
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_bindir() -> Path | None:
    """The directory holding initdb/pg_ctl/postgres, or None."""
    candidates: list[Path] = []
    env_dir = os.environ.get("TASKYARD_PG_BINDIR")
    if env_dir:
        candidates.append(Path(env_dir))
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.CalledProcessError):
            out = subprocess.run(
                [pg_config, "--bindir"], check=True, capture_output=True, text=True
            ).stdout.strip()
            candidates.append(Path(out))
    root = Path("/usr/lib/postgresql")
    if root.is_dir():
        versions = sorted(
            (p for p in root.iterdir() if p.name.isdigit()), key=lambda p: int(p.name), reverse=True
        )
        candidates.extend(v / "bin" for v in versions)
    for c in candidates:
        if (c / "initdb").exists() and (c / "pg_ctl").exists() and (c / "postgres").exists():
            return c
    return None


class PostgresCluster:
    """One PostgreSQL server for a test session.

    >>> cluster = PostgresCluster(); cluster.start(); cluster.dsn("postgres"); cluster.stop()
    """

    def __init__(
        self,
        base_dir: str | Path | None = None,
        *,
        user: str = "postgres",
        settings: dict[str, str] | None = None,
    ) -> None:
        """``settings`` override TEST_SETTINGS (e.g. durable commits for a crash test)."""
        self.settings = {**TEST_SETTINGS, **(settings or {})}
        self._own_dir = base_dir is None
        self.base_dir = Path(base_dir or tempfile.mkdtemp(prefix="taskyard-pg-", dir=data_parent()))
        self.data_dir = self.base_dir / "data"
        self.socket_dir = self.base_dir / "sock"
        self.log_file = self.base_dir / "postgres.log"
        self.user = user
        self.host = "127.0.0.1"
        self.port = 0
        self.pid: int | None = None
        self._bindir = server_bindir()
        self._pgserver: Any = None
        self._uri = ""

    # --- public ------------------------------------------------------------
    def dsn(self, database: str = "postgres") -> str:
        if self._pgserver is not None:
            return self._pgserver_dsn(database)
        return f"postgresql://{self.user}@{self.host}:{self.port}/{database}"

    @contextlib.contextmanager
    def cloned_database(self, template: str, prefix: str = "t") -> Iterator[str]:
        """A new database copied from ``template``, its DSN while the block runs; dropped
        after it (its connections closed by force)."""
        name = f"{prefix}_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.dsn("postgres"), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        try:
            yield self.dsn(name)
        finally:
            with psycopg.connect(self.dsn("postgres"), autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def start(self) -> PostgresCluster:
        if self._bindir is None:
            return self._start_pgserver()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.base_dir, "postgres", "postgres")
            for p in (self.data_dir, self.socket_dir):
                shutil.chown(p, "postgres", "postgres")
            self.log_file.touch()
            shutil.chown(self.log_file, "postgres", "postgres")
        self._run(
            [
                str(self._bindir / "initdb"),
                "-D",
                str(self.data_dir),
                "-U",
                self.user,
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ]
        )
        last_error = ""
        for _ in range(5):
            self.port = free_port()
            proc = self._pg_ctl_start()
            if proc.returncode == 0:
                self.pid = self._read_pid()
                return self
            last_error = proc.stdout + proc.stderr + self._log_tail()
        raise RuntimeError(f"PostgreSQL did not start:\n{last_error}")

    def restart(self) -> None:
        """Crash the server (``pg_ctl stop -m immediate``: no shutdown checkpoint, as if
        it died) and start it again on the same port, recovering from its WAL."""
        assert self._bindir is not None and self.pid is not None, "restart needs a running server"
        self._run([str(self._bindir / "pg_ctl"), "-D", str(self.data_dir), "-m", "immediate", "-w", "stop"])
        proc = self._pg_ctl_start()
        if proc.returncode != 0:
            raise RuntimeError(f"PostgreSQL did not restart:\n{proc.stdout}{proc.stderr}{self._log_tail()}")
        self.pid = self._read_pid()

    def processes(self) -> list[psutil.Process]:
        """The postmaster and every server process it started (walwriter, backends, ...)."""
        assert self.pid is not None, "the server is not running"
        try:
            postmaster = psutil.Process(self.pid)
            return [postmaster, *postmaster.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def process(self, role: str) -> psutil.Process:
        """One server process by the role in its title, e.g. "walwriter"."""
        for proc in self.processes()[1:]:
            with contextlib.suppress(psutil.Error):
                if role in " ".join(proc.cmdline()):
                    return proc
        raise RuntimeError(f"no PostgreSQL {role} process under pid {self.pid}")

    def kill_and_restart(self) -> None:
        """SIGKILL the postmaster and every server process at once (what the kernel's OOM
        killer or a power cut leaves: WAL still in shared memory is gone, even from a
        stopped process) and start again on the same port, recovering from the WAL."""
        assert self._bindir is not None, "needs PostgreSQL server binaries"
        victims = self.processes()
        for victim in victims:
            with contextlib.suppress(psutil.NoSuchProcess):
                victim.kill()
        psutil.wait_procs(victims, timeout=30)
        started = self._pg_ctl_start()
        if started.returncode != 0:
            raise RuntimeError(
                f"PostgreSQL did not restart:\n{started.stdout}{started.stderr}{self._log_tail()}"
            )
        self.pid = self._read_pid()

    def _pg_ctl_start(self) -> subprocess.CompletedProcess[str]:
        assert self._bindir is not None
        options = [
            f"-p {self.port}",
            f"-c listen_addresses={self.host}",
            f"-c unix_socket_directories={self.socket_dir}",
        ] + [f"-c {k}={v}" for k, v in self.settings.items()]
        return self._run(
            [
                str(self._bindir / "pg_ctl"),
                "-D",
                str(self.data_dir),
                "-l",
                str(self.log_file),
                "-o",
                " ".join(options),
                "-w",
                "-t",
                "60",
                "start",
            ],
            check=False,
        )

    def stop(self) -> None:
        if self._pgserver is not None:
            with contextlib.suppress(Exception):
                self._pgserver.cleanup()
            self._pgserver = None
            return
        if self._bindir is not None and self.pid is not None:
            proc = self._run(
                [str(self._bindir / "pg_ctl"), "-D", str(self.data_dir), "-m", "immediate", "-w", "stop"],
                check=False,
            )
            if proc.returncode != 0:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGQUIT)
                pid = self.pid
                with contextlib.suppress(AssertionError):  # as good as it gets: forget it
                    wait_until(lambda: not _alive(pid), 10, "the postmaster to exit")
            self.pid = None
        if self._own_dir:
            shutil.rmtree(self.base_dir, ignore_errors=True)

    def __enter__(self) -> PostgresCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- internals ---------------------------------------------------------
    def _run(self, argv: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
        if os.geteuid() == 0:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=str(self.base_dir))
        if check and proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed:\n{proc.stdout}\n{proc.stderr}")
        return proc

    def _read_pid(self) -> int | None:
        try:
            return int((self.data_dir / "postmaster.pid").read_text().splitlines()[0])
        except (OSError, ValueError, IndexError):
            return None

    def _log_tail(self) -> str:
        try:
            return self.log_file.read_text()[-4000:]
        except OSError:
            return ""

    def _start_pgserver(self) -> PostgresCluster:
        import pgserver

        self._pgserver = pgserver.get_server(str(self.data_dir), cleanup_mode="stop")
        self._uri = str(self._pgserver.get_uri())
        return self

    def _pgserver_dsn(self, database: str) -> str:
        base, _, query = self._uri.partition("?")
        head, _, _ = base.rpartition("/")
        return f"{head}/{database}" + (f"?{query}" if query else "")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
