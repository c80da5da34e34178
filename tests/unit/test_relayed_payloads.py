"""Task JSON is decoded once on its way in: a gateway checks what it submits, a
lane checks what anyone else submits (a pool's child tasks), and the store takes
what a scheduler relays without decoding it again."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator

import pytest

from taskyard.bus.v1 import dispatch_pb2, leases_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import errors, ids, roles, rpc
from taskyard.result_store.writes.insert_checks import validate_insert
from taskyard.result_store.writes.insert_row import InsertRow
from taskyard.scheduler import payloads


def submit(args: bytes, kwargs: bytes = b"") -> bytes:
    rec = tr.TaskRecord(id=ids.new_task_id(), name="add", args_json=args, kwargs_json=kwargs)
    return dispatch_pb2.SubmitRequest(tasks=[rec]).SerializeToString()


@pytest.fixture
def sent_by() -> Iterator[Callable[[str], None]]:
    """Set the role the handler sees, as the responder does around a handler."""
    tokens: list[contextvars.Token[str]] = []

    def set_role(role: str) -> None:
        tokens.append(rpc._SENDER_ROLE.set(role))

    yield set_role
    for token in reversed(tokens):
        rpc._SENDER_ROLE.reset(token)


def test_a_lane_checks_a_pools_child_tasks(sent_by: Callable[[str], None]) -> None:
    sent_by(roles.WORKER_POOL)
    payloads.checked(submit(b"[1, 2]", b'{"k": 1}'))
    with pytest.raises(errors.TaskyardError) as refused:
        payloads.checked(submit(b'{"not": "a list"}'))
    assert refused.value.code == errors.Code.INVALID_ARGUMENT
    assert "tasks[0].args_json: must be a list in JSON" in str(refused.value)
    with pytest.raises(errors.TaskyardError):
        payloads.checked(submit(b"[1]", b"not json"))


def test_a_lane_checks_a_sender_of_no_role(sent_by: Callable[[str], None]) -> None:
    sent_by("")
    with pytest.raises(errors.TaskyardError):
        payloads.checked(submit(b"[1"))


def test_a_lane_relays_a_gateways_tasks_unread(sent_by: Callable[[str], None]) -> None:
    sent_by(roles.GATEWAY)
    payload = submit(b'{"not": "a list"}')  # the gateway built it from checked values
    assert payloads.checked(payload) is payload


def test_a_lane_relays_no_lease_a_pool_slipped_into_its_submission(sent_by: Callable[[str], None]) -> None:
    """A lane passes a submission's bytes on as the store's InsertTasksRequest: a
    pool's must not carry the fields only a scheduler sets (a pool, leases)."""
    sent_by(roles.WORKER_POOL)
    rec = tr.TaskRecord(id=ids.new_task_id(), name="add", args_json=b"[1]")
    forged = tasks_pb2.InsertTasksRequest(
        tasks=[rec],
        pool_id="victim-pool",
        lease_ms=10**9,
        leases=[leases_pb2.Lease(task_id=rec.id, lease_token="chosen")],
    ).SerializeToString()
    relayed = tasks_pb2.InsertTasksRequest.FromString(payloads.checked(forged))
    assert list(relayed.tasks) == [rec]
    assert (relayed.pool_id, relayed.lease_ms, len(relayed.leases)) == ("", 0, 0)


def _insert(args: bytes, *, checked: bool) -> list[InsertRow]:
    req = tasks_pb2.InsertTasksRequest(
        tasks=[tr.TaskRecord(id=ids.new_task_id(), name="add", args_json=args)]
    )
    return list(
        validate_insert(req, known_names=None, max_payload_bytes=1 << 20, now_us=0, payloads_checked=checked)
    )


def test_the_store_decodes_what_no_scheduler_checked() -> None:
    with pytest.raises(errors.TaskyardError):
        _insert(b'{"not": "a list"}', checked=False)
    # From a scheduler: not decoded again (the database still takes only valid JSON).
    (row,) = _insert(b'{"not": "a list"}', checked=True)
    assert row.args == '{"not": "a list"}'
