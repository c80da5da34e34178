"""The client's public channel factory (``Endpoint``) keeps the client's security rules, the CLI
makes its channels through it, and the blocking and asyncio clients take the same options."""

from __future__ import annotations

import inspect
import time
from pathlib import Path

import click
import grpc
import grpc.aio
import pytest
from support import certs

from taskyard.cli.connection import Connection
from taskyard.client import DEFAULT_TARGET, AsyncClient, Client, Endpoint, TaskyardError
from taskyard.client._common import Wait
from taskyard.v1 import task_pb2, task_service_pb2


@pytest.fixture(autouse=True)
def _no_token_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TASKYARD_TOKEN", raising=False)


def test_a_missing_ca_file_is_named_in_the_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "ca.pem"
    with pytest.raises(FileNotFoundError, match=r"tls_ca: cannot read '.*nope/ca\.pem': No such file"):
        Endpoint("gw.example.com:50051", tls_ca=missing).channel()
    with pytest.raises(FileNotFoundError, match="tls_ca: cannot read"):
        Client("gw.example.com:50051", tls_ca=str(missing))
    with pytest.raises(click.UsageError, match="tls_ca: cannot read"):
        Connection(target="gw.example.com:50051", tls_ca=str(missing)).channel()


def test_a_file_that_is_not_pem_is_refused_before_any_call(tmp_path: Path) -> None:
    der = tmp_path / "ca.der"
    der.write_bytes(b"\x30\x82\x01\x0a")
    with pytest.raises(ValueError, match=r"tls_ca \('.*ca\.der'\) is not PEM"):
        Endpoint("gw.example.com:50051", tls_ca=der).aio_channel()
    with pytest.raises(ValueError, match="tls_cert is not PEM"):
        Endpoint("gw.example.com:50051", tls_cert=b"", tls_key=b"-----BEGIN PRIVATE KEY-----").channel()


def test_a_token_goes_only_over_tls_or_to_loopback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="only over TLS or to a loopback address"):
        Endpoint("gw.example.com:50051", token="t" * 16).channel()
    with pytest.raises(click.UsageError, match="only over TLS or to a loopback address"):
        Connection(target="gw.example.com:50051", token="t" * 16).channel()
    # $TASKYARD_TOKEN counts as a token given.
    monkeypatch.setenv("TASKYARD_TOKEN", "t" * 16)
    with pytest.raises(ValueError, match="only over TLS or to a loopback address"):
        AsyncClient("gw.example.com:50051")
    for target in ("localhost:50051", "127.0.0.1:50051", "[::1]:50051", "dns:///localhost:1"):
        Endpoint(target).channel().close()
    ca = certs.make(tmp_path).ca
    Endpoint("gw.example.com:50051", tls_ca=ca).channel().close()
    Endpoint("gw.example.com:50051", tls=True).channel().close()


def test_a_client_certificate_needs_its_key(tmp_path: Path) -> None:
    made = certs.make(tmp_path)
    with pytest.raises(ValueError, match="needs both tls_cert and tls_key"):
        Endpoint("gw.example.com:50051", tls_ca=made.ca, tls_cert=made.client_cert).channel()
    Endpoint(tls_ca=made.ca, tls_cert=made.client_cert, tls_key=made.client_key).channel().close()


async def test_the_factory_makes_blocking_and_asyncio_channels() -> None:
    endpoint = Endpoint(options=[("grpc.max_receive_message_length", 1 << 20)], tls_server_name="gw")
    assert endpoint.target == DEFAULT_TARGET
    with endpoint.channel() as blocking:
        assert isinstance(blocking, grpc.Channel)
    aio = endpoint.aio_channel()
    assert isinstance(aio, grpc.aio.Channel)
    await aio.close(None)


def test_secrets_stay_out_of_repr() -> None:
    shown = repr(Endpoint("gw:1", token="s3cret-token-value", tls_key=b"-----BEGIN PRIVATE KEY-----x"))
    assert "s3cret" not in shown and "PRIVATE" not in shown and "gw:1" in shown


@pytest.mark.parametrize(
    "method",
    ["submit", "list", "iter_tasks", "cancel", "get", "wait", "explain", "tree", "submit_many"],
)
def test_both_clients_take_the_same_arguments(method: str) -> None:
    blocking, aio = (inspect.signature(getattr(c, method)).parameters for c in (Client, AsyncClient))
    assert blocking == aio
    assert inspect.iscoroutinefunction(getattr(AsyncClient, method)) != (method == "iter_tasks")


async def test_both_clients_take_the_same_options_and_schedules() -> None:
    assert inspect.signature(Client) == inspect.signature(AsyncClient)
    with Client() as client:
        blocking = inspect.signature(client.schedules.create)
    async with AsyncClient() as aio:
        assert inspect.signature(aio.schedules.create) == blocking
        assert inspect.iscoroutinefunction(aio.schedules.create)
    assert list(blocking.parameters)[:3] == ["name", "task", "args"]


def test_a_long_wait_is_split_into_server_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr("taskyard.client._common.time.monotonic", lambda: now[0])
    waiting = Wait("t1", 400.0)
    pending = task_pb2.Task(id="t1", state=task_pb2.TASK_STATE_RUNNING)
    req, deadline = waiting.next_call()
    assert (req.id, req.timeout.seconds, deadline) == ("t1", 300, 310.0)
    assert waiting.outcome(task_service_pb2.WaitTaskResponse(task=pending, timed_out=True)) is None
    now[0] += 300
    req, deadline = waiting.next_call()
    assert (req.timeout.seconds, deadline) == (100, 110.0)
    last = waiting.outcome(task_service_pb2.WaitTaskResponse(task=pending, timed_out=True))
    assert last is not None and last.id == "t1"


def test_a_deadline_shorter_than_the_wait_bounds_each_call_then_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [1000.0]
    monkeypatch.setattr("taskyard.client._common.time.monotonic", lambda: now[0])
    waiting = Wait("t1", 10.0, deadline=2.0)
    pending = task_pb2.Task(id="t1", state=task_pb2.TASK_STATE_RUNNING)
    req, limit = waiting.next_call()
    assert (req.timeout.seconds, limit) == (10, 2.0)
    # The gateway answers 0.1 s before the deadline: too little is left for another call.
    now[0] += 1.9
    with pytest.raises(TaskyardError) as refused:
        waiting.outcome(task_service_pb2.WaitTaskResponse(task=pending, timed_out=True))
    assert refused.value.code == grpc.StatusCode.DEADLINE_EXCEEDED


def test_a_wait_shorter_than_its_deadline_returns_the_task_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr("taskyard.client._common.time.monotonic", lambda: now[0])
    waiting = Wait("t1", 1.0, deadline=30.0)
    pending = task_pb2.Task(id="t1", state=task_pb2.TASK_STATE_RUNNING)
    req, limit = waiting.next_call()
    assert (req.timeout.seconds, limit) == (1, 11.0)
    now[0] += 1.0
    task = waiting.outcome(task_service_pb2.WaitTaskResponse(task=pending, timed_out=True))
    assert task is not None and not task.is_final


def test_submits_carry_a_request_id_so_a_resent_call_is_idempotent() -> None:
    from taskyard.client._common import batch_request, submit_request

    made = submit_request("add", 1, 2).task.request_id
    assert made and made != submit_request("add", 1, 2).task.request_id
    assert submit_request("add", request_id="mine").task.request_id == "mine"
    batch = batch_request([{"name": "add"}, {"name": "add", "request_id": "mine"}])
    assert batch.tasks[0].request_id and batch.tasks[1].request_id == "mine"


def test_a_run_waits_at_most_one_call_then_loops_and_keeps_the_task_options() -> None:
    from taskyard.client._common import MAX_SERVER_WAIT, WAIT_SLACK, run_request

    call = run_request("add", 1, 2, wait=900, timeout=5, priority="HIGH")
    assert call.request.timeout.seconds == MAX_SERVER_WAIT and call.wait == 900
    assert call.call_deadline == MAX_SERVER_WAIT + WAIT_SLACK
    assert call.request.task.timeout.seconds == 5 and call.request.task.request_id
    assert call.rest(time.monotonic()) is not None
    short = run_request("add", wait=0.5)
    assert short.request.timeout.nanos == 500_000_000 and short.rest(time.monotonic()) is None
    with pytest.raises(ValueError, match="wait"):
        run_request("add", wait=-1)


def test_gRPC_retries_unavailable_reads_and_submits_but_not_cancels() -> None:
    import json

    from taskyard.client._credentials import channel_options

    options = dict(channel_options(Endpoint("localhost:1")))
    config = json.loads(options["grpc.service_config"])["methodConfig"][0]
    retried = {(n["service"].rsplit(".", 1)[1], n["method"]) for n in config["name"]}
    assert ("TaskService", "SubmitTask") in retried and ("TaskService", "WaitTask") in retried
    assert ("TaskService", "RunTask") in retried  # exactly-once per request_id, as a submit
    assert ("TaskService", "CancelTask") not in retried
    assert config["retryPolicy"]["retryableStatusCodes"] == ["UNAVAILABLE"]
    own = dict(channel_options(Endpoint("localhost:1", options=[("grpc.service_config", "{}")])))
    assert own["grpc.service_config"] == "{}"
