"""An attempt a pool hands back (a release: no free slot, a drain, a worker
respawn) is dispatched again at once, from the refs the store publishes after
the commit: not at the scheduler's fallback poll, not when its lease lapses."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support.waiting import wait_until

from taskyard.bus.v1 import leases_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import contract, rpc
from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = pytest.mark.acceptance

SLOW = 60.0  # fallback poll, rescue poll and lease: all far beyond the test


async def _report(address: str, report: leases_pb2.ReportRequest) -> leases_pb2.ReportReply:
    req = rpc.Requester(address, max_message_bytes=16 << 20, timeout=10)
    try:
        reply: leases_pb2.ReportReply = await req.call(contract.STORE_REPORT, report)
        return reply
    finally:
        req.close()


@pytest.mark.cluster(
    polling_interval=SLOW / 2, fallback_polling_interval=SLOW, lease_seconds=SLOW, renew_interval=1.0
)
def test_a_released_attempt_is_dispatched_again_at_once(cluster: Any) -> None:
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    spec = task_pb2.TaskSpec(name="noop")
    spec.countdown.FromSeconds(3600)  # SCHEDULED: left alone until we lease it below
    task_id = stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec), timeout=10).task.id
    wait_until(lambda: cluster.query("SELECT pool_id FROM workers"), 10, "the pool's heartbeat row")
    pool_id = cluster.query("SELECT pool_id FROM workers")[0]["pool_id"]
    # An attempt dispatched to the pool (as the scheduler would lease it). Its lease
    # time lies ahead so restart reconciliation can never be what frees it.
    cluster.query(
        "UPDATE tasks SET state = 'QUEUED', run_at = now() WHERE id = $1::uuid RETURNING id", task_id
    )
    cluster.query(
        "UPDATE tasks SET state = 'ASSIGNED', lease_token = 'tok-r', pool_id = $2, "
        "lease_expires_at = now() + interval '60 seconds', updated_at = now() + interval '1 hour' "
        "WHERE id = $1::uuid RETURNING id",
        task_id,
        pool_id,
    )

    # The pool hands it back (say its worker was respawning): no attempt burned.
    ref = tr.AttemptRef(task_id=task_id, attempt=1, lease_token="tok-r", worker_id=f"{pool_id}/w0:1")
    reply = asyncio.run(
        _report(
            cluster.settings.store_address, leases_pb2.ReportRequest(released=[leases_pb2.Release(ref=ref)])
        )
    )
    assert list(reply.released) == [task_id]

    # Within 10 s, where polls and its lease are 30 s and more away: the release itself requeued it.
    final = cluster.client().wait(task_id, timeout=10)
    assert final.state.name == "SUCCESS" and final.attempt == 2 and final.uncharged_attempts == 1
