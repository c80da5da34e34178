"""The asyncio client (grpc.aio)."""

from __future__ import annotations

import builtins
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from types import TracebackType
from typing import Any, TypeVar

import grpc
import grpc.aio

from taskyard.client import _common, _types
from taskyard.client._common import request_from
from taskyard.client._endpoint import Endpoint
from taskyard.client._errors import TaskyardError
from taskyard.client._events import AsyncEventWatch, Events
from taskyard.client._failures import AsyncFailures
from taskyard.client._limits import AsyncLimits
from taskyard.client._ops import AsyncLogs, AsyncQueues
from taskyard.client._schedules import AsyncSchedules
from taskyard.client._tenants import AsyncTenants
from taskyard.v1 import task_service_pb2

R = TypeVar("R")


class AsyncClient(_common.ClientBase[grpc.aio.Channel]):
    """``async with AsyncClient("localhost:50051") as c: await c.submit("add", 1, 2)``.

    The same options and methods as ``Client``, awaitable."""

    def _open(self, endpoint: Endpoint) -> grpc.aio.Channel:
        return endpoint.aio_channel()

    def _attach(self) -> None:
        # Periodic schedules: client.schedules.create(...), .get, .list, .pause, ...
        self.schedules = AsyncSchedules(self._channel, self._call)
        # Task logs and queue operations: client.logs.follow(id), client.queues.pause(...), ...
        self.logs = AsyncLogs(self._stub, self._call)
        # The suite's events as they happen: async for e in client.events.watch(queues=[...]): ...
        self.events = Events(self._channel, AsyncEventWatch)
        self.queues = AsyncQueues(self._channel, self._call)
        # Flow control: client.limits.create(...), .get, .list, .delete, .set_weight, ...
        self.limits = AsyncLimits(self._channel, self._call)
        # Dead letters and their redrive: await client.failures.groups(), .redrive(...), ...
        self.failures = AsyncFailures(self._channel, self._call)
        # Tenants, for operator tokens: client.tenants.create(...), .suspend(...), ...
        self.tenants = AsyncTenants(self._channel, self._call)

    async def _call(
        self, method: Callable[..., Awaitable[R]], request: Any, deadline: float | None = None
    ) -> R:
        try:
            return await method(request, timeout=self.timeout if deadline is None else deadline)
        except grpc.RpcError as err:
            raise TaskyardError.from_rpc_error(err) from None

    @request_from(_common.submit_request)
    async def submit(self, req: task_service_pb2.SubmitTaskRequest) -> _types.TaskInfo:
        """Submit one task, as Client.submit. A task keyword argument named like one of
        these options (``limits``, ``fairness_key``, ``priority``, ``queue``, ...) is taken
        as the option, not passed to the task: give it in a TaskRequest's ``kwargs=``
        through ``submit_many``:
        ``await client.submit_many([TaskRequest(name="report", kwargs={"limits": 10})])``."""
        return _types.TaskInfo.from_proto((await self._call(self._stub.SubmitTask, req)).task)

    @request_from(_common.run_request)
    async def run(self, call: _common.Run) -> _types.TaskInfo:
        """Submit one task and wait for its final state in one call, as Client.run."""
        started = time.monotonic()
        task = _types.TaskInfo.from_proto(
            (await self._call(self._stub.RunTask, call.request, call.call_deadline)).task
        )
        rest = None if task.is_final else call.rest(started)
        return task if rest is None else await self.wait(task.id, rest)

    async def submit_many(
        self, tasks: Iterable[_types.TaskRequest | Mapping[str, Any]]
    ) -> builtins.list[_types.Submitted]:
        resp = await self._call(self._stub.BatchSubmitTasks, _common.batch_request(tasks))
        return [_types.submitted_from_proto(s) for s in resp.tasks]

    async def get(self, task_id: str) -> _types.TaskInfo:
        return _types.TaskInfo.from_proto(
            (await self._call(self._stub.GetTask, _common.get_request(task_id))).task
        )

    async def wait(
        self,
        task_id: str,
        timeout: float = 30.0,  # noqa: ASYNC109 - the wait's length (not an error), as in Client.wait
        *,
        deadline: float | None = None,
    ) -> _types.TaskInfo:
        waiting = _common.Wait(task_id, timeout, deadline)
        while True:
            req, limit = waiting.next_call()
            if (task := waiting.outcome(await self._call(self._stub.WaitTask, req, limit))) is not None:
                return task

    @request_from(_common.cancel_request)
    async def cancel(self, req: task_service_pb2.CancelTaskRequest) -> _types.Cancellation:
        """Cancel a task (and its unfinished children). With ``wait`` (seconds), a task
        already handed to a pool (ASSIGNED or RUNNING) is waited for until it stops; ``step``
        says which step stopped it (NOT_STARTED: its pool never started the body)."""
        resp = await self._call(self._stub.CancelTask, req, deadline=_common.cancel_deadline(req))
        return _common.cancellation(resp)

    async def explain(self, task_id: str) -> _types.Explanation:
        """Why the task is not running yet (its ETA, a dependency, a retry delay, a paused
        queue, no pool for its name, busy slots with the depth ahead of it), or that it runs
        or is final."""
        return _types.Explanation.from_proto(
            await self._call(self._stub.ExplainTask, _common.explain_request(task_id))
        )

    async def tree(self, task_id: str) -> _types.TaskTree:
        """The hierarchy (parent/child) of the tree ``task_id`` belongs to, from its root."""
        return _types.TaskTree.from_proto(
            await self._call(self._stub.GetTaskTree, _common.tree_request(task_id))
        )

    @request_from(_common.list_request)
    async def iter_tasks(self, req: task_service_pb2.ListTasksRequest) -> AsyncIterator[_types.TaskInfo]:
        while True:
            page = _common.task_page(await self._call(self._stub.ListTasks, req))
            for t in page.tasks:
                yield t
            if not page.next_page_token:
                return
            req.page_token = page.next_page_token

    async def close(self) -> None:
        await self._channel.close(None)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @request_from(_common.list_request)
    async def list(self, req: task_service_pb2.ListTasksRequest) -> _types.TaskPage:
        return _common.task_page(await self._call(self._stub.ListTasks, req))
