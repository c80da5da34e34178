"""An in-process stand-in for the gateway's side of the worker protocol
(``taskyard.worker.v1.WorkerService``), for the Python worker's unit tests: each stream a
worker opens is handed to the test, which reads what the worker sends and sends what the
gateway would. It also answers TaskService.SubmitTask (a worker's child submissions).

Everything a test waits for is bounded (``WAIT``): a worker that never sends fails the
test instead of hanging it.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
from collections.abc import AsyncIterator
from typing import Any

import grpc
import grpc.aio

from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc
from taskyard.worker.v1 import worker_service_pb2 as pb
from taskyard.worker.v1 import worker_service_pb2_grpc

WAIT = 10.0
TOKEN = "worker-token-0123456789"


class Stream:
    """One Work stream as the gateway sees it."""

    def __init__(self, hello: pb.Hello, worker_id: str, metadata: dict[str, str]) -> None:
        self.hello = hello
        self.worker_id = worker_id
        self.metadata = metadata
        # What the worker sent after Hello, in order, a Reports as its parts (its starts,
        # then its outcomes, as the gateway applies them); None once it half-closed.
        self.received: asyncio.Queue[pb.WorkRequest | None] = asyncio.Queue()
        # The same messages as they came on the stream, a Reports whole.
        self.wire: list[pb.WorkRequest] = []
        self.outgoing: asyncio.Queue[pb.WorkResponse | tuple[grpc.StatusCode, str] | None] = asyncio.Queue()
        self.ended = asyncio.Event()

    async def next(self, *, heartbeats: bool = False) -> pb.WorkRequest | None:
        """The worker's next message (heartbeats skipped unless asked for)."""
        while True:
            msg = await asyncio.wait_for(self.received.get(), WAIT)
            if msg is None or heartbeats or msg.WhichOneof("message") != "heartbeat":
                return msg

    async def expect(self, kind: str) -> Any:
        msg = await self.next(heartbeats=kind == "heartbeat")
        got = "half-close" if msg is None else msg.WhichOneof("message")
        assert got == kind, f"expected {kind}, the worker sent {got}: {msg}"
        assert msg is not None
        return getattr(msg, kind)

    def send(self, **message: Any) -> None:
        self.outgoing.put_nowait(pb.WorkResponse(**message))

    def attempts(self, *attempts: pb.Attempt) -> None:
        self.send(attempts=pb.Attempts(attempts=attempts))

    def end(self, code: grpc.StatusCode | None = None, details: str = "") -> None:
        """End the stream: OK (None), or with a status."""
        self.outgoing.put_nowait(None if code is None else (code, details))


def attempt(
    task_id: str,
    name: str,
    *args: Any,
    number: int = 1,
    deadline_in: float | None = None,
    **kwargs: Any,
) -> pb.Attempt:
    a = pb.Attempt(task_id=task_id, name=name, attempt=number, lease_token=f"lease-{task_id}-{number}")
    a.args.extend(list(args))
    a.kwargs.update(kwargs)
    if deadline_in is not None:
        a.deadline.FromDatetime(datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=deadline_in))
    return a


def ref(a: pb.Attempt) -> pb.AttemptRef:
    return pb.AttemptRef(task_id=a.task_id, attempt=a.attempt, lease_token=a.lease_token)


class FakeGateway(worker_service_pb2_grpc.WorkerServiceServicer, task_service_pb2_grpc.TaskServiceServicer):
    def __init__(
        self,
        *,
        heartbeat: float = 30.0,
        max_result_bytes: int = 1 << 20,
        max_message_bytes: int = 4 << 20,
        unanswered: int = 0,
    ) -> None:
        # How many streams, first, get no Welcome at all (a gateway that hangs).
        self.unanswered = unanswered
        self.hellos = 0
        self.heartbeat = heartbeat
        self.max_message_bytes = max_message_bytes
        self.max_result_bytes = max_result_bytes
        self.streams: asyncio.Queue[Stream] = asyncio.Queue()
        self.submitted: list[task_pb2.TaskSpec] = []
        # Each submission's call metadata (a child's traceparent).
        self.submit_metadata: list[dict[str, str]] = []
        self._count = 0

    async def next_stream(self) -> Stream:
        return await asyncio.wait_for(self.streams.get(), WAIT)

    async def Work(
        self, request_iterator: AsyncIterator[pb.WorkRequest], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.WorkResponse]:
        metadata = _metadata(context)
        if metadata.get("authorization") != f"Bearer {TOKEN}":
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "a valid token is required")
        requests = aiter(request_iterator)
        first = await anext(requests)
        assert first.WhichOneof("message") == "hello", first
        self.hellos += 1
        if self.hellos <= self.unanswered:
            await asyncio.Event().wait()  # until the worker gives up on it
        self._count += 1
        stream = Stream(first.hello, f"worker-{self._count}", metadata)
        welcome = pb.Welcome(worker_id=stream.worker_id, max_message_bytes=self.max_message_bytes)
        welcome.max_result_bytes = self.max_result_bytes
        welcome.heartbeat_interval.FromTimedelta(datetime.timedelta(seconds=self.heartbeat))
        yield pb.WorkResponse(welcome=welcome)

        async def read() -> None:
            with contextlib.suppress(Exception):
                async for req in requests:
                    stream.wire.append(req)
                    for part in _parts(req):
                        stream.received.put_nowait(part)
            stream.received.put_nowait(None)

        reader = asyncio.create_task(read())
        self.streams.put_nowait(stream)
        try:
            while (out := await stream.outgoing.get()) is not None:
                if isinstance(out, tuple):
                    await context.abort(*out)
                yield out
        finally:
            stream.ended.set()
            reader.cancel()

    async def SubmitTask(
        self, request: task_service_pb2.SubmitTaskRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> task_service_pb2.SubmitTaskResponse:
        self.submitted.append(request.task)
        self.submit_metadata.append(
            {k: v for k, v in context.invocation_metadata() or () if isinstance(v, str)}
        )
        task = task_pb2.Task(id=f"child-{len(self.submitted)}", name=request.task.name)
        task.parent_id = request.task.parent_id
        return task_service_pb2.SubmitTaskResponse(task=task)


def _parts(req: pb.WorkRequest) -> list[pb.WorkRequest]:
    if req.WhichOneof("message") != "reports":
        return [req]
    starts = [pb.WorkRequest(started=s) for s in req.reports.started]
    return starts + [pb.WorkRequest(outcome=o) for o in req.reports.outcomes]


def _metadata(context: grpc.aio.ServicerContext[Any, Any]) -> dict[str, str]:
    return {k: v for k, v in context.invocation_metadata() or () if isinstance(v, str)}


@contextlib.asynccontextmanager
async def serving(gateway: FakeGateway) -> AsyncIterator[str]:
    """The fake on a loopback port the system chose free; yields its target."""
    server = grpc.aio.server()
    worker_service_pb2_grpc.add_WorkerServiceServicer_to_server(gateway, server)
    task_service_pb2_grpc.add_TaskServiceServicer_to_server(gateway, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(None)
