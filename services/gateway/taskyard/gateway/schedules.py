"""``taskyard.v1.ScheduleService``: periodic tasks.

The gateway validates (the task template like a submission, the timing with
``core.schedule``) and forwards: reads and changes to the result-store, a
manual trigger to a scheduler lane, which fires it through the store and
enqueues the run's task like a submission.
"""
# Length: _create checks a schedule's every field before saving it, in the order the API documents them.

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import grpc
from google.protobuf.message import Message

from taskyard.bus.v1 import envelope_pb2, schedule_pb2
from taskyard.core import codec, contract, errors, rpc, tenants, validation
from taskyard.core import schedule as timing
from taskyard.gateway import auth, status
from taskyard.gateway.limit_catalog import LimitCatalog
from taskyard.gateway.names import KnownNames
from taskyard.v1 import schedule_pb2 as pub
from taskyard.v1 import schedule_service_pb2 as svc
from taskyard.v1 import schedule_service_pb2_grpc

log = logging.getLogger(__name__)

R = TypeVar("R")
M = TypeVar("M", bound=Message)
Context = grpc.aio.ServicerContext[object, object]
K = envelope_pb2
A = schedule_pb2.ScheduleAction

MAX_ID_CHARS = 255
MAX_PAGE_SIZE = 1000
MAX_PAGE_TOKEN_CHARS = 1024
# TaskSpec fields that make no sense for a task fired again and again.
NOT_IN_TEMPLATE = (
    "request_id",
    "parent_id",
    "eta",
    "countdown",
    "depends_on",
    "idempotency_key",
    "idempotency_window",
)
_OVERLAPS = frozenset(pub.OverlapPolicy.values())


def _now_us() -> int:
    return time.time_ns() // 1000


def _ident(value: str, field: str = "id") -> str:
    v: list[codec.Violation] = []
    codec.check_text(v, field, value, max_chars=MAX_ID_CHARS, required=True)
    if v:
        raise codec.invalid(v)
    return value


def template_violations(s: pub.Schedule, path: str) -> list[codec.Violation]:
    task = s.task
    present = {
        "request_id": bool(task.request_id),
        "parent_id": bool(task.parent_id),
        "eta": task.HasField("eta"),
        "countdown": task.HasField("countdown"),
        "depends_on": len(task.depends_on) > 0,
        "idempotency_key": bool(task.idempotency_key),
        "idempotency_window": task.HasField("idempotency_window"),
    }
    return [
        codec.Violation(field=f"{path}.task.{name}", description="not allowed in a schedule's task")
        for name in NOT_IN_TEMPLATE
        if present[name]
    ]


def _qualify(s: pub.Schedule, tenant: str) -> None:
    """Name ``s``, its task's queue and limits as stored for ``tenant`` (core/tenants.py)."""
    if not tenant:
        return
    s.name = tenants.qualify(tenant, s.name)
    s.task.queue = tenants.qualify(tenant, s.task.queue or codec.DEFAULT_QUEUE)
    for use in s.task.limits:
        use.limit = tenants.qualify(tenant, use.limit)


def _shown(s: pub.Schedule) -> pub.Schedule:
    """``s`` named as its tenant knows it, with that tenant (an operator over every
    tenant reads both: the store names it qualified)."""
    owner, s.name = tenants.split(s.name)
    s.tenant = owner
    s.task.queue = tenants.strip(owner, s.task.queue)
    for use in s.task.limits:
        use.limit = tenants.strip(owner, use.limit)
    return s


class ScheduleService(schedule_service_pb2_grpc.ScheduleServiceServicer):
    def __init__(
        self,
        *,
        store: rpc.Caller,
        lane: rpc.Caller,
        names: KnownNames,
        limits: codec.Limits,
        catalog: LimitCatalog | None = None,
    ) -> None:
        self._store = store
        self._lane = lane
        self._names = names
        self._limits = limits
        # The limits a schedule's task may use, checked as a submission's are.
        self._catalog = catalog or LimitCatalog(store)

    async def _guard(self, context: Context, call: Callable[[], Awaitable[R]]) -> R:
        return await status.guard(context, call, log, "schedule request failed")

    # --- create -------------------------------------------------------------------
    async def CreateSchedule(
        self, request: svc.CreateScheduleRequest, context: Context
    ) -> svc.CreateScheduleResponse:
        return await self._guard(context, lambda: self._create(request))

    async def _create(self, request: svc.CreateScheduleRequest) -> svc.CreateScheduleResponse:
        if not request.HasField("schedule"):
            raise codec.invalid([codec.Violation(field="schedule", description="required")])
        s = pub.Schedule()
        s.CopyFrom(request.schedule)
        violations: list[codec.Violation] = []
        validation.check_chosen_name(violations, "schedule.name", s.name, required=True)
        if s.overlap not in _OVERLAPS:
            violations.append(
                codec.Violation(
                    field="schedule.overlap", description=f"unknown overlap policy {int(s.overlap)}"
                )
            )
        which = s.WhichOneof("spec")
        interval_ms = codec.duration_ms(s.interval) if which == "interval" else 0
        if which is None:
            violations.append(codec.Violation(field="schedule.spec", description="set interval or cron"))
        elif interval_ms is None:
            violations.append(codec.Violation(field="schedule.interval", description="malformed duration"))
        else:
            spec = timing.Spec(interval_ms=interval_ms, cron=s.cron, time_zone=s.time_zone)
            for exc in spec.problems():
                field = "schedule.cron" if exc.field == "spec" else f"schedule.{exc.field}"
                violations.append(codec.Violation(field=field, description=exc.description))
        if not s.HasField("task"):
            violations.append(codec.Violation(field="schedule.task", description="required"))
        else:
            violations.extend(template_violations(s, "schedule"))
            await self._names.ensure({s.task.name})
            # Read before the try below: the store's own error (UNAVAILABLE) must
            # reach the caller as it does for SubmitTask, not leave the limits unchecked.
            tenant = auth.identity().home
            flow = await self._catalog.for_uses(s.task.limits, tenant) if s.task.limits else None
            try:
                codec.build_records(
                    [s.task],
                    known_names=self._names.snapshot(),
                    limits=self._limits,
                    field="schedule.task",
                    single=True,
                    trace_headers={},
                    flow=flow,
                )
            except errors.TaskyardError as exc:
                violations.extend(
                    v
                    if isinstance(v, codec.Violation)
                    else codec.Violation(field=v.field, description=v.description)
                    for v in exc.violations
                )
        if violations:
            raise codec.invalid(violations)
        # Server-side fields are ignored, as documented.
        for name in (
            "id",
            "tenant",
            "times_run",
            "times_skipped",
            "next_run_at",
            "last_run_at",
            "last_task_id",
            "created_at",
            "updated_at",
            "declared",
        ):
            s.ClearField(name)
        # The store saves it for the caller's tenant (the request's scope).
        _qualify(s, auth.identity().home)
        reply = await self._store.call(
            contract.STORE_SCHEDULE_SAVE, schedule_pb2.SaveSchedulesRequest(schedules=[s], now_us=_now_us())
        )
        return svc.CreateScheduleResponse(schedule=_shown(reply.schedules[0]))

    # --- reads ---------------------------------------------------------------------
    async def GetSchedule(self, request: svc.GetScheduleRequest, context: Context) -> svc.GetScheduleResponse:
        async def call() -> svc.GetScheduleResponse:
            reply = await self._store.call(
                contract.STORE_SCHEDULE_READ, schedule_pb2.ReadSchedulesRequest(id=_ident(request.id))
            )
            return svc.GetScheduleResponse(schedule=_shown(reply.schedules[0]))

        return await self._guard(context, call)

    async def ListSchedules(
        self, request: svc.ListSchedulesRequest, context: Context
    ) -> svc.ListSchedulesResponse:
        async def call() -> svc.ListSchedulesResponse:
            violations: list[codec.Violation] = []
            if not 0 <= request.page_size <= MAX_PAGE_SIZE:
                violations.append(
                    codec.Violation(field="page_size", description=f"must be between 0 and {MAX_PAGE_SIZE}")
                )
            if len(request.page_token) > MAX_PAGE_TOKEN_CHARS:
                violations.append(codec.Violation(field="page_token", description="too long"))
            if violations:
                raise codec.invalid(violations)
            reply = await self._store.call(
                contract.STORE_SCHEDULE_READ,
                schedule_pb2.ReadSchedulesRequest(page_size=request.page_size, page_token=request.page_token),
            )
            return svc.ListSchedulesResponse(
                schedules=[_shown(s) for s in reply.schedules], next_page_token=reply.next_page_token
            )

        return await self._guard(context, call)

    # --- changes -------------------------------------------------------------------
    async def _change(self, ident: str, action: int) -> pub.Schedule:
        request = schedule_pb2.ChangeScheduleRequest(id=_ident(ident), action=action, now_us=_now_us())  # type: ignore[arg-type]
        reply = await self._store.call(contract.STORE_SCHEDULE_CHANGE, request)
        return _shown(reply.schedule)

    async def PauseSchedule(
        self, request: svc.PauseScheduleRequest, context: Context
    ) -> svc.PauseScheduleResponse:
        async def call() -> svc.PauseScheduleResponse:
            return svc.PauseScheduleResponse(schedule=await self._change(request.id, A.SCHEDULE_ACTION_PAUSE))

        return await self._guard(context, call)

    async def ResumeSchedule(
        self, request: svc.ResumeScheduleRequest, context: Context
    ) -> svc.ResumeScheduleResponse:
        async def call() -> svc.ResumeScheduleResponse:
            return svc.ResumeScheduleResponse(
                schedule=await self._change(request.id, A.SCHEDULE_ACTION_RESUME)
            )

        return await self._guard(context, call)

    async def DeleteSchedule(
        self, request: svc.DeleteScheduleRequest, context: Context
    ) -> svc.DeleteScheduleResponse:
        async def call() -> svc.DeleteScheduleResponse:
            await self._change(request.id, A.SCHEDULE_ACTION_DELETE)
            return svc.DeleteScheduleResponse()

        return await self._guard(context, call)

    async def TriggerSchedule(
        self, request: svc.TriggerScheduleRequest, context: Context
    ) -> svc.TriggerScheduleResponse:
        async def call() -> svc.TriggerScheduleResponse:
            reply = await self._lane.call(
                contract.SCHEDULE_TRIGGER,
                schedule_pb2.FireSchedulesRequest(trigger=_ident(request.id), now_us=_now_us()),
            )
            out = svc.TriggerScheduleResponse()
            if reply.schedules:
                out.schedule.CopyFrom(_shown(reply.schedules[0]))
            if reply.records:
                out.task.CopyFrom(codec.record_to_task(reply.records[0]))
            return out

        return await self._guard(context, call)
