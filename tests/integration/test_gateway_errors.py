"""Bad input: the right status code, google.rpc.Status details, and nothing reaches a lane."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
import pytest_asyncio
from google.protobuf import struct_pb2
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from integration.gateway_fakes import GatewayEnv, gateway_env

from taskyard.core import errors
from taskyard.v1 import task_pb2, task_service_pb2


@pytest_asyncio.fixture
async def gw() -> AsyncIterator[GatewayEnv]:
    async with gateway_env() as env:
        yield env


def _args(*values: object) -> struct_pb2.ListValue:
    lv = struct_pb2.ListValue()
    lv.extend(values)  # type: ignore[arg-type]
    return lv


def details(
    err: grpc.aio.AioRpcError,
) -> tuple[error_details_pb2.ErrorInfo, list[error_details_pb2.BadRequest.FieldViolation]]:
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None, "no google.rpc.Status in the trailers"
    assert status.code == err.code().value[0]
    info = error_details_pb2.ErrorInfo()
    bad = error_details_pb2.BadRequest()
    for d in status.details:
        if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            d.Unpack(info)
        elif d.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            d.Unpack(bad)
    assert info.domain == errors.ERROR_DOMAIN
    return info, list(bad.field_violations)


async def submit_error(gw: GatewayEnv, spec: task_pb2.TaskSpec) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await gw.stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec))
    return info.value


async def test_unknown_task_name(gw: GatewayEnv) -> None:
    err = await submit_error(gw, task_pb2.TaskSpec(name="no_such_task", args=_args(1)))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    info, fvs = details(err)
    assert info.reason == "UNKNOWN_TASK_NAME"
    assert [(v.field, v.reason) for v in fvs] == [("task.name", "UNKNOWN_TASK_NAME")]
    assert gw.backend.lane_requests() == 0


async def test_nul_in_args_and_kwargs_key(gw: GatewayEnv) -> None:
    spec = task_pb2.TaskSpec(name="echo", args=_args("ok", "bad\x00"))
    spec.kwargs.update({"fine": 1, "k\x00": "v", "nested": {"x": ["\x00"]}})
    err = await submit_error(gw, spec)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    info, fvs = details(err)
    assert info.reason == "NUL_CHARACTER"
    fields = {v.field for v in fvs}
    assert fields == {"task.args[1]", 'task.kwargs["k\\u0000"]', "task.kwargs.nested.x[0]"}
    assert gw.backend.lane_requests() == 0


async def test_args_over_the_payload_cap(gw: GatewayEnv) -> None:
    err = await submit_error(gw, task_pb2.TaskSpec(name="echo", args=_args("x" * (300 * 1024))))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    info, fvs = details(err)
    assert info.reason == "PAYLOAD_TOO_LARGE"
    assert [v.field for v in fvs] == ["task.args"]
    assert gw.backend.lane_requests() == 0


async def test_batch_is_all_or_nothing_and_lists_every_violation(gw: GatewayEnv) -> None:
    good = task_pb2.TaskSpec(name="add", args=_args(1, 2))
    specs = [
        good,
        task_pb2.TaskSpec(name="add", args=_args("\x00")),
        good,
        task_pb2.TaskSpec(name="", priority=7, max_retries=101, parent_id="nope"),  # type: ignore[arg-type]
        task_pb2.TaskSpec(name="add", queue="q" * 300, labels={"k": "\x00"}),
    ]
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await gw.stub.BatchSubmitTasks(task_service_pb2.BatchSubmitTasksRequest(tasks=specs))
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    info, fvs = details(exc.value)
    assert info.reason == "INVALID_ARGUMENT"  # mixed reasons
    assert [v.field for v in fvs] == [
        "tasks[1].args[0]",
        "tasks[3].name",
        "tasks[3].priority",
        "tasks[3].max_retries",
        "tasks[3].parent_id",
        "tasks[4].queue",
        "tasks[4].labels.k",
    ]
    assert gw.backend.lane_requests() == 0


async def test_batch_over_max_batch(gw: GatewayEnv) -> None:
    specs = [task_pb2.TaskSpec(name="add")] * (gw.settings.max_batch + 1)
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await gw.stub.BatchSubmitTasks(task_service_pb2.BatchSubmitTasksRequest(tasks=specs))
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    info, fvs = details(exc.value)
    assert info.reason == "BATCH_TOO_LARGE" and [v.field for v in fvs] == ["tasks"]
    assert gw.backend.lane_requests() == 0


async def test_many_violations_stay_under_the_trailer_limit(gw: GatewayEnv) -> None:
    specs = [task_pb2.TaskSpec(name="nope" * 50)] * 1000
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await gw.stub.BatchSubmitTasks(task_service_pb2.BatchSubmitTasksRequest(tasks=specs))
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    info, fvs = details(exc.value)
    assert info.metadata["violations"] == "1000"
    assert 0 < len(fvs) < 1000 and int(info.metadata["violations_omitted"]) == 1000 - len(fvs)


async def test_malformed_protobuf_body(gw: GatewayEnv) -> None:
    call = gw.channel.unary_unary(
        "/taskyard.v1.TaskService/SubmitTask",
        request_serializer=lambda b: b,
        response_deserializer=lambda b: b,
    )
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await call(b"\xff\xff\xff\xff\x0f garbage")
    # The client's mistake, said so with details (grpc.aio alone answers UNKNOWN, no details).
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    info, _ = details(exc.value)
    assert info.reason == "MALFORMED_REQUEST"
    assert "taskyard.v1.SubmitTaskRequest" in (exc.value.details() or "")
    assert gw.backend.lane_requests() == 0


async def test_malformed_body_of_every_call_shape(gw: GatewayEnv) -> None:
    """Unary with a streamed answer (WatchEvents) and a streamed request (reflection) too;
    a well-formed call on the same channel is still served."""
    raw = {"request_serializer": lambda b: b, "response_deserializer": lambda b: b}
    junk = b"\x0a\xff\xff\xff\xff\xff\xff"  # field 1, a length past the end
    watch = gw.channel.unary_stream("/taskyard.v1.EventService/WatchEvents", **raw)
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        async for _ in watch(junk, timeout=5):
            pass
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert details(exc.value)[0].reason == "MALFORMED_REQUEST"
    reflect = gw.channel.stream_stream("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", **raw)
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        async for _ in reflect(iter([junk]), timeout=5):
            pass
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    get = gw.channel.unary_unary("/taskyard.v1.TaskService/GetTask", **raw)
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await get(task_service_pb2.GetTaskRequest(id="nope").SerializeToString(), timeout=5)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in details(exc.value)[1]] == ["id"]


async def test_message_over_the_grpc_limit(gw: GatewayEnv) -> None:
    err = await submit_error(gw, task_pb2.TaskSpec(name="echo", args=_args("y" * (5 * 1024 * 1024))))
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert gw.backend.lane_requests() == 0


async def test_negative_and_huge_page_size(gw: GatewayEnv) -> None:
    for size in (-1, 1001):
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await gw.stub.ListTasks(task_service_pb2.ListTasksRequest(page_size=size))
        assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        _, fvs = details(exc.value)
        assert [v.field for v in fvs] == ["page_size"]
    assert not any(k == 12 for k, _ in gw.backend.store_requests)


async def test_bad_page_token_is_passed_on_from_the_store(gw: GatewayEnv) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await gw.stub.ListTasks(task_service_pb2.ListTasksRequest(page_token="not-a-token"))
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    info, fvs = details(exc.value)
    assert info.reason == "INVALID_PAGE_TOKEN"
    assert [v.field for v in fvs] == ["page_token"]


async def test_get_unknown_and_malformed_ids(gw: GatewayEnv) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await gw.stub.GetTask(task_service_pb2.GetTaskRequest(id="0190a6f4-0000-7000-8000-000000000000"))
    assert exc.value.code() == grpc.StatusCode.NOT_FOUND
    info, _ = details(exc.value)
    assert info.reason == "TASK_NOT_FOUND"
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await gw.stub.GetTask(task_service_pb2.GetTaskRequest(id="nope"))
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in details(exc.value)[1]] == ["id"]


async def test_cancel_outcomes(gw: GatewayEnv) -> None:
    resp = await gw.stub.SubmitTask(
        task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name="add", args=_args(1)))
    )
    task_id = resp.task.id
    cancelled = await gw.stub.CancelTask(
        task_service_pb2.CancelTaskRequest(id=task_id, reason="no longer needed")
    )
    assert cancelled.cancelled and cancelled.task.state == task_pb2.TASK_STATE_CANCELLED
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await gw.stub.CancelTask(task_service_pb2.CancelTaskRequest(id=task_id))
    assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert details(exc.value)[0].reason == "TASK_ALREADY_FINAL"
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await gw.stub.CancelTask(
            task_service_pb2.CancelTaskRequest(id="0190a6f4-0000-7000-8000-000000000000")
        )
    assert exc.value.code() == grpc.StatusCode.NOT_FOUND


async def test_backend_errors_keep_their_code(gw: GatewayEnv) -> None:
    gw.backend.fail_lane = errors.TaskyardError(errors.Code.UNAVAILABLE, "DATABASE_DOWN", "no database")
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await gw.stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name="add")))
    assert exc.value.code() == grpc.StatusCode.UNAVAILABLE
    assert details(exc.value)[0].reason == "DATABASE_DOWN"


async def test_server_text_of_backend_errors_stays_in_the_gateway_log(
    gw: GatewayEnv, caplog: pytest.LogCaptureFixture
) -> None:
    """An error written for the suite's logs (an address, a path, an exception's text) keeps
    its code and reason; its text is logged by the gateway, and the client reads a fixed one."""
    leaky = {
        errors.unavailable("tcp://10.0.0.7:5557: Connection refused"): grpc.StatusCode.UNAVAILABLE,
        errors.deadline("no reply from ipc:///run/taskyard/lane-1.sock within 5.0s"): (
            grpc.StatusCode.DEADLINE_EXCEEDED
        ),
        errors.internal('OSError: could not open "/var/lib/taskyard/x"'): grpc.StatusCode.INTERNAL,
        errors.TaskyardError(errors.Code.DATA_LOSS, "ODD", "page 12 of /srv/pg/base/1 is torn"): (
            grpc.StatusCode.DATA_LOSS
        ),
    }
    for error, code in leaky.items():
        gw.backend.fail_lane = error
        with (
            caplog.at_level(logging.INFO, logger="taskyard.gateway.status"),
            pytest.raises(grpc.aio.AioRpcError) as exc,
        ):
            await gw.stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name="add")))
        assert exc.value.code() == code
        assert details(exc.value)[0].reason == error.reason
        status = rpc_status.from_call(exc.value)  # type: ignore[arg-type]
        assert status is not None
        seen = status.SerializeToString() + (exc.value.details() or "").encode()
        for server_text in ("10.0.0.7", "ipc://", "/run/", "/var/lib", "/srv/", "OSError"):
            assert server_text.encode() not in seen, (server_text, exc.value.details())
        assert error.message in caplog.text


async def test_queue_and_schedule_names_have_one_charset_and_length(gw: GatewayEnv) -> None:
    """Submit, the queue operations, ListTasks' filter and schedules take the same names
    (core/names.py: [A-Za-z0-9][A-Za-z0-9._:-]{0,127}); anything else is INVALID_ARGUMENT
    with the field it came in, and reaches neither a lane nor the store."""
    from taskyard.v1 import queue_service_pb2 as qs
    from taskyard.v1 import (
        queue_service_pb2_grpc,
        schedule_pb2,
        schedule_service_pb2,
        schedule_service_pb2_grpc,
    )

    queues = queue_service_pb2_grpc.QueueServiceStub(gw.channel)
    schedules = schedule_service_pb2_grpc.ScheduleServiceStub(gw.channel)
    bad = (" reports", "reports\n", "r\u00e9ports", "a/b", "-x", ".hidden", "x" * 129, "two words", "q\x00")
    stored_before = len(gw.backend.store_requests)

    async def field_of(call: Any) -> tuple[str, str]:
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await call
        assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        _, fvs = details(exc.value)
        assert len(fvs) == 1
        return fvs[0].field, fvs[0].description

    for name in bad:
        spec = task_pb2.TaskSpec(name="add", queue=name)
        field, description = await field_of(gw.stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec)))
        assert field == "task.queue", name
        if "\x00" not in name and len(name) <= 128:
            assert "[A-Za-z0-9][A-Za-z0-9._:-]{0,127}" in description
        for call in (
            queues.PauseQueue(qs.PauseQueueRequest(queue=name)),
            queues.ResumeQueue(qs.ResumeQueueRequest(queue=name)),
            queues.ClearQueue(qs.ClearQueueRequest(queue=name)),
            queues.RetryTasks(qs.RetryTasksRequest(queue=name)),
            gw.stub.ListTasks(task_service_pb2.ListTasksRequest(queue=name)),
        ):
            assert (await field_of(call))[0] == "queue", name
        schedule = schedule_pb2.Schedule(name=name, task=task_pb2.TaskSpec(name="add"))
        schedule.interval.FromSeconds(60)
        create = schedules.CreateSchedule(schedule_service_pb2.CreateScheduleRequest(schedule=schedule))
        assert (await field_of(create))[0] == "schedule.name", name
    assert gw.backend.lane_requests() == 0
    assert len(gw.backend.store_requests) == stored_before

    for name in ("default", "reports.nightly", "tenant-a:emails_2", "Q" + "x" * 127):
        spec = task_pb2.TaskSpec(name="add", queue=name)
        reply = await gw.stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec))
        assert reply.task.queue == name
