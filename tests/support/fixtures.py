"""Pytest fixtures for real clusters. Load as a plugin from the root conftest::

    pytest_plugins = ["support.fixtures"]   # or "tests.support.fixtures", per sys.path

Needs the ``database_url`` fixture (a fresh migrated database per test) from
tests/conftest.py.

- ``cluster``: a started, ready ``Cluster`` with the test defaults, or with the
  overrides of ``@pytest.mark.cluster(workers=1, concurrency=2, ...)``. When the
  test also uses ``journal``, the pool loads ``support.tasks`` and gets
  TASKYARD_TEST_JOURNAL.
- ``journal``: the path of a journal file that ``support.tasks`` append to.
- ``cluster_factory(**overrides)``: start clusters with overrides (workers,
  concurrency, lease_seconds, env={...}, ...); all are stopped at teardown.
- ``module_cluster``: one started cluster with the test defaults, on a database of
  its own, for every test of a module (of a module's tests in one xdist worker) that
  asks for it. Only for tests that make objects of their own and look at those alone;
  ``print_logs_if_failed(cluster, request)`` at a test's teardown shows its logs.

Every cluster is stopped (SIGTERM, then SIGKILL by PID) even when the test
fails, and the tails of its service logs are printed when it does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from .cluster import TEST_DEFAULTS, Cluster, fork_services
from .postgres import PostgresCluster


def pytest_configure(config: pytest.Config) -> None:
    # TASKYARD_TEST_FORK_SERVER=0: every service as its own ``python -m`` (slower; to rule
    # the fork server out when a start misbehaves).
    fork_services(os.environ.get("TASKYARD_TEST_FORK_SERVER", "1") != "0")
    config.addinivalue_line(
        "markers",
        "cluster(**overrides): Settings overrides for the `cluster` fixture (workers=, concurrency=, ...)",
    )


GROUP_LOST = pytest.StashKey[str]()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Notice xdist_group tests that will not stay together: with --dist loadgroup,
    pytest-xdist moves a group's tests to one process through a suffix of their node IDs.
    When a pytest release stops taking that suffix, the groups spread silently, and each
    process sets up a group's costly module fixture again."""
    if not getattr(config.option, "loadgroup", False):
        return
    ungrouped = [
        item.nodeid for item in items if item.get_closest_marker("xdist_group") and "@" not in item.nodeid
    ]
    if ungrouped:
        config.stash[GROUP_LOST] = (
            f"--dist loadgroup did not group {len(ungrouped)} xdist_group tests: pytest {pytest.__version__} "
            "with this pytest-xdist loses the group in the node ID (pytest-dev/pytest-xdist#1386); "
            "pyproject.toml bounds pytest below the release that does"
        )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # Failed here, not at collection: a test process that fails its collection is
    # reported by xdist as a crash, without the reason.
    lost = item.config.stash.get(GROUP_LOST, None)
    if lost and item.get_closest_marker("xdist_group"):
        pytest.fail(lost, pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


def _failed(request: pytest.FixtureRequest) -> bool:
    node = request.node
    return any(getattr(getattr(node, f"rep_{when}", None), "failed", False) for when in ("setup", "call"))


@pytest.fixture
def cluster_factory(
    database_url: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Cluster]]:
    made: list[Cluster] = []

    def make(*, start: bool = True, ready_timeout: float = 45.0, **overrides: Any) -> Cluster:
        sub = tmp_path / f"cluster{len(made)}"
        c = Cluster(overrides.pop("database_url", database_url), sub, **overrides)
        made.append(c)
        if start:
            c.start()
            c.wait_ready(timeout=ready_timeout)
        return c

    try:
        yield make
    finally:
        for c in made:
            try:
                print_logs_if_failed(c, request)
            finally:
                c.stop()


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    path = tmp_path / "journal.log"
    path.touch()
    return path


@pytest.fixture
def cluster(cluster_factory: Callable[..., Cluster], request: pytest.FixtureRequest) -> Cluster:
    overrides: dict[str, Any] = {}
    for marker in reversed(list(request.node.iter_markers("cluster"))):
        overrides.update(marker.kwargs)
    if "journal" in request.fixturenames:
        journal_path: Path = request.getfixturevalue("journal")
        env = dict(overrides.pop("env", {}) or {})
        env["TASKYARD_TEST_JOURNAL"] = str(journal_path)
        overrides["env"] = env
        modules = overrides.get("task_modules", TEST_DEFAULTS["task_modules"])
        if isinstance(modules, str):
            modules = tuple(m for m in modules.split(",") if m)
        overrides["task_modules"] = tuple(dict.fromkeys([*modules, "support.tasks"]))
    return cluster_factory(**overrides)


@pytest.fixture(scope="module")
def module_cluster(
    pg_cluster: PostgresCluster,
    template_database: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Cluster]:
    with pg_cluster.cloned_database(template_database, prefix="m") as dsn:
        c = Cluster(dsn, tmp_path_factory.mktemp("module-cluster"))
        try:
            c.start()
            c.wait_ready(timeout=45.0)
            yield c
        finally:
            c.stop()


def print_logs_if_failed(c: Cluster, request: pytest.FixtureRequest) -> None:
    """What ``cluster_factory`` prints when its test fails, for a test on a shared cluster."""
    if _failed(request):
        print(f"\n--- service logs of the cluster at {c.target} ---\n{c.logs_tail()}")
