"""Process deaths: a killed worker, a killed scheduler. Nothing is lost, nothing
stays ASSIGNED/RUNNING, and (for the scheduler) nothing runs twice."""

from __future__ import annotations

import collections
import signal
from pathlib import Path
from typing import Any

import pytest
from support.waiting import wait_until

pytestmark = pytest.mark.acceptance


@pytest.mark.cluster(workers=1, concurrency=2)
def test_sigkill_worker_mid_task_retries_and_succeeds(cluster: Any, journal: Path) -> None:
    client = cluster.client()
    task = client.submit("journal", "victim", 30.0, first_run_only=True)
    wait_until(lambda: client.get(task.id).state.name == "RUNNING", 20, "the task to run")
    wait_until(lambda: "start victim" in journal.read_text(), 10, "the journal line")
    pids = cluster.worker_pids()
    assert pids, "no worker process found"
    for pid in pids:
        cluster.kill_pid(pid, signal.SIGKILL)
    final = client.wait(task.id, timeout=90)
    assert final.state.name == "SUCCESS", final
    assert final.attempt == 2
    assert journal.read_text().count("start victim") == 2
    assert cluster.count_tasks(states=("ASSIGNED", "RUNNING")) == 0


@pytest.mark.cluster(workers=1, concurrency=8)
def test_sigkill_scheduler_with_1000_queued(cluster: Any, journal: Path) -> None:
    client = cluster.client()
    ids: list[str] = []
    for start in range(0, 1000, 250):
        batch = [{"name": "journal", "args": [f"k{i}", 0.002]} for i in range(start, start + 250)]
        ids.extend(t.id for t in client.submit_many(batch))
    queued = cluster.count_tasks(states=("QUEUED",))
    assert queued > 500, f"only {queued} tasks were still queued: the kill tests nothing"
    cluster.kill("scheduler", signal.SIGKILL)
    cluster.start_service("scheduler")
    for task_id in ids:
        assert client.wait(task_id, timeout=120).state.name == "SUCCESS"
    runs = collections.Counter(
        line.split()[1] for line in journal.read_text().splitlines() if line.startswith("done ")
    )
    assert len(runs) == 1000
    twice = [k for k, n in runs.items() if n > 1]
    assert not twice, f"ran more than once: {twice[:10]}"
    assert cluster.count_tasks(states=("ASSIGNED", "RUNNING", "QUEUED")) == 0
