"""A worker over the public protocol (``taskyard.worker.v1.WorkerService``): task bodies in
any process that can reach the gateway, no bus, no pool::

    import asyncio
    from taskyard.client.worker import Worker, Fatal

    worker = Worker("gw.example.com:50051", token=token, tls=True, slots=4)

    @worker.task(timeout=60, max_retries=3)
    async def resize(ctx, url, width):
        ctx.log(f"resizing {url}")
        ...
        ctx.progress(0.5, "half")
        return {"url": url, "width": width}

    async def main():
        worker.handle_signals()          # SIGTERM / SIGINT drain it
        await worker.run(ready=lambda worker_id: print("ready", worker_id))

    asyncio.run(main())

A body gets ``(ctx, *args, **kwargs)`` (``ctx`` is an ``AttemptContext``); ``async def``
bodies run on the worker's loop, plain ``def`` ones in a thread each. What it returns is
the result (JSON); what it raises fails the attempt, retried by the task's retry budget
unless it is ``Fatal``; ``RetryAfter(seconds)`` sets the wait before the next attempt.
A cancel of the task sets ``ctx.cancelled``: a body that stops on it ends the task
CANCELLED. The token needs the ``work`` scope (docs/worker-protocol.md). The NNG worker
pool (``taskyard worker``) stays the faster way to run Python tasks inside the suite.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import os
import re
import signal
import socket
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

import grpc
import grpc.aio

from taskyard.client._async import AsyncClient
from taskyard.client._credentials import PemSource
from taskyard.client._endpoint import DEFAULT_TARGET, Endpoint
from taskyard.client._errors import TaskyardError
from taskyard.client._types import JSON
from taskyard.client.worker_context import AttemptContext, CancelSignal, Fatal, RetryAfter, TaskDeclaration
from taskyard.client.worker_session import Hello, ProtocolError, Registered, Session

__all__ = ["AttemptContext", "CancelSignal", "Fatal", "RetryAfter", "TaskDeclaration", "Worker"]

log = logging.getLogger("taskyard.client.worker")

SDK = "python/0.1.0"
MAX_SLOTS = 256
MAX_TASKS = 1000
TASK_NAME = re.compile(r"[A-Za-z0-9._:-]{1,200}")
# Waits before connecting again after a stream broke: the first, doubled up to the last.
RECONNECT_FIRST = 0.1
RECONNECT_MAX = 5.0
# The stream's end with these is the worker's end: connecting again would end the same way.
FINAL_CODES = frozenset(
    {
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.UNIMPLEMENTED,  # a gateway without the worker protocol
    }
)

F = TypeVar("F", bound=Callable[..., Any])


class Worker:
    """Runs the functions registered with ``@worker.task`` for one gateway.

    ``target``, ``token`` (default ``$TASKYARD_TOKEN``) and the TLS options are the
    client's (``Endpoint``); ``slots`` (1..256) is how many attempts run at once; ``name``
    is how ``taskyard queue servers`` shows it (default ``python@<host>-<pid>``)."""

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        *,
        token: str | None = None,
        slots: int = 4,
        name: str | None = None,
        tls: bool | None = None,
        tls_ca: PemSource | None = None,
        tls_cert: PemSource | None = None,
        tls_key: PemSource | None = None,
        tls_server_name: str | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        if isinstance(slots, bool) or not isinstance(slots, int) or not 1 <= slots <= MAX_SLOTS:
            raise ValueError(f"slots must be an integer from 1 to {MAX_SLOTS}, got {slots!r}")
        self.slots = slots
        self.name = name or f"python@{socket.gethostname()}-{os.getpid()}"
        self._security: dict[str, Any] = dict(
            token=token,
            tls=tls,
            tls_ca=tls_ca,
            tls_cert=tls_cert,
            tls_key=tls_key,
            tls_server_name=tls_server_name,
            credentials=credentials,
            options=options,
        )
        self.target = target
        self._endpoint = Endpoint(target, **self._security)
        self._tasks: dict[str, Registered] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._stopping = False
        self._session: Session | None = None
        self._children: AsyncClient | None = None
        # The pool id of the current stream (Welcome.worker_id); "" while not connected.
        self.worker_id = ""

    # --- registration ----------------------------------------------------------

    @overload
    def task(self, fn: F, /) -> F: ...

    @overload
    def task(
        self,
        /,
        *,
        name: str | None = None,
        timeout: float | datetime.timedelta | None = None,
        max_retries: int | None = None,
        rate_limit: str = "",
        concurrency: int = 0,
        limit_key: str = "",
    ) -> Callable[[F], F]: ...

    def task(
        self,
        fn: F | None = None,
        /,
        *,
        name: str | None = None,
        timeout: float | datetime.timedelta | None = None,
        max_retries: int | None = None,
        rate_limit: str = "",
        concurrency: int = 0,
        limit_key: str = "",
    ) -> F | Callable[[F], F]:
        """Register a function by ``name`` (default: its ``__name__``), with the defaults of
        its tasks: ``timeout`` (seconds), ``max_retries``, a ``rate_limit`` ("100/s") and a
        ``concurrency`` limit, per ``limit_key`` (a keyword argument) when given."""

        def register(f: F) -> F:
            declared = TaskDeclaration(
                name=name or f.__name__,
                timeout=_duration(timeout),
                max_retries=max_retries,
                rate_limit=rate_limit,
                concurrency=concurrency,
                limit_key=limit_key,
            )
            self._register(declared, f)
            return f

        return register if fn is None else register(fn)

    def _register(self, declared: TaskDeclaration, fn: Callable[..., Any]) -> None:
        if not TASK_NAME.fullmatch(declared.name):
            raise ValueError(f"task name {declared.name!r}: 1..200 letters, digits and ._:- only")
        if declared.name in self._tasks:
            raise ValueError(f"a function is registered as {declared.name!r} already")
        if len(self._tasks) >= MAX_TASKS:
            raise ValueError(f"a worker runs at most {MAX_TASKS} task names")
        if declared.max_retries is not None and declared.max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {declared.max_retries}")
        if declared.concurrency < 0:
            raise ValueError(f"concurrency must be 0 (none) or more, got {declared.concurrency}")
        if self._loop is not None:
            raise RuntimeError("register tasks before run(): the gateway learns them in Hello")
        self._tasks[declared.name] = Registered(declaration=declared, fn=fn)

    @property
    def declarations(self) -> tuple[TaskDeclaration, ...]:
        return tuple(r.declaration for r in self._tasks.values())

    # --- running ---------------------------------------------------------------

    async def run(self, ready: Callable[[str], object] | None = None) -> None:
        """Serve until ``stop()`` (a drain) completes. ``ready(worker_id)`` is called each
        time the gateway welcomes the worker (again after a reconnect). A refusal
        (UNAUTHENTICATED, PERMISSION_DENIED, INVALID_ARGUMENT) raises ``TaskyardError``;
        other breaks of the stream abandon the running attempts and connect again."""
        if not self._tasks:
            raise ValueError("no task registered: decorate a function with @worker.task first")
        if self._loop is not None:
            raise RuntimeError("this worker runs already")
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        if self._stopping:
            self._stop.set()
        channel = self._endpoint.aio_channel()
        hello = Hello(worker_name=self.name, slots=self.slots, sdk=SDK, tasks=dict(self._tasks))

        def welcomed(worker_id: str) -> None:
            self.worker_id = worker_id
            if ready is not None:
                ready(worker_id)

        delay = RECONNECT_FIRST
        try:
            while not self._stopping:
                session = self._session = Session(
                    channel=channel, hello=hello, submit=self._submit, ready=welcomed
                )
                if self._stopping:
                    session.drain()
                try:
                    await session.run()
                except grpc.aio.AioRpcError as err:
                    if err.code() in FINAL_CODES:
                        raise TaskyardError.from_rpc_error(err) from None
                    log.warning(
                        "the worker stream broke (%s: %s); connecting again", err.code().name, err.details()
                    )
                except ProtocolError as err:
                    log.warning("%s; connecting again", err)
                finally:
                    self._session = None
                    self.worker_id = ""
                if self._stopping:
                    return
                if session.welcomed:
                    delay = RECONNECT_FIRST
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), delay)
                delay = min(delay * 2, RECONNECT_MAX)
        finally:
            self._loop = None
            if self._children is not None:
                await self._children.close()
                self._children = None
            await channel.close(None)

    def stop(self) -> None:
        """Drain: take no new attempts, let the running ones finish and report, then end
        ``run()``. Callable from any thread or a signal handler."""
        loop = self._loop
        if loop is None:
            self._stopping = True
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._drain()
        else:
            loop.call_soon_threadsafe(self._drain)

    def handle_signals(self, signals: Sequence[signal.Signals] = (signal.SIGTERM, signal.SIGINT)) -> None:
        """On these signals, ``stop()`` (a drain). Call it from the loop that will run the worker."""
        loop = asyncio.get_running_loop()
        for sig in signals:
            loop.add_signal_handler(sig, self.stop)

    def _drain(self) -> None:
        self._stopping = True
        if self._stop is not None:
            self._stop.set()
        if self._session is not None:
            self._session.drain()

    async def _submit(self, name: str, *args: JSON, **options: Any) -> str:
        if self._children is None:
            self._children = AsyncClient(self.target, **self._security)
        return (await self._children.submit(name, *args, **options)).id


def _duration(value: float | datetime.timedelta | None) -> datetime.timedelta | None:
    if value is None or isinstance(value, datetime.timedelta):
        return value
    if not value > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {value!r}")
    return datetime.timedelta(seconds=value)
