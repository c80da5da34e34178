"""A pool SIGKILLed says nothing on its way out: the store declares it lost once
its heartbeats have stopped for TASKYARD_POOL_LOST_AFTER, and WatchEvents says so."""

from __future__ import annotations

import signal
import threading
from typing import Any

import pytest
from support.waiting import wait_until

pytestmark = pytest.mark.acceptance


def pool_ids(cluster: Any) -> set[str]:
    return {r["pool_id"] for r in cluster.query("SELECT pool_id FROM workers WHERE state = 'RUNNING'")}


# Pools beat every 0.5 s here, and are lost after 5 s of silence (30 s after 5 s by default).
BEATING = {"TASKYARD_WORKER_HEARTBEAT_INTERVAL": "0.5"}


def test_a_killed_pool_is_lost_in_the_event_stream(cluster: Any) -> None:
    cluster.kill("worker-pool", signal.SIGTERM)
    cluster.kill("result-store", signal.SIGTERM)
    cluster.start_service("result-store", env={"TASKYARD_POOL_LOST_AFTER": "5"})
    cluster.start_service("worker-pool", env=BEATING)
    first = wait_until(lambda: pool_ids(cluster), 15, "the first pool's heartbeat")
    (extra,) = cluster.start_instances("worker-pool", [BEATING])
    (extra_id,) = wait_until(lambda: pool_ids(cluster) - first, 15, "the second pool's heartbeat")
    client = cluster.client()
    watch = client.events.watch(kinds=["pool"])
    seen: list[tuple[str, str]] = []

    def read() -> None:
        for event in watch:
            seen.append((event.type, event.pool_id))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        wait_until(lambda: watch.cursor, 10, "the watch to begin")
        cluster.kill(extra, signal.SIGKILL)
        wait_until(lambda: ("pool.lost", extra_id) in seen, 30, lambda: f"pool.lost of {extra_id}: {seen}")
        assert [e for e in seen if e[0] == "pool.lost"] == [("pool.lost", extra_id)]  # the live one beats on
        task = client.submit("add", 2, 3)
        assert client.wait(task.id, timeout=30).result == 5
        rows = cluster.query("SELECT state, is_running FROM workers WHERE pool_id = $1", extra_id)
        assert rows == [{"state": "STOPPED", "is_running": False}]
    finally:
        watch.close()
        client.close()
