"""The servers every system of a round shares: one durable PostgreSQL and, for Celery,
one redis-server."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from support.postgres import PostgresCluster, free_port, server_bindir

from .accounting import ProcessMap, tree
from .child import spawn, stop_children
from .extras import INSTALL_HINT, redis_module

# A crash must not lose a committed job of any system: the settings of a real deployment.
DURABLE = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}
POSTGRES = "postgres"


class Postgres:
    """One durable server for every system; each run gets a database of its own."""

    def __init__(self, work: Path) -> None:
        self._cluster = PostgresCluster(work / "postgres", settings=DURABLE)

    def start(self) -> None:
        # Not pgserver's fallback: the postmaster's PID is how its CPU is counted.
        if server_bindir() is None:
            raise SystemExit(
                "bench/compare needs PostgreSQL server binaries (pg_config --bindir): "
                "tools/install-tools.sh postgres"
            )
        self._cluster.start()

    def stop(self) -> None:
        self._cluster.stop()

    def dsn(self, database: str) -> str:
        return self._cluster.dsn(database)

    def processes(self) -> ProcessMap:
        assert self._cluster.pid is not None
        return tree(self._cluster.pid, POSTGRES, POSTGRES)

    def admin(self, *statements: str) -> None:
        async def run() -> None:
            import asyncpg

            conn = await asyncpg.connect(self.dsn("postgres"))
            try:
                for sql in statements:
                    await conn.execute(sql)
            finally:
                await conn.close()

        asyncio.run(run())

    @contextlib.contextmanager
    def database(self, name: str) -> Iterator[str]:
        self.admin(f'CREATE DATABASE "{name}"')
        try:
            yield self.dsn(name)
        finally:
            # Gone before the next run, so its autovacuum cannot land in another window.
            self.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def checkpoint(self) -> None:
        """Flush what earlier runs left dirty, so their writes are not charged to the next."""
        self.admin("CHECKPOINT")


class Redis:
    """redis-server as Debian ships it, on a free loopback port: its default snapshots
    (RDB every so many changes), no AOF, so an acknowledged Celery task is not durable."""

    def __init__(self, work: Path) -> None:
        self.dir = work / "redis"
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit(f"celery: redis-server is not installed; {INSTALL_HINT}")
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self._log = open(self.dir / "redis.log", "ab")  # noqa: SIM115 - the child's log
        self.proc = spawn(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.dir),
            ],
            self._log,
        )
        client = redis_module().Redis(port=self.port)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except Exception:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise SystemExit(f"redis-server did not start; see {self.dir / 'redis.log'}") from None
                time.sleep(0.05)
        client.close()

    def flush(self) -> None:
        """Each run starts on empty broker and results databases."""
        client = redis_module().Redis(port=self.port)
        client.flushall()
        client.close()

    def stop(self) -> None:
        if self.proc is not None:
            stop_children([self.proc])
        if self._log is not None:
            self._log.close()

    def processes(self) -> ProcessMap:
        return {self.proc.pid: "redis-server"} if self.proc is not None else {}


@dataclasses.dataclass
class Servers:
    postgres: Postgres
    redis: Redis | None
