"""Keys per role in a real suite: each service started with its own keyring, as
``taskyard dev`` hands them out (its own role's key, which signs, and the keys it
verifies). Tasks still run end to end, child tasks a pool submits included, and the
store refuses a worker pool's key what only a scheduler may ask (insert, lease),
unanswered, counted and logged, while it takes the same request from the scheduler's."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from google.protobuf.message import Message
from support.cluster import Cluster
from support.waiting import wait_until

from taskyard.bus.v1 import counters_pb2, leases_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.cli import bus_key, procs
from taskyard.core import contract, errors, roles, rpc, seal

pytestmark = pytest.mark.integration

# The scheduler leaves our leased attempt alone (no poll, no rescue while we look).
SLOW = 60.0
NO_REPLY = 1.0


@pytest.fixture
def own_seal() -> Iterator[None]:
    """The test's sockets take the process's seal when they open: put the session's back."""
    before = seal.current()
    yield
    seal.install(before)


def _requester(keys: str, role: str, address: str) -> rpc.Requester:
    """A requester signing with ``role``'s key (the socket keeps the seal it opened with)."""
    seal.install(seal.Seal(seal.Keyring.parse(keys).signing_as(role), role=role))
    return rpc.Requester(address, max_message_bytes=16 << 20, timeout=NO_REPLY)


async def _ask(
    keys: str, role: str, address: str, method: contract.Method[Any, Any], request: Message
) -> str:
    req = _requester(keys, role, address)
    try:
        reply = await req.call(method, request)
        return f"answered {type(reply).__name__}"
    except errors.TaskyardError as exc:
        return "no reply" if "no reply from" in str(exc) else str(exc)
    finally:
        req.close()


def _counters(keys: str, address: str) -> dict[str, int]:
    async def read() -> dict[str, int]:
        req = _requester(keys, roles.GATEWAY, address)
        try:
            reply = await req.call(contract.STORE_COUNTERS, counters_pb2.CountersRequest())
            return dict(reply.values)
        finally:
            req.close()

    return asyncio.run(read())


@pytest.mark.usefixtures("own_seal")
def test_a_suite_with_a_key_per_role_runs_tasks_and_refuses_a_pools_insert_and_lease(
    cluster_factory: Callable[..., Cluster],
) -> None:
    keys = seal.generate_role_keys("it")
    cluster: Cluster = cluster_factory(
        start=False,
        bus_keys=keys,
        polling_interval=SLOW / 2,
        fallback_polling_interval=SLOW,
        lease_seconds=SLOW,
    )
    for service in procs.START_ORDER:
        cluster.start_service(service, env={"TASKYARD_BUS_KEYS": bus_key.service_keys(keys, service)})
    cluster.wait_ready(timeout=45)
    for service in procs.START_ORDER:
        assert f"signing key it-{service} of role {service}" in cluster.log_text(service), service
    # A pool holds its own key alone: what reaches it comes under it.
    assert "signing key it-worker-pool of role worker-pool, 1 key(s) verify" in cluster.log_text(
        "worker-pool"
    )

    # End to end: a task, and a parent whose pool submits its children through a lane.
    client = cluster.client()
    assert client.wait(client.submit("add", 2, 3).id, timeout=30).result == 5
    parent = client.wait(client.submit("fan_out", 2).id, timeout=30)
    assert parent.state.name == "SUCCESS", parent
    assert [client.wait(child, timeout=30).result for child in parent.result] == [0, 2]

    # A task the scheduler will not touch while we look: SCHEDULED an hour ahead,
    # made QUEUED behind its back (an UPDATE sends no NOTIFY).
    task_id = client.submit("add", 1, 1, countdown=3600).id
    cluster.query(
        "UPDATE tasks SET state = 'QUEUED', run_at = now() WHERE id = $1::uuid RETURNING id", task_id
    )
    address = cluster.settings.store_address
    before = _counters(keys, address)

    lease = leases_pb2.LeaseTasksRequest(
        pool_id="pool-by-hand",
        lease_ms=600_000,
        leases=[leases_pb2.Lease(task_id=task_id, lease_token="tok-pool")],
    )
    record = tr.TaskRecord(name="add", args_json=b"[7, 7]", request_id="roles-insert-1")
    insert = tasks_pb2.InsertTasksRequest(tasks=[record])
    asked = {
        f"{role} {method.name}": asyncio.run(_ask(keys, role, address, method, request))
        for role, method, request in (
            (roles.WORKER_POOL, contract.STORE_LEASE, lease),
            (roles.WORKER_POOL, contract.STORE_INSERT, insert),
            (roles.GATEWAY, contract.STORE_LEASE, lease),
        )
    }
    assert asked == {
        "worker-pool LeaseTasks": "no reply",
        "worker-pool InsertTasks": "no reply",
        "gateway LeaseTasks": "no reply",
    }
    rows = cluster.query("SELECT state, lease_token FROM tasks WHERE id = $1::uuid", task_id)
    assert (rows[0]["state"], rows[0]["lease_token"] or "") == ("QUEUED", ""), rows
    assert not cluster.query("SELECT id FROM tasks WHERE request_id = 'roles-insert-1'")

    # Counted as the store counts every refusal, and said once per role and kind.
    def refused() -> bool:
        now = _counters(keys, address)
        return (
            now.get("bus_messages_refused.forbidden", 0) - before.get("bus_messages_refused.forbidden", 0)
            == 3
        )

    wait_until(refused, 15.0, "three refusals counted as forbidden")
    text = cluster.log_text("result-store")
    assert "refused KIND_STORE_LEASE" in text and "key 'it-worker-pool' of role worker-pool" in text
    assert "refused KIND_STORE_INSERT" in text and "(scheduler may" in text

    # The same lease under the scheduler's key is taken.
    assert asyncio.run(_ask(keys, roles.SCHEDULER, address, contract.STORE_LEASE, lease)).startswith(
        "answered"
    )
    rows = cluster.query("SELECT state, lease_token FROM tasks WHERE id = $1::uuid", task_id)
    assert (rows[0]["state"], rows[0]["lease_token"]) == ("ASSIGNED", "tok-pool"), rows

    # Nothing the suite sent itself was refused: every service's own traffic passed.
    for service in procs.START_ORDER:
        log = cluster.log_text(service)
        assert "which may not send it" not in log or service == "result-store", service
        assert "unknown_key" not in log and "bad_mac" not in log, service
    assert text.count("which may not send it") == 3
