"""The blocking client."""

from __future__ import annotations

import builtins
import datetime
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

import grpc

from taskyard.client import _common, _credentials
from taskyard.client._credentials import PemSource
from taskyard.client._errors import TaskyardError
from taskyard.client._ops import Logs, Queues
from taskyard.client._schedules import Schedules
from taskyard.client._types import (
    JSON,
    Cancellation,
    Explanation,
    Priority,
    Submitted,
    TaskInfo,
    TaskPage,
    TaskRequest,
    TaskState,
    TaskTree,
    submitted_from_proto,
)
from taskyard.v1 import task_service_pb2_grpc

R = TypeVar("R")


class Client:
    """``Client("localhost:50051")``: submit, inspect, wait for and cancel tasks.

    Every failed call raises ``TaskyardError`` (code, reason, field violations).
    ``timeout`` is the deadline of each call, in seconds. A gateway with TLS and
    tokens: ``Client("gw:50051", tls_ca="ca.pem", token="...")`` (docs/security.md).
    """

    def __init__(
        self,
        target: str = _common.DEFAULT_TARGET,
        *,
        credentials: grpc.ChannelCredentials | None = None,
        timeout: float = 30.0,
        options: Sequence[tuple[str, Any]] = (),
        token: str | None = None,
        tls: bool | None = None,
        tls_ca: PemSource | None = None,
        tls_cert: PemSource | None = None,
        tls_key: PemSource | None = None,
        tls_server_name: str | None = None,
    ) -> None:
        self.target = target
        self.timeout = timeout
        # token (default: $TASKYARD_TOKEN) goes as "authorization: Bearer"; tls_* are PEM
        # bytes or paths (tls_ca: the CA that signed the gateway's certificate).
        creds = _credentials.channel_credentials(
            target,
            credentials=credentials,
            token=token,
            tls=tls,
            tls_ca=tls_ca,
            tls_cert=tls_cert,
            tls_key=tls_key,
        )
        options = _credentials.channel_options(options, tls_server_name)
        if creds is None:
            self._channel = grpc.insecure_channel(target, options=options)
        else:
            self._channel = grpc.secure_channel(target, creds, options=options)
        self._stub = task_service_pb2_grpc.TaskServiceStub(self._channel)
        # Periodic schedules: client.schedules.create(...), .get, .list, .pause, ...
        self.schedules = Schedules(self._channel, self._call)
        # Task logs and queue operations: client.logs.follow(id), client.queues.pause(...), ...
        self.logs = Logs(self._stub, self._call)
        self.queues = Queues(self._channel, self._call)

    def _call(self, method: Callable[..., R], request: Any, timeout: float | None = None) -> R:
        try:
            return method(request, timeout=self.timeout if timeout is None else timeout)
        except grpc.RpcError as err:
            raise TaskyardError.from_rpc_error(err) from None

    def submit(
        self,
        name: str,
        *args: JSON,
        priority: Priority | int | str | None = None,
        queue: str = "",
        timeout: float | datetime.timedelta | None = None,
        max_retries: int | None = None,
        request_id: str = "",
        parent_id: str = "",
        labels: Mapping[str, str] | None = None,
        depends_on: Iterable[str] = (),
        idempotency_key: str = "",
        idempotency_window: float | datetime.timedelta | None = None,
        eta: datetime.datetime | None = None,
        countdown: float | datetime.timedelta | None = None,
        **kwargs: JSON,
    ) -> TaskInfo:
        """Submit one task; ``timeout`` is the task's execution limit. With a repeated
        ``request_id`` the task of the first submission is returned."""
        req = _common.submit_request(
            name,
            args,
            kwargs,
            priority=priority,
            queue=queue,
            timeout=timeout,
            max_retries=max_retries,
            request_id=request_id,
            parent_id=parent_id,
            labels=labels,
            depends_on=depends_on,
            idempotency_key=idempotency_key,
            idempotency_window=idempotency_window,
            eta=eta,
            countdown=countdown,
        )
        return TaskInfo.from_proto(self._call(self._stub.SubmitTask, req).task)

    def submit_many(self, tasks: Iterable[TaskRequest | Mapping[str, Any]]) -> builtins.list[Submitted]:
        """Submit up to 1,000 tasks at once, all or none; outcomes in order."""
        resp = self._call(self._stub.BatchSubmitTasks, _common.batch_request(tasks))
        return [submitted_from_proto(s) for s in resp.tasks]

    def get(self, task_id: str) -> TaskInfo:
        return TaskInfo.from_proto(self._call(self._stub.GetTask, _common.get_request(task_id)).task)

    def wait(self, task_id: str, timeout: float = 30.0) -> TaskInfo:
        """The task once final, or as it is when ``timeout`` seconds passed (check ``is_final``)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            chunk = min(max(0.0, remaining), _common.MAX_SERVER_WAIT)
            resp = self._call(
                self._stub.WaitTask, _common.wait_request(task_id, chunk), timeout=chunk + _common.WAIT_SLACK
            )
            if not resp.timed_out or remaining <= chunk:
                return TaskInfo.from_proto(resp.task)

    def cancel(self, task_id: str, reason: str = "", *, wait: float | None = None) -> Cancellation:
        """Cancel a task (and its unfinished children). With ``wait`` (seconds), a
        running task is waited for until it stops; ``step`` says which step stopped it."""
        limit = None if wait is None else wait + _common.WAIT_SLACK
        req = _common.cancel_request(task_id, reason, wait)
        resp = self._call(self._stub.CancelTask, req, timeout=limit)
        return _common.cancellation(resp)

    def explain(self, task_id: str) -> Explanation:
        """Why the task is not running yet (its ETA, a dependency, a retry delay, a paused
        queue, no pool for its name, busy slots with the depth ahead of it), or that it runs
        or is final."""
        return Explanation.from_proto(self._call(self._stub.ExplainTask, _common.explain_request(task_id)))

    def tree(self, task_id: str) -> TaskTree:
        """The hierarchy (parent/child) of the tree ``task_id`` belongs to, from its root."""
        return TaskTree.from_proto(self._call(self._stub.GetTaskTree, _common.tree_request(task_id)))

    def iter_tasks(
        self,
        *,
        state: TaskState | str | Iterable[TaskState | str] | None = None,
        name: str = "",
        queue: str = "",
        priority: Priority | int | str | None = None,
        page_size: int = 0,
    ) -> Iterator[TaskInfo]:
        """Every matching task, newest first, fetching pages as needed."""
        token = ""
        while True:
            page = self.list(
                state=state, name=name, queue=queue, priority=priority, page_size=page_size, page_token=token
            )
            yield from page.tasks
            token = page.next_page_token
            if not token:
                return

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def list(
        self,
        *,
        state: TaskState | str | Iterable[TaskState | str] | None = None,
        name: str = "",
        queue: str = "",
        priority: Priority | int | str | None = None,
        page_size: int = 0,
        page_token: str = "",
    ) -> TaskPage:
        """One page of tasks, newest first (``page_size`` 0 means 100, at most 1000)."""
        req = _common.list_request(
            state=state, name=name, queue=queue, priority=priority, page_size=page_size, page_token=page_token
        )
        resp = self._call(self._stub.ListTasks, req)
        return TaskPage(
            tasks=tuple(TaskInfo.from_proto(t) for t in resp.tasks), next_page_token=resp.next_page_token
        )
