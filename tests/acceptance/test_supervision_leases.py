"""Leases across pools: real processes and signals.

- SIGKILL a pool's manager: its workers notice the closed pipe and exit within
  5 s (no orphans); its tasks run on another pool once their leases lapse (by
  the database's clock).
- A late completion: the whole pool is frozen (SIGSTOP) past the lease, its task
  is rescued and finishes on the other pool; thawed (SIGCONT), the old attempt's
  completion is refused by fencing and counted (taskyard_counters
  'late_completions'); the SUCCESS row is not touched.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from support import history
from support.history import row, wait_until

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(120)]

LEASES: dict[str, Any] = {"lease_seconds": 2.0, "renew_interval": 0.5, "workers": 1, "concurrency": 2}


def _start_pool_b(cluster: Any) -> None:
    cluster.start_service("worker-pool", instance="worker-pool-b", env={"TASKYARD_POOL_ID": "pool-b"})


def _late_completions(cluster: Any) -> int:
    rows = cluster.query("SELECT value FROM taskyard_counters WHERE name = 'late_completions'")
    return int(rows[0]["value"]) if rows else 0


def test_sigkill_manager_workers_exit_and_tasks_move(
    cluster_factory: Callable[..., Any], database_url: str, journal: Path
) -> None:
    cluster = history.supervised_cluster(cluster_factory, database_url, journal, **LEASES)
    client = cluster.client()
    workers = [psutil.Process(p) for p in cluster.wait_workers(1)]
    tasks = [client.submit("journal", f"m{i}", 1.0) for i in range(2)]
    wait_until(lambda: all(row(cluster, t.id)["state"] == "RUNNING" for t in tasks), 20, "tasks to run")
    cluster.kill("worker-pool", signal.SIGKILL)
    _, alive = psutil.wait_procs(workers, timeout=5)
    assert not alive, f"orphaned workers: {alive}"
    _start_pool_b(cluster)
    for t in tasks:
        final = client.wait(t.id, timeout=30)
        assert final.state.name == "SUCCESS" and final.attempt == 2, final
        assert final.worker_id.startswith("pool-b/"), final.worker_id
    history.check(cluster, [t.id for t in tasks])


def test_late_completion_is_refused_and_counted(
    cluster_factory: Callable[..., Any], database_url: str, journal: Path
) -> None:
    cluster = history.supervised_cluster(cluster_factory, database_url, journal, **LEASES)
    client = cluster.client()
    pool_pids = [cluster.pid("worker-pool"), *cluster.wait_workers(1)]
    task = client.submit("journal", "late", 3.0)
    wait_until(lambda: row(cluster, task.id)["state"] == "RUNNING", 20, "the task to run")
    for pid in pool_pids:
        cluster.kill_pid(pid, signal.SIGSTOP)
    try:
        _start_pool_b(cluster)
        final = client.wait(task.id, timeout=40)
        # Two charged attempts: the frozen one (rescued, started) and pool B's. A lease
        # the scheduler gave the frozen pool before it saw the pool leave lapses unstarted
        # and adds an uncharged attempt in between, depending on timing.
        assert final.state.name == "SUCCESS" and final.attempt - final.uncharged_attempts == 2, final
        assert final.worker_id.startswith("pool-b/")
        assert _late_completions(cluster) == 0
    finally:
        for pid in pool_pids:
            cluster.kill_pid(pid, signal.SIGCONT)
    wait_until(lambda: _late_completions(cluster) >= 1, 20, "the late completion to be counted")
    assert journal.read_text().splitlines().count("done late") == 2
    r = row(cluster, task.id)
    assert r["state"] == "SUCCESS" and r["attempt"] == final.attempt, r
    assert r["worker_id"].startswith("pool-b/"), r
    assert client.get(task.id).late_reports >= 1
    history.check(cluster, [task.id])
