"""The one codec between the public API (``taskyard.v1``) and the bus (``taskyard.bus.v1``).

``build_records`` turns client ``TaskSpec``s into ``TaskRecord``s ready for a
scheduler lane, validating every field and collecting *all* violations (with
field paths such as ``tasks[3].args[1]`` or ``task.kwargs.x``) before raising
one ``INVALID_ARGUMENT``; the rules are those of ``core.validation``, which the
result-store applies to every record it inserts. ``record_to_task`` turns a stored
record back into a public ``Task``, whatever its stored JSON (a field no reader could
decode is left out and named in ``Task.omitted``).
"""
# Length: build_records turns every submitted spec into a record in one pass (the hot path).

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Container, Mapping, Sequence

from google.protobuf import duration_pb2, struct_pb2

from taskyard.bus.v1 import task_record_pb2
from taskyard.core import eta, graph, ids, payload, telemetry, tenants, validation
from taskyard.core import limits as flow_rules
from taskyard.core.config import TaskLimitSettings

# The rules themselves live in core/validation.py (shared with the store); their
# names stay importable from here.
from taskyard.core.validation import (
    INVALID_ARGUMENT,
    MAX_LABEL_KEY_CHARS,
    MAX_LABEL_VALUE_CHARS,
    MAX_LABELS,
    MAX_NAME_CHARS,
    MAX_QUEUE_CHARS,
    MAX_REQUEST_ID_CHARS,
    MAX_RETRIES_LIMIT,
    MAX_TIMEOUT_MS,
    NUL_CHARACTER,
    PAYLOAD_TOO_DEEP,
    PAYLOAD_TOO_LARGE,
    QUOTE_CHARS,
    UNKNOWN_TASK_NAME,
    Violation,
    canonical_uuid,
    check_text,
    invalid,
    quote,
)
from taskyard.v1 import task_pb2

DEFAULT_QUEUE = "default"
BATCH_TOO_LARGE = "BATCH_TOO_LARGE"

_STATES = frozenset(v for v in task_pb2.TaskState.values() if v != 0)
# A spec that set a countdown hears of its run time as "countdown".
_COUNTDOWN_FIELDS = dataclasses.replace(validation.SPEC_FIELDS, run_at="countdown")

__all__ = [
    "BATCH_TOO_LARGE",
    "DEFAULT_QUEUE",
    "INVALID_ARGUMENT",
    "MAX_LABELS",
    "MAX_LABEL_KEY_CHARS",
    "MAX_LABEL_VALUE_CHARS",
    "MAX_NAME_CHARS",
    "MAX_QUEUE_CHARS",
    "MAX_REQUEST_ID_CHARS",
    "MAX_RETRIES_LIMIT",
    "MAX_TIMEOUT_MS",
    "NUL_CHARACTER",
    "PAYLOAD_TOO_DEEP",
    "PAYLOAD_TOO_LARGE",
    "QUOTE_CHARS",
    "UNKNOWN_TASK_NAME",
    "FlowCatalog",
    "Limits",
    "Violation",
    "build_records",
    "canonical_uuid",
    "check_batch_size",
    "check_text",
    "duration_ms",
    "invalid",
    "quote",
    "record_to_task",
]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Limits:
    max_payload_bytes: int = 256 * 1024
    max_batch: int = 1000
    # The gateway's gRPC message cap (a reply over it fails RESOURCE_EXHAUSTED).
    grpc_max_message_bytes: int = 4 * 1024 * 1024

    @classmethod
    def from_settings(cls, settings: TaskLimitSettings) -> Limits:
        return cls(
            max_payload_bytes=settings.max_payload_bytes,
            max_batch=settings.max_batch,
            grpc_max_message_bytes=settings.grpc_max_message_bytes,
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class FlowCatalog:
    """The limits a submission may use: their names, and each one's most units at
    once (core/limits.burst_of)."""

    names: Container[str]
    bursts: dict[str, int]


def duration_ms(d: duration_pb2.Duration) -> int | None:
    """Whole milliseconds (rounded up), or None for a malformed Duration."""
    if not -999_999_999 <= d.nanos <= 999_999_999 or (d.seconds > 0 > d.nanos) or (d.seconds < 0 < d.nanos):
        return None
    total_ns = d.seconds * 1_000_000_000 + d.nanos
    return -((-total_ns) // 1_000_000)


# --- TaskSpec -> TaskRecord ----------------------------------------------------


def build_records(
    specs: Sequence[task_pb2.TaskSpec],
    *,
    known_names: Container[str] | None,
    limits: Limits,
    field: str = "tasks",
    single: bool = False,
    now_us: int | None = None,
    trace_headers: Mapping[str, str] | None = None,
    flow: FlowCatalog | None = None,
) -> list[task_record_pb2.TaskRecord]:
    """Validate ``specs`` and build their records, or raise INVALID_ARGUMENT with every violation.

    ``field`` names the request field (``task`` with ``single=True``, else
    ``tasks`` and paths ``tasks[i]``). All-or-nothing: one bad spec refuses them all.
    The record is checked with the rules the store applies too (core/validation.py);
    ``known_names`` None leaves names unchecked; ``flow`` None leaves the limits a
    spec uses unchecked against the ones that exist (their form is checked always).
    """
    if not single:
        check_batch_size(len(specs), limits, field)
    created_at_us = time.time_ns() // 1000 if now_us is None else now_us
    headers = telemetry.inject() if trace_headers is None else dict(trace_headers)
    # What every record of the batch starts from (copying it is cheaper than
    # setting the fields one by one).
    template = task_record_pb2.TaskRecord(
        state=task_pb2.TASK_STATE_QUEUED,
        attempt=1,
        max_retries=-1,  # the task's own budget, else the deployment default
        timeout_ms=0,  # the task's own timeout, else the deployment default
        args_json=payload.EMPTY_LIST_JSON,
        kwargs_json=payload.EMPTY_OBJECT_JSON,
        created_at_us=created_at_us,
        trace_headers=headers,
    )
    task_ids = ids.new_task_ids(len(specs))
    max_payload_bytes = limits.max_payload_bytes
    violations: list[Violation] = []
    records: list[task_record_pb2.TaskRecord] = []
    for i, spec in enumerate(specs):
        path = field if single else f"{field}[{i}]"
        found: list[Violation] = []
        rec, values = _convert(spec, template, task_ids[i], path, found)
        if spec.limits or spec.fairness_key:
            found += flow_rules.use_violations(
                spec.limits,
                spec.fairness_key,
                path=path,
                limits=None if flow is None else flow.names,
                burst=None if flow is None else flow.bursts,
            )
        when = eta.due(spec, created_at_us)
        if when.errors:
            found.extend(Violation(field=f"{path}.{f}", description=d) for f, d in when.errors)
        if when.run_at_us:
            rec.run_at_us = when.run_at_us
            rec.state = task_pb2.TASK_STATE_SCHEDULED
        elif when.passed_us:
            # Queued at once; run_at keeps the time asked for, so reads show it passed.
            rec.run_at_us = when.passed_us
        # depends_on (PENDING wins over an ETA's SCHEDULED: the store schedules it
        # on release) and the idempotency key, whose window needs created_at.
        graph.apply_spec(spec, rec, path, found)
        found += validation.check_record(
            rec,
            path=path,
            fields=_COUNTDOWN_FIELDS if when.field == "countdown" else validation.SPEC_FIELDS,
            known_names=known_names,
            max_payload_bytes=max_payload_bytes,
            now_us=created_at_us,
            values=values,
        )
        if found:
            violations += validation.in_field_order(found, path)
        records.append(rec)
    if violations:
        raise invalid(violations)
    return records


def _convert(
    spec: task_pb2.TaskSpec,
    template: task_record_pb2.TaskRecord,
    task_id: str,
    path: str,
    out: list[Violation],
) -> tuple[task_record_pb2.TaskRecord, tuple[payload.JSON, payload.JSON]]:
    """The record of ``spec`` (``template`` with its own fields) and its decoded args
    and kwargs; ``out`` gets only what a record cannot express (the rules are checked
    on the record)."""
    rec = task_record_pb2.TaskRecord()
    rec.CopyFrom(template)
    rec.id = task_id
    rec.name = spec.name
    rec.priority = spec.priority or task_pb2.PRIORITY_NORMAL
    rec.queue = spec.queue or DEFAULT_QUEUE
    request_id = spec.request_id
    if request_id:
        rec.request_id = request_id
    args: payload.JSON = []
    kwargs: payload.JSON = {}
    if spec.HasField("args") and spec.args.values:
        rec.args_json, args = _payload(spec.args, f"{path}.args", out)
    if spec.HasField("kwargs") and spec.kwargs.fields:
        rec.kwargs_json, kwargs = _payload(spec.kwargs, f"{path}.kwargs", out)

    if spec.HasField("timeout"):
        ms = duration_ms(spec.timeout)
        if ms is None:
            out.append(Violation(field=f"{path}.timeout", description="malformed duration"))
        elif ms <= 0:  # a record's 0 means "the default": not what was asked
            out.append(Violation(field=f"{path}.timeout", description="must be positive"))
        else:
            rec.timeout_ms = ms
    if spec.HasField("max_retries"):
        if spec.max_retries < 0:  # a record's -1 means "the default": leave the field unset
            out.append(
                Violation(
                    field=f"{path}.max_retries",
                    description=f"must be between 0 and {MAX_RETRIES_LIMIT}, got {spec.max_retries}",
                )
            )
        else:
            rec.max_retries = spec.max_retries
    parent_id = spec.parent_id
    if parent_id:
        rec.parent_id = canonical_uuid(parent_id) or parent_id
    else:
        # A top-level task is its own root; a child's root is resolved by the store.
        rec.root_id = task_id
    if spec.labels:
        rec.labels.update(spec.labels)
    # Only when set: a record without flow control is the same bytes as before it.
    if spec.fairness_key:
        rec.flow.fairness_key = spec.fairness_key
    if spec.limits:
        rec.flow.uses.extend(spec.limits)
    return rec, (args, kwargs)


def _payload(
    msg: struct_pb2.ListValue | struct_pb2.Struct, path: str, out: list[Violation]
) -> tuple[bytes, payload.JSON]:
    """JSON text and value of args or kwargs; a value JSON cannot carry is a violation."""
    try:
        if isinstance(msg, struct_pb2.ListValue):
            value: payload.JSON = payload.list_to_python(msg, path)
        else:
            value = payload.struct_to_python(msg, path)
        return payload.dumps(value), value
    except payload.PayloadError as exc:
        out.append(Violation(field=exc.path or path, description=exc.description))
        return b"", None
    except RecursionError:
        out.append(Violation(field=path, description=payload.too_deep_message()))
        return b"", None


# --- TaskRecord -> Task --------------------------------------------------------


def put_flow(task: task_pb2.Task, flow: task_record_pb2.FlowControl, tenant: str = tenants.DEFAULT) -> None:
    """Set ``task``'s limits and fairness key from a record's flow control. Units
    are shown as admission counts them (0, the default, is 1): clients that send
    1 and clients that send 0 for the same request read the same task. Limit names
    as ``tenant`` knows them (stored qualified, core/tenants.py)."""
    task.fairness_key = flow.fairness_key
    del task.limits[:]
    for use in flow.uses:
        shown = task.limits.add()
        shown.CopyFrom(use)
        shown.limit = tenants.strip(tenant, use.limit)
        shown.units = flow_rules.units_of(use)


def record_to_task(rec: task_record_pb2.TaskRecord, *, with_payload: bool = True) -> task_pb2.Task:
    """The public view of a stored record: no lease token, pool id or trace headers,
    only the trace id of the headers' ``traceparent`` (where its spans are). Its
    queue and limits by the names its tenant knows them by (stored qualified)."""
    task = task_pb2.Task(
        id=rec.id,
        name=rec.name,
        priority=rec.priority,
        queue=tenants.strip(rec.tenant, rec.queue),
        tenant=rec.tenant,
        max_retries=rec.max_retries,
        request_id=rec.request_id,
        parent_id=rec.parent_id,
        root_id=rec.root_id,
        state=rec.state,
        attempt=rec.attempt,
        worker_id=rec.worker_id,
        cancel_requested=rec.cancel_requested,
        depends_on=rec.depends_on,
        idempotency_key=rec.idempotency_key,
        cancel_reason=rec.cancel_reason,
        cancel_step=rec.cancel_step,
        resume_requested=rec.resume_requested,
        schedule_id=rec.schedule_id,
        rescues=rec.rescues,
        uncharged_attempts=rec.uncharged_attempts,
        late_reports=rec.late_reports,
        late_attempt=rec.late_attempt,
        dead_letter_reason=rec.dead_letter_reason,
        redrive_id=rec.redrive_id,
        redriven_from_attempt=rec.redriven_from_attempt,
    )
    if rec.labels:
        task.labels.update(rec.labels)
    if rec.HasField("flow"):
        put_flow(task, rec.flow, rec.tenant)
    if rec.trace_headers:
        task.trace_id = telemetry.trace_id_in(rec.trace_headers)
    if rec.timeout_ms:
        task.timeout.FromMilliseconds(rec.timeout_ms)
    if with_payload:
        # A row is always readable: a field whose JSON cannot be carried (stored
        # before the nesting limit, or by other means) is left out, saying why.
        _fill(task, "args", rec.args_json, lambda: payload.json_to_list(rec.args_json, task.args))
        _fill(task, "kwargs", rec.kwargs_json, lambda: payload.json_to_struct(rec.kwargs_json, task.kwargs))
        if rec.context_json:
            _fill(
                task,
                "context",
                rec.context_json,
                lambda: payload.json_to_struct(rec.context_json, task.context),
            )
        if rec.result_json:
            _fill(task, "result", rec.result_json, lambda: _copy_result(task, rec.result_json))
    if rec.HasField("failure"):
        task.failure.CopyFrom(rec.failure)
    for us, ts in (
        (rec.created_at_us, task.created_at),
        (rec.started_at_us, task.started_at),
        (rec.finished_at_us, task.finished_at),
        (rec.updated_at_us, task.updated_at),
        (rec.run_at_us, task.run_at),
    ):
        if us:
            ts.FromMicroseconds(us)
    return task


def _copy_result(task: task_pb2.Task, text: bytes) -> None:
    result = payload.json_to_value(text)
    if result is not None:
        task.result.CopyFrom(result)


def _fill(task: task_pb2.Task, field: str, text: bytes, convert: Callable[[], None]) -> None:
    """Run ``convert`` (JSON text into ``task.<field>``), or leave the field out with why."""
    why = ""
    try:
        if payload.nests_too_deep(text):
            why = payload.too_deep_message()
        else:
            convert()
            return
    except Exception as exc:  # ValueError, json_format.ParseError, DecodeError: not carried
        why = f"stored JSON does not convert ({type(exc).__name__})"
    task.ClearField(field)
    task.omitted[field] = why


def is_known_state(value: int) -> bool:
    return value in _STATES


def is_known_priority(value: int) -> bool:
    return value in validation.PRIORITIES


def check_batch_size(count: int, limits: Limits, field: str = "tasks") -> None:
    """Refuse an over-size batch before any per-task work."""
    if count > limits.max_batch:
        raise invalid(
            [
                Violation(
                    field=field,
                    description=f"at most {limits.max_batch} tasks per batch, got {count}",
                    reason=BATCH_TOO_LARGE,
                )
            ]
        )
