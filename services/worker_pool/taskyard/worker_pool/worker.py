"""A worker process: its own asyncio loop running up to ``concurrency`` attempts.

Async task functions run on the loop; sync ones in a thread executor so the loop
keeps turning. The worker talks to its manager only over a socketpair (see
``pipe``): it receives Dispatch batches and a stop command, and sends PoolReports
(started refs, completions, releases) batched per loop iteration. When the
manager's end closes, the worker exits on its own.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import inspect
import json
import logging
import os
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
from taskyard.core import lifecycle
from taskyard.core.config import Settings
from taskyard.v1 import task_pb2
from taskyard.worker_pool import pipe, registry

log = logging.getLogger(__name__)

Key = tuple[str, int]
# An encoded JSON text holding a real NUL (PostgreSQL jsonb refuses it).
_JSON_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


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
    return task_pb2.TaskFailure(
        type=type_name or type(exc).__name__,
        message=str(exc) if message is None else message,
        traceback="".join(traceback.format_exception(exc)),
        attempt=attempt,
    )


def effective_max_retries(record: task_record_pb2.TaskRecord, default: int) -> int:
    """The record's own budget, else the task's @task(max_retries=...), else ``default``."""
    if record.max_retries >= 0:
        return record.max_retries
    tdef = registry.get(record.name)
    if tdef is not None and tdef.max_retries is not None:
        return tdef.max_retries
    return default


class ResultTooLarge(Exception):
    """The result's JSON is over TASKYARD_MAX_RESULT_BYTES (not retried: it would be again)."""


def encode_result(value: Any, max_bytes: int = 1024 * 1024) -> bytes:
    """JSON text of a result; TypeError when it is not JSON-serializable."""
    try:
        text = json.dumps(value, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"result is not JSON-serializable: {exc}") from exc
    if _JSON_NUL.search(text):
        raise TypeError("result contains a NUL character (\\u0000), which JSON storage refuses")
    data = text.encode()
    if len(data) > max_bytes:
        raise ResultTooLarge(
            f"result is {len(data)} bytes of JSON, over the limit of {max_bytes} (TASKYARD_MAX_RESULT_BYTES)"
        )
    return data


class Runner:
    """Runs attempts on the current loop and accumulates what happened in ``report``.

    ``on_change`` is called whenever ``report`` gained something; the caller
    flushes it (the worker process: once per loop iteration).
    """

    def __init__(
        self,
        *,
        concurrency: int,
        default_timeout: float,
        default_max_retries: int = 3,
        max_result_bytes: int = 1024 * 1024,
        worker: str = "",
        on_change: Callable[[], None] | None = None,
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

    def _new_executor(self) -> concurrent.futures.ThreadPoolExecutor:
        return concurrent.futures.ThreadPoolExecutor(
            max_workers=self.concurrency, thread_name_prefix="taskyard-task"
        )

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
                completion = await self.execute(record)
            completion.ref.CopyFrom(ref_of(record, self.worker))
            completion.started_at_us = start.at_us
            if not completion.success:
                completion.max_retries = self.max_retries_for(record)
            self.report.completed.append(completion)
        except asyncio.CancelledError:
            # Stopped by a shutdown: back to the queue without burning the attempt.
            self.report.released.append(
                store_pb2.Release(ref=ref_of(record, self.worker), resume_requested=key in self.started)
            )
        finally:
            self.tasks.pop(key, None)
            self.started.discard(key)
            self._on_change()

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
                # The thread cannot be interrupted: it keeps running, abandoned;
                # new work goes to a fresh executor so it never waits behind it.
                self._replace_executor()
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
        except BaseException as exc:  # SystemExit & co. from a task body fail the attempt, not the worker
            return store_pb2.Completion(success=False, failure=failure_of(exc, attempt), retryable=True)
        try:
            result = encode_result(value, self.max_result_bytes)
        except TypeError as exc:
            return store_pb2.Completion(success=False, failure=failure_of(exc, attempt), retryable=True)
        except ResultTooLarge as exc:
            return store_pb2.Completion(success=False, failure=failure_of(exc, attempt), retryable=False)
        return store_pb2.Completion(success=True, result_json=result)

    async def _call(self, tdef: registry.TaskDef, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if tdef.is_async:
            return await tdef.fn(*args, **kwargs)
        loop = asyncio.get_running_loop()
        ctx = contextvars.copy_context()
        call = functools.partial(ctx.run, tdef.fn, *args, **kwargs)
        value = await loop.run_in_executor(self._executor, call)
        if inspect.isawaitable(value):
            value = await value
        return value

    def _replace_executor(self) -> None:
        old, self._executor = self._executor, self._new_executor()
        old.shutdown(wait=False)

    async def stop(self, grace: float = 5.0) -> None:
        """Cancel every attempt (not started or running): each reports a Release."""
        self._stopping = True
        tasks = list(self.tasks.values())
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=grace)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


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
        report = runner.take_report()
        if report is not None and not writer.is_closing():
            writer.write(pipe.pack(pipe.REPORT, report.SerializeToString()))
        runner.notify_flushed()

    def on_change() -> None:
        nonlocal scheduled
        if not scheduled:
            scheduled = True
            loop.call_soon(flush)

    runner = Runner(
        concurrency=settings.concurrency,
        default_timeout=settings.task_timeout,
        default_max_retries=settings.max_retries,
        max_result_bytes=settings.max_result_bytes,
        worker=worker,
        on_change=on_change,
    )
    writer.write(pipe.pack(pipe.HELLO))
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
            elif kind == pipe.STOP:
                await runner.stop(grace=max(0.5, settings.shutdown_timeout / 2))
                flush()
                await writer.drain()
                writer.close()
                return
            else:
                log.warning("unknown frame %r from the manager", kind)
    finally:
        runner.close()
