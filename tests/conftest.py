"""Fixtures every test in the repo may use: a real PostgreSQL per session and a
fresh, fully migrated database per test (cloned from a template)."""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import os
import sys
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from support.postgres import PostgresCluster
from support.run_summary import conformance_section

# The real-cluster fixtures (`cluster`, `journal`, the `cluster` marker).
pytest_plugins = ["support.fixtures", "support.observability"]

T = TypeVar("T")
TESTS_DIR = Path(__file__).resolve().parent
# Each directory is a tier, and its tests carry its marker (pyproject.toml declares them).
TIERS = ("unit", "integration", "acceptance")
TEMPLATE_DB = "taskyard_template"
# Task names the store-level tests use (see store_settings).
STORE_TEST_NAMES = ("add", "echo", "noop", "quiet", "x", "a", "b", "c", "d")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    conformance_section(terminalreporter)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = item.path.resolve()
        if path.is_relative_to(TESTS_DIR):
            tier = path.relative_to(TESTS_DIR).parts[0]
            if tier in TIERS:
                item.add_marker(tier)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, even under a running loop."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as ex:
        return ex.submit(asyncio.run, coro).result()


async def _admin(dsn: str, *statements: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        for sql in statements:
            await conn.execute(sql)
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PostgresCluster]:
    """One PostgreSQL server for the whole session (TASKYARD_TEST_DATABASE_URL is not used)."""
    cluster = PostgresCluster().start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def template_database(pg_cluster: PostgresCluster) -> str:
    """The name of a database with every migration applied by the store's own code."""
    from taskyard.result_store.migrate import migrate_dsn

    run_sync(_admin(pg_cluster.dsn("postgres"), f'CREATE DATABASE "{TEMPLATE_DB}"'))
    run_sync(migrate_dsn(pg_cluster.dsn(TEMPLATE_DB)))
    return TEMPLATE_DB


@pytest.fixture
def database_url(pg_cluster: PostgresCluster, template_database: str) -> Iterator[str]:
    """A DSN to a brand-new database cloned from the migrated template, dropped afterwards."""
    with pg_cluster.cloned_database(template_database) as dsn:
        yield dsn


@pytest.fixture
def ipc_dir() -> Iterator[Path]:
    """A short directory for NNG ipc sockets (socket paths are limited to ~100 bytes)."""
    import shutil
    import tempfile

    d = Path(tempfile.mkdtemp(prefix="ty-", dir="/tmp"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def store_settings(database_url: str, ipc_dir: Path) -> Any:
    """Settings for a result-store on a fresh database, NNG over ipc in a temp dir.

    The task names store tests insert are declared, as a pool's heartbeat would
    declare them: the store refuses a name no pool ever declared.
    """
    from taskyard.core.config import Settings

    names = ",".join(f"('{n}')" for n in STORE_TEST_NAMES)
    run_sync(_admin(database_url, f"INSERT INTO task_names (name) VALUES {names} ON CONFLICT DO NOTHING"))
    return Settings(
        database_url=database_url,
        transport="ipc",
        ipc_dir=str(ipc_dir),
        db_pool_size=4,
        request_timeout=10.0,
    )


@pytest.fixture
async def result_store(store_settings: Any) -> Any:
    """A running in-process ResultStore (committer, listener, events PUB), no REP socket."""
    from taskyard.result_store.store import ResultStore

    store = await ResultStore.open(store_settings)
    store.start()
    try:
        yield store
    finally:
        await store.close()


os.environ.setdefault("TASKYARD_TRANSPORT", "ipc")
# Every test runs the internal bus sealed: its own sockets (core.seal reads this)
# and the clusters it starts (support.cluster passes it on) share one key.
os.environ.setdefault("TASKYARD_BUS_KEYS", f"test:{base64.b64encode(os.urandom(32)).decode()}")
