"""``python -m taskyard.gateway`` as a real process: ready line with the real port,
health SERVING once the store answers, reflection, clean exit on SIGTERM."""

# ruff: noqa: ASYNC220 - a test driving a child process

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from integration.gateway_fakes import FakeBackend, make_settings
from support.waiting import wait_until_async

from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc


async def _ready_port(proc: subprocess.Popen[bytes], log: Path) -> int:
    def port() -> int | None:
        m = re.search(r"gateway ready on 127\.0\.0\.1:(\d+)", log.read_text())
        if m:
            return int(m.group(1))
        assert proc.poll() is None, log.read_text()
        return None

    return await wait_until_async(port, 20, lambda: "the gateway's ready line:\n" + log.read_text(), 0.05)


async def _health(channel: grpc.aio.Channel, service: str = "") -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    resp = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=2)
    return int(resp.status)


async def test_gateway_process() -> None:
    ipc_dir = Path(tempfile.mkdtemp(prefix="tygwp-", dir="/tmp"))
    settings = make_settings(ipc_dir)
    env = {**os.environ, **settings.to_env(), "TASKYARD_GRPC_PORT": "0"}
    log = ipc_dir / "gateway.log"
    with log.open("wb") as out:
        # Started before its backends: it must come up NOT_SERVING and turn SERVING.
        proc = subprocess.Popen([sys.executable, "-m", "taskyard.gateway"], env=env, stdout=out, stderr=out)
    backend: FakeBackend | None = None
    try:
        port = await _ready_port(proc, log)
        assert port != 0
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            assert await _health(channel) == health_pb2.HealthCheckResponse.NOT_SERVING
            backend = FakeBackend(settings)
            await backend.start()

            async def serving() -> bool:
                return await _health(channel) == health_pb2.HealthCheckResponse.SERVING

            await wait_until_async(serving, 10, lambda: "health SERVING:\n" + log.read_text(), 0.1)
            assert await _health(channel, "taskyard.v1.TaskService") == health_pb2.HealthCheckResponse.SERVING

            # Reflection: the service list and a file descriptor, without .proto files.
            refl = reflection_pb2_grpc.ServerReflectionStub(channel)

            async def ask(
                req: reflection_pb2.ServerReflectionRequest,
            ) -> reflection_pb2.ServerReflectionResponse:
                call = refl.ServerReflectionInfo()
                await call.write(req)
                await call.done_writing()
                resp = await call.read()
                assert isinstance(resp, reflection_pb2.ServerReflectionResponse)
                return resp

            listed = await ask(reflection_pb2.ServerReflectionRequest(list_services=""))
            names = {s.name for s in listed.list_services_response.service}
            assert {
                "taskyard.v1.TaskService",
                "grpc.health.v1.Health",
                "grpc.reflection.v1alpha.ServerReflection",
            } <= names
            described = await ask(
                reflection_pb2.ServerReflectionRequest(file_containing_symbol="taskyard.v1.TaskService")
            )
            assert described.file_descriptor_response.file_descriptor_proto

            # And it serves: a submission once the pool's names are announced.
            stub = task_service_pb2_grpc.TaskServiceStub(channel)

            async def submitted() -> task_service_pb2.SubmitTaskResponse | None:
                try:
                    return await stub.SubmitTask(
                        task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name="add")), timeout=3
                    )
                except grpc.aio.AioRpcError as exc:
                    assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT, exc
                    return None

            resp = await wait_until_async(submitted, 10, "the gateway to know a pool serving 'add'", 0.1)
            assert resp.created and backend.lane_requests() == 1

        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 15) == 0
        assert "gateway stopped" in log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if backend is not None:
            await backend.close()
        shutil.rmtree(ipc_dir, ignore_errors=True)
