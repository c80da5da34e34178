"""Delivery contract: an acknowledged submission survives a PostgreSQL crash and
restart, and the suite recovers by itself (no process is restarted by hand)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import grpc
import pytest
from support.cluster import Cluster
from support.postgres import PostgresCluster, server_bindir
from support.waiting import wait_until

from taskyard.client import TaskInfo, TaskyardError

pytestmark = pytest.mark.acceptance

T = TypeVar("T")


def _through_outage(call: Callable[[], T], timeout: float = 60.0) -> T:
    """Retry a call that fails with UNAVAILABLE while the database is coming back."""

    def answered() -> tuple[T] | None:
        try:
            return (call(),)
        except TaskyardError as exc:
            if exc.code != grpc.StatusCode.UNAVAILABLE:
                raise
            return None

    (value,) = wait_until(answered, timeout, "an answer other than UNAVAILABLE", interval=0.2)
    return value


@pytest.mark.skipif(server_bindir() is None, reason="needs PostgreSQL server binaries to crash and restart")
def test_acknowledged_tasks_survive_a_postgresql_crash(tmp_path: Path) -> None:
    # Durable commits for this one: the shared test server trades them for speed.
    pg = PostgresCluster(settings={"synchronous_commit": "on"}).start()
    try:
        with Cluster(pg.dsn("postgres"), tmp_path, workers=1, concurrency=4, request_timeout=3.0) as cluster:
            client = cluster.client()
            acked = [
                t.id for t in client.submit_many([{"name": "sleep", "args": [0.01]} for _ in range(300)])
            ]
            assert cluster.count_tasks(states=("QUEUED",)) > 0, "nothing was waiting: the crash tests less"
            pg.restart()
            finals: list[TaskInfo] = [
                _through_outage(functools.partial(client.wait, task_id, timeout=60)) for task_id in acked
            ]
            assert [t.state.name for t in finals] == ["SUCCESS"] * len(acked)
            assert cluster.count_tasks() == len(acked)
            assert cluster.count_tasks(states=("QUEUED", "ASSIGNED", "RUNNING", "RETRYING")) == 0
    finally:
        pg.stop()
