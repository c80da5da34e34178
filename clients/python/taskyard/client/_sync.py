"""The blocking client."""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import TracebackType
from typing import Any, TypeVar

import grpc

from taskyard.client import _common, _types
from taskyard.client._common import request_from
from taskyard.client._endpoint import Endpoint
from taskyard.client._errors import TaskyardError
from taskyard.client._events import Events, EventWatch
from taskyard.client._failures import Failures
from taskyard.client._limits import Limits
from taskyard.client._ops import Logs, Queues
from taskyard.client._schedules import Schedules
from taskyard.client._tenants import Tenants
from taskyard.v1 import task_service_pb2

R = TypeVar("R")


class Client(_common.ClientBase[grpc.Channel]):
    """``Client("localhost:50051")``: submit, inspect, wait for and cancel tasks.

    Every failed call raises ``TaskyardError`` (code, reason, field violations).
    ``timeout`` is the deadline of each call, in seconds. A gateway with TLS and
    tokens: ``Client("gw:50051", tls_ca="ca.pem", token="...")`` (docs/security.md);
    an operator token acting as one tenant: ``Client(..., token=operator, tenant="acme")``
    (docs/tenants.md); the other options are ``Endpoint``'s, which says what each does.
    """

    def _open(self, endpoint: Endpoint) -> grpc.Channel:
        return endpoint.channel()

    def _attach(self) -> None:
        # Periodic schedules: client.schedules.create(...), .get, .list, .pause, ...
        self.schedules = Schedules(self._channel, self._call)
        # Task logs and queue operations: client.logs.follow(id), client.queues.pause(...), ...
        self.logs = Logs(self._stub, self._call)
        # The suite's events as they happen: for e in client.events.watch(queues=[...]): ...
        self.events = Events(self._channel, EventWatch)
        self.queues = Queues(self._channel, self._call)
        # Flow control: client.limits.create(...), .get, .list, .delete, .set_weight, ...
        self.limits = Limits(self._channel, self._call)
        # Dead letters and their redrive: client.failures.groups(), .redrive(...), ...
        self.failures = Failures(self._channel, self._call)
        # Tenants, for operator tokens: client.tenants.create(...), .suspend(...), ...
        self.tenants = Tenants(self._channel, self._call)

    def _call(self, method: Callable[..., R], request: Any, timeout: float | None = None) -> R:
        try:
            return method(request, timeout=self.timeout if timeout is None else timeout)
        except grpc.RpcError as err:
            raise TaskyardError.from_rpc_error(err) from None

    @request_from(_common.submit_request)
    def submit(self, req: task_service_pb2.SubmitTaskRequest) -> _types.TaskInfo:
        """Submit one task; ``timeout`` is the task's execution limit. With a repeated
        ``request_id`` the task of the first submission is returned.

        A task keyword argument named like one of these options (``limits``,
        ``fairness_key``, ``priority``, ``queue``, ...) is taken as the option, not passed
        to the task: give it in a TaskRequest's ``kwargs=`` through ``submit_many``:
        ``client.submit_many([TaskRequest(name="report", kwargs={"limits": 10})])``."""
        return _types.TaskInfo.from_proto(self._call(self._stub.SubmitTask, req).task)

    @request_from(_common.run_request)
    def run(self, call: _common.Run) -> _types.TaskInfo:
        """Submit one task and wait for its final state in one call (RunTask): ``submit``'s
        arguments, and ``wait`` (seconds, default 30). The task as final, or as it is when
        the wait ended (check ``is_final``): the end of the wait is no error, the task goes
        on (``wait(task.id)`` later). Exactly-once per ``request_id``, as ``submit``."""
        started = time.monotonic()
        task = _types.TaskInfo.from_proto(
            self._call(self._stub.RunTask, call.request, timeout=call.call_deadline).task
        )
        rest = None if task.is_final else call.rest(started)
        return task if rest is None else self.wait(task.id, rest)

    def submit_many(
        self, tasks: Iterable[_types.TaskRequest | Mapping[str, Any]]
    ) -> builtins.list[_types.Submitted]:
        """Submit up to 1,000 tasks at once, all or none; outcomes in order."""
        resp = self._call(self._stub.BatchSubmitTasks, _common.batch_request(tasks))
        return [_types.submitted_from_proto(s) for s in resp.tasks]

    def get(self, task_id: str) -> _types.TaskInfo:
        return _types.TaskInfo.from_proto(self._call(self._stub.GetTask, _common.get_request(task_id)).task)

    def wait(self, task_id: str, timeout: float = 30.0, *, deadline: float | None = None) -> _types.TaskInfo:
        """The task once final, or as it is when ``timeout`` seconds passed (check ``is_final``).
        ``deadline`` (seconds) bounds the call: past it, TaskyardError DEADLINE_EXCEEDED."""
        waiting = _common.Wait(task_id, timeout, deadline)
        while True:
            req, limit = waiting.next_call()
            if (task := waiting.outcome(self._call(self._stub.WaitTask, req, timeout=limit))) is not None:
                return task

    @request_from(_common.cancel_request)
    def cancel(self, req: task_service_pb2.CancelTaskRequest) -> _types.Cancellation:
        """Cancel a task (and its unfinished children). With ``wait`` (seconds), a task
        already handed to a pool (ASSIGNED or RUNNING) is waited for until it stops; ``step``
        says which step stopped it (NOT_STARTED: its pool never started the body)."""
        resp = self._call(self._stub.CancelTask, req, timeout=_common.cancel_deadline(req))
        return _common.cancellation(resp)

    def explain(self, task_id: str) -> _types.Explanation:
        """Why the task is not running yet (its ETA, a dependency, a retry delay, a paused
        queue, no pool for its name, busy slots with the depth ahead of it), or that it runs
        or is final."""
        return _types.Explanation.from_proto(
            self._call(self._stub.ExplainTask, _common.explain_request(task_id))
        )

    def tree(self, task_id: str) -> _types.TaskTree:
        """The hierarchy (parent/child) of the tree ``task_id`` belongs to, from its root."""
        return _types.TaskTree.from_proto(self._call(self._stub.GetTaskTree, _common.tree_request(task_id)))

    @request_from(_common.list_request)
    def iter_tasks(self, req: task_service_pb2.ListTasksRequest) -> Iterator[_types.TaskInfo]:
        """Every matching task, newest first, fetching pages as needed (from ``page_token``
        on, when given)."""
        while True:
            page = _common.task_page(self._call(self._stub.ListTasks, req))
            yield from page.tasks
            if not page.next_page_token:
                return
            req.page_token = page.next_page_token

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @request_from(_common.list_request)
    def list(self, req: task_service_pb2.ListTasksRequest) -> _types.TaskPage:
        """One page of tasks, newest first (``page_size`` 0 means 100, at most 1000)."""
        return _common.task_page(self._call(self._stub.ListTasks, req))
