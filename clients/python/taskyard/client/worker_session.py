"""One ``WorkerService.Work`` stream, from Hello to its end: the attempts it leases run in
the worker's slots, each reported in order (Started, its logs and progress, Outcome), with
a Heartbeat every ``Welcome.heartbeat_interval`` while the stream is open.

A session that ends by an error abandons its attempts: their bodies are cancelled and
nothing more is reported (the suite recovers them as a pool's that died).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import datetime
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import grpc.aio

from taskyard.client._types import JSON, list_to_python, struct_to_python
from taskyard.client.worker_context import AttemptContext, CancelSignal, TaskDeclaration
from taskyard.client.worker_outcome import clip, exception_outcome, result_outcome
from taskyard.client.worker_tracing import AttemptSpan, attempt_span
from taskyard.worker.v1 import worker_service_pb2 as pb
from taskyard.worker.v1 import worker_service_pb2_grpc

log = logging.getLogger("taskyard.client.worker")

# Log lines go out at most this often, or at once when this many of an attempt wait.
LOG_FLUSH_SECONDS = 0.1
LOG_BATCH_LINES = 100
# A log line longer than this is cut (a batch must fit the gateway's largest message).
MAX_LOG_CHARS = 16 * 1024
# When the Welcome names none.
DEFAULT_HEARTBEAT_SECONDS = 5.0
DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
# How long the gateway has to answer Hello.
WELCOME_SECONDS = 30.0
# After the half-close that ends a drain, how long the gateway has to end the stream.
CLOSE_WAIT_SECONDS = 10.0
# The most starts and outcomes one Reports carries, in bytes: half of gRPC's usual limit,
# which the gateway's port keeps (the Welcome's limit is the suite's, often larger).
REPORTS_BYTES = DEFAULT_MAX_MESSAGE_BYTES // 2

# The end of a stream's responses (grpc's typing does not declare it).
EOF: Any = grpc.aio.EOF  # type: ignore[attr-defined]
Key = tuple[str, int, str]
Submit = Callable[..., Awaitable[str]]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Registered:
    """A function the worker runs, with its declaration."""

    declaration: TaskDeclaration
    fn: Callable[..., Any]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Hello:
    worker_name: str
    slots: int
    sdk: str
    tasks: Mapping[str, Registered]

    def message(self) -> pb.WorkRequest:
        hello = pb.Hello(worker_name=self.worker_name, slots=self.slots, sdk=self.sdk)
        for r in self.tasks.values():
            d = r.declaration
            decl = hello.tasks.add(
                name=d.name, rate_limit=d.rate_limit, concurrency=d.concurrency, limit_key=d.limit_key
            )
            if d.timeout is not None:
                decl.timeout.FromTimedelta(d.timeout)
            if d.max_retries is not None:
                decl.max_retries = d.max_retries
        return pb.WorkRequest(hello=hello)


class _Held:
    """An attempt this stream leased, from its arrival to its outcome."""

    def __init__(self, attempt: pb.Attempt, signal: CancelSignal) -> None:
        self.attempt = attempt
        self.ref = pb.AttemptRef(
            task_id=attempt.task_id, attempt=attempt.attempt, lease_token=attempt.lease_token
        )
        self.signal = signal
        self.runner: asyncio.Task[None] | None = None
        self.body: asyncio.Future[Any] | None = None
        self.has_slot = False
        self.started = False
        self.cancel_requested = False
        self.revoked = False
        self.timed_out = False
        self.logs: list[pb.LogLine] = []
        self.log_bytes = 0


class Session:
    """One stream. ``run`` returns when the gateway ends it (after a drain, or to have the
    worker connect again) and raises the stream's error otherwise."""

    def __init__(
        self,
        *,
        channel: grpc.aio.Channel,
        hello: Hello,
        submit: Submit,
        ready: Callable[[str], object] | None,
    ) -> None:
        self._stub = worker_service_pb2_grpc.WorkerServiceStub(channel)
        self._hello = hello
        self._submit = submit
        self._ready = ready
        self._loop = asyncio.get_running_loop()
        self._slots = asyncio.Semaphore(hello.slots)
        self._held: dict[Key, _Held] = {}
        self._outbox: asyncio.Queue[pb.WorkRequest | None] = asyncio.Queue()
        self._flush_timer: asyncio.TimerHandle | None = None
        self._call: Any = None
        self._draining = False
        self._half_closed = False
        self._ended = False
        self._gave_up = False
        self.welcomed = False
        self.worker_id = ""
        self.max_result_bytes = 0
        self.max_message_bytes = DEFAULT_MAX_MESSAGE_BYTES

    # --- the stream ------------------------------------------------------------

    async def run(self) -> None:
        call = self._call = self._stub.Work()
        with contextlib.suppress(asyncio.InvalidStateError):  # refused at once: read() says why
            await call.write(self._hello.message())
        try:
            first = await asyncio.wait_for(call.read(), WELCOME_SECONDS)
        except TimeoutError:
            raise ProtocolError(f"the gateway sent no Welcome in {WELCOME_SECONDS:g} s") from None
        if first is EOF:
            return
        if first.WhichOneof("message") != "welcome":
            raise ProtocolError(f"the gateway answered Hello with {first.WhichOneof('message')}, not Welcome")
        welcome = first.welcome
        self.welcomed, self.worker_id = True, welcome.worker_id
        self.max_result_bytes = welcome.max_result_bytes
        self.max_message_bytes = welcome.max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES
        beat = welcome.heartbeat_interval.ToTimedelta().total_seconds() or DEFAULT_HEARTBEAT_SECONDS
        writer = asyncio.create_task(self._write(call))
        heart = asyncio.create_task(self._beat(beat))
        try:
            if self._ready is not None:
                self._ready(self.worker_id)
            if self._draining:
                self._begin_drain()
            while (msg := await call.read()) is not EOF:
                self._dispatch(msg)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if self._gave_up and task is not None and not task.cancelling():
                return  # the gateway did not end the stream after the drain's half-close
            raise
        finally:
            self._ended = True
            heart.cancel()
            writer.cancel()
            self.abandon()

    def drain(self) -> None:
        """No new attempts: finish the held ones, then half-close."""
        if self._draining:
            return
        self._draining = True
        if self.welcomed:
            self._begin_drain()

    def abandon(self) -> None:
        """The stream is over: stop every body; report nothing more."""
        self._ended = True
        for held in list(self._held.values()):
            held.signal.set("abandoned")
            if held.runner is not None:
                held.runner.cancel()
        self._held.clear()
        if self._call is not None:
            self._call.cancel()

    def _begin_drain(self) -> None:
        self._send(pb.WorkRequest(drain=pb.Drain()))
        self._close_when_idle()

    def _close_when_idle(self) -> None:
        # Revoked attempts do not hold a drain: their outcomes would be refused anyway.
        if self._draining and not self._half_closed and all(h.revoked for h in self._held.values()):
            self._half_closed = True
            self._outbox.put_nowait(None)

    def _send(self, req: pb.WorkRequest) -> None:
        if not self._ended and not self._half_closed:
            self._outbox.put_nowait(req)

    async def _write(self, call: Any) -> None:
        """The stream's only writer (gRPC takes one write at a time). Starts and outcomes
        queued side by side go as one Reports: alone at once, under load many together."""
        behind: list[pb.WorkRequest | None] = []  # taken from the outbox, not sent yet
        try:
            while (req := behind.pop() if behind else await self._outbox.get()) is not None:
                if req.WhichOneof("message") in REPORTED:
                    req, behind = gather_reports(req, self._outbox)
                await call.write(req)
            await call.done_writing()
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
            return  # the stream ended: its reader gets the status
        await asyncio.sleep(CLOSE_WAIT_SECONDS)
        self._gave_up = True
        call.cancel()

    async def _beat(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            self._send(pb.WorkRequest(heartbeat=pb.Heartbeat()))

    def _dispatch(self, msg: pb.WorkResponse) -> None:
        kind = msg.WhichOneof("message")
        if kind == "attempts":
            for attempt in msg.attempts.attempts:
                self._take(attempt)
        elif kind == "cancel":
            if (held := self._find(msg.cancel.ref)) is not None:
                held.cancel_requested = True
                held.signal.set("cancelled")
        elif kind == "revoke":
            if (held := self._find(msg.revoke.ref)) is not None:
                self._revoke(held, "revoked")
        elif kind == "refused":
            ref = msg.refused.ref
            log.warning(
                "the gateway refused a report of %s attempt %d: %s",
                ref.task_id,
                ref.attempt,
                msg.refused.reason,
            )
        else:
            log.warning("ignoring an unexpected %s message from the gateway", kind)

    def _find(self, ref: pb.AttemptRef) -> _Held | None:
        return self._held.get((ref.task_id, ref.attempt, ref.lease_token))

    # --- attempts --------------------------------------------------------------

    def _take(self, attempt: pb.Attempt) -> None:
        if self._half_closed:
            return  # never started: the gateway queues it again when the stream ends
        held = _Held(attempt, CancelSignal(self._loop))
        self._held[(attempt.task_id, attempt.attempt, attempt.lease_token)] = held
        held.runner = asyncio.create_task(self._run(held))

    def _revoke(self, held: _Held, reason: str) -> None:
        """The lease is gone: the body is stopped and its slot is free at once."""
        held.revoked = True
        held.signal.set(reason)
        if not held.started and held.runner is not None:
            held.runner.cancel()  # still waiting for a slot: it never runs
        elif held.body is not None and isinstance(held.body, asyncio.Task):
            held.body.cancel()
        self._release(held)
        self._close_when_idle()

    def _release(self, held: _Held) -> None:
        if held.has_slot:
            held.has_slot = False
            self._slots.release()

    async def _run(self, held: _Held) -> None:
        key = (held.ref.task_id, held.ref.attempt, held.ref.lease_token)
        try:
            await self._slots.acquire()
            held.has_slot = True
            held.started = True
            self._send(pb.WorkRequest(started=pb.Started(ref=held.ref)))
            outcome = await self._execute(held)
            outcome.cancelled = held.cancel_requested
            self._flush(held)
            self._send(pb.WorkRequest(outcome=outcome))  # a revoked one too: the gateway counts it late
        finally:
            self._release(held)
            if self._held.get(key) is held:
                del self._held[key]
                self._close_when_idle()

    async def _execute(self, held: _Held) -> pb.Outcome:
        a = held.attempt
        registered = self._hello.tasks.get(a.name)
        if registered is None:
            err = LookupError(f"this worker runs no task named {a.name!r}")
            return exception_outcome(held.ref, err)
        timer = None
        if a.HasField("deadline"):
            left = (
                a.deadline.ToDatetime(tzinfo=datetime.UTC) - datetime.datetime.now(datetime.UTC)
            ).total_seconds()
            timer = self._loop.call_later(max(0.0, left), self._time_out, held)
        try:
            with attempt_span(a.name, a.trace_headers, a.task_id, a.attempt) as span:
                body = held.body = self._start(registered.fn, self._context(held), a)
                try:
                    await asyncio.wait({body})
                except asyncio.CancelledError:
                    body.cancel()  # the stream is gone: so is the body (a thread's runs on, unheard)
                    raise
                return self._outcome(held, body, span)
        finally:
            if timer is not None:
                timer.cancel()

    def _outcome(self, held: _Held, body: asyncio.Future[Any], span: AttemptSpan) -> pb.Outcome:
        if held.cancel_requested:
            span.cancelled()
        exc: BaseException | None = (
            asyncio.CancelledError(held.signal.reason) if body.cancelled() else body.exception()
        )
        if exc is None:
            outcome = result_outcome(held.ref, body.result(), self.max_result_bytes)
        else:
            outcome = exception_outcome(held.ref, exc, timed_out=held.timed_out)
        if outcome.HasField("failure"):
            span.failed(outcome.failure.type, outcome.failure.message)
        else:
            span.succeeded()
        return outcome

    def _time_out(self, held: _Held) -> None:
        # The gateway fails the attempt now and revokes it: stop the body, free the slot.
        held.timed_out = True
        self._revoke(held, "timeout")

    def _start(self, fn: Callable[..., Any], ctx: AttemptContext, a: pb.Attempt) -> asyncio.Future[Any]:
        args: list[JSON] = list_to_python(a.args)
        kwargs: dict[str, JSON] = struct_to_python(a.kwargs)
        if inspect.iscoroutinefunction(fn):
            try:
                body: asyncio.Future[Any] = asyncio.ensure_future(fn(ctx, *args, **kwargs))
                return body
            except Exception as error:  # arguments that do not fit the function
                failed: asyncio.Future[Any] = self._loop.create_future()
                failed.set_exception(error)
                return failed
        future: asyncio.Future[Any] = self._loop.create_future()
        context = contextvars.copy_context()  # the attempt's span, in the thread too

        def settle(value: Any, error: BaseException | None) -> None:
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(value)

        def target() -> None:
            try:
                value = context.run(fn, ctx, *args, **kwargs)
            except BaseException as error:  # a body's SystemExit fails its attempt, not the worker
                self._loop.call_soon_threadsafe(settle, None, error)
            else:
                self._loop.call_soon_threadsafe(settle, value, None)

        threading.Thread(target=target, name=f"taskyard-{a.name}-{a.task_id}", daemon=True).start()
        return future

    def _context(self, held: _Held) -> AttemptContext:
        a = held.attempt
        return AttemptContext(
            task_id=a.task_id,
            name=a.name,
            attempt=a.attempt,
            labels=dict(a.labels),
            parent_id=a.parent_id,
            root_id=a.root_id,
            queue=a.queue,
            tenant=a.tenant,
            retries_left=a.retries_left,
            deadline=a.deadline.ToDatetime(tzinfo=datetime.UTC) if a.HasField("deadline") else None,
            cancelled=held.signal,
            _log=lambda level, message: self._log(held, level, message),
            _progress=lambda fraction, message: self._progress(held, fraction, message),
            _submit=self._submit,
            _loop=self._loop,
        )

    # --- logs and progress -----------------------------------------------------

    def _log(self, held: _Held, level: str, message: str) -> None:
        if not held.started or self._ended:
            return
        line = pb.LogLine(level=level, message=clip(message, MAX_LOG_CHARS))
        line.time.GetCurrentTime()
        size = line.ByteSize()
        if held.log_bytes + size > self.max_message_bytes // 2:
            self._flush(held)  # a batch stays well inside the gateway's largest message
        held.logs.append(line)
        held.log_bytes += size
        if len(held.logs) >= LOG_BATCH_LINES:
            self._flush(held)
        elif self._flush_timer is None:
            self._flush_timer = self._loop.call_later(LOG_FLUSH_SECONDS, self._flush_all)

    def _progress(self, held: _Held, fraction: float, message: str) -> None:
        if not held.started or self._ended:
            return
        self._flush(held)  # the lines before it, first
        progress = pb.Progress(ref=held.ref, fraction=fraction, message=clip(message, MAX_LOG_CHARS))
        self._send(pb.WorkRequest(progress=progress))

    def _flush(self, held: _Held) -> None:
        if held.logs:
            lines, held.logs, held.log_bytes = held.logs, [], 0
            self._send(pb.WorkRequest(logs=pb.LogLines(ref=held.ref, lines=lines)))

    def _flush_all(self) -> None:
        self._flush_timer = None
        for held in self._held.values():
            self._flush(held)


REPORTED = frozenset({"started", "outcome"})


def gather_reports(
    first: pb.WorkRequest, outbox: asyncio.Queue[pb.WorkRequest | None]
) -> tuple[pb.WorkRequest, list[pb.WorkRequest | None]]:
    """``first`` (a start or an outcome) and the starts and outcomes queued right behind it,
    as one Reports; and what was taken from ``outbox`` but is not in it (none or one), which
    goes next. A log line or progress between them ends the Reports: order is kept."""
    reports = pb.Reports()
    size = 0
    req: pb.WorkRequest | None = first
    while req is not None and (kind := req.WhichOneof("message")) in REPORTED:
        part = req.ByteSize()
        if size and size + part > REPORTS_BYTES:
            break
        size += part
        if kind == "started":
            reports.started.append(req.started)
        else:
            reports.outcomes.append(req.outcome)
        if outbox.empty():
            return pb.WorkRequest(reports=reports), []
        req = outbox.get_nowait()
    return pb.WorkRequest(reports=reports), [req]


class ProtocolError(Exception):
    """The gateway broke the protocol's order (the worker connects again)."""
