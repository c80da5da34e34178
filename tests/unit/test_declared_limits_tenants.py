"""A limit a task's name declares is told from a tenant's own limit of the same name
by where it came from (core/limits.add_declared marks it), not by its name: the
store keeps the tenant's own qualified and the pool's bare, as two limits."""

from __future__ import annotations

import uuid

from taskyard.bus.v1 import task_record_pb2, tasks_pb2
from taskyard.core import limits
from taskyard.result_store.writes import insert_checks
from taskyard.v1 import limit_pb2

DECLARED = limit_pb2.Limit(
    name="settle.concurrency",
    task_name="settle",
    per_key=True,
    key_argument="account",
    concurrency=limit_pb2.ConcurrencyLimit(max_units=1),
)


def _record(*uses: str, tenant: str = "acme") -> task_record_pb2.TaskRecord:
    record = task_record_pb2.TaskRecord(
        id=str(uuid.uuid4()), name="settle", kwargs_json=b'{"account": "b-acct"}', tenant=tenant
    )
    for name in uses:
        record.flow.uses.add(limit=name)
    return record


def _stored(record: task_record_pb2.TaskRecord) -> tuple[list[str], list[str]]:
    request = tasks_pb2.InsertTasksRequest(tasks=[record])
    [row] = insert_checks.validate_insert(
        request, known_names={"settle"}, max_payload_bytes=1 << 20, now_us=1_700_000_000_000_000
    )
    assert row.flow is not None
    flow = task_record_pb2.FlowControl.FromString(row.flow)
    return [u.limit for u in flow.uses], [u.key for u in flow.uses]


def test_a_tenants_own_limit_named_as_a_declared_one_stays_its_own() -> None:
    # acme's own 'settle.concurrency' (the gateway qualifies it) beside the pool's.
    record = _record("acme/settle.concurrency")
    limits.add_declared(record, [DECLARED])
    assert list(record.flow.declared) == ["settle.concurrency"]
    names, keys = _stored(record)
    assert names == ["acme/settle.concurrency", "settle.concurrency"]
    assert keys == ["", "b-acct"]


def test_a_tenants_child_naming_its_own_limit_bare_gets_its_own() -> None:
    # A pool's child task names acme's limit as acme knows it: bare, and not declared.
    names, _ = _stored(_record("settle.concurrency"))
    assert names == ["acme/settle.concurrency"]


def test_the_declared_limit_stays_the_pools_and_the_default_tenants_names_stay_bare() -> None:
    record = _record()
    limits.add_declared(record, [DECLARED])
    assert _stored(record)[0] == ["settle.concurrency"]
    record = _record("db", tenant="")
    limits.add_declared(record, [DECLARED])
    assert _stored(record)[0] == ["db", "settle.concurrency"]
