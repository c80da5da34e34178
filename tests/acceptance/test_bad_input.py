"""Bad input gets the right status code with google.rpc.Status details, and no
task row is written."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = pytest.mark.acceptance


def _details(err: grpc.RpcError) -> tuple[status_pb2.Status | None, list[str], str]:
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    fields: list[str] = []
    reason = ""
    if status is not None:
        for detail in status.details:
            if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                br = error_details_pb2.BadRequest()
                detail.Unpack(br)
                fields.extend(v.field for v in br.field_violations)
            elif detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                reason = info.reason
    return status, fields, reason


def _args(*values: Any) -> struct_pb2.ListValue:
    lv = struct_pb2.ListValue()
    lv.extend(values)
    return lv


@pytest.fixture
def stub(cluster: Any) -> task_service_pb2_grpc.TaskServiceStub:
    return task_service_pb2_grpc.TaskServiceStub(cluster.channel())


def _submit_error(stub: task_service_pb2_grpc.TaskServiceStub, spec: task_pb2.TaskSpec) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec))
    return info.value


def test_unknown_task_name(cluster: Any, stub: Any) -> None:
    err = _submit_error(stub, task_pb2.TaskSpec(name="no_such_task", args=_args(1)))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    _, fields, reason = _details(err)
    assert fields == ["task.name"]
    assert reason == "UNKNOWN_TASK_NAME"
    assert cluster.count_tasks() == 0


def test_nul_character_in_args_and_kwargs(cluster: Any, stub: Any) -> None:
    spec = task_pb2.TaskSpec(name="echo", args=_args("ok", "bad\x00"))
    spec.kwargs.update({"fine": 1, "k\x00": "v"})
    err = _submit_error(stub, spec)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    _, fields, _ = _details(err)
    assert "task.args[1]" in fields
    assert any(f.startswith("task.kwargs") for f in fields)
    assert cluster.count_tasks() == 0


def test_args_over_the_payload_cap(cluster: Any, stub: Any) -> None:
    err = _submit_error(stub, task_pb2.TaskSpec(name="echo", args=_args("x" * (300 * 1024))))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    _, fields, _ = _details(err)
    assert any(f.startswith("task.args") for f in fields)
    assert cluster.count_tasks() == 0


def test_batch_is_all_or_nothing(cluster: Any, stub: Any) -> None:
    good = task_pb2.TaskSpec(name="add", args=_args(1, 2))
    bad = task_pb2.TaskSpec(name="add", args=_args("\x00"))
    with pytest.raises(grpc.RpcError) as info:
        stub.BatchSubmitTasks(task_service_pb2.BatchSubmitTasksRequest(tasks=[good, bad, good]))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    _, fields, _ = _details(info.value)
    assert fields == ["tasks[1].args[0]"]
    assert cluster.count_tasks() == 0


def test_malformed_protobuf_body(cluster: Any) -> None:
    call = cluster.channel().unary_unary(
        "/taskyard.v1.TaskService/SubmitTask",
        request_serializer=lambda b: b,
        response_deserializer=lambda b: b,
    )
    with pytest.raises(grpc.RpcError) as info:
        call(b"\xff\xff\xff\xff\x0f garbage")
    # The gateway decodes the body itself: the client's mistake, said so (grpc.aio alone: UNKNOWN).
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "SubmitTaskRequest" in (info.value.details() or "")
    assert cluster.count_tasks() == 0


def test_message_over_grpc_limit(cluster: Any, stub: Any) -> None:
    spec = task_pb2.TaskSpec(name="echo", args=_args("y" * (5 * 1024 * 1024)))
    err = _submit_error(stub, spec)
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert cluster.count_tasks() == 0


def test_negative_page_size(stub: Any) -> None:
    with pytest.raises(grpc.RpcError) as info:
        stub.ListTasks(task_service_pb2.ListTasksRequest(page_size=-1))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _details(info.value)[1] == ["page_size"]


def test_bad_page_token(stub: Any) -> None:
    with pytest.raises(grpc.RpcError) as info:
        stub.ListTasks(task_service_pb2.ListTasksRequest(page_token="not-a-token"))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    _, fields, reason = _details(info.value)
    assert fields == ["page_token"]
    assert reason == "INVALID_PAGE_TOKEN"


def test_unknown_and_malformed_ids(stub: Any) -> None:
    with pytest.raises(grpc.RpcError) as info:
        stub.GetTask(task_service_pb2.GetTaskRequest(id="0190a6f4-0000-7000-8000-000000000000"))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as info:
        stub.GetTask(task_service_pb2.GetTaskRequest(id="nope"))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
