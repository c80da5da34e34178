"""Typed, frozen views of tasks and the conversions to and from the wire."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from google.protobuf import struct_pb2, timestamp_pb2

from taskyard.client._failure_types import DeadLetterReason
from taskyard.client._flow import FlowGate, LimitUse, LimitUses, limit_uses
from taskyard.v1 import task_pb2, task_service_pb2

JSON: TypeAlias = Any
MAX_SAFE_INTEGER = 2**53


class TaskState(enum.IntEnum):
    """``taskyard.v1.TaskState``, value for value."""

    UNSPECIFIED = 0
    PENDING = 1
    QUEUED = 2
    SCHEDULED = 3
    ASSIGNED = 4
    RUNNING = 5
    SUCCESS = 6
    FAILURE = 7
    RETRYING = 8
    CANCELLED = 9

    @property
    def is_final(self) -> bool:
        return self in (TaskState.SUCCESS, TaskState.FAILURE, TaskState.CANCELLED)

    @classmethod
    def from_wire(cls, value: int) -> TaskState:
        try:
            return cls(value)
        except ValueError:
            return cls.UNSPECIFIED


class Priority(enum.IntEnum):
    """``taskyard.v1.Priority``; lower runs first."""

    CRITICAL = 1
    HIGH = 2
    NORMAL = 3
    LOW = 4

    @classmethod
    def parse(cls, value: Priority | int | str) -> Priority:
        if isinstance(value, str):
            key = value.upper().removeprefix("PRIORITY_")
            try:
                return cls[key]
            except KeyError:
                raise ValueError(f"unknown priority {value!r}") from None
        return cls(value)

    @classmethod
    def from_wire(cls, value: int) -> Priority:
        return cls.NORMAL if value not in cls._value2member_map_ else cls(value)


@dataclasses.dataclass(frozen=True, kw_only=True)
class TaskFailure:
    type: str
    message: str
    traceback: str
    attempt: int
    failed_at: datetime.datetime | None = None
    # When the next attempt was due (a retry), else None.
    retry_at: datetime.datetime | None = None
    # Its failure group (client.failures), and the redrive that re-queued the task from it.
    group_id: str = ""
    redrive_id: str = ""
    # A circuit breaker gave the retry it spent back: the failure was an outage's.
    refunded: bool = False

    @classmethod
    def from_proto(cls, f: task_pb2.TaskFailure) -> TaskFailure:
        return cls(
            type=f.type,
            message=f.message,
            traceback=f.traceback,
            attempt=f.attempt,
            failed_at=_time(f, "failed_at"),
            retry_at=_time(f, "retry_at"),
            group_id=f.group_id,
            redrive_id=f.redrive_id,
            refunded=f.refunded,
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class TaskInfo:
    id: str
    name: str
    state: TaskState
    priority: Priority
    queue: str
    attempt: int
    max_retries: int
    args: tuple[JSON, ...]
    kwargs: Mapping[str, JSON]
    result: JSON
    failure: TaskFailure | None
    timeout: datetime.timedelta | None
    request_id: str
    parent_id: str
    root_id: str
    labels: Mapping[str, str]
    worker_id: str
    cancel_requested: bool
    created_at: datetime.datetime | None
    started_at: datetime.datetime | None
    finished_at: datetime.datetime | None
    updated_at: datetime.datetime | None
    run_at: datetime.datetime | None
    # task graph: dependencies, idempotency key, how a cancel ended.
    depends_on: tuple[str, ...] = ()
    idempotency_key: str = ""
    cancel_reason: str = ""
    cancel_step: str = ""
    # Set by the task code (ctx.set_context / ctx.progress).
    context: Mapping[str, JSON] = dataclasses.field(default_factory=dict)
    # Its last 100 failed attempts, oldest first (get() fills it; lists leave it
    # empty), and how many came before them, left out (earlier_failures).
    failures: tuple[TaskFailure, ...] = ()
    resume_requested: bool = False
    schedule_id: str = ""
    rescues: int = 0
    # Attempts that spent no retry (their body may have run), and late outcomes
    # of superseded attempts the store refused (the last one's attempt).
    uncharged_attempts: int = 0
    late_reports: int = 0
    late_attempt: int = 0
    # Payload fields ("result", "args", ...) the gateway left out of this view, each
    # with why (stored JSON nested deeper than readers can decode); the row is intact.
    omitted: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # The task's trace (W3C trace id, 32 lowercase hex digits) in the tracing
    # backend; "" when it carries no trace context (tracing off, or not sampled).
    trace_id: str = ""
    # Flow control: the limits it takes units of (as submitted, with those its task name
    # declares) and its fairness key.
    limits: tuple[LimitUse, ...] = ()
    fairness_key: str = ""
    # Why it is a dead letter (UNSPECIFIED unless FAILURE by a failure), and the redrive
    # that re-queued it last, from which failed attempt (client.failures).
    dead_letter_reason: DeadLetterReason = DeadLetterReason.UNSPECIFIED
    redrive_id: str = ""
    redriven_from_attempt: int = 0
    earlier_failures: int = 0
    # The tenant it belongs to: the submitting token's ("" is the default tenant). An
    # operator listing across tenants tells them apart by it (docs/tenants.md).
    tenant: str = ""

    @property
    def is_final(self) -> bool:
        return self.state.is_final

    @classmethod
    def from_proto(cls, t: task_pb2.Task) -> TaskInfo:
        return cls(
            id=t.id,
            name=t.name,
            state=TaskState.from_wire(t.state),
            priority=Priority.from_wire(t.priority),
            queue=t.queue,
            attempt=t.attempt,
            max_retries=t.max_retries,
            args=tuple(list_to_python(t.args)),
            kwargs=struct_to_python(t.kwargs),
            result=value_to_python(t.result) if t.HasField("result") else None,
            failure=TaskFailure.from_proto(t.failure) if t.HasField("failure") else None,
            timeout=t.timeout.ToTimedelta() if t.HasField("timeout") else None,
            request_id=t.request_id,
            parent_id=t.parent_id,
            root_id=t.root_id,
            labels=dict(t.labels),
            worker_id=t.worker_id,
            cancel_requested=t.cancel_requested,
            created_at=_time(t, "created_at"),
            started_at=_time(t, "started_at"),
            finished_at=_time(t, "finished_at"),
            updated_at=_time(t, "updated_at"),
            run_at=_time(t, "run_at"),
            depends_on=tuple(t.depends_on),
            idempotency_key=t.idempotency_key,
            cancel_reason=t.cancel_reason,
            cancel_step=_cancel_step(t.cancel_step),
            context=struct_to_python(t.context),
            failures=tuple(TaskFailure.from_proto(f) for f in t.failures),
            resume_requested=t.resume_requested,
            schedule_id=t.schedule_id,
            rescues=t.rescues,
            uncharged_attempts=t.uncharged_attempts,
            late_reports=t.late_reports,
            late_attempt=t.late_attempt,
            omitted=dict(t.omitted),
            trace_id=t.trace_id,
            limits=tuple(LimitUse.from_proto(u) for u in t.limits),
            fairness_key=t.fairness_key,
            dead_letter_reason=DeadLetterReason(t.dead_letter_reason),
            redrive_id=t.redrive_id,
            redriven_from_attempt=t.redriven_from_attempt,
            earlier_failures=t.earlier_failures,
            tenant=t.tenant,
        )


def _cancel_step(value: int) -> str:
    """The step name (NOT_STARTED, FLAG, ASYNCIO, KILL), or "" when no cancel stopped it."""
    return task_pb2.CancelStep.Name(value).removeprefix("CANCEL_STEP_") if value else ""


def _time(t: Any, field: str) -> datetime.datetime | None:
    if not t.HasField(field):
        return None
    ts: timestamp_pb2.Timestamp = getattr(t, field)
    return ts.ToDatetime(tzinfo=datetime.UTC)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Explanation:
    """Why a task is where it is (ExplainTask): ``reason`` is ETA, DEPENDENCY,
    RETRY_DELAY, QUEUE_PAUSED, NO_POOL, SLOTS_BUSY, DISPATCHING, RUNNING or FINAL, or a
    flow-control gate: RATE_LIMITED, CONCURRENCY_FULL, FAIR_SHARE or BREAKER_OPEN (a
    circuit breaker: ``gate.next_admission_at`` is its next probe), with ``gate``; or its
    tenant's: TENANT_SUSPENDED (it waits until the tenant is resumed) or TENANT_QUOTA (the
    tenant's quota is used up: ``gate.limit`` is "tenant.concurrency" or "tenant.rate",
    ``gate.key`` the tenant)."""

    task: TaskInfo
    reason: str
    message: str
    until: datetime.datetime | None
    waiting_on: tuple[str, ...]
    lane_depth_ahead: int
    # The gate that holds it (RATE_LIMITED, CONCURRENCY_FULL, FAIR_SHARE, BREAKER_OPEN,
    # TENANT_QUOTA), else None.
    gate: FlowGate | None = None

    @classmethod
    def from_proto(cls, r: task_service_pb2.ExplainTaskResponse) -> Explanation:
        return cls(
            task=TaskInfo.from_proto(r.task),
            reason=task_service_pb2.WaitReason.Name(r.reason).removeprefix("WAIT_REASON_"),
            message=r.message,
            until=_time(r, "until"),
            waiting_on=tuple(r.waiting_on),
            lane_depth_ahead=r.lane_depth_ahead,
            gate=FlowGate.from_proto(r.gate) if r.HasField("gate") else None,
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class Submitted:
    """The outcome of one submission: ``created`` is False for a repeated request_id."""

    id: str
    state: TaskState
    created: bool


@dataclasses.dataclass(frozen=True, kw_only=True)
class Cancellation:
    task: TaskInfo
    # True when the task became CANCELLED now; False when only the cancel flag of a dispatched
    # (ASSIGNED) or running task was set: its pool ends it and says how (cancel(wait=...)).
    cancelled: bool
    # The step that stopped it ("NOT_STARTED", "FLAG", "ASYNCIO", "KILL"), once stopped.
    step: str = ""
    # Unfinished children cancelled with it.
    cancelled_children: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, kw_only=True)
class TaskPage:
    tasks: tuple[TaskInfo, ...]
    next_page_token: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class TaskRequest:
    """One task for ``submit_many`` (plain dicts with the same keys work too)."""

    name: str
    args: Sequence[JSON] = ()
    kwargs: Mapping[str, JSON] = dataclasses.field(default_factory=dict)
    priority: Priority | int | str | None = None
    queue: str = ""
    timeout: float | datetime.timedelta | None = None
    max_retries: int | None = None
    request_id: str = ""
    parent_id: str = ""
    labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # task graph: queued only once these tasks succeeded; an idempotency key and its window.
    depends_on: Sequence[str] = ()
    idempotency_key: str = ""
    idempotency_window: float | datetime.timedelta | None = None
    # Run no earlier than ``eta`` (an aware datetime; a naive one is refused) or ``countdown``
    # from now: state SCHEDULED until then. At most one of the two.
    eta: datetime.datetime | None = None
    countdown: float | datetime.timedelta | None = None
    # Flow control: the limits it takes units of, {limit: key} or LimitUse (with units),
    # at most 8; and the fairness key it shares its lane by (a tenant, a customer).
    limits: LimitUses | None = None
    fairness_key: str = ""

    def to_proto(self) -> task_pb2.TaskSpec:
        spec = task_pb2.TaskSpec(
            name=self.name,
            queue=self.queue,
            request_id=self.request_id,
            parent_id=self.parent_id,
        )
        if self.args:
            list_from_python(spec.args, self.args, "args")
        if self.kwargs:
            struct_from_python(spec.kwargs, self.kwargs, "kwargs")
        if self.priority is not None:
            spec.priority = int(Priority.parse(self.priority))  # type: ignore[assignment]
        if self.timeout is not None:
            td = (
                self.timeout
                if isinstance(self.timeout, datetime.timedelta)
                else datetime.timedelta(seconds=self.timeout)
            )
            spec.timeout.FromTimedelta(td)
        if self.max_retries is not None:
            spec.max_retries = self.max_retries
        if self.labels:
            spec.labels.update(self.labels)
        spec.depends_on.extend(self.depends_on)
        spec.idempotency_key = self.idempotency_key
        if self.idempotency_window is not None:
            w = self.idempotency_window
            spec.idempotency_window.FromTimedelta(
                w if isinstance(w, datetime.timedelta) else datetime.timedelta(seconds=w)
            )
        if self.eta is not None:
            if self.eta.tzinfo is None or self.eta.utcoffset() is None:
                # A naive time is ambiguous (local? UTC?): guessing would run it hours off.
                raise ValueError(
                    "eta must be a timezone-aware datetime (e.g. datetime.now(datetime.UTC)), "
                    f"got the naive {self.eta.isoformat()}"
                )
            spec.eta.FromDatetime(self.eta.astimezone(datetime.UTC))
        if self.countdown is not None:
            c = self.countdown
            spec.countdown.FromTimedelta(
                c if isinstance(c, datetime.timedelta) else datetime.timedelta(seconds=c)
            )
        spec.limits.extend(limit_uses(self.limits))
        spec.fairness_key = self.fairness_key
        return spec

    @classmethod
    def coerce(cls, item: TaskRequest | Mapping[str, Any]) -> TaskRequest:
        return item if isinstance(item, TaskRequest) else cls(**item)


def submitted_from_proto(s: task_service_pb2.SubmittedTask) -> Submitted:
    return Submitted(id=s.id, state=TaskState.from_wire(s.state), created=s.created)


# --- JSON <-> google.protobuf.Value ---------------------------------------------


def value_to_python(v: struct_pb2.Value) -> JSON:
    kind = v.WhichOneof("kind")
    if kind == "string_value":
        return v.string_value
    if kind == "number_value":
        n = v.number_value
        # JSON numbers travel as doubles: integral ones come back as ints.
        if n.is_integer() and -MAX_SAFE_INTEGER <= n <= MAX_SAFE_INTEGER:
            return int(n)
        return n
    if kind == "bool_value":
        return v.bool_value
    if kind == "struct_value":
        return struct_to_python(v.struct_value)
    if kind == "list_value":
        return list_to_python(v.list_value)
    return None


def list_to_python(lv: struct_pb2.ListValue) -> list[JSON]:
    return [value_to_python(v) for v in lv.values]


def struct_to_python(st: struct_pb2.Struct) -> dict[str, JSON]:
    return {k: value_to_python(v) for k, v in st.fields.items()}


def value_from_python(out: struct_pb2.Value, value: JSON, path: str) -> None:
    if value is None:
        out.null_value = struct_pb2.NULL_VALUE
    elif isinstance(value, bool):
        out.bool_value = value
    elif isinstance(value, int):
        if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            raise ValueError(f"{path}: {value} is not exactly representable as a JSON number (|n| > 2**53)")
        out.number_value = value
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{path}: JSON has no NaN or Infinity")
        out.number_value = value
    elif isinstance(value, str):
        out.string_value = value
    elif isinstance(value, Mapping):
        struct_from_python(out.struct_value, value, path)
    elif isinstance(value, (list, tuple)):
        list_from_python(out.list_value, value, path)
    else:
        raise TypeError(
            f"{path}: {type(value).__name__} is not JSON (use str, int, float, bool, None, list, dict)"
        )


def list_from_python(out: struct_pb2.ListValue, values: Sequence[JSON], path: str) -> None:
    for i, v in enumerate(values):
        value_from_python(out.values.add(), v, f"{path}[{i}]")


def struct_from_python(out: struct_pb2.Struct, values: Mapping[str, JSON], path: str) -> None:
    for k, v in values.items():
        if not isinstance(k, str):
            raise TypeError(f"{path}: keys must be str, got {type(k).__name__}")
        value_from_python(out.fields[k], v, f"{path}.{k}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class TreeNode:
    """One task of ``client.tree(id)``: depth 0 is the root; path runs from the root."""

    task: TaskInfo
    depth: int
    path: tuple[str, ...]


@dataclasses.dataclass(frozen=True, kw_only=True)
class TaskTree:
    root_id: str
    # Depth-first, children in creation order.
    nodes: tuple[TreeNode, ...]
    # True when the tree had more than 10,000 tasks.
    truncated: bool

    @classmethod
    def from_proto(cls, r: task_service_pb2.GetTaskTreeResponse) -> TaskTree:
        return cls(
            root_id=r.root_id,
            truncated=r.truncated,
            nodes=tuple(
                TreeNode(task=TaskInfo.from_proto(n.task), depth=n.depth, path=tuple(n.path)) for n in r.nodes
            ),
        )
