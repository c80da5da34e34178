"""``taskyard.v1.TaskService``: validation at the edge, then the scheduler lanes and the store."""
# Length: _await_final is WaitTask's (and RunTask's) wait with its hop stamps, which every step adds to.

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TypeVar

import grpc
from google.protobuf.message import Message

from taskyard.bus.v1 import task_record_pb2, tasks_pb2
from taskyard.core import (
    codec,
    contract,
    errors,
    graph,
    hops,
    rpc,
    states,
    telemetry,
    tenants,
    tracing,
    validation,
)
from taskyard.gateway import auth, cancels, scoped, status, trees
from taskyard.gateway import logs as task_logs
from taskyard.gateway.explain import Explainer
from taskyard.gateway.lanes import Lanes
from taskyard.gateway.limit_catalog import LimitCatalog
from taskyard.gateway.names import KnownNames
from taskyard.gateway.reads import RecordReads
from taskyard.gateway.waiters import Waiter, Waiters
from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

log = logging.getLogger(__name__)

R = TypeVar("R")
M = TypeVar("M", bound=Message)
Context = grpc.aio.ServicerContext[object, object]

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
DEFAULT_WAIT = 30.0
MAX_WAIT = 300.0
# While waiting, re-read the store this often: a lost event only delays the answer.
WAIT_RECHECK = 5.0
# The first re-read of a wait that skipped its initial read (bounds a lost event).
FIRST_RECHECK_UNREAD = 1.0
# How long a sampled wait that read its task final waits for the final event, whose
# record alone carries the hop stamps (published right after the commit it read).
TRIP_GRACE = 1.0
MAX_PAGE_TOKEN_CHARS = 1024
MAX_CANCEL_REASON_CHARS = 1024


class TaskService(task_service_pb2_grpc.TaskServiceServicer):
    def __init__(
        self,
        *,
        limits: codec.Limits,
        store: rpc.Caller,
        lanes: Lanes,
        names: KnownNames,
        waiters: Waiters,
        catalog: LimitCatalog | None = None,
        flow_lane: rpc.Caller | None = None,
    ) -> None:
        self._limits = limits
        self._store = store
        # The limits a submission may use (read only for one that uses some).
        self._catalog = catalog or LimitCatalog(store)
        # ExplainTask (its flow gate from the scheduler), and GetTask's failures.
        self._explainer = Explainer(store, flow_lane=flow_lane)
        self._lanes = lanes
        self._names = names
        self._waiters = waiters
        # A wait's reads of its task go to the store together with the other waits'
        # (of every tenant: each wait keeps its record only if its caller sees it).
        self._wait_reads = RecordReads(self._get_any_records)
        # GetTaskLogs / StreamTaskLogs (see logs.py), woken by the event stream.
        self._logs = task_logs.TaskLogs(
            store, task_logs.Followers(), page_bytes=max(1, limits.grpc_max_message_bytes // 2)
        )
        task_logs.attach(waiters, self._logs.followers)
        # With metrics served: the tasks each submission created, by tenant (metrics.py).
        self.on_submitted: Callable[[str, int], None] | None = None

    def close(self) -> None:
        """The gateway stops: a StreamTaskLogs stream ends after the lines it has
        (UNAVAILABLE ``GATEWAY_STOPPING``) rather than wait for more, and its client
        resumes at another gateway from the next offset."""
        self._logs.followers.close()

    # --- plumbing ----------------------------------------------------------
    async def _guard(self, context: Context, call: Callable[[], Awaitable[R]]) -> R:
        # Join the caller's trace (W3C traceparent/tracestate in the gRPC metadata):
        # the trace headers stored with the task descend from it. With tracing on,
        # the server span (gateway/server.py) has joined it already.
        carrier = (
            {}
            if tracing.enabled()
            else {
                k: v
                for k, v in (context.invocation_metadata() or ())
                if k in telemetry.W3C_KEYS and isinstance(v, str)
            }
        )
        try:
            with telemetry.attached(carrier):
                return await call()
        except Exception as exc:
            # Not status.guard: that would put one more coroutine on every submission.
            await status.abort_failed(context, exc, log, "request failed")

    # --- submission ----------------------------------------------------------
    async def SubmitTask(
        self, request: task_service_pb2.SubmitTaskRequest, context: Context
    ) -> task_service_pb2.SubmitTaskResponse:
        sampled_at = time.time_ns() if _asks_for_hops(context) else 0
        return await self._guard(context, lambda: self._submit_one(request, sampled_at))

    async def BatchSubmitTasks(
        self, request: task_service_pb2.BatchSubmitTasksRequest, context: Context
    ) -> task_service_pb2.BatchSubmitTasksResponse:
        return await self._guard(context, lambda: self._submit_batch(request))

    async def _build(
        self, specs: Sequence[task_pb2.TaskSpec], *, field: str, single: bool
    ) -> list[task_record_pb2.TaskRecord]:
        if not single:
            codec.check_batch_size(len(specs), self._limits, field)
        await self._names.ensure({s.name for s in specs})
        uses = [use for s in specs for use in s.limits]
        # The caller's tenant, never the request's; its names qualified (core/tenants.py).
        tenant = auth.identity().home
        records = codec.build_records(
            specs,
            known_names=self._names.snapshot(),
            limits=self._limits,
            field=field,
            single=single,
            flow=await self._catalog.for_uses(uses, tenant) if uses else None,
        )
        if tenant:
            for rec in records:
                rec.tenant = tenant
                rec.queue = tenants.qualify(tenant, rec.queue)
                for use in rec.flow.uses:
                    use.limit = tenants.qualify(tenant, use.limit)
        return records

    async def _submit_one(
        self,
        request: task_service_pb2.SubmitTaskRequest | task_service_pb2.RunTaskRequest,
        sampled_at: int = 0,
        *,
        watch: list[Waiter] | None = None,
        violations: Sequence[codec.Violation] = (),
    ) -> task_service_pb2.SubmitTaskResponse:
        """``watch``: RunTask's, which gets a waiter on the new task's id registered
        before the task is sent, so no final event can come before anyone listens.
        ``violations``: the caller's own, reported with the task's."""
        if not request.HasField("task"):
            raise codec.invalid([codec.Violation(field="task", description="required"), *violations])
        spec = request.task
        try:
            records = await self._build([spec], field="task", single=True)
        except errors.TaskyardError as exc:
            if violations and exc.violations:
                raise codec.invalid([*exc.violations, *violations]) from exc
            raise
        if violations:
            raise codec.invalid(list(violations))
        if watch is not None:
            watch.append(self._waiters.register(records[0].id))
        with tracing.sending(records):
            if sampled_at:
                hops.start(records[0], "gateway.received", sampled_at)
                hops.stamp(records, "gateway.sent")
            losses = self._waiters.losses
            try:
                (inserted,) = await self._lanes.submit(records)
            except errors.TaskyardError as exc:
                # The store names fields per batch (an unknown dependency or parent).
                raise graph.single_paths(exc, "task") from exc
            if inserted.created and inserted.state != task_pb2.TASK_STATE_CANCELLED:
                self._waiters.submitted((inserted.id,), losses=losses)
            if inserted.created and self.on_submitted is not None:
                self.on_submitted(records[0].tenant, 1)
        # A child's root and a task cancelled at birth (a dependency had
        # failed) are only known to the store.
        if inserted.created and not (spec.parent_id or inserted.state == task_pb2.TASK_STATE_CANCELLED):
            task = codec.record_to_task(records[0], with_payload=False)
            task.args.CopyFrom(spec.args)
            task.kwargs.CopyFrom(spec.kwargs)
            task.state = inserted.state
            if inserted.HasField("flow"):
                # As stored: with the limits its task name declares (the scheduler
                # adds them), which the record sent does not have.
                codec.put_flow(task, inserted.flow, records[0].tenant)
            return task_service_pb2.SubmitTaskResponse(task=task, created=True)
        # A repeated request_id or idempotency key: answer with the task the first
        # submission made (with its result when final).
        existing = await self._get_records([inserted.id])
        if existing:
            return task_service_pb2.SubmitTaskResponse(
                task=codec.record_to_task(existing[0]), created=inserted.created
            )
        if inserted.tenant != records[0].tenant:
            # Read in the caller's scope and not found: a task the caller may not
            # read is never answered, not even its id, name or state.
            raise errors.unavailable(
                "the task holding this request id or idempotency key is gone; submit again"
            )
        task = task_pb2.Task(
            id=inserted.id,
            state=inserted.state,
            priority=inserted.priority,
            name=inserted.name,
            queue=tenants.strip(records[0].tenant, inserted.queue),
            tenant=records[0].tenant,
        )
        return task_service_pb2.SubmitTaskResponse(task=task, created=False)

    async def _submit_batch(
        self, request: task_service_pb2.BatchSubmitTasksRequest
    ) -> task_service_pb2.BatchSubmitTasksResponse:
        if not request.tasks:
            return task_service_pb2.BatchSubmitTasksResponse()
        records = await self._build(request.tasks, field="tasks", single=False)
        # Each task of a batch in a trace of its own, linked to the batch's call.
        with tracing.sending(records, own_traces=len(records) > 1):
            losses = self._waiters.losses
            inserted = await self._lanes.submit(records)
        # One pass, each field read once, added in place (a SubmittedTask built apart
        # would be copied in again).
        response = task_service_pb2.BatchSubmitTasksResponse()
        add = response.tasks.add
        fresh: list[str] = []
        for i in inserted:
            task_id, state, created = i.id, i.state, i.created
            add(id=task_id, state=state, created=created)
            if created and state != task_pb2.TASK_STATE_CANCELLED:
                fresh.append(task_id)
        self._waiters.submitted(fresh, losses=losses)
        if self.on_submitted is not None:
            self.on_submitted(records[0].tenant, sum(1 for i in inserted if i.created))
        return response

    # --- reads ------------------------------------------------------------
    async def _get_records(self, task_ids: Sequence[str]) -> list[task_record_pb2.TaskRecord]:
        reply = await self._store.call(contract.STORE_GET, tasks_pb2.GetTasksRequest(ids=task_ids))
        return list(reply.tasks)

    async def _get_any_records(self, task_ids: Sequence[str]) -> list[task_record_pb2.TaskRecord]:
        request = tasks_pb2.GetTasksRequest(ids=task_ids, scope=scoped.every_tenant())
        return list((await self._store.call(contract.STORE_GET, request)).tasks)

    async def _get(self, task_id: str) -> task_record_pb2.TaskRecord:
        for rec in await self._get_records([task_id]):
            if rec.id == task_id:
                return rec
        raise errors.not_found("task", task_id)

    async def _read_waited(self, task_id: str) -> task_record_pb2.TaskRecord:
        rec = await self._wait_reads.get(task_id)
        if rec is None or not auth.identity().sees(rec.tenant):
            raise errors.not_found("task", task_id)
        return rec

    async def GetTask(
        self, request: task_service_pb2.GetTaskRequest, context: Context
    ) -> task_service_pb2.GetTaskResponse:
        async def run() -> task_service_pb2.GetTaskResponse:
            task_id = _task_id(request.id)
            # Its last failed attempts too (and how many came before), read alongside the record.
            rec, failures = await asyncio.gather(self._get(task_id), self._explainer.failures(task_id))
            task = codec.record_to_task(rec)
            task.failures.extend(failures.failures)
            task.earlier_failures = failures.earlier
            return task_service_pb2.GetTaskResponse(task=task)

        return await self._guard(context, run)

    async def ExplainTask(
        self, request: task_service_pb2.ExplainTaskRequest, context: Context
    ) -> task_service_pb2.ExplainTaskResponse:
        async def run() -> task_service_pb2.ExplainTaskResponse:
            return await self._explainer.explain(await self._get(_task_id(request.id)))

        return await self._guard(context, run)

    async def GetTaskLogs(
        self, request: task_service_pb2.GetTaskLogsRequest, context: Context
    ) -> task_service_pb2.GetTaskLogsResponse:
        return await self._guard(context, lambda: self._logs.page(request))

    async def StreamTaskLogs(
        self, request: task_service_pb2.StreamTaskLogsRequest, context: Context
    ) -> AsyncIterator[task_service_pb2.StreamTaskLogsResponse]:
        try:
            async for item in self._logs.stream(request):
                yield item
        except errors.TaskyardError as exc:
            await status.abort(context, exc)

    async def WaitTask(
        self, request: task_service_pb2.WaitTaskRequest, context: Context
    ) -> task_service_pb2.WaitTaskResponse:
        async def run() -> task_service_pb2.WaitTaskResponse:
            # A sampled task's stamps come only with its final event: a re-read that
            # finds it final first gives that event a moment (a lost one costs it).
            reply, trip = await self._wait_with_trip(request, context.time_remaining(), want_trip=True)
            if trip:
                stamps = [*trip, task_record_pb2.HopStamp(hop="gateway.replied", at_ns=time.time_ns())]
                context.set_trailing_metadata(((hops.METADATA_KEY, hops.to_text(stamps)),))
            return reply

        return await self._guard(context, run)

    async def _wait(
        self, request: task_service_pb2.WaitTaskRequest, client_remaining: float | None
    ) -> task_service_pb2.WaitTaskResponse:
        return (await self._wait_with_trip(request, client_remaining))[0]

    async def RunTask(
        self, request: task_service_pb2.RunTaskRequest, context: Context
    ) -> task_service_pb2.RunTaskResponse:
        sampled_at = time.time_ns() if _asks_for_hops(context) else 0

        async def run() -> task_service_pb2.RunTaskResponse:
            reply, trip = await self._run(request, context.time_remaining(), sampled_at)
            if trip:
                stamps = [*trip, task_record_pb2.HopStamp(hop="gateway.replied", at_ns=time.time_ns())]
                context.set_trailing_metadata(((hops.METADATA_KEY, hops.to_text(stamps)),))
            return reply

        return await self._guard(context, run)

    async def _run(
        self, request: task_service_pb2.RunTaskRequest, client_remaining: float | None, sampled_at: int = 0
    ) -> tuple[task_service_pb2.RunTaskResponse, hops.HopStamps]:
        """SubmitTask, then WaitTask on the task it answered with: the wait's time
        counts from the call's start, and its waiter listens before the task is sent."""
        violations: list[codec.Violation] = []
        deadline = time.monotonic() + _wait_limit(request, client_remaining, violations)
        watched: list[Waiter] = []
        try:
            submitted = await self._submit_one(request, sampled_at, watch=watched, violations=violations)
            task = submitted.task
            if task.state in states.FINAL_VALUES:
                # A repeated request_id of a finished task, or a task cancelled at birth.
                return task_service_pb2.RunTaskResponse(task=task, created=submitted.created, final=True), ()
            (waiter,) = watched
            if waiter.task_id != task.id:  # a repeated request_id: wait on the first submission's task
                self._waiters.unregister(waiter)
                watched[0] = waiter = self._waiters.register(task.id)
            limit = max(0.0, deadline - time.monotonic())
            waited, trip = await self._await_final(task.id, waiter, limit, want_trip=bool(sampled_at))
        finally:
            for w in watched:
                self._waiters.unregister(w)
        final = not waited.timed_out
        return task_service_pb2.RunTaskResponse(
            task=waited.task, created=submitted.created, final=final
        ), trip

    async def _wait_with_trip(
        self,
        request: task_service_pb2.WaitTaskRequest,
        client_remaining: float | None,
        *,
        want_trip: bool = False,
    ) -> tuple[task_service_pb2.WaitTaskResponse, hops.HopStamps]:
        violations: list[codec.Violation] = []
        task_id = _task_id(request.id, violations)
        limit = _wait_limit(request, client_remaining, violations)
        if violations:
            raise codec.invalid(violations)
        waiter = self._waiters.register(task_id)  # before the read: no lost wake-up
        try:
            return await self._await_final(task_id, waiter, limit, want_trip=want_trip)
        finally:
            self._waiters.unregister(waiter)

    async def _await_final(
        self, task_id: str, waiter: Waiter, limit: float, *, want_trip: bool
    ) -> tuple[task_service_pb2.WaitTaskResponse, hops.HopStamps]:
        """The answer, and the hop stamps of a sampled task's final event (``want_trip``:
        a re-read that finds the task final before its event came waits TRIP_GRACE
        for the event, which alone carries them). ``waiter`` is registered already."""
        who = auth.identity()
        seen = self._waiters.recent_final(task_id)
        if seen is not None and seen.HasField("record") and who.sees(seen.record.tenant):
            return task_service_pb2.WaitTaskResponse(
                task=codec.record_to_task(seen.record), timed_out=False
            ), seen.record.hops
        # A task submitted here and not seen finishing needs no read before the
        # wait; an event lost on the way is then caught by an early re-read.
        recheck = WAIT_RECHECK
        # (An operator's only: whose task it is must be read first for anyone else.)
        if seen is None and who.within is None and self._waiters.known_unfinished(task_id):
            recheck = FIRST_RECHECK_UNREAD
        else:
            rec = await self._read_waited(task_id)
            if rec.state in states.FINAL_VALUES:
                task = codec.record_to_task(rec)
                return task_service_pb2.WaitTaskResponse(task=task, timed_out=False), ()
            # A retried task: the failure it had (its event late, or still in the
            # backlog this registration decoded) is no answer to this wait.
            waiter.expect(rec.attempt)
        deadline = time.monotonic() + limit
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter.event.wait(), min(remaining, recheck))
            recheck = WAIT_RECHECK
            if waiter.event.is_set() and waiter.unconfirmed_failure():
                rec = await self._read_waited(task_id)
                if rec.state not in states.FINAL_VALUES:
                    waiter.expect(rec.attempt)
                    if not waiter.event.is_set():
                        continue  # retried since: wait for the new attempt's outcome
                elif rec.attempt != waiter.attempt:  # retried and ended again since
                    task = codec.record_to_task(rec)
                    return task_service_pb2.WaitTaskResponse(task=task, timed_out=False), ()
            if waiter.event.is_set():
                break
            rec = await self._read_waited(task_id)
            if rec.state in states.FINAL_VALUES:
                grace = min(TRIP_GRACE, deadline - time.monotonic())
                if want_trip and not waiter.event.is_set() and grace > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(waiter.event.wait(), grace)
                break
        if waiter.record is not None and who.sees(waiter.record.tenant):
            return task_service_pb2.WaitTaskResponse(
                task=codec.record_to_task(waiter.record), timed_out=False
            ), waiter.record.hops
        rec = await self._read_waited(task_id)
        final = rec.state in states.FINAL_VALUES
        return task_service_pb2.WaitTaskResponse(task=codec.record_to_task(rec), timed_out=not final), ()

    async def ListTasks(
        self, request: task_service_pb2.ListTasksRequest, context: Context
    ) -> task_service_pb2.ListTasksResponse:
        return await self._guard(context, lambda: self._list(request))

    async def _list(self, request: task_service_pb2.ListTasksRequest) -> task_service_pb2.ListTasksResponse:
        violations: list[codec.Violation] = []
        page_size = request.page_size or DEFAULT_PAGE_SIZE
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            violations.append(
                codec.Violation(
                    field="page_size",
                    description=f"must be between 1 and {MAX_PAGE_SIZE}, got {request.page_size}",
                )
            )
        for i, st in enumerate(request.states):
            if not codec.is_known_state(st):
                violations.append(
                    codec.Violation(field=f"states[{i}]", description=f"unknown state {int(st)}")
                )
        if request.priority and not codec.is_known_priority(request.priority):
            violations.append(
                codec.Violation(field="priority", description=f"unknown priority {int(request.priority)}")
            )
        codec.check_text(violations, "name", request.name, max_chars=codec.MAX_NAME_CHARS)
        validation.check_chosen_name(violations, "queue", request.queue, required=False)
        codec.check_text(violations, "page_token", request.page_token, max_chars=MAX_PAGE_TOKEN_CHARS)
        if violations:
            raise codec.invalid(violations)
        within = auth.identity().within
        query = tasks_pb2.ListTasksRequest(
            states=request.states,
            name=request.name,
            queue=tenants.qualify(within, request.queue) if within and request.queue else request.queue,
            priority=request.priority,
            limit=page_size,
            cursor=request.page_token,
        )
        reply = await self._store.call(contract.STORE_LIST, query)
        return task_service_pb2.ListTasksResponse(
            tasks=[codec.record_to_task(r) for r in reply.tasks], next_page_token=reply.next_cursor
        )

    async def CancelTask(
        self, request: task_service_pb2.CancelTaskRequest, context: Context
    ) -> task_service_pb2.CancelTaskResponse:
        return await self._guard(context, lambda: self._cancel(request, context.time_remaining()))

    async def _cancel(
        self, request: task_service_pb2.CancelTaskRequest, client_remaining: float | None = None
    ) -> task_service_pb2.CancelTaskResponse:
        # Children cascade in the store (cancels.py); `wait` for a running one.
        violations: list[codec.Violation] = []
        task_id = _task_id(request.id, violations)
        cancels.validate(request, task_id, violations)
        return await cancels.cancel(
            request,
            task_id,
            store=self._store,
            wait=self._wait,
            get=self._get,
            client_remaining=client_remaining,
        )

    async def GetTaskTree(
        self, request: task_service_pb2.GetTaskTreeRequest, context: Context
    ) -> task_service_pb2.GetTaskTreeResponse:
        return await self._guard(context, lambda: trees.task_tree(_task_id(request.id), store=self._store))


def _wait_limit(
    request: task_service_pb2.WaitTaskRequest | task_service_pb2.RunTaskRequest,
    client_remaining: float | None,
    violations: list[codec.Violation],
) -> float:
    """Seconds to wait: the request's timeout (DEFAULT_WAIT when unset, at most
    MAX_WAIT), ending before the client's own deadline."""
    limit = DEFAULT_WAIT
    if request.HasField("timeout"):
        ms = codec.duration_ms(request.timeout)
        if ms is None or ms < 0:
            violations.append(codec.Violation(field="timeout", description="must be a non-negative duration"))
        elif ms > MAX_WAIT * 1000:
            violations.append(
                codec.Violation(field="timeout", description=f"must be at most {int(MAX_WAIT)}s")
            )
        else:
            limit = ms / 1000
    if client_remaining is not None:
        # Answer before the client's own deadline, not with DEADLINE_EXCEEDED.
        limit = max(0.0, min(limit, client_remaining - 0.1))
    return limit


def _asks_for_hops(context: Context) -> bool:
    return any(k == hops.METADATA_KEY for k, _ in context.invocation_metadata() or ())


def _task_id(value: str, violations: list[codec.Violation] | None = None) -> str:
    """The canonical id, or a violation on ``id`` (raised at once when no list is given)."""
    if not value:
        found = codec.Violation(field="id", description="required")
    else:
        canonical = codec.canonical_uuid(value)
        if canonical is not None:
            return canonical
        found = codec.Violation(field="id", description=f"must be a task id (UUID), got {codec.quote(value)}")
    if violations is None:
        raise codec.invalid([found])
    violations.append(found)
    return ""
