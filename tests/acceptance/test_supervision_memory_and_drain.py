"""Memory recycling and SIGTERM under load: real processes.

- A task that leaks past QUEUED_TASK_WORKER_MAX_MEMORY (the seed's variable):
  its worker finishes it, is told to stop over the pipe and is replaced; the
  log says replacement, not death; nothing is interrupted.
- SIGTERM with 200 tasks running or queued: the pool exits within its grace,
  nothing is lost or left RUNNING, re-queued tasks carry resume_requested and
  run again as a new attempt that spends no retry (their bodies ran); after a
  restart everything ends SUCCESS.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import history
from support.history import row, wait_until

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(120)]


def test_worker_past_memory_limit_is_replaced(
    cluster_factory: Callable[..., Any], database_url: str, journal: Path
) -> None:
    cluster = history.supervised_cluster(
        cluster_factory,
        database_url,
        journal,
        workers=1,
        concurrency=2,
        # The seed's variable (the cluster's own TASKYARD_ name is blanked so it applies).
        env={"TASKYARD_WORKER_MAX_MEMORY": "", "QUEUED_TASK_WORKER_MAX_MEMORY": "200"},
    )
    client = cluster.client()
    (pid,) = cluster.wait_workers(1)
    neighbour = client.submit("journal", "neighbour", 2.0)
    leak = client.submit("grow", 300, 1.0)
    assert client.wait(leak.id, timeout=30).state.name == "SUCCESS"
    # The neighbour on the same worker was not interrupted.
    n = client.wait(neighbour.id, timeout=30)
    assert n.state.name == "SUCCESS" and n.attempt == 1
    wait_until(lambda: pid not in cluster.worker_pids() and cluster.worker_pids(), 10, "the replacement")
    log = cluster.log_text("worker-pool")
    assert "recycling: resident memory" in log and "replacement" in log
    assert "died" not in log
    ok = client.submit("add", 1, 2)
    assert client.wait(ok.id, timeout=20).result == 3
    history.check(cluster, [neighbour.id, leak.id, ok.id])


def test_sigterm_under_load_then_restart(
    cluster_factory: Callable[..., Any], database_url: str, journal: Path
) -> None:
    cluster = history.supervised_cluster(
        cluster_factory, database_url, journal, workers=2, concurrency=10, shutdown_timeout=3.0
    )
    client = cluster.client()
    tasks = client.submit_many([{"name": "journal", "args": [f"k{i}", 0.5]} for i in range(200)])
    ids = [t.id for t in tasks]
    wait_until(lambda: cluster.count_tasks(states=("RUNNING",)) >= 10, 20, "tasks to run")
    code = cluster.kill("worker-pool", signal.SIGTERM, timeout=20)
    assert code == 0, code
    # It stopped without working through the queue: the drain took no new work, so
    # most of the 200 (seconds of work for its 20 slots) never started.
    never_started = cluster.query(
        "SELECT count(*) AS n FROM tasks WHERE state = 'QUEUED' AND attempt = 1 AND started_at IS NULL"
    )[0]["n"]
    assert never_started > 0, "the drain ran the whole queue before it stopped"
    left = cluster.query(
        "SELECT id::text AS id, state::text AS state, attempt, pool_id, lease_token, resume_requested"
        " FROM tasks WHERE state IN ('RUNNING', 'ASSIGNED')"
    )
    assert not left, f"{len(left)} tasks still leased after the drain, e.g. {left[:3]}"
    resumed = cluster.query(
        "SELECT id::text AS id, attempt, uncharged_attempts FROM tasks"
        " WHERE resume_requested AND state = 'QUEUED'"
    )
    assert resumed, "no in-flight task was re-queued by the drain"
    assert all(r["attempt"] == 2 and r["uncharged_attempts"] == 1 for r in resumed), resumed
    assert "draining" in cluster.log_text("worker-pool")
    cluster.start_service("worker-pool")
    for task_id in ids:
        assert client.wait(task_id, timeout=60).state.name == "SUCCESS"
    for r in resumed:
        assert row(cluster, r["id"])["attempt"] == 2  # a new attempt; the drain burned no retry
    history.check(cluster, ids)
