"""The Python client (sync and async) against a gateway on fake backends."""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import AsyncIterator

import grpc
import pytest
import pytest_asyncio
from integration.gateway_fakes import GatewayEnv, gateway_env
from support.waiting import wait_until_async

from taskyard.bus.v1 import event_pb2
from taskyard.client import AsyncClient, Client, Priority, TaskRequest, TaskState, TaskyardError
from taskyard.v1 import task_pb2


@pytest_asyncio.fixture
async def gw() -> AsyncIterator[GatewayEnv]:
    async with gateway_env() as env:
        yield env


async def test_async_client_round_trip(gw: GatewayEnv) -> None:
    async with AsyncClient(gw.target) as client:
        task = await client.submit(
            "add", 2, 3, {"k": [1.5, None]}, priority="high", queue="q", timeout=2.5, labels={"a": "b"}, x=1
        )
        assert task.state is TaskState.QUEUED and task.priority is Priority.HIGH
        assert task.args == (2, 3, {"k": [1.5, None]}) and task.kwargs == {"x": 1}
        assert task.timeout == datetime.timedelta(seconds=2.5)
        assert task.created_at is not None and task.created_at.tzinfo is datetime.UTC
        assert task.labels == {"a": "b"}

        got = await client.get(task.id)
        assert got.id == task.id and got.result is None and got.failure is None

        gw.backend.set_state(task.id, task_pb2.TASK_STATE_SUCCESS, result_json=b"5")

        waiting = asyncio.ensure_future(client.wait(task.id, timeout=10))
        await wait_until_async(
            lambda: len(gw.gateway.waiters) == 1 or waiting.done(), 5, "the wait to reach the gateway"
        )
        await gw.backend.publish(event_pb2.Event(task_id=task.id, state=task_pb2.TASK_STATE_SUCCESS))
        done = await waiting
        assert done.state is TaskState.SUCCESS and done.is_final and done.result == 5

        subs = await client.submit_many(
            [{"name": "echo", "args": ["a"], "priority": "LOW"}, TaskRequest(name="add", request_id="r")]
        )
        assert [s.created for s in subs] == [True, True]
        assert [t.id async for t in client.iter_tasks(page_size=1)] == sorted(
            [task.id, *(s.id for s in subs)], reverse=True
        )

        with pytest.raises(TaskyardError) as exc:
            await client.submit("nope", "\x00")
        err = exc.value
        assert err.code == grpc.StatusCode.INVALID_ARGUMENT and err.domain == "taskyard.dev"
        assert {(v.field, v.reason) for v in err.violations} == {
            ("task.name", "UNKNOWN_TASK_NAME"),
            ("task.args[0]", "NUL_CHARACTER"),
        }
        with pytest.raises(TaskyardError) as exc:
            await client.cancel(task.id)
        assert (
            exc.value.code == grpc.StatusCode.FAILED_PRECONDITION and exc.value.reason == "TASK_ALREADY_FINAL"
        )
        with pytest.raises(TaskyardError) as exc:
            await client.list(page_size=-1)
        assert [v.field for v in exc.value.violations] == ["page_size"]


async def test_sync_client(gw: GatewayEnv) -> None:
    def run() -> None:
        with Client(gw.target, timeout=5) as client:
            task = client.submit("add", 1, 1, request_id="dup")
            again = client.submit("add", 1, 1, request_id="dup")
            assert again.id == task.id
            waited = client.wait(task.id, timeout=0.3)
            assert waited.state is TaskState.QUEUED and not waited.is_final
            c = client.cancel(task.id, reason="test")
            assert c.cancelled and c.task.state is TaskState.CANCELLED
            page = client.list(state="CANCELLED")
            assert [t.id for t in page.tasks] == [task.id] and page.next_page_token == ""
            assert [t.id for t in client.iter_tasks(state=[TaskState.CANCELLED])] == [task.id]
            with pytest.raises(TaskyardError) as exc:
                client.get("0190a6f4-0000-7000-8000-000000000000")
            assert exc.value.code == grpc.StatusCode.NOT_FOUND and exc.value.reason == "TASK_NOT_FOUND"
            with pytest.raises(TaskyardError) as exc:
                client.list(page_token="garbage")
            assert exc.value.reason == "INVALID_PAGE_TOKEN"

    await asyncio.to_thread(run)


def test_client_refuses_non_json_locally() -> None:
    client = Client("127.0.0.1:1")
    with pytest.raises(TypeError, match=r"args\[0\]"):
        client.submit("add", object())
    with pytest.raises(ValueError, match="NaN"):
        client.submit("add", float("nan"))
    with pytest.raises(ValueError, match="2\\*\\*53"):
        client.submit("add", 2**60)
    with pytest.raises(ValueError, match="priority"):
        client.submit("add", priority="urgent")
    client.close()


def test_client_unavailable() -> None:
    with Client("127.0.0.1:1", timeout=2) as client, pytest.raises(TaskyardError) as exc:
        client.get("0190a6f4-0000-7000-8000-000000000000")
    assert exc.value.code == grpc.StatusCode.UNAVAILABLE
