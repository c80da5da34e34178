"""A worker process: its own asyncio loop running up to ``concurrency`` attempts.

Async task functions run on the loop; sync ones on threads (``threads.SyncThreads``)
so the loop keeps turning. The worker talks to its manager only over a socketpair (see
``pipe``): it receives Dispatch batches and a stop command, and sends PoolReports
(started refs, completions, releases) batched per loop iteration. When the
manager's end closes, the worker exits on its own.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import json
import logging
import os
import random
import re
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from taskyard.bus.v1 import dispatch_pb2, store_pb2, task_record_pb2
from taskyard.core import hops, lifecycle, payload, retry, seal
from taskyard.core.config import Settings
from taskyard.v1 import task_pb2
from taskyard.worker_pool import beats, children, context, pipe, poison, registry, tasklogs, threads

log = logging.getLogger(__name__)

Key = tuple[str, int]
# An encoded JSON text holding a real NUL (PostgreSQL jsonb refuses it).
_JSON_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")
# What json.dumps(value, allow_nan=False, separators=(",", ":")) builds on every call.
_RESULT_ENCODER = json.JSONEncoder(allow_nan=False, separators=(",", ":"))


def worker_id(pool_id: str, index: int, pid: int) -> str:
    return f"{pool_id}/w{index}:{pid}"


def now_us() -> int:
    return time.time_ns() // 1000


def key_of(record: task_record_pb2.TaskRecord) -> Key:
    return (record.id, record.attempt)


def ref_of(record: task_record_pb2.TaskRecord, worker: str) -> task_record_pb2.AttemptRef:
    return task_record_pb2.AttemptRef(
        task_id=record.id,
        attempt=record.attempt,
        lease_token=record.lease_token,
        at_us=now_us(),
        worker_id=worker,
    )


def failure_of(
    exc: BaseException, attempt: int, *, type_name: str | None = None, message: str | None = None
) -> task_pb2.TaskFailure:
    # Task-controlled text: a NUL would make the store refuse the whole report
    # (PostgreSQL text), a lone surrogate would fail the protobuf assignment.
    try:
        text = str(exc) if message is None else message
    except Exception as err:  # a broken __str__ must not lose the failure
        text = f"<unprintable {type(exc).__name__}: {type(err).__name__}>"
    return task_pb2.TaskFailure(
        type=poison.storable(type_name or type(exc).__name__),
        message=poison.storable(text),
        traceback=poison.storable("".join(traceback.format_exception(exc))),
        attempt=attempt,
    )


def charged_attempt(record: task_record_pb2.TaskRecord) -> int:
    """The attempt as the retry budget counts it: re-runs that spent no retry
    (an attempt never confirmed started, drained or spared) do not move it, so
    the backoff stays the one documented for the n-th charged attempt."""
    return max(1, record.attempt - record.uncharged_attempts)


def effective_max_retries(record: task_record_pb2.TaskRecord, default: int) -> int:
    """The record's own budget, else the task's @task(max_retries=...), else ``default``."""
    if record.max_retries >= 0:
        return record.max_retries
    tdef = registry.get(record.name)
    if tdef is not None and tdef.max_retries is not None:
        return tdef.max_retries
    return default


def death_delay_ms(name: str, attempt: int, settings: Settings) -> int:
    """The backoff after a started attempt whose worker died: the task's
    @task(retry_...) over the deployment's policy, as for a failed attempt."""
    tdef = registry.get(name)
    options = tdef.retry if tdef is not None else None
    return retry.delay_ms(None, attempt, options, retry.RetryPolicy.from_settings(settings))


class Cancelled(Exception):
    """Raised by a task body that stops because ``ctx.cancelled`` became true.

    After a cancel request the attempt ends CANCELLED (step FLAG) however the
    body ends; without one, raising it fails the attempt without retry.
    """


# The attempt the current asyncio task runs (set by Runner._run for _call).
_ATTEMPT: contextvars.ContextVar[Key] = contextvars.ContextVar("taskyard_attempt")


def timeout_of(record: task_record_pb2.TaskRecord, default: float) -> float:
    """Seconds an attempt may run: the record's, else @task(timeout=...), else ``default``."""
    if record.timeout_ms > 0:
        return record.timeout_ms / 1000.0
    tdef = registry.get(record.name)
    if tdef is not None and tdef.timeout:
        return tdef.timeout
    return default


def cancelled_completion(step: int, message: str) -> store_pb2.Completion:
    """The outcome of an attempt a cancel request stopped (the store makes it CANCELLED)."""
    return store_pb2.Completion(
        success=False,
        cancel_step=step,  # type: ignore[arg-type]
        failure=task_pb2.TaskFailure(type="Cancelled", message=poison.storable(message)),
        retryable=False,
    )


class ResultTooLarge(Exception):
    """The result's JSON is over TASKYARD_MAX_RESULT_BYTES (not retried: it would be again)."""


class ResultTooDeep(Exception):
    """The result nests lists and objects deeper than ``payload.MAX_NESTING``: no
    reader could decode it (not retried: it would be again)."""


def encode_result(value: Any, max_bytes: int = 1024 * 1024) -> bytes:
    """JSON text of a result; TypeError when it is not JSON-serializable."""
    if value is None and max_bytes >= 4:  # most bodies return nothing: no encoder, nothing to check
        return b"null"
    try:
        text = _RESULT_ENCODER.encode(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"result is not JSON-serializable: {exc}") from exc
    except RecursionError as exc:  # deeper than Python's own encoder goes
        raise ResultTooDeep(f"result {payload.too_deep_message()}") from exc
    if _JSON_NUL.search(text):
        raise TypeError("result contains a NUL character (\\u0000), which JSON storage refuses")
    data = text.encode()
    if len(data) > max_bytes:
        raise ResultTooLarge(
            f"result is {len(data)} bytes of JSON, over the limit of {max_bytes} (TASKYARD_MAX_RESULT_BYTES)"
        )
    if payload.nests_too_deep(text):  # the text: tuples and other sequences nest too
        raise ResultTooDeep(f"result {payload.too_deep_message()}")
    return data


class Runner:
    """Runs attempts on the current loop and accumulates what happened in ``report``.

    ``on_change`` is called whenever ``report`` gained something; the caller
    flushes it (the worker process: once per loop iteration).
    """

    # The deployment's retry policy (_serve sets it from Settings) and
    # the randomness of its jitter (tests inject a seeded one).
    retry_policy: retry.RetryPolicy = retry.RetryPolicy()
    retry_rng: random.Random = random.Random()

    def __init__(
        self,
        *,
        concurrency: int,
        default_timeout: float,
        default_max_retries: int = 3,
        max_result_bytes: int = 1024 * 1024,
        worker: str = "",
        on_change: Callable[[], None] | None = None,
        sink: context.Sink | None = None,
        timeout_grace: float = 2.0,
        cancel_grace: float = 2.0,
        on_recycle: Callable[[str], None] | None = None,
    ) -> None:
        self.concurrency = max(1, concurrency)
        self.default_timeout = default_timeout
        self.default_max_retries = default_max_retries
        self.max_result_bytes = max_result_bytes
        self.worker = worker
        self.report = dispatch_pb2.PoolReport()
        self.tasks: dict[Key, asyncio.Task[None]] = {}
        self.started: set[Key] = set()
        self._on_change = on_change or (lambda: None)
        # With a flusher, an attempt's body runs only once its "started" is on the
        # pipe: a body that kills the process must count as a started attempt.
        self._wait_for_flush = on_change is not None
        self._flush_waiters: list[asyncio.Future[None]] = []
        self._slots = asyncio.Semaphore(self.concurrency)
        self._executor = self._new_executor()
        self._stopping = False
        # Each running attempt's TaskContext (logs go to ``sink``; a
        # cancel arriving for a key calls contexts[key]._request_cancel()).
        self.sink = sink
        self.contexts: dict[Key, context.TaskContext] = {}
        # Sync attempts' threads (to wait out a timeout grace),
        # cancel requests (True once asyncio cancellation was used on the attempt).
        self.timeout_grace = timeout_grace
        self.cancel_grace = cancel_grace
        self._on_recycle = on_recycle or (lambda reason: None)
        self.threads: dict[Key, threads.Job] = {}
        self._watchers: set[asyncio.Task[None]] = set()
        self.cancels: dict[Key, bool] = {}

    def _new_executor(self) -> threads.SyncThreads:
        return threads.SyncThreads(self.concurrency, name="taskyard-task")

    def take_report(self) -> dispatch_pb2.PoolReport | None:
        r = self.report
        if not (r.started or r.completed or r.released or r.died):
            return None
        self.report = dispatch_pb2.PoolReport()
        return r

    def notify_flushed(self) -> None:
        """The flusher wrote everything accumulated so far."""
        waiters, self._flush_waiters = self._flush_waiters, []
        for f in waiters:
            if not f.done():
                f.set_result(None)

    async def _until_flushed(self) -> None:
        if not self._wait_for_flush:
            return
        fut = asyncio.get_running_loop().create_future()
        self._flush_waiters.append(fut)
        self._on_change()
        await fut

    def submit(self, record: task_record_pb2.TaskRecord) -> None:
        key = key_of(record)
        if key in self.tasks:
            return  # the same attempt twice: already running
        if self._stopping:
            self.report.released.append(store_pb2.Release(ref=ref_of(record, self.worker)))
            self._on_change()
            return
        hops.stamp((record,), "worker.received")
        self.tasks[key] = asyncio.get_running_loop().create_task(
            self._run(record), name=f"task {record.name} {record.id}#{record.attempt}"
        )

    async def _run(self, record: task_record_pb2.TaskRecord) -> None:
        key = key_of(record)
        try:
            async with self._slots:
                self.started.add(key)
                start = ref_of(record, self.worker)
                self.report.started.append(start)
                await self._until_flushed()
                hops.stamp((record,), "worker.started")
                ctx = self.contexts[key] = context.for_record(record, self.sink)
                if key in self.cancels or record.cancel_requested:
                    self.cancel(key)
                token = ctx._enter()
                attempt_token = _ATTEMPT.set(key)
                try:
                    completion = await self.execute(record)
                finally:
                    _ATTEMPT.reset(attempt_token)
                    ctx._exit(token)
            self.contexts.pop(key, None)
            if key in self.cancels:
                # The body ended (returned or raised) after its cancel flag was set
                # (or swallowed the asyncio cancellation and returned).
                completion = (
                    cancelled_completion(task_pb2.CANCEL_STEP_ASYNCIO, "stopped by asyncio cancellation")
                    if self.cancels[key]
                    else cancelled_completion(
                        task_pb2.CANCEL_STEP_FLAG, "stopped after its cancel flag was set"
                    )
                )
            completion.ref.CopyFrom(ref_of(record, self.worker))
            completion.started_at_us = start.at_us
            if record.hops:
                completion.hops.extend(record.hops)
                hops.stamp((completion,), "worker.finished")
            if not completion.success:
                completion.max_retries = self.max_retries_for(record)
                if completion.retryable and not completion.retry_delay_ms:
                    completion.retry_delay_ms = self.retry_delay_ms_for(record)
            self.report.completed.append(completion)
        except asyncio.CancelledError:
            if key in self.cancels:
                # A cancel request's second step (asyncio cancellation) stopped it, or
                # a shutdown did after a cancel request: a Release would lose the cancel.
                c = cancelled_completion(task_pb2.CANCEL_STEP_ASYNCIO, "stopped by asyncio cancellation")
                c.ref.CopyFrom(ref_of(record, self.worker))
                self.report.completed.append(c)
            else:
                # Stopped by a shutdown: back to the queue without burning the attempt.
                self.report.released.append(
                    store_pb2.Release(ref=ref_of(record, self.worker), resume_requested=key in self.started)
                )
        finally:
            self.tasks.pop(key, None)
            self.contexts.pop(key, None)
            self.threads.pop(key, None)
            self.cancels.pop(key, None)
            self.started.discard(key)
            children.forget(*key)
            self._on_change()

    def cancel(self, key: Key) -> None:
        """A cancel request: set the attempt's flag now, asyncio-cancel it after the
        grace. A sync body's thread cannot be interrupted: it gets the flag only,
        and the manager kills the worker if it has not stopped by the deadline."""
        if key not in self.tasks:
            return
        first = key not in self.cancels
        self.cancels.setdefault(key, False)
        ctx = self.contexts.get(key)
        if ctx is not None:
            ctx._request_cancel()
        if first:
            asyncio.get_running_loop().call_later(self.cancel_grace, self._cancel_now, key)

    def _cancel_now(self, key: Key) -> None:
        t = self.tasks.get(key)
        if t is None or t.done() or key not in self.cancels:
            return
        thread = self.threads.get(key)
        if thread is not None and not thread.done():
            return  # a running sync body: only the flag or the kill can stop it
        self.cancels[key] = True
        t.cancel()

    def retry_delay_ms_for(self, record: task_record_pb2.TaskRecord) -> int:
        """The backoff after this attempt: the task's @task(retry_...) over the deployment's policy."""
        tdef = registry.get(record.name)
        options = tdef.retry if tdef is not None else None
        return retry.delay_ms(None, charged_attempt(record), options, self.retry_policy, self.retry_rng)

    def max_retries_for(self, record: task_record_pb2.TaskRecord) -> int:
        """The retry budget when the record leaves it to the task (-1)."""
        return effective_max_retries(record, self.default_max_retries)

    def timeout_for(self, record: task_record_pb2.TaskRecord, tdef: registry.TaskDef | None) -> float:
        if record.timeout_ms > 0:
            return record.timeout_ms / 1000.0
        if tdef is not None and tdef.timeout:
            return tdef.timeout
        return self.default_timeout

    async def execute(self, record: task_record_pb2.TaskRecord) -> store_pb2.Completion:
        """Run one attempt to a Completion (success or failure); only cancellation escapes."""
        attempt = record.attempt
        tdef = registry.get(record.name)
        if tdef is None:
            exc = LookupError(f"task {record.name!r} is not registered in this pool")
            return store_pb2.Completion(
                success=False, failure=failure_of(exc, attempt, type_name="NotRegistered"), retryable=False
            )
        try:
            args = json.loads(record.args_json) if record.args_json else []
            kwargs = json.loads(record.kwargs_json) if record.kwargs_json else {}
            if not isinstance(args, list) or not isinstance(kwargs, dict):
                raise TypeError("args must be a JSON list and kwargs a JSON object")
        except (ValueError, TypeError) as exc:
            return store_pb2.Completion(
                success=False, failure=failure_of(exc, attempt, type_name="InvalidArguments"), retryable=False
            )
        timeout = self.timeout_for(record, tdef)
        try:
            async with asyncio.timeout(timeout) as deadline:
                try:
                    value = await self._call(tdef, args, kwargs)
                except TimeoutError:
                    if deadline.expired():
                        raise
                    raise _OwnTimeout from None  # raised by the task itself, not our deadline
        except TimeoutError as exc:
            if not tdef.is_async:
                await self._after_sync_timeout(key_of(record))
            return store_pb2.Completion(
                success=False,
                failure=failure_of(
                    exc,
                    attempt,
                    type_name="TimeoutError",
                    message=f"attempt exceeded its timeout of {timeout:g}s",
                ),
                retryable=True,
            )
        except _OwnTimeout as own:
            inner = own.__context__ or own
            return store_pb2.Completion(success=False, failure=failure_of(inner, attempt), retryable=True)
        except asyncio.CancelledError:
            raise
        except retry.Retry as exc:  # the task asked to be retried: counts against its budget
            return store_pb2.Completion(
                success=False,
                failure=failure_of(exc, attempt, type_name="Retry"),
                retryable=True,
                retry_delay_ms=retry.delay_ms(
                    exc, charged_attempt(record), tdef.retry, self.retry_policy, self.retry_rng
                ),
            )
        except BaseException as exc:  # SystemExit & co. from a task body fail the attempt, not the worker
            # Cancelled without a cancel request (a cancelled one never gets here as
            # a failure, _run turns it into CANCELLED): fails, never retried.
            retryable = not isinstance(exc, Cancelled) and (
                tdef.retry is None or tdef.retry.retries(exc)  # @task(dont_retry=...)
            )
            return store_pb2.Completion(success=False, failure=failure_of(exc, attempt), retryable=retryable)
        try:
            result = encode_result(value, self.max_result_bytes)
        except TypeError as exc:
            return store_pb2.Completion(success=False, failure=failure_of(exc, attempt), retryable=True)
        except (ResultTooLarge, ResultTooDeep) as exc:
            return store_pb2.Completion(success=False, failure=failure_of(exc, attempt), retryable=False)
        return store_pb2.Completion(success=True, result_json=result)

    async def _call(self, tdef: registry.TaskDef, args: list[Any], kwargs: dict[str, Any]) -> Any:
        wanted = context.context_param(tdef.fn)
        if wanted is not None and wanted not in kwargs and (ctx := context.current_or_none()) is not None:
            kwargs = {**kwargs, wanted: ctx}
        if tdef.is_async:
            return await tdef.fn(*args, **kwargs)
        cvars = contextvars.copy_context()
        call = functools.partial(cvars.run, tdef.fn, *args, **kwargs)
        executor = self._executor
        job = executor.submit(call)
        key = _ATTEMPT.get(None)
        if key is not None:
            self.threads[key] = job
        try:
            value = await job.future
        except asyncio.CancelledError:
            executor.cancel(job)  # not started yet: it never will (a started body runs on)
            raise
        if inspect.isawaitable(value):
            value = await value
        return value

    async def _after_sync_timeout(self, key: Key) -> None:
        """A sync body past its timeout cannot be interrupted: its attempt fails now,
        new work goes to a fresh executor, and if the thread is still running after
        ``timeout_grace`` this worker asks to be replaced (it takes no new work,
        finishes what it holds, then exits, which ends the thread)."""
        self._replace_executor()
        thread = self.threads.get(key)
        if thread is None or thread.done():
            return
        watcher = asyncio.get_running_loop().create_task(self._watch_thread(key, thread))
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)

    async def _watch_thread(self, key: Key, thread: threads.Job) -> None:
        done, _ = await asyncio.wait([thread.ended()], timeout=self.timeout_grace)
        if not done:
            self._on_recycle(
                f"a sync task ({key[0]}#{key[1]}) is still running {self.timeout_grace:g}s past its timeout"
            )

    def _replace_executor(self) -> None:
        old, self._executor = self._executor, self._new_executor()
        old.shutdown()

    async def stop(self, grace: float = 5.0) -> None:
        """Cancel every attempt (not started or running): each reports a Release."""
        self._stopping = True
        tasks = list(self.tasks.values())
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=grace)

    def close(self) -> None:
        self._executor.shutdown(cancel=True)


class _OwnTimeout(Exception):
    """A TimeoutError raised by the task function itself (not our deadline)."""


# --------------------------------------------------------------------- process


def _watch_parent(ppid: int) -> None:
    """Exit when the manager is gone even if the loop is wedged by a CPU-bound async task."""
    while True:
        time.sleep(0.5)
        if os.getppid() != ppid:
            os._exit(1)


def main(sock: socket.socket, settings: Settings, pool_id: str, index: int) -> None:
    """Entry point of a spawned worker process."""
    registry._mark_worker_process()
    # The manager stops workers over the pipe, not by signal: Ctrl-C on the
    # terminal or a SIGTERM to the process group must not bypass the drain.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    lifecycle.setup_logging(f"worker-pool.w{index}", settings.log_level)
    # Spawned: the manager's seal does not carry over, its settings do (without
    # keys in them, the inherited environment's keys apply, as in the manager).
    if settings.bus_keys or settings.bus_keys_file:
        seal.install(seal.for_settings(settings))
    threading.Thread(target=_watch_parent, args=(os.getppid(),), name="parent-watch", daemon=True).start()
    try:
        registry.load_modules(settings.task_modules)
    except Exception:
        log.exception("worker %d could not import the task modules %s", index, settings.task_modules)
        sys.stderr.flush()
        os._exit(2)
    code = 0
    try:
        lifecycle.run(_serve(sock, settings, worker_id(pool_id, index, os.getpid())))
    except Exception:
        log.exception("worker %d failed", index)
        code = 1
    sys.stderr.flush()
    # Never wait for abandoned task threads (timed-out sync tasks).
    os._exit(code)


async def _serve(sock: socket.socket, settings: Settings, worker: str) -> None:
    reader, writer = await asyncio.open_connection(sock=sock, limit=2**20)
    loop = asyncio.get_running_loop()
    scheduled = False

    def flush() -> None:
        nonlocal scheduled
        scheduled = False
        log_frames = logbuf.frames()  # a task's lines go ahead of its completion
        if log_frames and not writer.is_closing():
            writer.writelines(log_frames)
        report = runner.take_report()
        if report is not None and not writer.is_closing():
            writer.write(pipe.pack(pipe.REPORT, report.SerializeToString()))
        runner.notify_flushed()

    def on_change() -> None:
        nonlocal scheduled
        if not scheduled:
            scheduled = True
            loop.call_soon(flush)

    logbuf = tasklogs.LogBuffer.for_worker(settings, loop, on_change)
    sink: context.Sink = logbuf
    runner = Runner(
        concurrency=settings.concurrency,
        default_timeout=settings.task_timeout,
        default_max_retries=settings.max_retries,
        max_result_bytes=settings.max_result_bytes,
        worker=worker,
        on_change=on_change,
        timeout_grace=settings.timeout_grace,
        cancel_grace=settings.cancel_grace,
        on_recycle=lambda reason: writer.write(pipe.pack(pipe.RECYCLE, reason.encode())),
        sink=sink,
    )
    runner.retry_policy = retry.RetryPolicy.from_settings(settings)
    children.install(settings, loop)  # ctx.submit / ctx.asubmit
    writer.write(pipe.pack(pipe.HELLO))
    beating = loop.create_task(beats.beat_loop(writer, runner.tasks, settings.worker_heartbeat_interval))
    try:
        while True:
            frame = await pipe.read(reader, settings.max_message_bytes + 1024)
            if frame is None:
                log.info("manager pipe closed: exiting")
                return  # nobody to report to; main() exits at once
            kind, body = frame
            if kind == pipe.DISPATCH:
                batch = dispatch_pb2.Dispatch()
                batch.ParseFromString(body)
                for record in batch.tasks:
                    runner.submit(record)
            elif kind == pipe.CANCEL:
                for key in beats.parse_cancel(body):
                    runner.cancel(key)
            elif kind == pipe.STOP:
                beating.cancel()
                await runner.stop(grace=max(0.5, settings.shutdown_timeout / 2))
                flush()
                await writer.drain()
                writer.close()
                return
            else:
                log.warning("unknown frame %r from the manager", kind)
    finally:
        beating.cancel()
        runner.close()
