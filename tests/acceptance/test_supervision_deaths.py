"""Worker deaths mid-task: real worker processes, real signals.

- SIGKILL a worker holding a started and a not-yet-started attempt: both run
  again as attempt 2 (the unstarted one's spends no retry: uncharged), both end
  SUCCESS, and the worker is back within 2 s.
- A task that kills its worker every time is quarantined at the rescue cap
  (FAILURE, WorkerProcessDied, "quarantined") and the pool keeps serving.
Each test ends with the history check (support/history.py).
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import history
from support.history import row, wait_until

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(90)]


def test_sigkill_worker_started_and_unstarted(
    cluster_factory: Callable[..., Any], database_url: str, journal: Path
) -> None:
    cluster = history.supervised_cluster(cluster_factory, database_url, journal, workers=1, concurrency=2)
    client = cluster.client()
    (victim_pid,) = cluster.wait_workers(1)
    started = client.submit("journal", "started", 30.0, first_run_only=True)
    wait_until(lambda: "start started" in journal.read_text(), 20, "the first task to start")
    # Freeze the worker: the next dispatch reaches its pipe but is never started.
    cluster.kill_pid(victim_pid, signal.SIGSTOP)
    pending = client.submit("journal", "pending")
    wait_until(
        lambda: row(cluster, pending.id)["state"] == "ASSIGNED", 20, "the second task to be dispatched"
    )
    cluster.kill_pid(victim_pid, signal.SIGKILL)
    assert wait_until(
        lambda: [p for p in cluster.worker_pids() if p != victim_pid], 5, "a replacement worker"
    )
    a = client.wait(started.id, timeout=30)
    b = client.wait(pending.id, timeout=30)
    assert a.state.name == "SUCCESS" and a.attempt == 2, a
    assert b.state.name == "SUCCESS" and b.attempt == 2 and b.uncharged_attempts == 1, b
    assert a.uncharged_attempts == 0, a
    assert row(cluster, started.id)["rescues"] == 1 and row(cluster, pending.id)["rescues"] == 0
    lines = journal.read_text().splitlines()
    assert lines.count("start started") == 2 and lines.count("start pending") == 1
    history.check(cluster, [started.id, pending.id])


def test_task_killing_its_worker_is_quarantined(
    cluster_factory: Callable[..., Any], database_url: str, journal: Path
) -> None:
    # A retry budget larger than the rescue cap: the cap is what stops it.
    cluster = history.supervised_cluster(
        cluster_factory, database_url, journal, workers=1, concurrency=2, max_rescues=3, max_retries=10
    )
    client = cluster.client()
    crasher = client.submit("crash")
    final = client.wait(crasher.id, timeout=60)
    assert final.state.name == "FAILURE", final
    assert final.failure is not None and final.failure.type == "WorkerProcessDied"
    assert "quarantined" in final.failure.message
    r = row(cluster, crasher.id)
    assert r["rescues"] == 3 and r["attempt"] == 3, r
    # The pool keeps serving.
    ok = client.submit("add", 2, 3)
    assert client.wait(ok.id, timeout=30).result == 5
    assert "died" in cluster.log_text("worker-pool")
    history.check(cluster, [crasher.id, ok.id])
