"""Task logs end to end: worker -> manager -> store -> GetTaskLogs / StreamTaskLogs,
with context and progress (real services, real worker processes)."""

from __future__ import annotations

import json
import threading
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2

from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = pytest.mark.timeout(60)


def submit(stub: Any, name: str, **kwargs: Any) -> str:
    spec = task_pb2.TaskSpec(name=name)
    spec.kwargs.update(kwargs)
    return str(stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec)).task.id)


def test_ten_thousand_lines_in_order_and_a_stream_attached_halfway(cluster: Any) -> None:
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    total = 10_000
    task_id = submit(stub, "chatty", lines=total, batch=500, pause=0.05)
    # Attach once about half the lines are stored (the task logs 500 lines per 50 ms).
    for page in iter(
        lambda: stub.GetTaskLogs(
            task_service_pb2.GetTaskLogsRequest(id=task_id, from_offset=4000, page_size=1)
        ),
        None,
    ):
        if page.logs:
            break
    got: list[task_pb2.TaskLog] = []
    for item in stub.StreamTaskLogs(task_service_pb2.StreamTaskLogsRequest(id=task_id), timeout=45):
        got.extend(item.logs)
    info = stub.GetTask(task_service_pb2.GetTaskRequest(id=task_id)).task
    assert info.state == task_pb2.TASK_STATE_SUCCESS
    # Dense offsets 0..n-1, the lines in the order the task said them.
    assert [x.offset for x in got] == list(range(len(got)))
    lines = [x.message for x in got if x.type == "info"]
    assert lines == [f"line {i}" for i in range(total)]
    progress = [x for x in got if x.type == "progress"]
    assert len(progress) == total // 500 and progress[-1].message.startswith("100%")
    context = struct_to_dict(info.context)
    assert context["chatty"] == {"total": total, "done": True}
    assert context["progress"]["fraction"] == 1.0
    # Paging gives the same lines, and says when it is complete.
    first = stub.GetTaskLogs(task_service_pb2.GetTaskLogsRequest(id=task_id, page_size=1000))
    assert [x.offset for x in first.logs] == list(range(1000)) and first.next_offset == 1000
    assert not first.complete
    last = stub.GetTaskLogs(task_service_pb2.GetTaskLogsRequest(id=task_id, from_offset=len(got) - 1))
    assert last.complete and last.next_offset == len(got)


def test_stream_follows_a_running_task_to_its_end(cluster: Any) -> None:
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    task_id = submit(stub, "chatty", lines=40, batch=10, pause=0.3)
    got: list[str] = []
    for item in stub.StreamTaskLogs(
        task_service_pb2.StreamTaskLogsRequest(id=task_id, from_offset=0), timeout=30
    ):
        got.extend(x.message for x in item.logs if x.type == "info")
    assert got == [f"line {i}" for i in range(40)]
    # A stream from past the end of a finished task ends at once, empty.
    assert (
        list(stub.StreamTaskLogs(task_service_pb2.StreamTaskLogsRequest(id=task_id, from_offset=10_000)))
        == []
    )


def test_sync_task_logger_and_injected_context(cluster: Any) -> None:
    with cluster.client() as client:
        task = client.submit("report", steps=3)
        done = client.wait(task.id, timeout=20)
        assert done.state.name == "SUCCESS", done
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    page = stub.GetTaskLogs(task_service_pb2.GetTaskLogsRequest(id=task.id))
    pairs = [(x.type, x.message) for x in page.logs]
    assert ("info", "step 1 of 3") in pairs and ("warning", "done after 3 steps") in pairs
    assert page.complete


def test_bad_log_requests(cluster: Any) -> None:
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    cases = [
        (task_service_pb2.GetTaskLogsRequest(id="nope"), grpc.StatusCode.INVALID_ARGUMENT),
        (
            task_service_pb2.GetTaskLogsRequest(id="00000000-0000-4000-8000-000000000000"),
            grpc.StatusCode.NOT_FOUND,
        ),
        (
            task_service_pb2.GetTaskLogsRequest(id="00000000-0000-4000-8000-000000000000", page_size=1001),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
        (
            task_service_pb2.GetTaskLogsRequest(id="00000000-0000-4000-8000-000000000000", from_offset=-1),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
    ]
    for req, code in cases:
        with pytest.raises(grpc.RpcError) as info:
            stub.GetTaskLogs(req)
        assert info.value.code() == code, req
    with pytest.raises(grpc.RpcError) as info:
        list(
            stub.StreamTaskLogs(
                task_service_pb2.StreamTaskLogsRequest(id="00000000-0000-4000-8000-000000000000")
            )
        )
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


def test_cancelled_stream_frees_the_gateway(cluster: Any) -> None:
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    task_id = submit(stub, "sleep", seconds=5)
    call = stub.StreamTaskLogs(task_service_pb2.StreamTaskLogsRequest(id=task_id))
    threading.Timer(0.5, call.cancel).start()
    with pytest.raises(grpc.RpcError) as info:
        list(call)
    assert info.value.code() == grpc.StatusCode.CANCELLED


def struct_to_dict(s: struct_pb2.Struct) -> dict[str, Any]:
    from google.protobuf import json_format

    return json.loads(json_format.MessageToJson(s))
