"""A pool that reaches the scheduler but not the result-store gets no new work.

pool-b dials the store through a relay the test cuts (support/route.py): its
route to the scheduler works throughout, its starts, outcomes, renewals and
heartbeats reach no store. Whether the store has declared it lost or the pool
has only noticed that its requests go unanswered, every task submitted then
runs once, on pool-a, as its first attempt; once the route heals and a store
hears pool-b again, pool-b takes work again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from support.cluster import Cluster
from support.ports import BLOCK, free_port_block
from support.route import Route
from support.waiting import wait_until

pytestmark = pytest.mark.integration

ROUTED_HOST = "127.0.0.2"
# The store's ports a pool dials: queries, and the event streams.
STORE_PORT_OFFSETS = (4, 7, 8, 9)
SLEEP = 0.5
TASKS = 8
POOL_A = {"TASKYARD_POOL_ID": "pool-a"}
BEATING = {"TASKYARD_WORKER_HEARTBEAT_INTERVAL": "0.5"}


def start(cluster_factory: Callable[..., Cluster], *, lost_after: float) -> tuple[Cluster, Route]:
    first = free_port_block(BLOCK + 1)
    base = first + 1
    cluster = cluster_factory(
        start=False,
        transport="tcp",
        base_port=base,
        discovery_port=first,
        workers=1,
        concurrency=2,
        lease_seconds=2.0,
        renew_interval=0.5,
        pool_lost_after=lost_after,
    )
    route = Route(ROUTED_HOST, "127.0.0.1", [base + off for off in STORE_PORT_OFFSETS]).start()
    for service in ("result-store", "scheduler", "gateway"):
        cluster.start_service(service)
    cluster.start_service("worker-pool", env={**POOL_A, **BEATING})
    cluster.start_service(
        "worker-pool",
        instance="worker-pool-b",
        env={"TASKYARD_POOL_ID": "pool-b", "TASKYARD_STORE_HOST": ROUTED_HOST, **BEATING},
    )
    cluster.wait_ready()
    wait_until(lambda: pool_state(cluster, "pool-b") == "RUNNING", 30, "pool-b's heartbeat through the route")
    return cluster, route


def pool_state(cluster: Cluster, pool_id: str) -> str:
    rows = cluster.query("SELECT state FROM workers WHERE pool_id = $1", pool_id)
    return str(rows[0]["state"]) if rows else ""


def rows_of(cluster: Cluster, ids: list[str]) -> list[dict[str, Any]]:
    return cluster.query(
        "SELECT id::text AS id, state::text AS state, attempt, pool_id FROM tasks WHERE id = ANY($1::uuid[])",
        ids,
    )


def batch(cluster: Cluster, client: Any, tag: str) -> list[dict[str, Any]]:
    tasks = client.submit_many([{"name": "sleep", "args": [SLEEP]} for _ in range(TASKS)])
    for task in tasks:
        final = client.wait(task.id, timeout=60)
        assert final.state.name == "SUCCESS", (tag, final)
    return rows_of(cluster, [t.id for t in tasks])


def assert_only_pool_a(rows: list[dict[str, Any]]) -> None:
    # A lease to pool-b would have lapsed (nothing it ran could be reported) and
    # moved the attempt on: a first attempt on pool-a is a task pool-b never had.
    assert [(r["pool_id"], r["attempt"]) for r in rows] == [("pool-a", 1)] * TASKS, rows


def test_a_pool_declared_lost_gets_no_work_until_a_store_hears_it(
    cluster_factory: Callable[..., Cluster],
) -> None:
    cluster, route = start(cluster_factory, lost_after=3.0)
    client: Any = cluster.client()
    try:
        route.cut()
        wait_until(lambda: pool_state(cluster, "pool-b") == "STOPPED", 30, "the store to declare pool-b lost")
        assert_only_pool_a(batch(cluster, client, "cut"))

        route.heal()
        wait_until(lambda: pool_state(cluster, "pool-b") == "RUNNING", 30, "a store to hear pool-b again")
        wait_until(
            lambda: "pool pool-b heard by a result-store again" in cluster.log_text("scheduler"),
            30,
            "the scheduler to hear that pool-b is heard again",
        )
        rows = batch(cluster, client, "healed")
        assert "pool-b" in {r["pool_id"] for r in rows}, rows
    finally:
        client.close()
        route.close()


def test_a_pool_whose_reports_go_unanswered_takes_no_work_until_heard(
    cluster_factory: Callable[..., Cluster],
) -> None:
    # The store would declare it lost only after 10 minutes: what benches it here
    # is the pool's own word (its heartbeat went unanswered).
    cluster, route = start(cluster_factory, lost_after=600.0)
    client: Any = cluster.client()
    try:
        route.cut()
        wait_until(
            lambda: "cut off from the result-store" in cluster.log_text("worker-pool-b"),
            30,
            "pool-b to notice its requests go unanswered",
        )
        assert_only_pool_a(batch(cluster, client, "cut"))
        assert pool_state(cluster, "pool-b") == "RUNNING"  # not declared lost: the pool's word benched it

        route.heal()
        wait_until(
            lambda: "heard by the result-store again" in cluster.log_text("worker-pool-b"),
            30,
            "pool-b's heartbeat to be answered again",
        )
        rows = batch(cluster, client, "healed")
        assert "pool-b" in {r["pool_id"] for r in rows}, rows
    finally:
        client.close()
        route.close()
