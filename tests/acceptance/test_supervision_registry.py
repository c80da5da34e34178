"""The servers registry and the seed's commands.

- The workers table is kept complete and current: server name, max workers,
  concurrency, active/idle, running, last heartbeat, RSS, last dispatch, the
  pool's lifecycle state, and one JSON entry per worker process.
- ``taskyard queue start --workers N --concurrency C`` and ``taskyard serve
  --workers N --no-http`` run worker pools with those settings.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from support import history, ports
from support.history import wait_until

from taskyard.cli import procs

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(90)]


def _health(target: str) -> str:
    try:
        return procs.health_status(target)
    except grpc.RpcError:
        return "UNREACHABLE"


def _pool_row(cluster: Any, pool_id: str) -> Any:
    rows = cluster.query(
        "SELECT pool_id, server_name, state, max_workers, concurrency, capacity, active_workers,"
        " idle_workers, running, rss_bytes, last_heartbeat, last_dispatch_at, processes::text AS processes"
        " FROM workers WHERE pool_id = $1",
        pool_id,
    )
    return rows[0] if rows else None


def test_registry_row_is_complete_and_current(
    cluster_factory: Callable[..., Any], database_url: str, journal: Path
) -> None:
    import json

    cluster = history.supervised_cluster(
        cluster_factory, database_url, journal, workers=2, concurrency=3, env={"TASKYARD_POOL_ID": "pool-r"}
    )
    client = cluster.client()
    pids = cluster.wait_workers(2)
    r = wait_until(
        lambda: (
            (x := _pool_row(cluster, "pool-r")) and x["state"] == "RUNNING" and x["processes"] != "[]" and x
        ),
        10,
        "the pool's registry row",
    )
    assert r["server_name"] == "test-cluster" and r["max_workers"] == 2 and r["concurrency"] == 3
    assert r["capacity"] == 6 and r["rss_bytes"] > 0 and r["last_dispatch_at"] is None
    procs = json.loads(r["processes"])
    assert sorted(p["pid"] for p in procs) == sorted(pids)
    assert {tuple(sorted(p)) for p in procs} == {
        ("index", "last_beat_us", "pid", "rss_bytes", "running_tasks", "state")
    }
    wait_until(
        lambda: all(
            p["state"] == "idle" and p["last_beat_us"] > 0 and p["rss_bytes"] > 0
            for p in json.loads(_pool_row(cluster, "pool-r")["processes"])
        ),
        10,
        "beating idle workers",
    )
    task = client.submit("journal", "busy", 3.0)
    busy = wait_until(
        lambda: (x := _pool_row(cluster, "pool-r")) and x["running"] == 1 and x,
        10,
        "the registry to show the running task",
    )
    assert busy["active_workers"] == 1 and busy["idle_workers"] == 1 and busy["last_dispatch_at"] is not None
    assert sorted(p["state"] for p in json.loads(busy["processes"])) == ["busy", "idle"]
    assert client.wait(task.id, timeout=20).state.name == "SUCCESS"
    cluster.kill("worker-pool", signal.SIGTERM)
    wait_until(lambda: _pool_row(cluster, "pool-r")["state"] == "STOPPED", 10, "the STOPPED state")
    history.check(cluster, [task.id])


# The seed's variables alone (the cluster's TASKYARD_ names blanked so they apply).
SEED_ENV = {
    "TASKYARD_WORKERS": "",
    "TASKYARD_CONCURRENCY": "",
    "QUEUED_TASK_WORKERS": "2",
    "QUEUED_TASK_CONCURRENCY": "3",
}


@pytest.mark.parametrize(
    ("argv", "extra_env"),
    [
        (["queue", "start", "--workers", "2", "--concurrency", "3"], {}),
        (["serve", "--workers", "2", "--concurrency", "3", "--no-http"], {}),
        (["queue", "start"], SEED_ENV),
        (["serve", "--workers", "2", "--concurrency", "3"], {}),
    ],
    ids=["queue-start", "serve-no-http", "seed-env", "serve-with-gateway"],
)
def test_cli_runs_a_pool(
    cluster_factory: Callable[..., Any],
    database_url: str,
    journal: Path,
    argv: list[str],
    extra_env: dict[str, str],
) -> None:
    cluster = history.supervised_cluster(cluster_factory, database_url, journal)
    log = open(cluster.log_dir / "cli-pool.log", "wb")  # noqa: SIM115 - the child's log
    env = {**cluster.env, "TASKYARD_POOL_ID": "pool-cli", **extra_env}
    with_gateway = "serve" in argv and "--no-http" not in argv
    if with_gateway:  # a second gateway next to the cluster's, on ports of its own
        env["TASKYARD_GRPC_PORT"] = str(ports.free_port())
        env["TASKYARD_HTTP_PORT"] = str(ports.free_port())
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskyard.cli", *argv], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        r = wait_until(
            lambda: (x := _pool_row(cluster, "pool-cli")) and x["state"] == "RUNNING" and x,
            30,
            "the CLI's pool to register",
        )
        assert r["max_workers"] == 2 and r["concurrency"] == 3 and r["capacity"] == 6
        if with_gateway:
            target = f"127.0.0.1:{env['TASKYARD_GRPC_PORT']}"
            wait_until(lambda: _health(target) == "SERVING", 30, "the CLI's gateway")
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            assert proc.wait(timeout=20) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
            log.close()
    assert _pool_row(cluster, "pool-cli")["state"] == "STOPPED"
