"""What the blocking and asyncio clients share: their construction, each call's options and
request, and the decoding of its reply. Each client keeps only the call itself."""

from __future__ import annotations

import dataclasses
import datetime
import functools
import inspect
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast

import grpc
from google.protobuf import duration_pb2

from taskyard.client._credentials import PemSource
from taskyard.client._endpoint import DEFAULT_TARGET, Endpoint
from taskyard.client._errors import TaskyardError
from taskyard.client._flow import LimitUses
from taskyard.client._types import (
    JSON,
    Cancellation,
    Priority,
    TaskInfo,
    TaskPage,
    TaskRequest,
    TaskState,
    _cancel_step,
)
from taskyard.v1 import task_service_pb2, task_service_pb2_grpc

# The server waits at most this long per WaitTask call; longer waits loop.
MAX_SERVER_WAIT = 300.0
# Extra time on a WaitTask call's deadline beyond the wait itself.
WAIT_SLACK = 10.0
# The gateway answers a wait 0.1 s before the call's deadline: with less than this left after
# a timed-out answer, another call could only come back at once, timed out again.
DEADLINE_MARGIN = 0.15

ChannelT = TypeVar("ChannelT")
P = ParamSpec("P")
Receiver = TypeVar("Receiver")
Request = TypeVar("Request")
Reply = TypeVar("Reply")


def request_from(
    build: Callable[P, Request],
) -> Callable[[Callable[[Receiver, Request], Reply]], Callable[Concatenate[Receiver, P], Reply]]:
    """The decorated method takes ``build``'s arguments and gets the request ``build`` makes of
    them, so a call's options are declared once for the blocking and the asyncio client."""

    def decorate(call: Callable[[Receiver, Request], Reply]) -> Callable[Concatenate[Receiver, P], Reply]:
        def method(self: Receiver, /, *args: P.args, **kwargs: P.kwargs) -> Reply:
            return call(self, build(*args, **kwargs))

        async def coroutine(self: Receiver, /, *args: P.args, **kwargs: P.kwargs) -> Any:
            # A coroutine method stays one: bad arguments raise when awaited, as before.
            return await cast(Awaitable[Any], call(self, build(*args, **kwargs)))

        chosen = coroutine if inspect.iscoroutinefunction(call) else method
        wrapper = cast(Callable[Concatenate[Receiver, P], Reply], functools.update_wrapper(chosen, call))
        # help() and IDEs show the options, not the (self, req) of the decorated function.
        own = inspect.signature(call)
        receiver = next(iter(own.parameters.values()))
        parameters = [receiver, *inspect.signature(build).parameters.values()]
        wrapper.__signature__ = own.replace(parameters=parameters)  # type: ignore[attr-defined]
        return wrapper

    return decorate


class ClientBase(Generic[ChannelT]):
    """The clients' options and channel; a subclass opens the channel and adds its services."""

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
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
        tenant: str | None = None,
    ) -> None:
        self.target = target
        self.timeout = timeout
        # Every option but timeout is the channel's: Endpoint says what each does.
        endpoint = Endpoint(
            target,
            token=token,
            tls=tls,
            tls_ca=tls_ca,
            tls_cert=tls_cert,
            tls_key=tls_key,
            tls_server_name=tls_server_name,
            credentials=credentials,
            options=options,
            tenant=tenant,
        )
        # The tenant an operator token acts as (None: every tenant; docs/tenants.md).
        self.tenant = tenant or None
        self._channel = self._open(endpoint)
        self._stub = task_service_pb2_grpc.TaskServiceStub(self._channel)
        self._attach()

    def _open(self, endpoint: Endpoint) -> ChannelT:
        raise NotImplementedError

    def _attach(self) -> None:
        """Add the service groups (``schedules``, ``logs``, ``queues``) on the open channel."""
        raise NotImplementedError


def submit_request(
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
    limits: LimitUses | None = None,
    fairness_key: str = "",
    **kwargs: JSON,
) -> task_service_pb2.SubmitTaskRequest:
    spec = TaskRequest(
        name=name,
        args=args,
        kwargs=kwargs,
        priority=priority,
        queue=queue,
        timeout=timeout,
        max_retries=max_retries,
        # One made here when none is given: gRPC's retry of an UNAVAILABLE call resends
        # these bytes, and the gateway answers a repeated request_id with the first task.
        request_id=request_id or str(uuid.uuid4()),
        parent_id=parent_id,
        labels=labels or {},
        depends_on=tuple(depends_on),
        idempotency_key=idempotency_key,
        idempotency_window=idempotency_window,
        eta=eta,
        countdown=countdown,
        limits=limits,
        fairness_key=fairness_key,
    ).to_proto()
    return task_service_pb2.SubmitTaskRequest(task=spec)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Run:
    """One ``run``: its RunTask request (waiting at most MAX_SERVER_WAIT) and the whole
    wait asked, which a WaitTask loop finishes when it is longer."""

    request: task_service_pb2.RunTaskRequest
    wait: float

    @property
    def call_deadline(self) -> float:
        return self.request.timeout.ToTimedelta().total_seconds() + WAIT_SLACK

    def rest(self, started: float) -> float | None:
        """Seconds still to wait after a RunTask started at ``started`` (monotonic) that
        ended not final; None when the wait asked is over."""
        left = self.wait - (time.monotonic() - started)
        return left if left > 0 and self.wait > MAX_SERVER_WAIT else None


def run_request(
    name: str,
    *args: JSON,
    wait: float = 30.0,
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
    limits: LimitUses | None = None,
    fairness_key: str = "",
    **kwargs: JSON,
) -> Run:
    """``submit_request``'s arguments, and ``wait``: seconds to wait for the final state
    (``timeout`` stays the task's execution limit)."""
    if not wait >= 0:
        raise ValueError(f"wait must be a non-negative number of seconds, got {wait!r}")
    spec = submit_request(
        name,
        *args,
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
        limits=limits,
        fairness_key=fairness_key,
        **kwargs,
    ).task
    req = task_service_pb2.RunTaskRequest(task=spec)
    req.timeout.FromNanoseconds(int(min(wait, MAX_SERVER_WAIT) * 1e9))
    return Run(request=req, wait=wait)


def batch_request(
    items: Iterable[TaskRequest | Mapping[str, Any]],
) -> task_service_pb2.BatchSubmitTasksRequest:
    specs = [TaskRequest.coerce(i).to_proto() for i in items]
    for spec in specs:  # as submit_request: a resent batch is answered with its first tasks
        spec.request_id = spec.request_id or str(uuid.uuid4())
    return task_service_pb2.BatchSubmitTasksRequest(tasks=specs)


def wait_request(task_id: str, seconds: float) -> task_service_pb2.WaitTaskRequest:
    d = duration_pb2.Duration()
    d.FromNanoseconds(int(max(0.0, seconds) * 1e9))
    return task_service_pb2.WaitTaskRequest(id=task_id, timeout=d)


class Wait:
    """One ``wait``, as WaitTask calls: the server waits at most MAX_SERVER_WAIT a call, so a
    longer wait takes several, each with its own deadline. ``deadline`` (seconds) bounds the
    whole of it: a wait it cuts short fails DEADLINE_EXCEEDED. The gateway answers a call
    just before its deadline, not final; so when an answer leaves too little of the deadline
    for another call, the wait fails then, instead of calling again and again."""

    def __init__(self, task_id: str, timeout: float, deadline: float | None = None) -> None:
        self._task_id = task_id
        now = time.monotonic()
        self._until = now + timeout
        self._deadline = None if deadline is None else now + deadline
        self._last = False

    def next_call(self) -> tuple[task_service_pb2.WaitTaskRequest, float]:
        """The next call's request and deadline (seconds)."""
        now = time.monotonic()
        remaining = self._until - now
        chunk = min(max(0.0, remaining), MAX_SERVER_WAIT)
        limit = chunk + WAIT_SLACK
        if self._deadline is not None and self._deadline - now < limit:
            limit = max(0.0, self._deadline - now)
            # The deadline ends this call before the wait is over: an early answer is not the last.
            self._last = remaining <= chunk and self._until <= self._deadline
        else:
            self._last = remaining <= chunk
        return wait_request(self._task_id, chunk), limit

    def outcome(self, resp: task_service_pb2.WaitTaskResponse) -> TaskInfo | None:
        """The task once final or the wait is over; None: call again."""
        if self._last or not resp.timed_out:
            return TaskInfo.from_proto(resp.task)
        if self._deadline is not None and self._deadline - time.monotonic() < DEADLINE_MARGIN:
            raise TaskyardError(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"the call's deadline passes before task {self._task_id} is final",
            )
        return None


def list_request(
    *,
    state: TaskState | str | Iterable[TaskState | str] | None = None,
    name: str = "",
    queue: str = "",
    priority: Priority | int | str | None = None,
    page_size: int = 0,
    page_token: str = "",
) -> task_service_pb2.ListTasksRequest:
    states: list[int] = []
    if state is not None:
        items: Iterable[TaskState | str] = [state] if isinstance(state, (str, TaskState)) else state
        for s in items:
            states.append(int(TaskState[s.upper().removeprefix("TASK_STATE_")] if isinstance(s, str) else s))
    req = task_service_pb2.ListTasksRequest(
        states=states,  # type: ignore[arg-type]
        name=name,
        queue=queue,
        page_size=page_size,
        page_token=page_token,
    )
    if priority is not None:
        req.priority = int(Priority.parse(priority))  # type: ignore[assignment]
    return req


def task_page(resp: task_service_pb2.ListTasksResponse) -> TaskPage:
    return TaskPage(
        tasks=tuple(TaskInfo.from_proto(t) for t in resp.tasks), next_page_token=resp.next_page_token
    )


def get_request(task_id: str) -> task_service_pb2.GetTaskRequest:
    return task_service_pb2.GetTaskRequest(id=task_id)


def cancel_request(
    task_id: str, reason: str = "", *, wait: float | None = None
) -> task_service_pb2.CancelTaskRequest:
    req = task_service_pb2.CancelTaskRequest(id=task_id, reason=reason)
    if wait is not None:
        req.wait.FromNanoseconds(int(max(0.0, wait) * 1e9))
    return req


def cancel_deadline(req: task_service_pb2.CancelTaskRequest) -> float | None:
    """A cancel that waits for the task to stop gets that long, and some, as its deadline."""
    return req.wait.ToTimedelta().total_seconds() + WAIT_SLACK if req.HasField("wait") else None


def cancellation(resp: task_service_pb2.CancelTaskResponse) -> Cancellation:
    return Cancellation(
        task=TaskInfo.from_proto(resp.task),
        cancelled=resp.cancelled,
        step=_cancel_step(resp.step),
        cancelled_children=tuple(resp.cancelled_children),
    )


def tree_request(task_id: str) -> task_service_pb2.GetTaskTreeRequest:
    return task_service_pb2.GetTaskTreeRequest(id=task_id)


def explain_request(task_id: str) -> task_service_pb2.ExplainTaskRequest:
    return task_service_pb2.ExplainTaskRequest(id=task_id)
