"""A restarted scheduler hands back the leases its predecessor issued that no pool
holds (scheduler/reconciler.py), instead of letting them lapse; the leases of a
pool that is not there at all are left to lapse."""

from __future__ import annotations

import signal
from typing import Any

import pytest
from support.waiting import wait_until

from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = pytest.mark.acceptance

LEASE = 30.0  # far beyond the test: a task that waited for its lease would time out


@pytest.mark.cluster(lease_seconds=LEASE, renew_interval=0.5)
def test_restart_releases_leases_that_no_answering_pool_holds(cluster: Any) -> None:
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    specs = []
    for _ in range(2):
        spec = task_pb2.TaskSpec(name="noop")
        spec.countdown.FromSeconds(3600)  # SCHEDULED: nobody touches them meanwhile
        specs.append(spec)
    reply = stub.BatchSubmitTasks(task_service_pb2.BatchSubmitTasksRequest(tasks=specs), timeout=10)
    orphan, gone = (t.id for t in reply.tasks)
    wait_until(lambda: cluster.query("SELECT pool_id FROM workers"), 10, "the pool's heartbeat row")
    pool_id = cluster.query("SELECT pool_id FROM workers")[0]["pool_id"]

    cluster.kill("scheduler", signal.SIGKILL)
    # What the dead scheduler left: leased (5 s before its successor starts), never
    # sent. One lease is for the live pool, one for a pool that no longer exists.
    cluster.query(
        "UPDATE tasks SET state = 'QUEUED', run_at = now() WHERE id = ANY($1::uuid[]) RETURNING id",
        [orphan, gone],
    )
    cluster.query(
        "UPDATE tasks SET state = 'ASSIGNED', lease_token = 'tok-' || id::text, "
        "pool_id = CASE WHEN id = $1::uuid THEN $3 ELSE 'pool-gone' END, "
        "lease_expires_at = now() + interval '30 seconds', updated_at = now() - interval '5 seconds' "
        "WHERE id = ANY(ARRAY[$1::uuid, $2::uuid]) RETURNING id",
        orphan,
        gone,
        pool_id,
    )
    cluster.start_service("scheduler")

    # Within 10 s of a 30 s lease: released, not waited out.
    wait_until(
        lambda: cluster.count_tasks(states=("SUCCESS",)) == 1, 10, "the orphaned lease to be run again"
    )
    rows = {
        r["id"]: r
        for r in cluster.query(
            "SELECT id::text AS id, state::text AS state, attempt, lease_token, pool_id FROM tasks "
            "WHERE id = ANY($1::uuid[])",
            [orphan, gone],
        )
    }
    # A new attempt (the lost dispatch may have run unseen), no retry burned.
    assert rows[orphan]["state"] == "SUCCESS" and rows[orphan]["attempt"] == 2
    # The gone pool never answered: its lease is left to lapse.
    assert rows[gone]["state"] == "ASSIGNED" and rows[gone]["lease_token"] == f"tok-{gone}"
    assert "released 1 leases no pool holds (issued by a previous scheduler)" in cluster.log_text("scheduler")
