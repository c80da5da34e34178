"""Wedged event loops and timeouts: real processes.

- ``time.sleep`` inside an ``async def`` with a 1 s timeout blocks its worker's
  loop: asyncio cannot cancel it, the worker stops beating and is killed after
  2 x timeout, then replaced; a long ``def`` task in its thread is never killed
  while its worker beats.
- An idle worker that stops beating (SIGSTOP) is killed after the idle silence.
- Timeouts: an ``async def`` sleeping forever and a ``def`` busy-looping both end
  TimeoutError at their timeout; the sync one's worker is replaced after the
  grace; the pool keeps serving.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import history
from support.history import row, wait_until

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(90)]


def test_blocked_async_loop_is_killed_and_long_sync_is_not(
    cluster_factory: Callable[..., Any], database_url: str, journal: Path
) -> None:
    cluster = history.supervised_cluster(cluster_factory, database_url, journal, workers=2, concurrency=1)
    client = cluster.client()
    before = set(cluster.wait_workers(2))
    # A sync task much longer than the heartbeat interval, within its timeout.
    patient = client.submit("long_sync", 4.0, timeout=10)
    wait_until(lambda: row(cluster, patient.id)["state"] == "RUNNING", 20, "long_sync to run")
    wedged = client.submit("block_loop", 3600, timeout=1, max_retries=0)
    # Well before its hour: the wait's own timeout bounds it.
    final = client.wait(wedged.id, timeout=30)
    assert final.state.name == "FAILURE" and final.failure is not None, final
    assert final.failure.type == "WorkerProcessDied"
    # Killed after twice its timeout of silence (2 s), not before: the store's stamps, from
    # its acceptance to its end (its start stamp is the start notice's arrival, a little late).
    assert final.created_at is not None and final.finished_at is not None, final
    lived = (final.finished_at - final.created_at).total_seconds()
    assert lived >= 2.0, lived
    log = cluster.log_text("worker-pool")
    assert "busy and silent" in log and "killing" in log
    wait_until(lambda: len(set(cluster.worker_pids()) - before) == 1, 5, "the replacement worker")
    done = client.wait(patient.id, timeout=20)
    assert done.state.name == "SUCCESS" and done.attempt == 1, done
    history.check(cluster, [patient.id, wedged.id])


def test_idle_silent_worker_is_killed(
    cluster_factory: Callable[..., Any], database_url: str, journal: Path
) -> None:
    cluster = history.supervised_cluster(
        cluster_factory, database_url, journal, workers=1, concurrency=2, worker_idle_silence=1.5
    )
    (pid,) = cluster.wait_workers(1)
    cluster.kill_pid(pid, signal.SIGSTOP)
    assert wait_until(lambda: [p for p in cluster.worker_pids() if p != pid], 10, "a replacement")
    # Killed by the idle rule at its limit, for the silence the pool measured from its last beat.
    killed = re.search(
        rf"\(pid {pid}\) idle and silent for ([0-9.]+)s \(> ([0-9.]+)s\)", cluster.log_text("worker-pool")
    )
    assert killed is not None, cluster.logs_tail()
    silence, limit = float(killed.group(1)), float(killed.group(2))
    assert limit == 1.5 and silence >= limit, killed.group(0)
    client = cluster.client()
    ok = client.submit("add", 1, 1)
    assert client.wait(ok.id, timeout=20).result == 2
    history.check(cluster, [ok.id])


def test_timeouts_async_and_sync(
    cluster_factory: Callable[..., Any], database_url: str, journal: Path
) -> None:
    cluster = history.supervised_cluster(
        cluster_factory, database_url, journal, workers=1, concurrency=4, timeout_grace=0.5
    )
    client = cluster.client()
    (first_pid,) = cluster.wait_workers(1)
    sleeper = client.submit("forever_async", timeout=1, max_retries=0)
    spinner = client.submit("spin_sync", 3600, timeout=1, max_retries=0)
    lived = {}
    for t in (sleeper, spinner):
        # Ended at its timeout, not its hour: the wait's own timeout bounds it.
        final = client.wait(t.id, timeout=30)
        assert final.state.name == "FAILURE" and final.failure is not None, final
        assert final.failure.type == "TimeoutError", final.failure
        assert final.attempt == 1
        assert final.created_at is not None and final.finished_at is not None, final
        lived[t.id] = (final.finished_at - final.created_at).total_seconds()
    # Not before its timeout: the store's stamps, from its acceptance to its end.
    assert all(r >= 1.0 for r in lived.values()), lived
    # The busy-looping thread cannot be stopped: its worker is replaced after the grace.
    wait_until(lambda: "replacement" in cluster.log_text("worker-pool"), 10, "the replacement log line")
    wait_until(lambda: first_pid not in cluster.worker_pids(), 10, "the old worker to exit")
    ok = client.submit("add", 20, 22)
    assert client.wait(ok.id, timeout=20).result == 42
    history.check(cluster, [sleeper.id, spinner.id, ok.id])
