"""A real cluster with an operator's token and tenants' tokens, for the tests of
tenants at the gateway (test_gateway_tenants*.py): "ops" (an operator's), "acme"
and "beta" (tenants the fixture creates) and "ghost" (a tenant never created),
each with the admin scope; the dashboard served too."""

from __future__ import annotations

import hashlib
import json
import secrets
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from support.ports import free_port_block
from support.waiting import wait_until

from taskyard.core import tenants
from taskyard.v1 import (
    event_service_pb2_grpc,
    failure_service_pb2,
    failure_service_pb2_grpc,
    limit_service_pb2,
    limit_service_pb2_grpc,
    queue_service_pb2,
    queue_service_pb2_grpc,
    schedule_service_pb2,
    schedule_service_pb2_grpc,
    task_pb2,
    task_service_pb2,
    task_service_pb2_grpc,
    tenant_service_pb2,
    tenant_service_pb2_grpc,
)

T = task_service_pb2
L = limit_service_pb2
Q = queue_service_pb2
S = schedule_service_pb2
N = tenant_service_pb2
F = failure_service_pb2
Code = grpc.StatusCode
WHO = ("ops", "acme", "beta", "ghost")


class Caller:
    """The cluster's gateway, called with one token (and any extra metadata)."""

    def __init__(self, channel: grpc.Channel, token: str, *extra: tuple[str, str]) -> None:
        self.token = token
        self.metadata = (("authorization", f"Bearer {token}"), *extra)
        self.tasks = task_service_pb2_grpc.TaskServiceStub(channel)
        self.limits = limit_service_pb2_grpc.LimitServiceStub(channel)
        self.queues = queue_service_pb2_grpc.QueueServiceStub(channel)
        self.schedules = schedule_service_pb2_grpc.ScheduleServiceStub(channel)
        self.events = event_service_pb2_grpc.EventServiceStub(channel)
        self.failures = failure_service_pb2_grpc.FailureServiceStub(channel)
        self.tenants = tenant_service_pb2_grpc.TenantServiceStub(channel)
        self._channel = channel

    def __call__(self, method: Callable[..., Any], request: Any, *, timeout: float = 15) -> Any:
        return method(request, metadata=self.metadata, timeout=timeout)

    def acting_as(self, tenant: str) -> Caller:
        return Caller(self._channel, self.token, (tenants.METADATA_KEY, tenant))


class Env:
    def __init__(self, cluster: Any, tokens: dict[str, str]) -> None:
        self.cluster = cluster
        self.tokens = tokens
        channel = cluster.channel()
        self.ops, self.acme, self.beta, self.ghost = (Caller(channel, tokens[w]) for w in WHO)

    def api(self, who: str, method: str, body: dict[str, Any], *, tenant: str = "") -> tuple[int, Any]:
        """The dashboard's JSON API: ``POST /api/<service>/<method>`` with ``who``'s token."""
        query = f"?tenant={tenant}" if tenant else ""
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.cluster.settings.http_port}/api/taskyard.v1.{method}{query}",
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.tokens[who]}", "Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=15) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())


def start_env(
    cluster_factory: Callable[..., Any],
    tmp_path: Path,
    ready: Callable[[Env], bool],
    **cluster_options: Any,
) -> Env:
    """A cluster whose gateway takes the tokens of ``WHO`` (ops an operator, the others
    a tenant's each; ghost's tenant never made), started and ``ready``, with the
    tenants acme and beta made by ops."""
    tokens = {who: f"{who}-{secrets.token_urlsafe(24)}" for who in WHO}
    path = tmp_path / "tokens"
    path.write_text(
        f"sha256:{hashlib.sha256(tokens['ops'].encode()).hexdigest()}  admin  ops\n"
        f"{tokens['acme']}  admin  acme-ci  tenant=acme\n"
        f"{tokens['beta']}  admin  beta-ci  tenant=beta\n"
        f"{tokens['ghost']}  admin  ghost-ci  tenant=ghost\n"
    )
    cluster = cluster_factory(
        start=False, grpc_tokens_file=str(path), http_port=free_port_block(1), **cluster_options
    )
    cluster.start()
    env = Env(cluster, tokens)
    wait_until(lambda: ready(env), 45, lambda: f"a gateway that answers\n{cluster.logs_tail()}")
    for name in ("acme", "beta"):
        env.ops(env.ops.tenants.CreateTenant, N.CreateTenantRequest(tenant=N.Tenant(name=name)))
    return env


@pytest.fixture
def env(cluster_factory: Callable[..., Any], tmp_path: Path) -> Iterator[Env]:
    def ready(env: Env) -> bool:
        """The gateway knows the pool's names (an unknown name is refused until it does)."""
        try:
            env.ops(env.ops.tasks.ListTasks, T.ListTasksRequest(page_size=1))
            env.ops(env.ops.tenants.ListTenants, N.ListTenantsRequest())
        except grpc.RpcError as exc:
            if exc.code() == Code.UNAVAILABLE:
                return False
            raise
        return True

    yield start_env(cluster_factory, tmp_path, ready)


def refused(call: Callable[[], Any]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value


def reason(err: grpc.RpcError) -> str:
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None
    info = error_details_pb2.ErrorInfo()
    for d in status.details:
        if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            d.Unpack(info)
    return info.reason


def field_violations(err: grpc.RpcError) -> list[tuple[str, str]]:
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None
    bad = error_details_pb2.BadRequest()
    for d in status.details:
        if d.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            d.Unpack(bad)
    return [(v.field, v.reason) for v in bad.field_violations]


def answer(call: Callable[[str], Any], ident: str) -> tuple[Any, str, str]:
    """How a call about ``ident`` fails: its code, its message with the id made
    generic, its ErrorInfo reason."""
    err = refused(lambda: call(ident))
    return err.code(), (err.details() or "").replace(ident, "<id>"), reason(err)


def same_as_missing(call: Callable[[str], Any], other: str) -> None:
    """``call`` about another tenant's ``other`` answers as about a missing id."""
    missing = str(uuid.uuid4()) if _is_uuid(other) else f"missing-{secrets.token_hex(4)}"
    seen, expected = answer(call, other), answer(call, missing)
    assert seen == expected
    assert seen[0] == Code.NOT_FOUND


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def later(name: str = "noop", **fields: Any) -> task_pb2.TaskSpec:
    """A task that stays SCHEDULED (not final) for the test's length."""
    spec = task_pb2.TaskSpec(name=name, **fields)
    spec.countdown.FromSeconds(3600)
    return spec


def submit(caller: Caller, spec: task_pb2.TaskSpec) -> task_pb2.Task:
    return caller(caller.tasks.SubmitTask, T.SubmitTaskRequest(task=spec)).task


def listed(caller: Caller, **filters: Any) -> list[task_pb2.Task]:
    out: list[task_pb2.Task] = []
    token = ""
    while True:
        reply = caller(caller.tasks.ListTasks, T.ListTasksRequest(page_size=2, page_token=token, **filters))
        out.extend(reply.tasks)
        token = reply.next_page_token
        if not token:
            return out
