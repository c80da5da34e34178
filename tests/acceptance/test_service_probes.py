"""The probes' ``/livez`` and ``/readyz`` on the ops port (TASKYARD_METRICS_PORT) of real
service processes: a worker-pool and a scheduler of a running suite answer both once
ready, beside their /metrics."""

from __future__ import annotations

import signal
from typing import Any

import pytest
from support import ports
from support.ports import http_status
from support.waiting import wait_until

pytestmark = pytest.mark.acceptance


def test_a_pool_and_a_scheduler_answer_their_probes(cluster: Any) -> None:
    pool_port, scheduler_port = ports.free_port(), ports.free_port()
    (pool,) = cluster.start_instances("worker-pool", [{"TASKYARD_METRICS_PORT": str(pool_port)}])
    assert http_status(pool_port, "/livez") == 200
    wait_until(lambda: http_status(pool_port, "/readyz") == 200, 10, "the pool ready")
    assert http_status(pool_port, "/nothing") == 404
    assert http_status(pool_port, "/metrics") == 200  # loopback, no token set: one port serves all

    cluster.kill("scheduler", signal.SIGTERM)
    cluster.start_service("scheduler", env={"TASKYARD_METRICS_PORT": str(scheduler_port)})
    wait_until(lambda: http_status(scheduler_port, "/readyz") == 200, 10, "the scheduler ready")
    assert http_status(scheduler_port, "/livez") == 200
    client = cluster.client()
    task = client.submit("add", 2, 3)
    assert client.wait(task.id, timeout=30).result == 5
    client.close()
    cluster.kill(pool, signal.SIGTERM)
    assert http_status(pool_port, "/livez") == 0  # gone with its process
