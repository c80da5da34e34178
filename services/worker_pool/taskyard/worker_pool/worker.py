"""A worker process: its own asyncio loop running up to ``concurrency`` attempts.

Async task functions run on the loop; sync ones on threads (``threads.SyncThreads``)
so the loop keeps turning. The worker talks to its manager only over a socketpair (see
``pipe``): it receives Dispatch batches and a stop command, and sends PoolReports
(started refs, completions, releases) batched per loop iteration. When the
manager's end closes, the worker exits on its own.
"""
# Length: Runner._run and Runner.execute are one attempt each, start to report, with its span,
# timeout and cancel paths side by side.

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import json
import logging
import random
from collections.abc import Callable
from typing import Any

from taskyard.bus.v1 import dispatch_pb2, leases_pb2, task_record_pb2
from taskyard.core import hops, retry
from taskyard.v1 import task_pb2
from taskyard.worker_pool import arguments, children, context, registry, spans, threads, throttle
from taskyard.worker_pool.attempts import (
    Cancelled,
    Key,
    ResultTooDeep,
    ResultTooLarge,
    cancelled_completion,
    charged_attempt,
    effective_max_retries,
    encode_result,
    failure_of,
    key_of,
    ref_of,
)

log = logging.getLogger(__name__)

# The attempt the current asyncio task runs (set by Runner._run for _call).
_ATTEMPT: contextvars.ContextVar[Key] = contextvars.ContextVar("taskyard_attempt")


class Runner:
    """Runs attempts on the current loop and accumulates what happened in ``report``.

    ``on_change`` is called whenever ``report`` gained something; the caller
    flushes it (the worker process: once per loop iteration).
    """

    # The deployment's retry policy (_serve sets it from Settings).
    retry_policy: retry.RetryPolicy = retry.RetryPolicy()

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
        # Attempts waiting to begin (for a slot, for their start notice to go out),
        # and those whose body has begun: a cancel before that means it never runs.
        self.waiting: set[Key] = set()
        self.bodies: set[Key] = set()
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
        # The randomness of its retry jitter (tests inject a seeded one). Made here,
        # in the worker: one made at import would be the template's, and every worker
        # forked from it would draw the same jitter.
        self.retry_rng: random.Random = random.Random()

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
            self.report.released.append(leases_pb2.Release(ref=ref_of(record, self.worker)))
            self._on_change()
            return
        hops.stamp((record,), "worker.received")
        self.tasks[key] = asyncio.get_running_loop().create_task(
            self._run(record), name=f"task {record.name} {record.id}#{record.attempt}"
        )

    async def _run(self, record: task_record_pb2.TaskRecord) -> None:
        key = key_of(record)
        span = None
        started_at_us = 0
        self.waiting.add(key)
        try:
            async with self._slots:
                if record.cancel_requested:
                    self.cancels.setdefault(key, False)
                if key in self.cancels:
                    # Cancelled while it waited for a slot: it never starts (the
                    # handler below reports NOT_STARTED, and no start notice goes out).
                    raise asyncio.CancelledError
                self.started.add(key)
                start = ref_of(record, self.worker)
                started_at_us = start.at_us
                self.report.started.append(start)
                await self._until_flushed()
                if key in self.cancels:
                    raise asyncio.CancelledError  # cancelled while its start notice went out
                self.waiting.discard(key)
                self.bodies.add(key)
                hops.stamp((record,), "worker.started")
                span = spans.start(record, self.worker, start.at_us)
                ctx = self.contexts[key] = context.for_record(record, self.sink)
                token = ctx._enter()
                attempt_token = _ATTEMPT.set(key)
                try:
                    with spans.current(span):  # the body's own spans nest under its attempt
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
            spans.finish(span, completion, charged_attempt(record))
        except asyncio.CancelledError:
            if key in self.cancels:
                # A cancel request's second step (asyncio cancellation) stopped it, or
                # a shutdown did after a cancel request: a Release would lose the cancel.
                # One whose body never started says so: the user may rely on it.
                c = (
                    cancelled_completion(task_pb2.CANCEL_STEP_ASYNCIO, "stopped by asyncio cancellation")
                    if key in self.bodies
                    else cancelled_completion(
                        task_pb2.CANCEL_STEP_NOT_STARTED, "cancelled before its body started"
                    )
                )
                c.ref.CopyFrom(ref_of(record, self.worker))
                if started_at_us:
                    c.started_at_us = started_at_us
                self.report.completed.append(c)
                spans.finish(span, c, charged_attempt(record))
            else:
                spans.released(span)
                # Stopped by a shutdown: back to the queue without burning the attempt.
                self.report.released.append(
                    leases_pb2.Release(ref=ref_of(record, self.worker), resume_requested=key in self.started)
                )
        finally:
            spans.close(span)  # ended above unless the runner itself failed
            self.tasks.pop(key, None)
            self.contexts.pop(key, None)
            self.threads.pop(key, None)
            self.cancels.pop(key, None)
            self.started.discard(key)
            self.bodies.discard(key)
            self.waiting.discard(key)
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
        if key not in self.bodies:
            # Its body has not started: it never will, and its report says so
            # (NOT_STARTED). One waiting (for a slot, or for its start notice to go
            # out) is woken; one whose coroutine has not run yet sees the flag first
            # thing (cancelling it then would end it before it could report).
            if key in self.waiting:
                self.tasks[key].cancel()
            return
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

    async def execute(self, record: task_record_pb2.TaskRecord) -> leases_pb2.Completion:
        """Run one attempt to a Completion (success or failure); only cancellation escapes."""
        attempt = record.attempt
        tdef = registry.get(record.name)
        if tdef is None:
            exc = LookupError(f"task {record.name!r} is not registered in this pool")
            return leases_pb2.Completion(
                success=False, failure=failure_of(exc, attempt, type_name="NotRegistered"), retryable=False
            )
        try:
            args = json.loads(record.args_json) if record.args_json else []
            kwargs = json.loads(record.kwargs_json) if record.kwargs_json else {}
            if not isinstance(args, list) or not isinstance(kwargs, dict):
                raise TypeError("args must be a JSON list and kwargs a JSON object")
        except (ValueError, TypeError) as exc:
            return leases_pb2.Completion(
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
            return leases_pb2.Completion(
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
            return leases_pb2.Completion(success=False, failure=failure_of(inner, attempt), retryable=True)
        except asyncio.CancelledError:
            raise
        except arguments.ArgumentsMismatch as exc:  # the same arguments would be refused again
            return leases_pb2.Completion(
                success=False, failure=failure_of(exc, attempt, type_name="TypeError"), retryable=False
            )
        except throttle.RetryAfter as exc:  # a throttling answer: retried after it, no retry spent
            return leases_pb2.Completion(
                success=False,
                failure=throttle.failure_of(exc, failure_of(exc, attempt)),
                retryable=True,
                # 0: the policy's backoff (reports.py); the store waits at least this.
                retry_delay_ms=exc.delay_ms,
            )
        except retry.Retry as exc:  # the task asked to be retried: counts against its budget
            return leases_pb2.Completion(
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
            return leases_pb2.Completion(success=False, failure=failure_of(exc, attempt), retryable=retryable)
        try:
            result = encode_result(value, self.max_result_bytes)
        except TypeError as exc:
            return leases_pb2.Completion(success=False, failure=failure_of(exc, attempt), retryable=True)
        except (ResultTooLarge, ResultTooDeep) as exc:
            return leases_pb2.Completion(success=False, failure=failure_of(exc, attempt), retryable=False)
        return leases_pb2.Completion(success=True, result_json=result)

    async def _call(self, tdef: registry.TaskDef, args: list[Any], kwargs: dict[str, Any]) -> Any:
        wanted = context.context_param(tdef.fn)
        if wanted is not None and wanted not in kwargs and (ctx := context.current_or_none()) is not None:
            kwargs = {**kwargs, wanted: ctx}
        try:
            return await self._invoke(tdef, args, kwargs)
        except TypeError as exc:
            if (mismatch := arguments.misfit(tdef.name, tdef.fn, args, kwargs, exc)) is not None:
                raise mismatch from exc
            raise

    async def _invoke(self, tdef: registry.TaskDef, args: list[Any], kwargs: dict[str, Any]) -> Any:
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
