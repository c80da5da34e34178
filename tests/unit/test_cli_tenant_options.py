"""``taskyard tenant ...``, the global ``--tenant`` (and TASKYARD_TENANT) and ``taskyard keys
token``: against a real gRPC server standing in for the gateway's TenantService and
TaskService (it keeps each call's request and metadata), and the tokens-file line read back
by the gateway's own parser."""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner, Result

from taskyard.cli.main import cli
from taskyard.gateway import auth
from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc, tenant_service_pb2_grpc
from taskyard.v1 import tenant_service_pb2 as ts

NOWHERE = "127.0.0.1:1"


class FakeGateway(tenant_service_pb2_grpc.TenantServiceServicer, task_service_pb2_grpc.TaskServiceServicer):
    """Tenants kept in a dict; ListTasks answers tasks of two tenants. Each call's request
    and its ``taskyard-tenant`` metadata are kept."""

    def __init__(self) -> None:
        self.tenants: dict[str, ts.Tenant] = {}
        self.calls: list[tuple[str, Any, str | None]] = []

    def _seen(self, method: str, request: Any, context: grpc.ServicerContext) -> None:
        acting = [v for k, v in context.invocation_metadata() if k == "taskyard-tenant"]
        self.calls.append((method, request, str(acting[0]) if acting else None))

    def _stored(self, tenant: ts.Tenant, state: int = ts.TENANT_STATE_ACTIVE) -> ts.Tenant:
        kept = ts.Tenant()
        kept.CopyFrom(tenant)
        kept.state = state  # type: ignore[assignment]
        kept.created_at.FromSeconds(1_800_000_000)
        self.tenants[kept.name] = kept
        return kept

    def CreateTenant(self, request: ts.CreateTenantRequest, context: grpc.ServicerContext) -> Any:
        self._seen("CreateTenant", request, context)
        return ts.CreateTenantResponse(tenant=self._stored(request.tenant))

    def GetTenant(self, request: ts.GetTenantRequest, context: grpc.ServicerContext) -> Any:
        self._seen("GetTenant", request, context)
        if request.name not in self.tenants:
            context.abort(grpc.StatusCode.NOT_FOUND, f"tenant {request.name!r} not found")
        return ts.GetTenantResponse(tenant=self.tenants[request.name])

    def ListTenants(self, request: ts.ListTenantsRequest, context: grpc.ServicerContext) -> Any:
        self._seen("ListTenants", request, context)
        return ts.ListTenantsResponse(tenants=[self.tenants[n] for n in sorted(self.tenants)])

    def UpdateTenant(self, request: ts.UpdateTenantRequest, context: grpc.ServicerContext) -> Any:
        self._seen("UpdateTenant", request, context)
        return ts.UpdateTenantResponse(tenant=self._stored(request.tenant))

    def SuspendTenant(self, request: ts.SuspendTenantRequest, context: grpc.ServicerContext) -> Any:
        self._seen("SuspendTenant", request, context)
        kept = self._stored(self.tenants[request.name], ts.TENANT_STATE_SUSPENDED)
        kept.suspended_at.FromSeconds(1_800_000_100)
        return ts.SuspendTenantResponse(tenant=kept)

    def ResumeTenant(self, request: ts.ResumeTenantRequest, context: grpc.ServicerContext) -> Any:
        self._seen("ResumeTenant", request, context)
        kept = self._stored(self.tenants[request.name])
        return ts.ResumeTenantResponse(tenant=kept)

    def ListTasks(self, request: task_service_pb2.ListTasksRequest, context: grpc.ServicerContext) -> Any:
        self._seen("ListTasks", request, context)
        return task_service_pb2.ListTasksResponse(
            tasks=[
                task_pb2.Task(id="t-a", name="add", tenant="acme", state=task_pb2.TASK_STATE_QUEUED),
                task_pb2.Task(id="t-d", name="add", state=task_pb2.TASK_STATE_QUEUED),
            ]
        )


@pytest.fixture
def fake() -> Iterator[tuple[str, FakeGateway]]:
    servicer = FakeGateway()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    tenant_service_pb2_grpc.add_TenantServiceServicer_to_server(servicer, server)
    task_service_pb2_grpc.add_TaskServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}", servicer
    finally:
        server.stop(None)


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    unset: dict[str, str | None] = {"TASKYARD_TENANT": None, "TASKYARD_TOKEN": None}
    return CliRunner(env={**unset, **(env or {})}).invoke(cli, list(args))


def test_create_sends_the_quota_and_prints_the_tenant(fake: tuple[str, FakeGateway]) -> None:
    target, gw = fake
    done = run(
        "tenant",
        "create",
        "acme",
        "--max-concurrency",
        "50",
        "--rate",
        "100/s",
        "--burst",
        "20",
        "--weight",
        "2",
        "--description",
        "the acme team",
        "--target",
        target,
    )
    assert done.exit_code == 0, done.output
    ((method, request, acting),) = gw.calls
    assert (method, acting) == ("CreateTenant", None)
    t = request.tenant
    assert (t.name, t.quota.max_concurrency, t.weight, t.description) == ("acme", 50, 2, "the acme team")
    assert (t.quota.rate.units, t.quota.rate.burst, t.quota.rate.period.ToMilliseconds()) == (100, 20, 1000)
    rows = dict(line.split(":", 1) for line in done.stdout.splitlines())
    assert {k: v.strip() for k, v in rows.items()} == {
        "name": "acme",
        "state": "ACTIVE",
        "concurrency": "50 at once",
        "rate": "100/s, burst 20",
        "weight": "2",
        "description": "the acme team",
        "created": "2027-01-15 08:00:00+00:00",
    }


def test_update_changes_only_what_it_is_given(fake: tuple[str, FakeGateway]) -> None:
    target, gw = fake
    assert run("tenant", "create", "acme", "--max-concurrency", "5", "--rate", "10/min", "--weight", "3",
               "--description", "kept", "--target", target).exit_code == 0  # fmt: skip
    done = run("tenant", "update", "acme", "--max-concurrency", "9", "-o", "json", "--target", target)
    assert done.exit_code == 0, done.output
    assert [m for m, _, _ in gw.calls] == ["CreateTenant", "GetTenant", "UpdateTenant"]
    sent = gw.calls[-1][1].tenant
    assert (sent.quota.max_concurrency, sent.quota.rate.units, sent.weight, sent.description) == (
        9,
        10,
        3,
        "kept",
    )
    assert not sent.HasField("created_at") and sent.state == ts.TENANT_STATE_UNSPECIFIED
    assert json.loads(done.stdout)["tenant"]["quota"]["max_concurrency"] == "9"
    run("tenant", "update", "acme", "--no-rate", "--target", target)
    assert not gw.calls[-1][1].tenant.quota.HasField("rate")


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["update", "acme"], "nothing to change"),
        (["update", "acme", "--no-rate", "--rate", "5/s"], "--no-rate goes with neither"),
        (["create", "acme", "--rate", "fast"], "a rate is units/period"),
        (["create", "acme", "--weight", "1001"], "1001 is not in the range 0<=x<=1000"),
        (["create", "acme", "--burst", "4"], "--burst applies to a rate"),
    ],
)
def test_bad_tenant_commands_are_usage_errors(args: list[str], text: str) -> None:
    done = run("tenant", *args, "--target", NOWHERE)
    assert done.exit_code == 2 and text in done.output, done.output


@pytest.mark.parametrize(
    "args",
    [["create"], ["get"], ["update", "--weight", "2"], ["suspend", "--yes"], ["resume"]],
)
def test_a_bad_tenant_name_is_a_usage_error_before_any_call(
    fake: tuple[str, FakeGateway], args: list[str]
) -> None:
    target, gw = fake
    done = run("tenant", args[0], "Bad_Name", *args[1:], "--target", target)
    assert done.exit_code == 2, done.output
    assert "Invalid value for 'NAME': the tenant name must be 1 to 64 characters of [a-z0-9-]" in done.output
    assert gw.calls == []


def test_suspend_asks_first_and_resume_does_not(fake: tuple[str, FakeGateway]) -> None:
    target, gw = fake
    run("tenant", "create", "acme", "--target", target)
    refused = run("tenant", "suspend", "acme", "--target", target)
    assert refused.exit_code == 2 and "asks for confirmation" in refused.stderr
    assert [m for m, _, _ in gw.calls] == ["CreateTenant"]
    done = run("tenant", "suspend", "acme", "--reason", "invoice overdue", "--yes", "--target", target)
    assert done.exit_code == 0, done.output
    assert gw.calls[-1][1] == ts.SuspendTenantRequest(name="acme", reason="invoice overdue")
    assert "SUSPENDED" in done.stdout and "suspended:" in done.stdout
    assert "ACTIVE" in run("tenant", "resume", "acme", "--target", target).stdout
    listed = run("tenant", "list", "--target", target).stdout.splitlines()
    assert listed[0].split() == ["NAME", "STATE", "CONCURRENCY", "RATE", "WEIGHT", "CREATED"]
    assert listed[1].split()[:2] == ["acme", "ACTIVE"]


def test_tenant_acts_as_one_tenant_from_any_place_on_the_line_or_the_environment(
    fake: tuple[str, FakeGateway],
) -> None:
    target, gw = fake
    assert run("--tenant", "acme", "task", "list", "--target", target).exit_code == 0
    assert run("task", "list", "--tenant", "globex", "--target", target).exit_code == 0
    assert run("task", "list", "--target", target, env={"TASKYARD_TENANT": "initech"}).exit_code == 0
    assert run("task", "list", "--target", target).exit_code == 0
    assert [acting for _, _, acting in gw.calls] == ["acme", "globex", "initech", None]


def test_a_bad_tenant_is_refused_before_any_call() -> None:
    done = run("--tenant", "Acme Corp", "task", "list", "--target", NOWHERE)
    assert done.exit_code == 2
    assert (
        "--tenant (or TASKYARD_TENANT): the tenant name must be 1 to 64 characters of [a-z0-9-]"
        in done.output
    )


def test_a_listing_across_tenants_has_a_tenant_column_and_one_as_a_tenant_has_none(
    fake: tuple[str, FakeGateway],
) -> None:
    target, _ = fake
    across = run("task", "list", "--target", target).stdout.splitlines()
    assert across[0].split() == ["ID", "TENANT", "NAME", "STATE", "ATT", "PRIORITY", "QUEUE", "CREATED"]
    assert [row.split()[:2] for row in across[1:]] == [["t-a", "acme"], ["t-d", "(default)"]]
    acting = run("task", "list", "--tenant", "acme", "--target", target).stdout.splitlines()
    assert acting[0].split() == ["ID", "NAME", "STATE", "ATT", "PRIORITY", "QUEUE", "CREATED"]


def test_explain_names_the_tenant_reasons() -> None:
    done = run("task", "explain", "--help")
    assert "TENANT_SUSPENDED" in done.output and "TENANT_QUOTA" in done.output


# --- keys token -----------------------------------------------------------------------


def test_a_tenant_token_line_is_one_the_gateway_reads_as_that_tenants(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    done = run("keys", "token", "acme-ci", "--scopes", "submit,read", "--tenant", "acme", "--tokens-file",
               str(tokens), "-o", "json")  # fmt: skip
    assert done.exit_code == 0, done.output
    made = json.loads(done.stdout)
    assert made["line"].split()[1:] == ["submit,read", "acme-ci", "tenant=acme"]
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    (token,) = auth.parse_tokens(tokens.read_text())
    assert token == auth.Token(
        name="acme-ci",
        digest=hashlib.sha256(made["token"].encode()).digest(),
        scopes=frozenset({auth.Scope.SUBMIT, auth.Scope.READ}),
        tenant="acme",
    )
    # Only its digest is written: the token itself is printed once.
    assert made["token"] not in tokens.read_text() and len(made["token"]) >= auth.MIN_TOKEN_LENGTH

    ops = run("keys", "token", "ops", "--scopes", "admin", "--tokens-file", str(tokens))
    assert ops.exit_code == 0, ops.output
    rows = dict(line.split(":", 1) for line in ops.stdout.splitlines())
    assert rows["appended_to"].strip() == str(tokens)
    assert [(t.name, t.tenant) for t in auth.parse_tokens(tokens.read_text())] == [
        ("acme-ci", "acme"),
        ("ops", None),
    ]


def test_a_name_already_in_the_file_is_refused_and_the_file_kept(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("# token scopes name\nsha256:" + "0" * 64 + " read acme-ci tenant=acme")
    before = tokens.read_text()
    done = run("keys", "token", "acme-ci", "--scopes", "read", "--tokens-file", str(tokens))
    assert done.exit_code == 1 and "already has a token named 'acme-ci'" in done.output
    assert tokens.read_text() == before
    # A file whose last line lacks its newline still gets a line of its own.
    assert run("keys", "token", "other", "--scopes", "read", "--tokens-file", str(tokens)).exit_code == 0
    assert [t.name for t in auth.parse_tokens(tokens.read_text())] == ["acme-ci", "other"]


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["x", "--scopes", "write"], "a comma-separated list of submit, read, work, admin"),
        (["x", "--scopes", "read", "--tenant", "Acme"], "the tenant name must be 1 to 64 characters"),
        (["x", "--scopes", "read", "--tenant", "a" * 65], "must be at most 64 characters"),
    ],
)
def test_bad_token_options_are_usage_errors(args: list[str], text: str) -> None:
    done = run("keys", "token", *args)
    assert done.exit_code == 2 and text in done.output, done.output
