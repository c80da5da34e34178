"""RunTask over the real event stream (NNG PUB/SUB) against fake lanes and store:
the wait listens before the task is sent, counts from the call's start, and its end
is an answer, not an error."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest
import pytest_asyncio
from google.protobuf import duration_pb2
from integration.gateway_fakes import GatewayEnv, gateway_env
from support.waiting import wait_until_async

from taskyard.bus.v1 import event_pb2, task_record_pb2
from taskyard.core import hops
from taskyard.v1 import task_pb2, task_service_pb2


@pytest_asyncio.fixture
async def gw() -> AsyncIterator[GatewayEnv]:
    async with gateway_env() as env:
        yield env


def _run_req(
    seconds: float | None, name: str = "add", request_id: str = ""
) -> task_service_pb2.RunTaskRequest:
    req = task_service_pb2.RunTaskRequest(task=task_pb2.TaskSpec(name=name, request_id=request_id))
    if seconds is not None:
        d = duration_pb2.Duration()
        d.FromNanoseconds(int(seconds * 1e9))
        req.timeout.CopyFrom(d)
    return req


async def test_a_final_event_sent_before_the_submission_is_answered_is_not_lost(gw: GatewayEnv) -> None:
    # No backlog: an event that arrives while nobody listens is dropped unread. Only a
    # waiter registered before the task was sent can see this one.
    gw.gateway.waiters._max_backlog = 0
    gw.backend.lane_gate = asyncio.Event()
    running = asyncio.ensure_future(gw.stub.RunTask(_run_req(20)))
    await asyncio.wait_for(gw.backend.lane_entered.wait(), 5)
    (sent,) = gw.backend.submitted
    record = task_record_pb2.TaskRecord()
    record.CopyFrom(sent)
    record.state = task_pb2.TASK_STATE_FAILURE
    record.attempt = 1
    decoded = gw.gateway.waiters.batches_decoded
    await gw.backend.publish(
        event_pb2.Event(
            type="task.failed", task_id=sent.id, state=task_pb2.TASK_STATE_FAILURE, attempt=1, record=record
        )
    )
    await wait_until_async(
        lambda: gw.gateway.waiters.batches_decoded > decoded, 5, "the gateway to decode the final event"
    )
    # The store still says QUEUED (the fake never moves it): the answer can only be the event's.
    gw.backend.lane_gate.set()
    resp = await asyncio.wait_for(running, 10)
    assert resp.final and resp.created
    assert resp.task.id == sent.id and resp.task.state == task_pb2.TASK_STATE_FAILURE
    assert len(gw.gateway.waiters) == 0


async def test_a_sampled_run_returns_its_trip(gw: GatewayEnv) -> None:
    # Asked for hop stamps as SubmitTask is: the final event's record carries them, and
    # the answer's trailing metadata has the whole trip, as WaitTask's does.
    gw.backend.lane_gate = asyncio.Event()
    call = gw.stub.RunTask(_run_req(20), metadata=((hops.METADATA_KEY, "1"),))
    await asyncio.wait_for(gw.backend.lane_entered.wait(), 5)
    (sent,) = gw.backend.submitted
    record = task_record_pb2.TaskRecord()
    record.CopyFrom(sent)
    record.state = task_pb2.TASK_STATE_SUCCESS
    await gw.backend.publish(
        event_pb2.Event(
            type="task.succeeded", task_id=sent.id, state=task_pb2.TASK_STATE_SUCCESS, record=record
        )
    )
    gw.backend.lane_gate.set()
    resp = await asyncio.wait_for(call, 10)
    assert resp.final
    trailing = await call.trailing_metadata()
    assert trailing is not None
    trip = [hop for hop, _ in hops.from_text(str(trailing[hops.METADATA_KEY]))]
    assert trip == ["gateway.received", "gateway.sent", "gateway.replied"], trip


async def test_a_timeout_is_an_answer_with_the_task_as_it_stands(gw: GatewayEnv) -> None:
    resp = await gw.stub.RunTask(_run_req(0.3))
    assert not resp.final and resp.created
    assert resp.task.id and resp.task.state == task_pb2.TASK_STATE_QUEUED
    # The task goes on: a later WaitTask finds it.
    gw.backend.set_state(resp.task.id, task_pb2.TASK_STATE_SUCCESS, result_json=b"5")
    waited = await gw.stub.WaitTask(task_service_pb2.WaitTaskRequest(id=resp.task.id))
    assert not waited.timed_out and waited.task.result.number_value == 5
    assert len(gw.gateway.waiters) == 0


async def test_the_wait_ends_before_the_callers_deadline(gw: GatewayEnv) -> None:
    # No timeout given (30 s), a deadline of 0.8 s: an answer, not DEADLINE_EXCEEDED.
    resp = await gw.stub.RunTask(_run_req(None), timeout=0.8)
    assert not resp.final and resp.task.state == task_pb2.TASK_STATE_QUEUED


async def test_a_repeated_request_id_waits_on_the_first_task(gw: GatewayEnv) -> None:
    first = await gw.stub.RunTask(_run_req(0, request_id="run-once"))
    assert first.created and not first.final
    again = asyncio.ensure_future(gw.stub.RunTask(_run_req(20, request_id="run-once")))
    await wait_until_async(lambda: len(gw.gateway.waiters) >= 1, 5, "the second RunTask to wait")
    gw.backend.set_state(first.task.id, task_pb2.TASK_STATE_SUCCESS, result_json=b"7")
    record = gw.backend.tasks[first.task.id]
    await gw.backend.publish(
        event_pb2.Event(
            type="task.succeeded", task_id=first.task.id, state=task_pb2.TASK_STATE_SUCCESS, record=record
        )
    )
    resp = await asyncio.wait_for(again, 10)
    assert not resp.created and resp.final
    assert resp.task.id == first.task.id and resp.task.result.number_value == 7
    # Once final, a repeat answers at once.
    third = await gw.stub.RunTask(_run_req(20, request_id="run-once"))
    assert (third.created, third.final, third.task.id) == (False, True, first.task.id)
    assert len(gw.backend.tasks) == 1


async def test_bad_input_names_every_field(gw: GatewayEnv) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await gw.stub.RunTask(_run_req(301, name=""))
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "task.name" in (exc.value.details() or "") and "timeout" in (exc.value.details() or "")
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await gw.stub.RunTask(_run_req(-1))
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await gw.stub.RunTask(task_service_pb2.RunTaskRequest())
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert not gw.backend.tasks and len(gw.gateway.waiters) == 0


async def test_a_refused_submission_leaves_no_waiter(gw: GatewayEnv) -> None:
    from taskyard.core import errors

    gw.backend.fail_lane = errors.TaskyardError(errors.Code.UNAVAILABLE, "SCHEDULER_DOWN", "lane down")
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await gw.stub.RunTask(_run_req(20))
    assert exc.value.code() == grpc.StatusCode.UNAVAILABLE
    assert len(gw.gateway.waiters) == 0
