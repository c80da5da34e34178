"""The CLI's calls to the gateway, returning the response messages themselves.

The Python client turns responses into its own dataclasses and keeps the
messages to itself; ``--output json`` must print the messages as the gateway
sent them, so the CLI calls the generated stubs here, on a channel made by
``Connection`` (TLS, token), and raises the client's ``TaskyardError``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import grpc

from taskyard.cli.connection import Connection
from taskyard.client import TaskyardError
from taskyard.client._resume import Backoff, resumable
from taskyard.v1 import (
    failure_service_pb2_grpc,
    limit_service_pb2_grpc,
    queue_service_pb2_grpc,
    schedule_service_pb2_grpc,
    task_pb2,
    task_service_pb2,
    task_service_pb2_grpc,
    tenant_service_pb2_grpc,
)

R = TypeVar("R")
# The deadline of one call; a gateway that does not answer in this long is not there.
CALL_TIMEOUT = 30.0
# The gateway waits at most this long per WaitTask call; longer waits loop.
MAX_SERVER_WAIT = dt.timedelta(seconds=300)
# Extra time on a WaitTask (or CancelTask with a wait) deadline beyond the wait itself.
WAIT_SLACK = 10.0


class Gateway:
    """The public services on one channel: ``gateway.tasks``, ``.queues``, ``.schedules``, ``.limits``,
    ``.failures``, ``.tenants``."""

    def __init__(self, channel: grpc.Channel) -> None:
        self.channel = channel
        self.tasks = task_service_pb2_grpc.TaskServiceStub(channel)
        self.queues = queue_service_pb2_grpc.QueueServiceStub(channel)
        self.schedules = schedule_service_pb2_grpc.ScheduleServiceStub(channel)
        self.limits = limit_service_pb2_grpc.LimitServiceStub(channel)
        self.failures = failure_service_pb2_grpc.FailureServiceStub(channel)
        self.tenants = tenant_service_pb2_grpc.TenantServiceStub(channel)

    def call(self, method: Callable[..., R], request: Any, *, timeout: float = CALL_TIMEOUT) -> R:
        try:
            return method(request, timeout=timeout)
        except grpc.RpcError as err:
            raise TaskyardError.from_rpc_error(err) from None

    def stream(self, method: Callable[..., Any], request: Any) -> Iterator[Any]:
        """A server stream's messages; leaving early ends the call at once (it holds a gateway slot)."""
        call = method(request)
        try:
            yield from call
        except grpc.RpcError as err:
            raise TaskyardError.from_rpc_error(err) from None
        finally:
            call.cancel()

    def follow_logs(
        self,
        task_id: str,
        from_offset: int,
        on_resume: Callable[[TaskyardError, float], None] | None = None,
    ) -> Iterator[task_service_pb2.StreamTaskLogsResponse]:
        """A task's lines from ``from_offset`` until it is final and its last line sent. Once
        the gateway has answered, a stream cut by something that is not the caller's (the
        gateway stops, the connection drops) continues after the last line, as the Python
        client's follow does; ``on_resume`` hears each such cut and the wait before the next
        try. A gateway that cannot be reached at all is an error at once, as for any command."""
        backoff = Backoff()
        offset = from_offset
        answered = False
        while True:
            request = task_service_pb2.StreamTaskLogsRequest(id=task_id, from_offset=offset)
            try:
                for reply in self.stream(self.tasks.StreamTaskLogs, request):
                    answered = True
                    if reply.logs:
                        offset = reply.logs[-1].offset + 1
                        backoff.reset()
                    yield reply
                return
            except TaskyardError as error:
                answered = answered or error.reason == "GATEWAY_STOPPING"
                if not (answered and resumable(error)):
                    raise
                wait = backoff.next()
                if on_resume is not None:
                    on_resume(error, wait)
            time.sleep(wait)

    def wait_task(self, task_id: str, timeout: dt.timedelta) -> task_service_pb2.WaitTaskResponse:
        """The task once final, or as it is when ``timeout`` passed (``timed_out`` says which)."""
        deadline = time.monotonic() + timeout.total_seconds()
        while True:
            remaining = max(0.0, deadline - time.monotonic())
            chunk = min(dt.timedelta(seconds=remaining), MAX_SERVER_WAIT)
            request = task_service_pb2.WaitTaskRequest(id=task_id)
            request.timeout.FromTimedelta(chunk)
            reply: task_service_pb2.WaitTaskResponse = self.call(
                self.tasks.WaitTask, request, timeout=chunk.total_seconds() + WAIT_SLACK
            )
            if not reply.timed_out or remaining <= chunk.total_seconds():
                return reply

    def run_task(self, spec: task_pb2.TaskSpec, timeout: dt.timedelta) -> task_service_pb2.WaitTaskResponse:
        """Submit and wait in one call (RunTask); an answer as ``wait_task``'s, so that
        ``submit --wait -o json`` prints what it always has. A wait longer than the
        gateway's per call goes on with WaitTask."""
        deadline = time.monotonic() + timeout.total_seconds()
        chunk = min(timeout, MAX_SERVER_WAIT)
        request = task_service_pb2.RunTaskRequest(task=spec)
        request.timeout.FromTimedelta(chunk)
        ran: task_service_pb2.RunTaskResponse = self.call(
            self.tasks.RunTask, request, timeout=chunk.total_seconds() + WAIT_SLACK
        )
        remaining = deadline - time.monotonic()
        if ran.final or remaining <= 0:
            return task_service_pb2.WaitTaskResponse(task=ran.task, timed_out=not ran.final)
        return self.wait_task(ran.task.id, dt.timedelta(seconds=remaining))


@contextlib.contextmanager
def gateway() -> Iterator[Gateway]:
    """The gateway of the current command (``--target``, TLS and token options, environment)."""
    with Connection.current().channel() as channel:
        yield Gateway(channel)
