"""A database out of disk space under the event log: the client is told RESOURCE_EXHAUSTED,
with neither the server's file paths nor its SQL; the store's log has the whole text.

The full disk is PostgreSQL's own error, raised where a full disk raises it: a trigger
in the test's database fails every insert into the event log with SQLSTATE 53100
(disk_full) and the message PostgreSQL writes then, server paths included.
"""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from support.waiting import wait_until

from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

DATA_DIR = "/var/lib/postgresql/16/main"
RELATION = "base/16384/24601.3"
FULL_DISK = f'could not extend file "{RELATION}": No space left on device'
FULL_DISK_SQL = f"""
CREATE FUNCTION test_full_disk() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '{FULL_DISK}'
    USING ERRCODE = '53100',
          DETAIL = 'write to {DATA_DIR}/{RELATION} failed: INSERT INTO events ...',
          HINT = 'Check free disk space.';
END $$;
CREATE TRIGGER test_full_disk BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION test_full_disk();
"""


def _sql(database_url: str, statements: str) -> None:
    async def run() -> None:
        conn = await asyncpg.connect(database_url)
        try:
            await conn.execute(statements)
        finally:
            await conn.close()

    asyncio.run(run())


def _refusal(stub: Any, request_id: str) -> grpc.RpcError:
    spec = task_pb2.TaskSpec(name="add", request_id=request_id)
    spec.args.extend([1, 2])
    with pytest.raises(grpc.RpcError) as info:
        stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec), timeout=30)
    return info.value


def test_a_full_disk_is_resource_exhausted_and_names_no_server_path(cluster: Any) -> None:
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    _sql(cluster.database_url, FULL_DISK_SQL)

    err = _refusal(stub, "full-disk-1")
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert info.reason == "DATABASE_FULL"
    assert "out of disk space" in status.message
    # Nothing the server wrote for its own log reaches the client, in any part of the status.
    seen = status.SerializeToString() + (err.details() or "").encode()
    for server_text in (RELATION, DATA_DIR, "base/", "No space left", "INSERT INTO", "events", "plpgsql"):
        assert server_text.encode() not in seen, server_text
    assert cluster.count_tasks(request_id="full-disk-1") == 0  # refused whole: no row without its event

    # The store's log has what an operator needs.
    wait_until(lambda: RELATION in cluster.log_text("result-store"), 30, "the store to log the full disk")

    # Space again: the same submission is accepted.
    _sql(cluster.database_url, "DROP TRIGGER test_full_disk ON events")
    spec = task_pb2.TaskSpec(name="add", request_id="full-disk-1")
    spec.args.extend([1, 2])
    accepted = stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec), timeout=30)
    assert accepted.task.id and cluster.count_tasks(request_id="full-disk-1") == 1
