"""One nesting limit for args, kwargs and results (payload.MAX_NESTING): args over
it are refused at submission, a result over it fails its attempt, and a row
stored deeper by other means still reads, on its own and on a page."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import asyncpg
import grpc
import pytest
from google.protobuf import json_format
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from taskyard.core import payload
from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = pytest.mark.acceptance


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def test_args_over_the_limit_are_refused_naming_the_field(cluster: Any) -> None:
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    spec = task_pb2.TaskSpec(name="add")
    json_format.ParseDict(_nested(payload.MAX_NESTING + 8), spec.args)
    with pytest.raises(grpc.RpcError) as info:
        stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    status = rpc_status.from_call(info.value)  # type: ignore[arg-type]
    assert status is not None
    bad = error_details_pb2.BadRequest()
    assert any(d.Unpack(bad) for d in status.details if d.Is(bad.DESCRIPTOR))
    assert [(v.field, v.reason) for v in bad.field_violations] == [("task.args", "PAYLOAD_TOO_DEEP")]
    assert cluster.count_tasks() == 0


def test_a_result_over_the_limit_fails_its_attempt(cluster: Any, journal: Any) -> None:
    client = cluster.client()
    deep = client.wait(client.submit("nested_result", 40).id, timeout=30)
    assert deep.state.name == "FAILURE" and deep.attempt == 1  # max_retries=2, yet not retried
    assert deep.failure is not None and deep.failure.type == "ResultTooDeep"
    assert f"more than {payload.MAX_NESTING} levels" in deep.failure.message
    fine = client.wait(client.submit("nested_result", payload.MAX_NESTING).id, timeout=30)
    assert fine.state.name == "SUCCESS" and fine.result == _nested(payload.MAX_NESTING)


async def _insert_final(dsn: str, *, result: Any, args: Any) -> str:
    """A SUCCESS row written straight into PostgreSQL, as no submission could."""
    tid = str(uuid.uuid4())
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(
            """INSERT INTO tasks (id, name, args, state, result, root_id, started_at, finished_at)
               VALUES ($1::uuid, 'add', $2::jsonb, 'SUCCESS', $3::jsonb, $1::uuid, now(), now())""",
            tid,
            json.dumps(args),
            json.dumps(result),
        )
    finally:
        await conn.close()
    return tid


def test_a_row_stored_too_deep_still_reads(cluster: Any) -> None:
    client = cluster.client()
    before = [client.submit("add", i, 1).id for i in range(3)]
    for tid in before:
        assert client.wait(tid, timeout=30).result is not None
    deep_result = asyncio.run(_insert_final(cluster.database_url, result=_nested(200), args=[1, 2]))
    deep_args = asyncio.run(_insert_final(cluster.database_url, result=3, args=_nested(120)))
    after = client.submit("add", 5, 5).id
    assert client.wait(after, timeout=30).result == 10

    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    got = stub.GetTask(task_service_pb2.GetTaskRequest(id=deep_result)).task
    assert got.state == task_pb2.TASK_STATE_SUCCESS and not got.HasField("result")
    assert "levels deep" in got.omitted["result"]
    assert payload.list_to_python(got.args) == [1, 2]
    waited = stub.WaitTask(task_service_pb2.WaitTaskRequest(id=deep_result))
    assert not waited.timed_out and set(waited.task.omitted) == {"result"}
    seen = client.get(deep_result)  # the Python client too
    assert seen.result is None and set(seen.omitted) == {"result"} and seen.args == (1, 2)
    got = stub.GetTask(task_service_pb2.GetTaskRequest(id=deep_args)).task
    assert set(got.omitted) == {"args"} and got.result.number_value == 3

    page = stub.ListTasks(task_service_pb2.ListTasksRequest(page_size=100)).tasks
    by_id = {t.id: t for t in page}
    assert set(by_id) == {*before, deep_result, deep_args, after}
    assert set(by_id[deep_result].omitted) == {"result"} and set(by_id[deep_args].omitted) == {"args"}
    for tid, want in zip([*before, after], [1, 2, 3, 10], strict=True):
        assert not by_id[tid].omitted and by_id[tid].result.number_value == want
