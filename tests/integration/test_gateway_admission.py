"""A busy gateway still answers its probes and cheap reads: long calls and unary calls
have limits of their own, Health/Check has none; a taken port is an error."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from google.protobuf import duration_pb2
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status
from integration.gateway_fakes import GatewayEnv, gateway_env
from support.waiting import wait_until_async

from taskyard.core import contract
from taskyard.gateway import tls
from taskyard.gateway.admission import Gate
from taskyard.gateway.server import Gateway, server_options
from taskyard.v1 import task_pb2, task_service_pb2

TESTS_DIR = Path(__file__).resolve().parent.parent


def _wait_req(task_id: str, seconds: float) -> task_service_pb2.WaitTaskRequest:
    d = duration_pb2.Duration()
    d.FromNanoseconds(int(seconds * 1e9))
    return task_service_pb2.WaitTaskRequest(id=task_id, timeout=d)


async def _until(gate: Gate, in_flight: int, within: float = 30.0) -> None:
    await wait_until_async(
        lambda: gate.in_flight == in_flight,
        within,
        lambda: f"{in_flight} {gate.kind} calls in flight (now {gate.in_flight})",
    )


def _error_info(exc: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo:
    status = rpc_status.from_call(exc)  # type: ignore[arg-type]
    assert status is not None
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    return info


@pytest_asyncio.fixture
async def small(request: pytest.FixtureRequest) -> AsyncIterator[GatewayEnv]:
    async with gateway_env(grpc_max_concurrent_rpcs=2, grpc_max_concurrent_long_rpcs=3) as env:
        yield env


async def test_long_and_unary_calls_have_their_own_limits(small: GatewayEnv) -> None:
    gw = small
    health = health_pb2_grpc.HealthStub(gw.channel)
    task_id = (
        await gw.stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name="add")))
    ).task.id
    long_gate, unary_gate = gw.gateway.admission.long, gw.gateway.admission.unary

    waits = [gw.stub.WaitTask(_wait_req(task_id, 30)) for _ in range(3)]
    await _until(long_gate, 3)
    with pytest.raises(grpc.aio.AioRpcError) as over:
        await gw.stub.WaitTask(_wait_req(task_id, 30))
    assert over.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    info = _error_info(over.value)
    assert (info.reason, info.domain) == ("TOO_MANY_CALLS", "taskyard.dev")
    # Waits fill their own limit only: probes and reads still answer.
    assert (await health.Check(health_pb2.HealthCheckRequest(), timeout=2)).status == 1
    assert (await gw.stub.GetTask(task_service_pb2.GetTaskRequest(id=task_id), timeout=2)).task.id == task_id

    # Unary calls held by a slow lane fill the unary limit; health still answers.
    gw.backend.lane_gate = asyncio.Event()
    submits = [
        gw.stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name="add")))
        for _ in range(2)
    ]
    await _until(unary_gate, 2)
    with pytest.raises(grpc.aio.AioRpcError) as busy:
        await gw.stub.GetTask(task_service_pb2.GetTaskRequest(id=task_id), timeout=2)
    assert busy.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert _error_info(busy.value).reason == "TOO_MANY_CALLS"
    assert (await health.Check(health_pb2.HealthCheckRequest(), timeout=2)).status == 1
    assert unary_gate.refused == 1 and long_gate.refused == 1

    gw.backend.lane_gate.set()
    await asyncio.gather(*submits)
    for w in waits:
        w.cancel()
    # Every call gives its place back, also the cancelled ones.
    await _until(unary_gate, 0)
    await _until(long_gate, 0)


async def _waiting_clients(
    target: str, ids: list[str], tmp_path: Path, *, channels: int
) -> asyncio.subprocess.Process:
    """A process that keeps one WaitTask in flight per id (support/waiting_clients.py)."""
    ids_file = tmp_path / "ids"
    ids_file.write_text("\n".join(ids))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS_DIR), os.environ.get("PYTHONPATH", "")])}
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "support.waiting_clients",
        target,
        str(ids_file),
        "--channels",
        str(channels),
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )


async def test_five_thousand_waits_leave_health_and_reads_answered(tmp_path: Path) -> None:
    """5,000 WaitTask (one per task, from another process) on one gateway: Health/Check
    and GetTask are answered while they arrive and once all wait, nothing is refused.
    How fast is a figure (printed here; bench/latency measures it, and the p99 bound is
    asserted once, against a real cluster, in test_gateway_security.py)."""
    async with gateway_env() as gw:
        calls = 5000
        ids: list[str] = []
        for _ in range(calls // 1000):
            batch = task_service_pb2.BatchSubmitTasksRequest(tasks=[task_pb2.TaskSpec(name="add")] * 1000)
            ids += [t.id for t in (await gw.stub.BatchSubmitTasks(batch)).tasks]
        task_id = ids[0]
        proc = await _waiting_clients(gw.target, ids, tmp_path, channels=4)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            assert (await asyncio.wait_for(proc.stdout.readline(), 60)).strip() == b"launched"
            health = health_pb2_grpc.HealthStub(gw.channel)
            checks: list[float] = []
            reads: list[float] = []

            async def probe(i: int) -> None:
                # A generous deadline: an answer is the claim here, not its speed.
                started = time.perf_counter()
                reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=30)
                checks.append(time.perf_counter() - started)
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
                if i % 4 == 0:
                    started = time.perf_counter()
                    got = await gw.stub.GetTask(task_service_pb2.GetTaskRequest(id=task_id), timeout=30)
                    reads.append(time.perf_counter() - started)
                    assert got.task.id == task_id

            # While the waits arrive (each probe paces the next look), then until the store
            # has re-read every waiting task once more (a full round of the waits' periodic
            # re-reads, WAIT_RECHECK apart), each GetTask of these probes aside.
            while gw.gateway.admission.long.in_flight < calls:
                await probe(len(checks))
            ramp = len(checks)
            reread: set[str] = set()
            seen = len(gw.backend.store_requests)
            while len(reread) < calls:
                await probe(len(checks))
                fresh, seen = gw.backend.store_requests[seen:], len(gw.backend.store_requests)
                reread.update(i for kind, req in fresh if kind == contract.STORE_GET.kind for i in req.ids)
            assert gw.gateway.admission.long.in_flight == calls  # still waiting throughout
            proc.stdin.close()
            summary = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
        finally:
            if proc.returncode is None:
                proc.kill()
            await proc.wait()
        p99 = statistics.quantiles(checks, n=100)[98]
        read_p99 = statistics.quantiles(reads, n=100)[98]
        print(
            f"\n{calls} WaitTask in flight: Health/Check p50 {statistics.median(checks) * 1e3:.2f} ms, "
            f"p99 {p99 * 1e3:.2f} ms, max {max(checks) * 1e3:.2f} ms ({len(checks)} checks, "
            f"{ramp} while the waits arrived); GetTask p50 {statistics.median(reads) * 1e3:.2f} ms, "
            f"p99 {read_p99 * 1e3:.2f} ms, max {max(reads) * 1e3:.2f} ms ({len(reads)})"
        )
        assert summary == {"pending": calls, "finished": {}}, summary
        assert gw.gateway.admission.long.refused == 0 and gw.gateway.admission.unary.refused == 0


async def test_a_second_gateway_on_a_taken_port_fails(tmp_path: Path) -> None:
    async with gateway_env() as gw:
        settings = gw.settings.__class__(**{**gw.settings.__dict__, "grpc_port": gw.gateway.port})
        second = Gateway(settings, discovery_enabled=False)
        try:
            with pytest.raises(
                tls.ListenRefused, match=f"cannot listen on 127.0.0.1:{gw.gateway.port}: the port is taken"
            ):
                await second.start()
        finally:
            await second.stop(0)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("TASKYARD_")},
            **settings.to_env(),
        }
        proc = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "taskyard.gateway"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 2, proc.stderr
        assert f"not starting: cannot listen on 127.0.0.1:{gw.gateway.port}: the port is taken" in proc.stderr
        # The first one still serves.
        reply = await health_pb2_grpc.HealthStub(gw.channel).Check(health_pb2.HealthCheckRequest(), timeout=2)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_connection_limits_are_set() -> None:
    from taskyard.core.config import Settings

    options = dict(server_options(Settings()))
    assert options["grpc.so_reuseport"] == 0
    assert options["grpc.keepalive_time_ms"] == 60_000 and options["grpc.keepalive_timeout_ms"] == 20_000
    assert options["grpc.http2.ping_timeout_ms"] == 20_000
    assert options["grpc.max_connection_idle_ms"] == 300_000
    assert options["grpc.http2.min_recv_ping_interval_without_data_ms"] == 10_000
    assert "grpc.max_connection_age_ms" not in options
    aged = dict(server_options(Settings(grpc_max_connection_age=3600)))
    assert (
        aged["grpc.max_connection_age_ms"] == 3_600_000
        and aged["grpc.max_connection_age_grace_ms"] == 330_000
    )


async def test_a_frozen_client_loses_its_connection_and_its_places(tmp_path: Path) -> None:
    """A peer that stops answering pings (SIGSTOP: its kernel still ACKs TCP, but nothing
    answers HTTP/2) is closed after keepalive time + timeout, and its waits give their
    places back."""
    async with gateway_env(grpc_keepalive_time=1.0, grpc_keepalive_timeout=1.0) as gw:
        batch = task_service_pb2.BatchSubmitTasksRequest(tasks=[task_pb2.TaskSpec(name="add")] * 50)
        ids = [t.id for t in (await gw.stub.BatchSubmitTasks(batch)).tasks]
        proc = await _waiting_clients(gw.target, ids, tmp_path, channels=1)
        assert proc.stdout is not None
        try:
            assert (await asyncio.wait_for(proc.stdout.readline(), 60)).strip() == b"launched"
            await _until(gw.gateway.admission.long, len(ids))
            proc.send_signal(signal.SIGSTOP)
            started = time.monotonic()
            await _until(gw.gateway.admission.long, 0, within=30)
            print(f"\nfrozen client's {len(ids)} waits released after {time.monotonic() - started:.2f} s")
        finally:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
            await proc.wait()
