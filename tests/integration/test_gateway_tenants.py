"""Tenants at the gateway on a real cluster (gateway, scheduler, store on PostgreSQL,
pool), over gRPC and the dashboard's JSON API with an operator's token and two
tenants' tokens: a tenant's events, its tenant's record and its pages are its own;
bad input (an unknown or suspended tenant's token, a bad tenant name, an
operator's RPC with a tenant's token) is refused clearly and changes nothing."""

from __future__ import annotations

import functools
import json
import uuid

from integration.gateway_tenants import (
    Code,
    Env,
    N,
    T,
    env,
    field_violations,
    later,
    reason,
    refused,
    same_as_missing,
    submit,
)

from taskyard.core import tenants
from taskyard.v1 import event_service_pb2 as ev
from taskyard.v1 import task_pb2, tenant_service_pb2

__all__ = ["env"]


def test_a_tenants_stream_of_events_is_its_own(env: Env) -> None:
    acme, beta = env.acme, env.beta
    a = submit(acme, later())
    b = submit(beta, later())
    seen: dict[str, set[str]] = {}
    for who, caller, mine in (("acme", acme, a.id), ("beta", beta, b.id)):
        stream = caller(
            caller.events.WatchEvents, ev.WatchEventsRequest(start=ev.WATCH_START_OLDEST), timeout=30
        )
        tenants_seen: set[str] = set()
        ids: set[str] = set()
        for response in stream:
            for e in response.events:
                tenants_seen.add(e.tenant)
                ids.add(e.task_id)
                assert e.kind not in (ev.EVENT_KIND_TENANT, ev.EVENT_KIND_POOL, ev.EVENT_KIND_WORKER)
            if mine in ids:
                stream.cancel()
                break
        seen[who] = tenants_seen
        assert (b.id if who == "acme" else a.id) not in ids
    assert seen == {"acme": {"acme"}, "beta": {"beta"}}


def test_tenant_service(env: Env) -> None:
    ops, acme = env.ops, env.acme
    got = acme(acme.tenants.GetTenant, N.GetTenantRequest(name="acme")).tenant
    assert (got.name, got.state) == ("acme", tenant_service_pb2.TENANT_STATE_ACTIVE)
    same_as_missing(lambda n: acme(acme.tenants.GetTenant, N.GetTenantRequest(name=n)), "beta")
    for call in (
        lambda: acme(acme.tenants.ListTenants, N.ListTenantsRequest()),
        lambda: acme(acme.tenants.CreateTenant, N.CreateTenantRequest(tenant=N.Tenant(name="gamma"))),
        lambda: acme(acme.tenants.SuspendTenant, N.SuspendTenantRequest(name="beta")),
        lambda: acme(
            acme.tenants.UpdateTenant, N.UpdateTenantRequest(tenant=N.Tenant(name="acme", weight=9))
        ),
    ):
        err = refused(call)
        assert (err.code(), reason(err)) == (Code.PERMISSION_DENIED, tenants.OPERATOR_ONLY)
    # Pages, by name.
    ops(ops.tenants.CreateTenant, N.CreateTenantRequest(tenant=N.Tenant(name="gamma")))
    first = ops(ops.tenants.ListTenants, N.ListTenantsRequest(page_size=2))
    assert [t.name for t in first.tenants] == ["acme", "beta"] and first.next_page_token
    rest = ops(ops.tenants.ListTenants, N.ListTenantsRequest(page_size=2, page_token=first.next_page_token))
    assert [t.name for t in rest.tenants] == ["gamma"] and not rest.next_page_token
    # Bad input: named, and nothing changes.
    for bad in ("Gamma", "x" * 65, "a_b", ""):
        request = N.CreateTenantRequest(tenant=N.Tenant(name=bad))
        err = refused(functools.partial(ops, ops.tenants.CreateTenant, request))
        assert err.code() == Code.INVALID_ARGUMENT
        assert field_violations(err) == [("tenant.name", tenants.INVALID_TENANT)]
    err = refused(lambda: ops(ops.tenants.ListTenants, N.ListTenantsRequest(page_size=1001)))
    assert field_violations(err)[0][0] == "page_size"
    err = refused(lambda: ops(ops.tenants.CreateTenant, N.CreateTenantRequest(tenant=N.Tenant(name="acme"))))
    assert err.code() == Code.ALREADY_EXISTS
    assert len(ops(ops.tenants.ListTenants, N.ListTenantsRequest()).tenants) == 3


def test_bad_tenants_are_refused_and_change_nothing(env: Env) -> None:
    ops, acme, beta, ghost = env.ops, env.acme, env.beta, env.ghost
    before = env.cluster.count_tasks()
    # An unknown tenant's token: refused for every call, nothing stored.
    for call in (
        lambda: submit(ghost, later()),
        lambda: ghost(ghost.tasks.ListTasks, T.ListTasksRequest()),
    ):
        err = refused(call)
        assert (err.code(), reason(err)) == (Code.PERMISSION_DENIED, tenants.TENANT_UNKNOWN)
        assert "'ghost' is not known" in (err.details() or "")
    err = refused(lambda: submit(ops.acting_as("ghost"), later()))
    assert reason(err) == tenants.TENANT_UNKNOWN
    # A tenant's token naming another tenant; a bad name.
    err = refused(lambda: submit(acme.acting_as("beta"), later()))
    assert (err.code(), reason(err)) == (Code.PERMISSION_DENIED, tenants.OPERATOR_ONLY)
    err = refused(lambda: submit(ops.acting_as("Beta!"), later()))
    assert (err.code(), reason(err)) == (Code.INVALID_ARGUMENT, tenants.INVALID_TENANT)
    assert field_violations(err) == [(f"metadata.{tenants.METADATA_KEY}", tenants.INVALID_TENANT)]
    assert env.cluster.count_tasks() == before
    # Its own name: as without it.
    assert submit(acme.acting_as("acme"), later()).tenant == "acme"
    # A suspended tenant reads and cancels, and submits nothing; nothing it had is lost.
    kept = submit(beta, later())
    ops(ops.tenants.SuspendTenant, N.SuspendTenantRequest(name="beta", reason="unpaid"))
    for call in (
        lambda: submit(beta, later()),
        lambda: beta(beta.tasks.BatchSubmitTasks, T.BatchSubmitTasksRequest(tasks=[later()])),
        lambda: beta(beta.tasks.RunTask, T.RunTaskRequest(task=later())),
        lambda: submit(ops.acting_as("beta"), later()),
    ):
        err = refused(call)
        assert (err.code(), reason(err)) == (Code.FAILED_PRECONDITION, tenants.TENANT_SUSPENDED)
    assert beta(beta.tasks.GetTask, T.GetTaskRequest(id=kept.id)).task.id == kept.id
    assert env.cluster.count_tasks() == before + 2
    beta(beta.tasks.CancelTask, T.CancelTaskRequest(id=kept.id))
    ops(ops.tenants.ResumeTenant, N.ResumeTenantRequest(name="beta"))
    assert submit(beta, later()).tenant == "beta"


def test_the_dashboards_json_api_keeps_to_the_pages_tenant(env: Env) -> None:
    ops, acme, beta = env.ops, env.acme, env.beta
    a = submit(acme, later(queue="reports"))
    b = submit(beta, later(queue="reports"))
    status, body = env.api("acme", "TaskService/ListTasks", {})
    assert status == 200 and [(t["id"], t["tenant"], t["queue"]) for t in body["tasks"]] == [
        (a.id, "acme", "reports")
    ]
    # Another tenant's id answers as a missing one: the same status and body.
    missing = str(uuid.uuid4())
    seen = env.api("acme", "TaskService/GetTask", {"id": b.id})
    expected = env.api("acme", "TaskService/GetTask", {"id": missing})
    assert seen[0] == expected[0] == 404
    assert json.dumps(seen[1]).replace(b.id, "<id>") == json.dumps(expected[1]).replace(missing, "<id>")
    # An operator's page: every tenant's, or the one it picked.
    status, body = env.api("ops", "TaskService/ListTasks", {})
    assert {a.id, b.id} <= {t["id"] for t in body["tasks"]}
    status, body = env.api("ops", "TaskService/ListTasks", {}, tenant="beta")
    assert status == 200 and [t["id"] for t in body["tasks"]] == [b.id]
    status, body = env.api("ops", "TenantService/ListTenants", {})
    assert status == 200 and [t["name"] for t in body["tenants"]] == ["acme", "beta"]
    # A tenant's page may not pick another tenant, nor list the tenants.
    status, body = env.api("acme", "TaskService/ListTasks", {}, tenant="beta")
    assert (status, body["reason"]) == (403, tenants.OPERATOR_ONLY)
    status, body = env.api("acme", "TenantService/ListTenants", {})
    assert (status, body["reason"]) == (403, tenants.OPERATOR_ONLY)
    status, body = env.api("ghost", "TaskService/ListTasks", {})
    assert (status, body["reason"]) == (403, tenants.TENANT_UNKNOWN)
    # A write of A's page reaches A's tasks only.
    status, _ = env.api("acme", "TaskService/CancelTask", {"id": b.id})
    assert status == 404
    assert beta(beta.tasks.GetTask, T.GetTaskRequest(id=b.id)).task.state == task_pb2.TASK_STATE_SCHEDULED
    assert ops(ops.tasks.GetTask, T.GetTaskRequest(id=a.id)).task.tenant == "acme"
