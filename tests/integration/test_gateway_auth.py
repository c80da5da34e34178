"""TLS and bearer tokens on a real gateway (fake backends behind it): the Python client,
grpcurl and the CLI with the right CA and token; the refusals and their details."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import os
import secrets
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status
from integration.gateway_fakes import GatewayEnv, gateway_env
from support import certs, grpcurl, ports

from taskyard.client import AsyncClient, TaskyardError
from taskyard.core import contract
from taskyard.core.config import Settings
from taskyard.gateway import tls
from taskyard.gateway.server import Gateway
from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc


@dataclasses.dataclass(frozen=True, kw_only=True)
class Secrets:
    certs: certs.Certificates
    tokens_file: Path
    admin: str
    submitter: str
    reader: str

    @property
    def all(self) -> tuple[str, ...]:
        return (self.admin, self.submitter, self.reader)


def make_secrets(directory: Path) -> Secrets:
    admin, submitter, reader = (f"{who}-{secrets.token_urlsafe(24)}" for who in ("adm", "sub", "rd"))
    tokens_file = directory / "tokens"
    tokens_file.write_text(
        f"sha256:{hashlib.sha256(admin.encode()).hexdigest()}  admin  ops\n"
        f"{submitter}  submit  producer\n"
        f"{reader}  read  dashboard\n"
    )
    return Secrets(
        certs=certs.make(directory / "certs"),
        tokens_file=tokens_file,
        admin=admin,
        submitter=submitter,
        reader=reader,
    )


@dataclasses.dataclass
class Secured:
    env: GatewayEnv
    secrets: Secrets

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.env.gateway.port}"

    def client(self, token: str | None) -> AsyncClient:
        return AsyncClient(self.target, tls_ca=self.secrets.certs.ca, token=token, timeout=10)


@pytest_asyncio.fixture
async def secured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Secured]:
    monkeypatch.delenv("TASKYARD_TOKEN", raising=False)
    s = make_secrets(tmp_path)
    async with gateway_env(
        grpc_tls_cert=str(s.certs.server_cert),
        grpc_tls_key=str(s.certs.server_key),
        grpc_tokens_file=str(s.tokens_file),
    ) as env:
        yield Secured(env, s)


async def _refused(call: object) -> TaskyardError:
    with pytest.raises(TaskyardError) as info:
        await call  # type: ignore[misc]
    return info.value


async def test_python_client_with_ca_and_token(secured: Secured) -> None:
    async with (
        secured.client(secured.secrets.submitter) as producer,
        secured.client(secured.secrets.reader) as reader,
    ):
        task = await producer.submit("add", 2, 3)
        got = await reader.get(task.id)
        assert got.id == task.id and got.name == "add"
        # A submitter may cancel (its own work, by the scope it has).
        cancelled = await producer.cancel(task.id)
        assert cancelled.task.id == task.id


async def test_missing_or_bad_token_is_unauthenticated_with_error_info(secured: Secured) -> None:
    async with secured.client(None) as anonymous, secured.client("x" * 40) as stranger:
        missing = await _refused(anonymous.get("01a229f2-dfc2-783f-8f45-709532fd3560"))
        invalid = await _refused(stranger.submit("add", 1, 2))
    assert missing.code == grpc.StatusCode.UNAUTHENTICATED and missing.reason == "TOKEN_MISSING"
    assert invalid.code == grpc.StatusCode.UNAUTHENTICATED and invalid.reason == "TOKEN_INVALID"
    assert missing.domain == invalid.domain == "taskyard.dev"
    assert "x" * 40 not in invalid.message
    assert secured.env.backend.lane_requests() == 0


async def test_read_token_cannot_change_anything(secured: Secured) -> None:
    async with secured.client(secured.secrets.admin) as admin:
        task = await admin.submit("add", 2, 3)
    async with (
        secured.client(secured.secrets.reader) as reader,
        secured.client(secured.secrets.submitter) as producer,
    ):
        refusals = {
            "cancel": await _refused(reader.cancel(task.id)),
            "purge": await _refused(reader.queues.purge()),
            "pause": await _refused(reader.queues.pause("default")),
            "submit": await _refused(reader.submit("add", 1, 1)),
            "schedule": await _refused(reader.schedules.create("nightly", "add", cron="0 3 * * *")),
            "purge by a submitter": await _refused(producer.queues.purge()),
        }
        for what, exc in refusals.items():
            assert (exc.code, exc.reason) == (grpc.StatusCode.PERMISSION_DENIED, "SCOPE_MISSING"), what
            assert exc.domain == "taskyard.dev"
        assert "needs the scope 'admin'" in refusals["purge"].message
        assert "token 'dashboard' has read" in refusals["purge"].message
        assert (await reader.get(task.id)).state is not None
    assert secured.env.backend.store_asked(contract.STORE_CANCEL) == []


async def test_health_is_open_and_reflection_needs_a_token(secured: Secured) -> None:
    creds = grpc.ssl_channel_credentials(root_certificates=secured.secrets.certs.ca.read_bytes())
    async with grpc.aio.secure_channel(secured.target, creds) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    ca = str(secured.secrets.certs.ca)
    header = ["-H", f"authorization: Bearer {secured.secrets.reader}"]

    def grpcurl_checks() -> None:
        # grpcurl finds the method by reflection, so it sends a token even for health;
        # probes that speak gRPC (kubelet, grpc_health_probe) need none (above).
        health = grpcurl.call(
            secured.target, "grpc.health.v1.Health/Check", {}, plaintext=False, extra=["-cacert", ca, *header]
        )
        assert health == {"status": "SERVING"}
        refused = grpcurl.run_raw(["-cacert", ca, secured.target, "list"], check=False)
        assert refused.returncode != 0 and "Unauthenticated" in refused.stderr
        listed = grpcurl.run_raw(["-cacert", ca, *header, secured.target, "list"]).stdout.split()
        assert "taskyard.v1.TaskService" in listed and "grpc.health.v1.Health" in listed
        # Both versions of reflection are reflection: a read token may ask either.
        for version in ("v1", "v1alpha"):
            method = f"grpc.reflection.{version}.ServerReflection/ServerReflectionInfo"
            reply = grpcurl.call(
                secured.target, method, {"list_services": ""}, plaintext=False, extra=["-cacert", ca, *header]
            )
            # v1 names its fields in JSON as protoc does; v1alpha's descriptor leaves that out.
            listing = reply.get("listServicesResponse") or reply["list_services_response"]
            assert {"name": "taskyard.v1.TaskService"} in listing["service"], reply

    await asyncio.to_thread(grpcurl_checks)


async def test_grpcurl_with_ca_and_token(secured: Secured) -> None:
    ca = str(secured.secrets.certs.ca)

    def run() -> tuple[dict[str, object], dict[str, object], str]:
        submitted = grpcurl.call(
            secured.target,
            "taskyard.v1.TaskService/SubmitTask",
            {"task": {"name": "add", "args": [2, 3]}},
            plaintext=False,
            extra=["-cacert", ca, "-H", f"authorization: Bearer {secured.secrets.submitter}"],
        )
        task_id = submitted["task"]["id"]
        got = grpcurl.call(
            secured.target,
            "taskyard.v1.TaskService/GetTask",
            {"id": task_id},
            plaintext=False,
            extra=["-cacert", ca, "-H", f"authorization: Bearer {secured.secrets.reader}"],
        )
        # A token for reflection only: the call itself goes without one.
        anonymous = grpcurl.run_raw(
            [
                "-cacert",
                ca,
                "-reflect-header",
                f"authorization: Bearer {secured.secrets.reader}",
                "-d",
                f'{{"id":"{task_id}"}}',
                secured.target,
                "taskyard.v1.TaskService/GetTask",
            ],
            check=False,
        )
        return submitted, got, anonymous.stdout + anonymous.stderr

    submitted, got, anonymous = await asyncio.to_thread(run)
    assert got["task"]["id"] == submitted["task"]["id"]  # type: ignore[index]
    assert "Unauthenticated" in anonymous and "TOKEN_MISSING" in anonymous
    # Without the CA, the gateway's certificate is not trusted.
    untrusted = await asyncio.to_thread(
        grpcurl.run_raw, ["-cacert", str(secured.secrets.certs.other_ca), secured.target, "list"], check=False
    )
    assert untrusted.returncode != 0


async def test_cli_with_ca_and_token(secured: Secured, tmp_path: Path) -> None:
    async with secured.client(secured.secrets.admin) as admin:
        task = await admin.submit("add", 2, 3)
    reader_file = tmp_path / "reader-token"
    reader_file.write_text(secured.secrets.reader + "\n")
    base = {k: v for k, v in os.environ.items() if not k.startswith("TASKYARD_")}

    async def cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "taskyard.cli",
            *args,
            env={**base, **(env or {})},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode is not None
        return proc.returncode, out.decode(), err.decode()

    ca = str(secured.secrets.certs.ca)
    where = ["--target", secured.target, "--tls-ca", ca]
    code, out, err = await cli("task", "get", task.id, *where, "--token-file", str(reader_file))
    assert code == 0, err
    assert task.id in out
    # The same from the environment.
    env = {
        "TASKYARD_TARGET": secured.target,
        "TASKYARD_TLS_CA": ca,
        "TASKYARD_TOKEN": secured.secrets.submitter,
    }
    code, out, err = await cli("task", "submit", "add", "1", "2", env=env)
    assert code == 0, err
    # submit --wait is one RunTask, which the submit scope covers (no read of other tasks):
    # the fake task never ends, so the wait runs out (status 4), with no refusal.
    wait = ("--wait", "--wait-timeout", "300ms")
    code, _out, err = await cli("task", "submit", "add", "1", "2", *wait, env=env)
    assert code == 4 and "timed out waiting" in err, err
    code, _out, err = await cli("queue", "purge", "--yes", *where, "--token-file", str(reader_file))
    assert code == 1 and "PERMISSION_DENIED" in err and "SCOPE_MISSING" in err, err
    code, _out, err = await cli("task", "cancel", task.id, *where, "--token-file", str(reader_file))
    assert code == 1 and "PERMISSION_DENIED" in err, err
    code, _out, err = await cli("task", "get", task.id, *where)
    assert code == 1 and "UNAUTHENTICATED" in err, err
    for secret in secured.secrets.all:
        assert secret not in err


async def test_tokens_never_appear_in_logs(secured: Secured, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    s = secured.secrets
    async with secured.client(s.admin) as admin, secured.client(s.reader) as reader:
        task = await admin.submit("add", 2, 3)
        await reader.get(task.id)
        await _refused(reader.queues.purge())
    async with secured.client(s.submitter[::-1]) as stranger:
        await _refused(stranger.get(task.id))
    # A reload that fails (its file quotes a token on a broken line) is logged without it.
    s.tokens_file.write_text(f"{s.admin}\n")
    assert not secured.env.gateway.tokens or not secured.env.gateway.tokens.reload()
    s.tokens_file.write_text(f"{s.submitter} submit producer\n")
    assert secured.env.gateway.tokens is not None and secured.env.gateway.tokens.reload()
    text = caplog.text
    assert "refused /taskyard.v1.QueueService/PurgeTasks: SCOPE_MISSING" in text
    assert "not reloaded" in text and "tokens loaded" in text
    for secret in (*s.all, s.submitter[::-1]):
        assert secret not in text


async def test_mutual_tls_needs_a_client_certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TASKYARD_TOKEN", raising=False)
    s = make_secrets(tmp_path)
    c = s.certs
    async with gateway_env(
        grpc_tls_cert=str(c.server_cert),
        grpc_tls_key=str(c.server_key),
        grpc_tls_client_ca=str(c.ca),
        grpc_tokens_file=str(s.tokens_file),
    ) as env:
        target = f"127.0.0.1:{env.gateway.port}"
        async with AsyncClient(target, tls_ca=c.ca, token=s.reader, timeout=5) as no_cert:
            exc = await _refused(no_cert.list())
        assert exc.code == grpc.StatusCode.UNAVAILABLE
        async with AsyncClient(
            target, tls_ca=c.ca, tls_cert=c.client_cert, tls_key=c.client_key, token=s.submitter, timeout=5
        ) as with_cert:
            task = await with_cert.submit("add", 2, 3)
            assert task.name == "add"
        extra = ["-cacert", str(c.ca), "-cert", str(c.client_cert), "-key", str(c.client_key)]
        extra += ["-H", f"authorization: Bearer {s.reader}"]
        health = await asyncio.to_thread(
            grpcurl.call, target, "grpc.health.v1.Health/Check", {}, plaintext=False, extra=extra
        )
        assert health == {"status": "SERVING"}


async def test_plaintext_loopback_with_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tokens without TLS on loopback (a dev gateway): the client sends its token over local
    credentials, and refuses to send it in clear to any other host."""
    monkeypatch.delenv("TASKYARD_TOKEN", raising=False)
    s = make_secrets(tmp_path)
    async with gateway_env(grpc_tokens_file=str(s.tokens_file)) as env:
        async with AsyncClient(env.target, token=s.reader, timeout=5) as reader:
            exc = await _refused(reader.submit("add", 1, 2))
            assert exc.code == grpc.StatusCode.PERMISSION_DENIED
        monkeypatch.setenv("TASKYARD_TOKEN", s.submitter)
        async with AsyncClient(env.target, timeout=5) as from_env:
            assert (await from_env.submit("add", 1, 2)).name == "add"
    with pytest.raises(ValueError, match="only over TLS or to a loopback"):
        AsyncClient("gateway.example.com:50051", token=s.reader)


def test_a_remote_listener_without_tls_and_tokens_is_refused(tmp_path: Path) -> None:
    settings = Settings(grpc_host="0.0.0.0", grpc_port=0, transport="ipc", ipc_dir=str(tmp_path))
    with pytest.raises(tls.ListenRefused, match="not loopback"):
        Gateway(settings)
    s = make_secrets(tmp_path)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "TASKYARD_GRPC_HOST": "0.0.0.0",
        "TASKYARD_GRPC_PORT": "0",
        "TASKYARD_TLS_CERT": str(s.certs.server_cert),
        "TASKYARD_TLS_KEY": str(s.certs.server_key),
        "TASKYARD_TRANSPORT": "ipc",
        "TASKYARD_IPC_DIR": str(tmp_path),
    }
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "taskyard.gateway"], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    assert "not starting: refusing to serve gRPC on 0.0.0.0" in proc.stderr
    assert "TASKYARD_AUTH_TOKENS_FILE" in proc.stderr and "Traceback" not in proc.stderr


async def test_error_details_are_google_rpc_status(secured: Secured) -> None:
    """The raw status: ErrorInfo in grpc-status-details-bin, for clients in any language."""
    creds = grpc.ssl_channel_credentials(root_certificates=secured.secrets.certs.ca.read_bytes())
    async with grpc.aio.secure_channel(secured.target, creds) as channel:
        from taskyard.v1 import task_service_pb2, task_service_pb2_grpc

        stub = task_service_pb2_grpc.TaskServiceStub(channel)
        call = stub.SubmitTask(
            task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name="add")),
            metadata=(("authorization", "Basic dXNlcjpwYXNz"),),
            timeout=5,
        )
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await call
    status = rpc_status.from_call(info.value)  # type: ignore[arg-type]
    assert status is not None and status.code == grpc.StatusCode.UNAUTHENTICATED.value[0]
    detail = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(detail)
    assert (detail.reason, detail.domain) == ("TOKEN_INVALID", "taskyard.dev")


async def test_health_port_answers_probes_in_plaintext_and_serves_nothing_else(tmp_path: Path) -> None:
    s = make_secrets(tmp_path)
    async with gateway_env(
        grpc_tls_cert=str(s.certs.server_cert),
        grpc_tls_key=str(s.certs.server_key),
        grpc_tokens_file=str(s.tokens_file),
        grpc_health_port=ports.free_port(),
    ) as env:
        health_target = f"127.0.0.1:{env.gateway.health_port}"
        async with grpc.aio.insecure_channel(health_target) as channel:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=5
            )
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
            # The probe port is no back door to the API: no TLS there, so no TaskService either.
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await task_service_pb2_grpc.TaskServiceStub(channel).GetTask(
                    task_service_pb2.GetTaskRequest(id="01a229f2-dfc2-783f-8f45-709532fd3560"), timeout=5
                )
            assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED


async def test_a_method_nobody_serves_needs_a_token_before_unimplemented(secured: Secured) -> None:
    """Without a token, a name the gateway does not serve is refused like any other: so
    probing names says nothing about the API. With any valid token it is UNIMPLEMENTED."""
    creds = grpc.ssl_channel_credentials(root_certificates=secured.secrets.certs.ca.read_bytes())
    async with grpc.aio.secure_channel(secured.target, creds) as channel:

        async def code(method: str, token: str | None, *, streaming: bool = False) -> grpc.StatusCode:
            metadata = () if token is None else (("authorization", f"Bearer {token}"),)
            if streaming:
                stream = channel.stream_stream(
                    method, request_serializer=lambda b: b, response_deserializer=lambda b: b
                )
                # No message is written: the gateway answers on the headers alone, and a
                # write racing that answer makes grpcio's asyncio client report INTERNAL in
                # place of the server's status (grpc/grpc#36066).
                call = stream(None, metadata=metadata, timeout=5)
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await call.read()
            else:
                unary = channel.unary_unary(
                    method, request_serializer=lambda b: b, response_deserializer=lambda b: b
                )
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await unary(b"", metadata=metadata, timeout=5)
            return info.value.code()

        for method in ("/taskyard.v1.TaskService/NoSuchMethod", "/no.such.Service/Call"):
            assert await code(method, None) == grpc.StatusCode.UNAUTHENTICATED, method
            assert await code(method, "x" * 40) == grpc.StatusCode.UNAUTHENTICATED, method
            assert await code(method, None, streaming=True) == grpc.StatusCode.UNAUTHENTICATED, method
            # A read token holds no admin scope: what a name nobody serves needs is a token alone.
            assert await code(method, secured.secrets.reader) == grpc.StatusCode.UNIMPLEMENTED, method
            assert await code(method, secured.secrets.admin, streaming=True) == grpc.StatusCode.UNIMPLEMENTED
