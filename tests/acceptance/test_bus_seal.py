"""The internal bus is a door too: a process that reaches the store's NNG port
without the cluster's key cannot lease or report, and a tampered or replayed
message is refused as well. Each refusal is dropped, counted in the store's
``bus_messages_refused`` counters and logged without its content.

The cluster runs sealed with the test session's key (support.cluster); this
test's forger speaks raw NNG, byte for byte what an intruder would send."""

from __future__ import annotations

import asyncio
import base64
import os
import time
from typing import Any, TypeVar

import pynng
import pytest
from google.protobuf.message import Message
from support.cluster import SERVICES
from support.waiting import wait_until

from taskyard.bus.v1 import counters_pb2, leases_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import contract, rpc, seal, transport
from taskyard.core.priority import Priority
from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = pytest.mark.acceptance

SLOW = 60.0  # fallback poll, rescue poll and lease: the scheduler leaves our task alone
# How long a refused request goes unanswered before the forger gives up.
NO_REPLY = 1.0
FORGED_RESULT = b'"FORGED-RESULT-7f3a"'
Rq = TypeVar("Rq", bound=Message)


def request(method: contract.Method[Rq, Any], message: Rq) -> bytes:
    """A well-formed request envelope of ``method``, unsealed (what the forger seals, or not)."""
    return transport.encode(method.kind, message)


async def _send_raw(address: str, data: bytes, within: float = NO_REPLY) -> bytes | None:
    """One request over a plain REQ socket (no seal applied): the reply's clear
    bytes, or None when the store never answers."""
    sock = pynng.Req0(recv_max_size=16 << 20, recv_timeout=int(within * 1000))
    try:
        sock.dial(address, block=True)
        await sock.asend(data)
        try:
            raw = await sock.arecv()
        except pynng.Timeout:
            return None
    finally:
        sock.close()
    clear = seal.current().open(raw, None)
    assert clear is not None, "the store's reply is sealed with the cluster key"
    return clear


def send_raw(address: str, data: bytes) -> bytes | None:
    return asyncio.run(_send_raw(address, data))


async def _counters(address: str) -> dict[str, int]:
    req = rpc.Requester(address, max_message_bytes=16 << 20, timeout=10)
    try:
        reply = await req.call(contract.STORE_COUNTERS, counters_pb2.CountersRequest())
        return dict(reply.values)
    finally:
        req.close()


def wait_counters(address: str, expected: dict[str, int], timeout: float = 10.0) -> dict[str, int]:
    got: dict[str, int] = {}

    def reached() -> bool:
        nonlocal got
        got = asyncio.run(_counters(address))
        return all(got.get(k, 0) == v for k, v in expected.items())

    wait_until(reached, timeout, lambda: f"counters to reach {expected} (at {got})", interval=0.1)
    return got


def other_seal(kid: str) -> seal.Seal:
    """A seal with a key the cluster does not hold, under ``kid``."""
    return seal.Seal(seal.Keyring.parse(f"{kid}:{base64.b64encode(os.urandom(32)).decode()}"))


def wait_log(cluster: Any, service: str, needle: str, timeout: float = 10.0) -> None:
    wait_until(
        lambda: needle in cluster.log_path(service).read_text(errors="replace"),
        timeout,
        f"{service} to log {needle!r}",
    )


def task_row(cluster: Any, task_id: str) -> dict[str, Any]:
    rows = cluster.query(
        "SELECT state, lease_token, pool_id, attempt FROM tasks WHERE id = $1::uuid", task_id
    )
    return dict(rows[0])


@pytest.mark.cluster(
    polling_interval=SLOW / 2, fallback_polling_interval=SLOW, lease_seconds=SLOW, renew_interval=1.0
)
def test_forged_lease_and_report_without_the_key_are_refused_and_the_real_result_stands(
    cluster: Any,
) -> None:
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    spec = task_pb2.TaskSpec(name="add")
    spec.args.extend([2, 3])
    spec.countdown.FromSeconds(3600)  # SCHEDULED: nobody dispatches it until we say so
    task_id = stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec), timeout=10).task.id
    # QUEUED behind the scheduler's back (an UPDATE sends no NOTIFY): leasable by anyone
    # who may speak to the store, which is what the forger tries.
    cluster.query(
        "UPDATE tasks SET state = 'QUEUED', run_at = now() WHERE id = $1::uuid RETURNING id", task_id
    )
    address = cluster.settings.store_address
    signer = seal.current().keyring.signer

    lease = request(
        contract.STORE_LEASE,
        leases_pb2.LeaseTasksRequest(
            pool_id="intruder",
            lease_ms=600_000,
            leases=[leases_pb2.Lease(task_id=task_id, lease_token="tok-forged")],
        ),
    )
    ref = tr.AttemptRef(task_id=task_id, attempt=1, lease_token="tok-forged", worker_id="intruder/w0:1")
    report = request(
        contract.STORE_REPORT,
        leases_pb2.ReportRequest(
            completed=[
                leases_pb2.Completion(
                    ref=ref, success=True, result_json=FORGED_RESULT, started_at_us=int(time.time() * 1e6)
                )
            ]
        ),
    )
    # No key, a wrong secret under the cluster's key id, a key id the cluster never had.
    for forged in (lease, report):
        assert send_raw(address, forged) is None
        assert send_raw(address, other_seal(signer).seal(forged)) is None
        assert send_raw(address, other_seal("intruder").seal(forged)) is None
    row = task_row(cluster, task_id)
    assert (row["state"], row["lease_token"] or "", row["pool_id"] or "") == ("QUEUED", "", ""), row

    # The same bytes sealed with the cluster's key are a well-formed request: the
    # refusals above are the seal's, not a malformed message's.
    probe = request(contract.STORE_COUNTERS, contract.STORE_COUNTERS.request(names=["x"]))
    answered = send_raw(address, seal.current().seal(probe))
    assert answered is not None and not transport.decode(answered).HasField("error")

    counted = wait_counters(
        address,
        {
            "bus_messages_refused": 6,
            "bus_messages_refused.unsigned": 2,
            "bus_messages_refused.bad_mac": 2,
            "bus_messages_refused.unknown_key": 2,
        },
    )
    assert counted.get("bus_messages_refused.replayed", 0) == 0

    # Let the real system run it: the store's NOTIFY wakes the scheduler, a pool runs it.
    cluster.query("SELECT pg_notify($1, '')::text AS sent", cluster.settings.notify_channel)
    final = cluster.client().wait(task_id, timeout=20)
    assert final.state.name == "SUCCESS" and final.result == 5 and final.attempt == 1

    # Every service refuses and tells: an unsealed submit to a scheduler lane, read
    # back from the scheduler's log (its counts are per process; the log is their outlet).
    lane = cluster.settings.lane_address(Priority.NORMAL)
    submit = request(contract.SUBMIT, contract.SUBMIT.request())
    assert send_raw(lane, submit) is None
    listener = cluster.settings.lane_listen_address(Priority.NORMAL)
    wait_log(cluster, "scheduler", f"refused internal message(s) on {listener}: unsigned=1")

    logs = "".join(cluster.log_path(s).read_text(errors="replace") for s in SERVICES)
    assert "FORGED-RESULT" not in logs and "intruder" not in logs, "refusals are logged without content"


@pytest.mark.cluster(
    polling_interval=SLOW / 2, fallback_polling_interval=SLOW, lease_seconds=SLOW, renew_interval=1.0
)
def test_tampered_and_replayed_reports_are_refused_and_counted(cluster: Any) -> None:
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    spec = task_pb2.TaskSpec(name="noop")
    spec.countdown.FromSeconds(3600)
    task_id = stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec), timeout=10).task.id
    rows = wait_until(lambda: cluster.query("SELECT pool_id FROM workers"), 10, "the pool's heartbeat row")
    pool_id = rows[0]["pool_id"]
    # An attempt leased to the pool, as the scheduler would (updated_at ahead: restart
    # reconciliation can never be what ends it).
    cluster.query(
        "UPDATE tasks SET state = 'QUEUED', run_at = now() WHERE id = $1::uuid RETURNING id", task_id
    )
    cluster.query(
        "UPDATE tasks SET state = 'ASSIGNED', lease_token = 'tok-real', pool_id = $2, "
        "lease_expires_at = now() + interval '60 seconds', updated_at = now() + interval '1 hour' "
        "WHERE id = $1::uuid RETURNING id",
        task_id,
        pool_id,
    )
    address = cluster.settings.store_address
    ref = tr.AttemptRef(task_id=task_id, attempt=1, lease_token="tok-real", worker_id=f"{pool_id}/w0:1")

    def completion(result: bytes) -> bytes:
        c = leases_pb2.Completion(
            ref=ref, success=True, result_json=result, started_at_us=int(time.time() * 1e6)
        )
        return request(contract.STORE_REPORT, leases_pb2.ReportRequest(completed=[c]))

    # The pool's genuine report, sealed with the cluster key, as it crosses the network.
    genuine = seal.current().seal(completion(b'{"sum": 5}'))
    at = genuine.index(b"5}")
    tampered = bytearray(genuine)
    tampered[at] ^= 0x01  # {"sum": 4}
    assert send_raw(address, bytes(tampered)) is None
    assert task_row(cluster, task_id)["state"] == "ASSIGNED"

    answered = send_raw(address, genuine)
    assert answered is not None
    reply = transport.unpack(transport.decode(answered), contract.STORE_REPORT.reply)
    assert list(reply.completed) == [task_id]

    # Captured and sent again: refused, even though it is byte for byte valid.
    assert send_raw(address, genuine) is None
    counted = wait_counters(
        address,
        {"bus_messages_refused": 2, "bus_messages_refused.bad_mac": 1, "bus_messages_refused.replayed": 1},
    )
    assert counted.get("bus_messages_refused.unsigned", 0) == 0
    final = cluster.client().get(task_id)
    assert final.state.name == "SUCCESS" and final.result == {"sum": 5}
