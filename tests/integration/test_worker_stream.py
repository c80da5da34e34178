"""The gateway's side of the public worker protocol, spoken raw: what it refuses at the
start of a stream, fencing by attempt and lease token, a timeout that revokes the lease
and refuses the late outcome, a stream that breaks as a pool that dies (a started
attempt counts as one, a task not started goes back to its queue with none burned), and
a stopping gateway that lets a busy worker finish before it ends the stream.
The worker libraries' behaviour is the conformance suite's (clients/conformance/workers.md)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from support.cluster import Cluster

from taskyard.client import TaskyardError
from taskyard.v1 import (
    limit_service_pb2,
    limit_service_pb2_grpc,
    task_pb2,
    task_service_pb2,
    task_service_pb2_grpc,
)
from taskyard.worker.v1 import worker_service_pb2 as wpb
from taskyard.worker.v1 import worker_service_pb2_grpc as wgrpc

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

WAIT = 30.0


class RawWorker:
    """One Work stream, message by message."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._out: asyncio.Queue[wpb.WorkRequest | None] = asyncio.Queue()
        self.call = wgrpc.WorkerServiceStub(channel).Work(self._requests())

    async def _requests(self) -> AsyncIterator[wpb.WorkRequest]:
        while (msg := await self._out.get()) is not None:
            yield msg

    def send(self, **message: Any) -> None:
        self._out.put_nowait(wpb.WorkRequest(**message))

    def close_send(self) -> None:
        self._out.put_nowait(None)

    async def read(self, kind: str) -> Any:
        """The next message of ``kind``; heartbeats go out meanwhile (the stream stays alive)."""
        while True:
            self.send(heartbeat=wpb.Heartbeat())
            msg = await asyncio.wait_for(self.call.read(), WAIT)
            assert msg is not grpc.aio.EOF, f"the stream ended waiting for {kind}"  # type: ignore[attr-defined]
            if msg.WhichOneof("message") == kind:
                return getattr(msg, kind)

    async def hello(self, *names: str, slots: int = 2, timeout_ms: int = 0) -> wpb.Welcome:
        tasks = []
        for name in names:
            decl = wpb.TaskDeclaration(name=name)
            if timeout_ms:
                decl.timeout.FromMilliseconds(timeout_ms)
            tasks.append(decl)
        self.send(hello=wpb.Hello(worker_name="raw", slots=slots, sdk="test/raw", tasks=tasks))
        welcome: wpb.Welcome = await self.read("welcome")
        return welcome


def ref_of(a: wpb.Attempt, token: str | None = None) -> wpb.AttemptRef:
    return wpb.AttemptRef(
        task_id=a.task_id, attempt=a.attempt, lease_token=a.lease_token if token is None else token
    )


async def submit(channel: grpc.aio.Channel, name: str, *args: Any, **spec: Any) -> str:
    values = struct_pb2.ListValue()
    values.extend(list(args))
    stub = task_service_pb2_grpc.TaskServiceStub(channel)
    reply = await stub.SubmitTask(
        task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name=name, args=values, **spec))
    )
    return str(reply.task.id)


async def wait(channel: grpc.aio.Channel, task_id: str) -> task_pb2.Task:
    stub = task_service_pb2_grpc.TaskServiceStub(channel)
    req = task_service_pb2.WaitTaskRequest(id=task_id)
    req.timeout.FromSeconds(int(WAIT))
    reply = await stub.WaitTask(req)
    task: task_pb2.Task = reply.task
    return task


def run(cluster: Cluster, scenario: Any) -> None:
    async def main() -> None:
        async with grpc.aio.insecure_channel(cluster.target) as channel:
            await scenario(channel)

    asyncio.run(main())


def test_a_stream_must_begin_with_a_valid_hello(cluster: Cluster) -> None:
    async def scenario(channel: grpc.aio.Channel) -> None:
        w = RawWorker(channel)
        w.send(heartbeat=wpb.Heartbeat())
        with pytest.raises(grpc.aio.AioRpcError) as first:
            await w.call.read()
        assert first.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert "must be a Hello" in (first.value.details() or "")

        w = RawWorker(channel)
        w.send(hello=wpb.Hello(slots=0, tasks=[wpb.TaskDeclaration(name="a"), wpb.TaskDeclaration(name="a")]))
        with pytest.raises(grpc.aio.AioRpcError) as bad:
            await w.call.read()
        assert bad.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert "hello.slots" in (bad.value.details() or "")
        assert "named twice" in (bad.value.details() or "")

    run(cluster, scenario)


def test_only_the_current_lease_may_report(cluster: Cluster) -> None:
    async def scenario(channel: grpc.aio.Channel) -> None:
        w = RawWorker(channel)
        welcome = await w.hello("stream.echo")
        task_id = await submit(channel, "stream.echo", "hi")
        a = (await w.read("attempts")).attempts[0]
        assert (a.task_id, a.name, a.attempt, list(a.args)) == (task_id, "stream.echo", 1, ["hi"])
        w.send(started=wpb.Started(ref=ref_of(a)))
        forged = ref_of(a, token="not-the-lease")
        w.send(outcome=wpb.Outcome(ref=forged, result=struct_pb2.Value(string_value="forged")))
        refused = await w.read("refused")
        assert refused.ref == forged
        w.send(outcome=wpb.Outcome(ref=ref_of(a), result=struct_pb2.Value(string_value="hi!")))
        task = await wait(channel, task_id)
        assert task.state == task_pb2.TASK_STATE_SUCCESS
        assert task.result.string_value == "hi!"
        assert task.worker_id == welcome.worker_id
        w.close_send()

    run(cluster, scenario)


def test_reports_carry_several_starts_and_outcomes_each_fenced(cluster: Cluster) -> None:
    async def scenario(channel: grpc.aio.Channel) -> None:
        w = RawWorker(channel)
        welcome = await w.hello("stream.echo", slots=2)
        assert welcome.max_message_bytes == 4 * 1024 * 1024  # the gRPC port's limit, not the bus's
        ids = {await submit(channel, "stream.echo", x) for x in ("a", "b")}
        held: list[wpb.Attempt] = []
        while len(held) < 2:
            held.extend((await w.read("attempts")).attempts)
        forged = ref_of(held[1], token="not-the-lease")
        outcomes = [
            wpb.Outcome(ref=ref_of(a), result=struct_pb2.Value(string_value=f"{a.args[0]}!")) for a in held
        ]
        outcomes.insert(1, wpb.Outcome(ref=forged, result=struct_pb2.Value(string_value="forged")))
        # One message: both starts, then the outcomes (the start of each goes with it).
        w.send(reports=wpb.Reports(started=[wpb.Started(ref=ref_of(a)) for a in held], outcomes=outcomes))
        refused = await w.read("refused")
        assert refused.ref == forged
        for task_id in ids:
            task = await wait(channel, task_id)
            assert task.state == task_pb2.TASK_STATE_SUCCESS and task.worker_id == welcome.worker_id
            assert task.result.string_value == f"{task.args[0]}!" and task.HasField("started_at")
        w.close_send()

    run(cluster, scenario)


def test_progress_is_kept_in_the_tasks_context(cluster: Cluster) -> None:
    async def scenario(channel: grpc.aio.Channel) -> None:
        w = RawWorker(channel)
        await w.hello("stream.chatty")
        task_id = await submit(channel, "stream.chatty")
        a = (await w.read("attempts")).attempts[0]
        w.send(started=wpb.Started(ref=ref_of(a)))
        w.send(progress=wpb.Progress(ref=ref_of(a), fraction=0.5, message="half"))
        w.send(outcome=wpb.Outcome(ref=ref_of(a), result=struct_pb2.Value(string_value="ok")))
        assert (await wait(channel, task_id)).state == task_pb2.TASK_STATE_SUCCESS
        stub = task_service_pb2_grpc.TaskServiceStub(channel)
        task = (await stub.GetTask(task_service_pb2.GetTaskRequest(id=task_id))).task
        # As a Python pool's ctx.progress stores it.
        progress = task.context.fields["progress"].struct_value.fields
        assert progress["fraction"].number_value == 0.5, task.context
        assert progress["message"].string_value == "half", task.context
        w.close_send()

    run(cluster, scenario)


def test_a_timeout_revokes_the_lease_and_refuses_the_late_outcome(cluster: Cluster) -> None:
    async def scenario(channel: grpc.aio.Channel) -> None:
        w = RawWorker(channel)
        await w.hello("stream.slow", timeout_ms=300)
        task_id = await submit(channel, "stream.slow", max_retries=0)
        a = (await w.read("attempts")).attempts[0]
        assert a.HasField("deadline")
        w.send(started=wpb.Started(ref=ref_of(a)))
        revoke = await w.read("revoke")
        assert revoke.ref == ref_of(a)
        task = await wait(channel, task_id)
        assert task.state == task_pb2.TASK_STATE_FAILURE
        assert task.failure.type == "TimeoutError"
        w.send(outcome=wpb.Outcome(ref=ref_of(a), result=struct_pb2.Value(string_value="late")))
        await w.read("refused")  # sent once the store has refused and counted it
        stub = task_service_pb2_grpc.TaskServiceStub(channel)
        got = (await stub.GetTask(task_service_pb2.GetTaskRequest(id=task_id))).task
        assert got.late_reports == 1
        assert got.state == task_pb2.TASK_STATE_FAILURE

    run(cluster, scenario)


def test_a_broken_stream_is_a_pool_that_died(cluster: Cluster) -> None:
    async def scenario(channel: grpc.aio.Channel) -> None:
        w = RawWorker(channel)
        await w.hello("stream.fragile", slots=2)
        started_id = await submit(channel, "stream.fragile", 1, max_retries=2)
        idle_id = await submit(channel, "stream.fragile", 2, max_retries=2)
        held: dict[str, wpb.Attempt] = {}
        while len(held) < 2:
            for a in (await w.read("attempts")).attempts:
                held[a.task_id] = a
        w.send(started=wpb.Started(ref=ref_of(held[started_id])))
        # The stream is read in order: the refusal of what follows the start shows the
        # gateway took the start before the stream breaks.
        w.send(started=wpb.Started(ref=ref_of(held[idle_id], token="not-the-lease")))
        await w.read("refused")
        w.call.cancel()

        again = RawWorker(channel)
        await again.hello("stream.fragile", slots=2)
        second: dict[str, wpb.Attempt] = {}
        while len(second) < 2:
            for a in (await again.read("attempts")).attempts:
                second[a.task_id] = a
        # Every re-run is a new attempt; the one never started is not charged.
        stub = task_service_pb2_grpc.TaskServiceStub(channel)
        idle = (await stub.GetTask(task_service_pb2.GetTaskRequest(id=idle_id))).task
        started = (await stub.GetTask(task_service_pb2.GetTaskRequest(id=started_id))).task
        assert (idle.attempt, idle.uncharged_attempts) == (2, 1)
        assert (started.attempt, started.uncharged_attempts) == (2, 0)
        assert started.failure.type == "WorkerProcessDied"
        assert (second[idle_id].retries_left, second[started_id].retries_left) == (1, 0)
        for a in second.values():
            again.send(outcome=wpb.Outcome(ref=ref_of(a), result=struct_pb2.Value(number_value=a.attempt)))
        for task_id in (started_id, idle_id):
            assert (await wait(channel, task_id)).state == task_pb2.TASK_STATE_SUCCESS
        again.close_send()

    run(cluster, scenario)


# Far longer than the test may run: a stop that waited out its grace would time the test out.
@pytest.mark.cluster(grpc_stop_grace=3600.0)
def test_a_stopping_gateway_ends_a_busy_workers_stream_once_its_attempt_has(cluster: Cluster) -> None:
    task_id = ""

    async def scenario(channel: grpc.aio.Channel) -> None:
        nonlocal task_id
        w = RawWorker(channel)
        await w.hello("stream.stopping", slots=2)
        task_id = await submit(channel, "stream.stopping", 1)
        (held,) = (await w.read("attempts")).attempts
        w.send(started=wpb.Started(ref=ref_of(held)))
        watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest())
        assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
        cluster.kill("gateway", signal.SIGTERM, wait=False)
        assert (await watch.read()).status == health_pb2.HealthCheckResponse.NOT_SERVING  # stopping
        # The stream stays open for what the worker holds, and ends once its outcome is in.
        w.send(outcome=wpb.Outcome(ref=ref_of(held), result=struct_pb2.Value(number_value=7)))
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            while True:
                await w.call.read()
        error = TaskyardError.from_rpc_error(ended.value)
        assert (error.code, error.reason) == (grpc.StatusCode.UNAVAILABLE, "GATEWAY_STOPPING")
        assert await asyncio.to_thread(cluster.process("gateway").wait, WAIT) == 0

    run(cluster, scenario)
    rows = cluster.query("SELECT state::text, attempt, result FROM tasks WHERE id = $1::uuid", task_id)
    assert [(r["state"], r["attempt"], r["result"]) for r in rows] == [("SUCCESS", 1, "7")]


def test_declared_limits_apply_to_the_functions_tasks(cluster: Cluster) -> None:
    async def scenario(channel: grpc.aio.Channel) -> None:
        w = RawWorker(channel)
        w.send(hello=wpb.Hello(slots=1, tasks=[wpb.TaskDeclaration(name="stream.paced", rate_limit="often")]))
        with pytest.raises(grpc.aio.AioRpcError) as bad:
            await w.call.read()
        assert bad.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert "hello.tasks[0].rate_limit" in (bad.value.details() or "")

        w = RawWorker(channel)
        decl = wpb.TaskDeclaration(name="stream.paced", rate_limit="50/s", concurrency=2, limit_key="account")
        w.send(hello=wpb.Hello(slots=1, tasks=[decl]))
        await w.read("welcome")
        stub = task_service_pb2_grpc.TaskServiceStub(channel)
        kwargs = struct_pb2.Struct()
        kwargs.update({"account": "a-1"})
        reply = await stub.SubmitTask(
            task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name="stream.paced", kwargs=kwargs))
        )
        # Declared before the Welcome: the store holds both limits, per key of "account".
        limits = limit_service_pb2_grpc.LimitServiceStub(channel)
        for name in ("stream.paced.rate", "stream.paced.concurrency"):
            got = (await limits.GetLimit(limit_service_pb2.GetLimitRequest(name=name))).limit
            assert (got.task_name, got.key_argument, got.per_key) == ("stream.paced", "account", True)
        a = (await w.read("attempts")).attempts[0]
        w.send(outcome=wpb.Outcome(ref=ref_of(a), result=struct_pb2.Value(bool_value=True)))
        assert (await wait(channel, reply.task.id)).state == task_pb2.TASK_STATE_SUCCESS

    run(cluster, scenario)
