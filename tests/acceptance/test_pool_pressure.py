"""A worker pool under disk or memory pressure: what it does, and that nothing is lost.

- Its own log cannot be written (stdout and stderr on ``/dev/full``: every write fails
  with ENOSPC, as on a full disk): the pool still registers, runs every task, ships
  the tasks' own logs to the store, reports a killed worker's attempt and replaces it.
  The pool writes nothing else to disk (outcomes and logs go to the store over the bus).
- A worker that cannot allocate (an address-space limit on its process, as a container
  without swap gives): the task that asked for the memory fails with ``MemoryError``
  as its own failure, never retried into a loop, the neighbour on the same worker
  finishes, and the pool goes on taking work. Past ``worker_max_memory_mib`` the
  worker that survived the pressure is recycled, not killed (see
  test_supervision_memory_and_drain.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from support import history
from support.history import wait_until

from taskyard.cli import procs

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(120)]

MIB = 1024 * 1024


def test_a_pool_whose_log_cannot_be_written_runs_and_reports_everything(
    cluster_factory: Callable[..., Any], database_url: str, journal: Path
) -> None:
    history.install(database_url)
    cluster = cluster_factory(
        start=False,
        workers=2,
        concurrency=4,
        task_modules=(*history.SUPERVISION_MODULES,),
        env={"TASKYARD_TEST_JOURNAL": str(journal)},
        **history.SUPERVISION_DEFAULTS,
    )
    for service in ("result-store", "scheduler", "gateway"):
        cluster.start_service(service)
    with open("/dev/full", "wb") as full:
        pool = procs.spawn("worker-pool", cluster.env, stdout=full, stderr=full)
    cluster.procs["worker-pool"] = pool
    cluster.kinds["worker-pool"] = "worker-pool"
    cluster.wait_ready()
    client = cluster.client()

    ids = [t.id for t in client.submit_many([{"name": "journal", "args": [f"k{i}"]} for i in range(40)])]
    logged = client.submit("wide_lines", 50, 80)
    ids.append(logged.id)
    for task_id in ids:
        assert client.wait(task_id, timeout=30).state.name == "SUCCESS", task_id
    assert len(list(client.logs.follow(logged.id, timeout=30))) == 50, (
        "the task's own log did not reach the store"
    )

    # A death makes the manager log (a warning, to the full disk): it still reports
    # the attempt and spawns a replacement.
    slow = client.submit("journal_run", 30.0)
    line = wait_until(
        lambda: next((x for x in journal.read_text().splitlines() if x.startswith(f"run {slow.id} ")), None),
        30,
        "the long task to start running",
    )
    cluster.kill_pid(int(line.split()[3]))
    wait_until(
        lambda: history.row(cluster, slow.id)["attempt"] > 1, 30, "the killed worker's attempt reported"
    )
    wait_until(lambda: len(cluster.worker_pids()) == 2, 30, "a replacement worker")
    after = client.submit("add", 1, 2)
    assert client.wait(after.id, timeout=30).result == 3
    assert pool.poll() is None, "the pool died of its unwritable log"
    client.cancel(slow.id)
    history.check(cluster, [*ids, after.id])


def test_a_worker_that_cannot_allocate_fails_that_task_and_the_pool_goes_on(
    cluster_factory: Callable[..., Any], database_url: str, journal: Path
) -> None:
    cluster = history.supervised_cluster(cluster_factory, database_url, journal, workers=1, concurrency=2)
    client = cluster.client()
    (pid,) = cluster.wait_workers(1)
    worker = psutil.Process(pid)
    cap = worker.memory_info().vms + 100 * MIB
    worker.rlimit(psutil.RLIMIT_AS, (cap, cap))
    assert worker.rlimit(psutil.RLIMIT_AS) == (cap, cap)

    neighbour = client.submit("journal_run", 1.0)
    wait_until(
        lambda: history.row(cluster, neighbour.id)["state"] == "RUNNING", 30, "the neighbour to be running"
    )
    hog = client.submit("grow", 300, 0.1, max_retries=0)
    failed = client.wait(hog.id, timeout=30)
    assert failed.state.name == "FAILURE"
    assert failed.failure is not None and "MemoryError" in failed.failure.type, failed.failure
    assert client.wait(neighbour.id, timeout=30).state.name == "SUCCESS"
    assert cluster.worker_pids() == [pid], "the worker was lost to the pressure"
    again = client.submit("add", 2, 3)
    assert client.wait(again.id, timeout=30).result == 5
    history.check(cluster, [neighbour.id, hog.id, again.id])
