"""A service told to stop while it is still starting stops cleanly (exit 0, its drain
run), however early the signal comes: each service right after spawn, and a pool at
each point of its start-up in a running cluster."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import history
from support.cluster import Cluster
from support.waiting import wait_until

from taskyard.cli import procs

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(180)]

# What each service logs once its stop has run to the end.
STOPPED_LINE = {
    "result-store": "result-store stopped",
    "scheduler": "scheduler stopping",
    "worker-pool": "worker-pool stopped",
    "gateway": "gateway stopped",
}
# A pool drain alone (no store to hand leases back to) takes a few seconds; a signal
# lost or a drain stuck would show as a process still running at this bound.
STOP_BOUND = 30.0


def _stop_and_wait(proc: procs.Child) -> tuple[int, float]:
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=STOP_BOUND)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, time.monotonic() - started


@pytest.mark.parametrize("service", list(procs.START_ORDER))
def test_each_service_stops_cleanly_when_told_right_after_spawn(
    cluster_factory: Callable[..., Cluster], service: str
) -> None:
    # The cluster's environment only: each service runs alone, so nothing else answers it.
    cluster = cluster_factory(start=False)
    log_path = cluster.log_dir / f"{service}.log"
    with open(log_path, "wb") as log:
        proc = procs.spawn(service, cluster.env, stdout=log, stderr=subprocess.STDOUT)
        code, took = _stop_and_wait(proc)
    output = log_path.read_text(errors="replace")
    assert code == 0, f"{service} exited with {code} after {took:.1f}s:\n{output}"
    assert STOPPED_LINE[service] in output, output


def _log_has(path: Path, needle: str) -> bool:
    return path.exists() and needle in path.read_text(errors="replace")


# Points of a pool's start-up, by the line it logs there (None: right after spawn,
# before its event loop runs): about to spawn its workers, between two spawns,
# registered but not yet RUNNING, and just RUNNING (discovery and the heartbeat starting).
POOL_START_POINTS: list[str | None] = [
    None,
    "starting:",
    "worker 0 started",
    "registered with scheduler",
    "worker-pool ready",
]


def test_a_pool_stops_cleanly_at_each_point_of_its_start(
    cluster_factory: Callable[..., Cluster], database_url: str, journal: Path
) -> None:
    cluster = history.supervised_cluster(cluster_factory, database_url, journal)
    for n, point in enumerate(POOL_START_POINTS):
        pool_id = f"pool-early-{n}"
        cluster.start_service(
            "worker-pool",
            instance=pool_id,
            wait_log=None,
            env={"TASKYARD_POOL_ID": pool_id, "TASKYARD_WORKERS": "2"},
        )
        log_path = cluster.log_path(pool_id)
        if point is not None:
            wait_until(
                lambda path=log_path, p=point: _log_has(path, p), 30, f"{pool_id} to log {point!r}", 0.005
            )
        code, took = _stop_and_wait(cluster.procs[pool_id])
        output = log_path.read_text(errors="replace")
        assert code == 0, f"{pool_id} told at {point!r}: exit {code} after {took:.1f}s\n{output}"
        assert "worker-pool stopped" in output, output
        row: Any = cluster.query("SELECT state FROM workers WHERE pool_id = $1", pool_id)
        if point in ("registered with scheduler", "worker-pool ready"):
            assert row and row[0]["state"] == "STOPPED", (point, row)
