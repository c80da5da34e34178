"""A stopping gateway gives the calls in flight their grace, and no more than that
to connections without a call: a client that holds an idle connection (a sync
one reads nothing between calls, so never sees the GOAWAY) does not hold the
stop for the whole grace. Nor do streams that only wait: a health Watch, a log
stream, an idle worker's stream each end at once, and say why."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from integration.gateway_fakes import FakeBackend, make_settings
from support.waiting import wait_until_async

from taskyard.client import TaskyardError
from taskyard.gateway.server import Gateway
from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc
from taskyard.worker.v1 import worker_service_pb2 as wpb
from taskyard.worker.v1 import worker_service_pb2_grpc as wgrpc

# Far longer than the test may run: a stop that waited for it would time the test out.
GRACE = 3600.0

# One call, then the connection stays open and idle until stdin closes.
IDLE_CLIENT = """
import sys
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
channel = grpc.insecure_channel(sys.argv[1])
health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
print("called", flush=True)
sys.stdin.read()
"""


@contextlib.asynccontextmanager
async def _gateway() -> AsyncIterator[tuple[Gateway, FakeBackend]]:
    ipc_dir = Path(tempfile.mkdtemp(prefix="tygws-", dir="/tmp"))
    settings = make_settings(ipc_dir)
    backend = FakeBackend(settings)
    await backend.start()
    gateway = Gateway(settings)
    try:
        await gateway.start()
        await wait_until_async(
            lambda: {"add", "echo"} <= gateway.names.snapshot() and gateway.serving,
            10,
            "the gateway to learn the pool's task names and serve",
        )
        yield gateway, backend
    finally:
        await backend.close()
        shutil.rmtree(ipc_dir, ignore_errors=True)


@pytest.mark.timeout(60)
async def test_an_idle_client_connection_does_not_hold_a_stopping_gateway() -> None:
    async with _gateway() as (gateway, _):
        client = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            IDLE_CLIENT,
            f"127.0.0.1:{gateway.port}",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        try:
            assert client.stdout is not None
            assert await client.stdout.readline() == b"called\n"
            await gateway.stop(GRACE)  # returns once no call runs, the connection still open
            assert client.returncode is None
        finally:
            if client.returncode is None:
                client.kill()
            await client.wait()


@pytest.mark.timeout(60)
async def test_a_call_in_flight_when_the_gateway_stops_ends_with_its_answer() -> None:
    async with _gateway() as (gateway, backend):
        backend.lane_gate = asyncio.Event()
        draining = asyncio.Event()
        drained = gateway.admission.drained

        async def watched_drain() -> None:
            draining.set()
            await drained()

        gateway.admission.drained = watched_drain  # type: ignore[method-assign]
        async with grpc.aio.insecure_channel(f"127.0.0.1:{gateway.port}") as channel:
            stub = task_service_pb2_grpc.TaskServiceStub(channel)
            call = asyncio.ensure_future(
                stub.SubmitTask(
                    task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name="add")), timeout=30
                )
            )
            await backend.lane_entered.wait()
            stopping = asyncio.ensure_future(gateway.stop(GRACE))
            await draining.wait()
            assert not call.done() and not stopping.done()
            backend.lane_gate.set()
            reply = await call
            assert reply.created
            await stopping


@pytest.mark.timeout(60)
async def test_a_health_watch_ends_with_not_serving_when_the_gateway_stops() -> None:
    async with (
        _gateway() as (gateway, _),
        grpc.aio.insecure_channel(f"127.0.0.1:{gateway.port}") as channel,
    ):
        watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest())
        assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
        stopping = asyncio.ensure_future(gateway.stop(GRACE))
        statuses = []
        while (answer := await watch.read()) is not grpc.aio.EOF:  # type: ignore[attr-defined]
            statuses.append(answer.status)
        assert statuses and set(statuses) == {health_pb2.HealthCheckResponse.NOT_SERVING}
        assert await watch.code() == grpc.StatusCode.OK
        await stopping


@pytest.mark.timeout(60)
async def test_a_log_stream_ends_after_its_lines_when_the_gateway_stops() -> None:
    async with _gateway() as (gateway, backend):
        task_id = str(uuid.uuid4())
        backend.logs[task_id] = ["the first line"]
        async with grpc.aio.insecure_channel(f"127.0.0.1:{gateway.port}") as channel:
            stub = task_service_pb2_grpc.TaskServiceStub(channel)
            stream = stub.StreamTaskLogs(task_service_pb2.StreamTaskLogsRequest(id=task_id))
            first = await stream.read()
            assert [line.message for line in first.logs] == ["the first line"]
            stopping = asyncio.ensure_future(gateway.stop(GRACE))
            with pytest.raises(grpc.aio.AioRpcError) as ended:
                await stream.read()
            error = TaskyardError.from_rpc_error(ended.value)
            assert (error.code, error.reason) == (grpc.StatusCode.UNAVAILABLE, "GATEWAY_STOPPING")
            assert "from_offset" in error.message
            await stopping


@pytest.mark.timeout(60)
async def test_an_idle_workers_stream_ends_when_the_gateway_stops() -> None:
    async with _gateway() as (gateway, _):
        outgoing: asyncio.Queue[wpb.WorkRequest] = asyncio.Queue()

        async def requests() -> AsyncIterator[wpb.WorkRequest]:
            while True:
                yield await outgoing.get()

        async with grpc.aio.insecure_channel(f"127.0.0.1:{gateway.port}") as channel:
            call = wgrpc.WorkerServiceStub(channel).Work(requests())
            hello = wpb.Hello(worker_name="idle", slots=1, tasks=[wpb.TaskDeclaration(name="idle.work")])
            outgoing.put_nowait(wpb.WorkRequest(hello=hello))
            assert (await call.read()).WhichOneof("message") == "welcome"
            stopping = asyncio.ensure_future(gateway.stop(GRACE))
            with pytest.raises(grpc.aio.AioRpcError) as ended:
                while True:
                    await call.read()
            error = TaskyardError.from_rpc_error(ended.value)
            assert (error.code, error.reason) == (grpc.StatusCode.UNAVAILABLE, "GATEWAY_STOPPING")
            await stopping
