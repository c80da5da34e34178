"""The tokens file, the scope of every RPC, and the rule for non-loopback listeners."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import os
from pathlib import Path
from typing import Any

import grpc
import pytest

from taskyard.core.config import Settings
from taskyard.gateway import auth, tls
from taskyard.v1 import (
    failure_service_pb2,
    limit_service_pb2,
    queue_service_pb2,
    schedule_service_pb2,
    task_service_pb2,
    tenant_service_pb2,
)

SUBMITTER = "submitter-token-0123456789abcdef"
READER = "reader-token-0123456789abcdef"
ADMIN = "admin-token-0123456789abcdef"


def _file(path: Path) -> Path:
    path.write_text(
        "# token  scopes  name\n"
        f"{SUBMITTER}  submit,read  ci\n"
        "\n"
        f"sha256:{hashlib.sha256(READER.encode()).hexdigest()}  read  dashboard\n"
        f"   {ADMIN} admin ops\n"
    )
    return path


def test_a_file_gives_tokens_in_clear_or_as_digests(tmp_path: Path) -> None:
    tokens = auth.TokensFile(str(_file(tmp_path / "tokens")))
    found = {t: tokens.find(t) for t in (SUBMITTER, READER, ADMIN, "not-a-token-0123456789")}
    assert {t: f.name if f else None for t, f in found.items()} == {
        SUBMITTER: "ci",
        READER: "dashboard",
        ADMIN: "ops",
        "not-a-token-0123456789": None,
    }
    ci = found[SUBMITTER]
    assert ci is not None and ci.allows(auth.Scope.SUBMIT) and ci.allows(auth.Scope.READ)
    assert not ci.allows(auth.Scope.ADMIN)
    ops = found[ADMIN]
    assert ops is not None and all(ops.allows(s) for s in auth.Scope)  # admin implies every scope
    dashboard = found[READER]
    assert dashboard is not None and dashboard.allows(None) and not dashboard.allows(auth.Scope.SUBMIT)


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (f"{SUBMITTER} submit", "3 fields"),
        ("short-token submit ci", "at least 16"),
        (f"{SUBMITTER} submit,write ci", "comma-separated"),
        ("sha256:abcd read ci", "64 hex"),
        (f"{SUBMITTER} , ci", "no scope"),
        (f"{SUBMITTER} read ci\n{ADMIN} admin ci", "used twice"),
    ],
)
def test_a_bad_line_is_refused_without_quoting_it(line: str, says: str) -> None:
    with pytest.raises(auth.TokensFileError) as exc:
        auth.parse_tokens(line)
    assert says in str(exc.value)
    for secret in (SUBMITTER, ADMIN, "short-token"):
        assert secret not in str(exc.value)


def test_the_file_is_read_again_when_it_changes(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    path = _file(tmp_path / "tokens")
    now = [0.0]
    tokens = auth.TokensFile(str(path), clock=lambda: now[0])
    fresh = "fresh-token-0123456789abcdef"
    path.write_text(f"{fresh} read newcomer\n")
    os.utime(path, ns=(1, 1))  # a different mtime, whatever the clock's resolution
    assert tokens.find(fresh) is None  # checked at most once a second
    now[0] = 1.5
    assert tokens.find(fresh) is not None and tokens.find(ADMIN) is None
    # A broken file keeps the tokens in force (and the log says why, without its content).
    path.write_text(f"{ADMIN}\n")
    os.utime(path, ns=(2, 2))
    now[0] = 3.0
    assert tokens.find(fresh) is not None
    assert "not reloaded" in caplog.text
    for secret in (fresh, ADMIN, SUBMITTER, READER):
        assert secret not in caplog.text


def test_every_rpc_has_a_scope() -> None:
    services = [
        f.DESCRIPTOR.services_by_name[name]
        for f, name in (
            (task_service_pb2, "TaskService"),
            (schedule_service_pb2, "ScheduleService"),
            (queue_service_pb2, "QueueService"),
            (limit_service_pb2, "LimitService"),
            (failure_service_pb2, "FailureService"),
            (tenant_service_pb2, "TenantService"),
        )
    ]
    methods = {f"/{s.full_name}/{m.name}" for s in services for m in s.methods}
    assert methods <= set(auth.REQUIRED_SCOPES), sorted(methods - set(auth.REQUIRED_SCOPES))
    need = {m.rsplit("/", 1)[1]: auth.required_scope(m) for m in methods}
    assert {m for m, s in need.items() if s is auth.Scope.SUBMIT} == {
        "SubmitTask",
        "BatchSubmitTasks",
        "RunTask",
        "CancelTask",
    }
    assert {m for m, s in need.items() if s is auth.Scope.ADMIN} == {
        "PauseQueue",
        "ResumeQueue",
        "ClearQueue",
        "RetryTasks",
        "PurgeTasks",
        "CreateSchedule",
        "PauseSchedule",
        "ResumeSchedule",
        "DeleteSchedule",
        "TriggerSchedule",
        "CreateLimit",
        "UpdateLimit",
        "DeleteLimit",
        "SetKeyWeight",
        # A dry run of a redrive too: one method, one scope.
        "Redrive",
        "PauseRedrive",
        "ResumeRedrive",
        "CancelRedrive",
        "PurgeDeadLetters",
        # An operator's token with it (tenancy.py refuses a tenant's).
        "CreateTenant",
        "UpdateTenant",
        "SuspendTenant",
        "ResumeTenant",
    }
    assert {m for m, s in need.items() if s is auth.Scope.READ} >= {
        "GetTenant",
        "ListTenants",
        "ListFailureGroups",
        "ListFailures",
        "GetRedrive",
        "ListRedrives",
        "ListRedriveItems",
    }
    assert auth.required_scope("/taskyard.v1.TaskService/SomethingNew") is auth.Scope.ADMIN


def test_bearer_header() -> None:
    assert auth.bearer((("authorization", "Bearer abc"),)) == "abc"
    assert auth.bearer((("authorization", "bearer  abc "),)) == "abc"
    assert auth.bearer((("authorization", "Basic abc"),)) == ""
    assert auth.bearer((("user-agent", "x"),)) is None
    assert auth.bearer(None) is None


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"])
def test_loopback_may_be_plaintext(host: str) -> None:
    tls.check_exposure(Settings(grpc_host=host))


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "gateway.internal"])
def test_other_hosts_need_tls_and_tokens(host: str) -> None:
    with pytest.raises(tls.ListenRefused, match="TASKYARD_GRPC_ALLOW_INSECURE"):
        tls.check_exposure(Settings(grpc_host=host))
    with pytest.raises(tls.ListenRefused, match="tokens"):
        tls.check_exposure(Settings(grpc_host=host, grpc_tls_cert="c.pem", grpc_tls_key="k.pem"))
    with pytest.raises(tls.ListenRefused, match="TLS"):
        tls.check_exposure(Settings(grpc_host=host, grpc_tokens_file="tokens"))
    tls.check_exposure(Settings(grpc_host=host, grpc_tls_cert="c", grpc_tls_key="k", grpc_tokens_file="t"))
    tls.check_exposure(Settings(grpc_host=host, grpc_allow_insecure=True))


def test_settings_from_the_environment() -> None:
    s = Settings.from_env(
        {
            "TASKYARD_TLS_CERT": "/s/cert.pem",
            "TASKYARD_TLS_KEY": "/s/key.pem",
            "TASKYARD_TLS_CLIENT_CA": "/s/ca.pem",
            "TASKYARD_AUTH_TOKENS_FILE": "/s/tokens",
            "TASKYARD_GRPC_ALLOW_INSECURE": "1",
            "TASKYARD_GRPC_MAX_CONCURRENT_LONG_RPCS": "20000",
            "TASKYARD_GRPC_KEEPALIVE_TIME": "30",
        }
    )
    assert (s.grpc_tls_cert, s.grpc_tls_key, s.grpc_tls_client_ca) == (
        "/s/cert.pem",
        "/s/key.pem",
        "/s/ca.pem",
    )
    assert s.grpc_tokens_file == "/s/tokens" and s.grpc_allow_insecure
    assert s.grpc_max_concurrent_long_rpcs == 20000 and s.grpc_keepalive_time == 30.0
    assert Settings.from_env(s.to_env()) == s


@dataclasses.dataclass(frozen=True)
class _Call:
    """What grpc hands an interceptor (grpc.HandlerCallDetails)."""

    method: str
    invocation_metadata: tuple[tuple[str, str], ...]


async def test_caller_name_is_the_name_of_the_token_the_interceptor_accepted(tmp_path: Path) -> None:
    """A redrive's audit says who asked: the token the authenticator accepted for the
    call, even when the file is reloaded before the servicer asks (a second look-up
    then found no token and recorded ""); "dev" on a gateway without tokens."""
    path = tmp_path / "tokens"
    path.write_text(f"{ADMIN} admin ops\n{READER} read dashboard\n")
    tokens = auth.TokensFile(str(path))
    authenticator = auth.Authenticator(tokens)
    seen: list[str] = []

    async def redrive(request: object, context: object) -> None:
        seen.append(auth.caller_name(tokens))

    async def served(details: object) -> Any:
        return grpc.unary_unary_rpc_method_handler(redrive)

    async def call(handler: Any) -> None:
        await handler.unary_unary(object(), object())

    method = "/taskyard.v1.FailureService/Redrive"
    as_admin = (("authorization", f"Bearer {ADMIN}"),)
    handler = await authenticator.intercept_service(served, _Call(method, as_admin))  # type: ignore[arg-type]
    # The token is taken out of the file between the interceptor and the servicer.
    path.write_text(f"{READER} read dashboard\n")
    assert tokens.reload()
    await call(handler)
    assert seen == ["ops"]
    # Another call's own token, in its own task.
    path.write_text(f"{ADMIN} admin ops-renamed\n")
    tokens.reload()
    handler = await authenticator.intercept_service(served, _Call(method, as_admin))  # type: ignore[arg-type]
    await asyncio.create_task(call(handler))
    assert seen == ["ops", "ops-renamed"]
    assert auth.caller_name(None) == auth.NO_TOKENS_CALLER == "dev"
