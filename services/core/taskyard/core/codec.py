"""The one codec between the public API (``taskyard.v1``) and the bus (``taskyard.bus.v1``).

``build_records`` turns client ``TaskSpec``s into ``TaskRecord``s ready for a
scheduler lane, validating every field and collecting *all* violations (with
field paths such as ``tasks[3].args[1]`` or ``task.kwargs.x``) before raising
one ``INVALID_ARGUMENT``. ``record_to_task`` turns a stored record back into a
public ``Task``.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Container, Mapping, Sequence

from google.protobuf import duration_pb2, struct_pb2

from taskyard.bus.v1 import task_record_pb2
from taskyard.core import errors, eta, graph, ids, payload, telemetry
from taskyard.core.config import Settings
from taskyard.v1 import task_pb2

# Limits that are not deployment settings.
MAX_NAME_CHARS = 255
MAX_QUEUE_CHARS = 255
MAX_REQUEST_ID_CHARS = 255
MAX_LABELS = 64
MAX_LABEL_KEY_CHARS = 63
MAX_LABEL_VALUE_CHARS = 255
MAX_TIMEOUT_MS = 24 * 3600 * 1000
MAX_RETRIES_LIMIT = 100
DEFAULT_QUEUE = "default"
# How much of a bad value a violation description may quote.
QUOTE_CHARS = 64

# Reasons (ErrorInfo.reason / BadRequest.FieldViolation.reason).
INVALID_ARGUMENT = "INVALID_ARGUMENT"
UNKNOWN_TASK_NAME = "UNKNOWN_TASK_NAME"
PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
NUL_CHARACTER = "NUL_CHARACTER"
BATCH_TOO_LARGE = "BATCH_TOO_LARGE"

_PRIORITIES = frozenset(v for v in task_pb2.Priority.values() if v != 0)
_STATES = frozenset(v for v in task_pb2.TaskState.values() if v != 0)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Violation(errors.FieldViolation):
    """A field violation with a machine-readable reason."""

    reason: str = INVALID_ARGUMENT


@dataclasses.dataclass(frozen=True, kw_only=True)
class Limits:
    max_payload_bytes: int = 256 * 1024
    max_batch: int = 1000
    # The gateway's gRPC message cap (a reply over it fails RESOURCE_EXHAUSTED).
    grpc_max_message_bytes: int = 4 * 1024 * 1024

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(
            max_payload_bytes=settings.max_payload_bytes,
            max_batch=settings.max_batch,
            grpc_max_message_bytes=settings.grpc_max_message_bytes,
        )


def quote(value: str) -> str:
    """A bounded, printable rendering of user input for an error message."""
    if len(value) > QUOTE_CHARS:
        value = value[:QUOTE_CHARS] + "…"
    return repr(value)


def invalid(violations: Sequence[errors.FieldViolation], message: str = "") -> errors.TaskyardError:
    """INVALID_ARGUMENT; the reason is the violations' common reason, if they share one."""
    reasons = {getattr(v, "reason", INVALID_ARGUMENT) for v in violations}
    reason = reasons.pop() if len(reasons) == 1 else INVALID_ARGUMENT
    if not message:
        shown = "; ".join(f"{v.field}: {v.description}" for v in violations[:3])
        more = len(violations) - 3
        message = shown + (f" (and {more} more)" if more > 0 else "")
    return errors.TaskyardError(errors.Code.INVALID_ARGUMENT, reason, message, tuple(violations))


def check_text(
    out: list[Violation], path: str, value: str, *, max_chars: int, required: bool = False
) -> None:
    if not value:
        if required:
            out.append(Violation(field=path, description="must not be empty"))
        return
    if len(value) > max_chars:
        out.append(
            Violation(field=path, description=f"must be at most {max_chars} characters, got {len(value)}")
        )
    if "\x00" in value:
        out.append(Violation(field=path, description="must not contain NUL (\\u0000)", reason=NUL_CHARACTER))


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
    known_names: Container[str],
    limits: Limits,
    field: str = "tasks",
    single: bool = False,
    now_us: int | None = None,
    trace_headers: Mapping[str, str] | None = None,
) -> list[task_record_pb2.TaskRecord]:
    """Validate ``specs`` and build their records, or raise INVALID_ARGUMENT with every violation.

    ``field`` names the request field (``task`` with ``single=True``, else
    ``tasks`` and paths ``tasks[i]``). All-or-nothing: one bad spec refuses them all.
    """
    if not single:
        check_batch_size(len(specs), limits, field)
    created_at_us = time.time_ns() // 1000 if now_us is None else now_us
    headers = telemetry.inject() if trace_headers is None else dict(trace_headers)
    violations: list[Violation] = []
    records: list[task_record_pb2.TaskRecord] = []
    for i, spec in enumerate(specs):
        path = field if single else f"{field}[{i}]"
        rec = _build_one(spec, path, known_names, limits, violations)
        rec.created_at_us = created_at_us
        _schedule(spec, rec, path, created_at_us, violations)  # time slice: eta / countdown
        # Graph slice: depends_on (PENDING wins over an ETA's SCHEDULED: the store
        # schedules it on release) and the idempotency key, whose window needs created_at.
        graph.apply_spec(spec, rec, path, violations)
        if headers:
            rec.trace_headers.update(headers)
        records.append(rec)
    if violations:
        raise invalid(violations)
    return records


def _build_one(
    spec: task_pb2.TaskSpec,
    path: str,
    known_names: Container[str],
    limits: Limits,
    out: list[Violation],
) -> task_record_pb2.TaskRecord:
    rec = task_record_pb2.TaskRecord(
        id=ids.new_task_id(),
        state=task_pb2.TASK_STATE_QUEUED,
        attempt=1,
    )
    # name
    name = spec.name
    if not name:
        out.append(Violation(field=f"{path}.name", description="must not be empty"))
    elif len(name) > MAX_NAME_CHARS or "\x00" in name:
        check_text(out, f"{path}.name", name, max_chars=MAX_NAME_CHARS)
    elif name not in known_names:
        out.append(
            Violation(
                field=f"{path}.name",
                description=f"no worker pool serves a task named {quote(name)}",
                reason=UNKNOWN_TASK_NAME,
            )
        )
    rec.name = name

    # args / kwargs
    size = 0
    if spec.HasField("args") and spec.args.values:
        rec.args_json, n = _payload(spec.args, f"{path}.args", out, is_list=True)
        size += n
    else:
        rec.args_json = payload.EMPTY_LIST_JSON
    if spec.HasField("kwargs") and spec.kwargs.fields:
        rec.kwargs_json, n = _payload(spec.kwargs, f"{path}.kwargs", out, is_list=False)
        size += n
    else:
        rec.kwargs_json = payload.EMPTY_OBJECT_JSON
    if size > limits.max_payload_bytes:
        big = "args" if len(rec.args_json) >= len(rec.kwargs_json) else "kwargs"
        out.append(
            Violation(
                field=f"{path}.{big}",
                description=(
                    f"payload is {size} bytes of JSON (args and kwargs together), "
                    f"over the {limits.max_payload_bytes}-byte limit"
                ),
                reason=PAYLOAD_TOO_LARGE,
            )
        )

    # priority
    if spec.priority == task_pb2.PRIORITY_UNSPECIFIED:
        rec.priority = task_pb2.PRIORITY_NORMAL
    elif spec.priority in _PRIORITIES:
        rec.priority = spec.priority
    else:
        out.append(Violation(field=f"{path}.priority", description=f"unknown priority {int(spec.priority)}"))

    # queue
    if spec.queue:
        check_text(out, f"{path}.queue", spec.queue, max_chars=MAX_QUEUE_CHARS)
        rec.queue = spec.queue
    else:
        rec.queue = DEFAULT_QUEUE

    # timeout
    if spec.HasField("timeout"):
        ms = duration_ms(spec.timeout)
        if ms is None:
            out.append(Violation(field=f"{path}.timeout", description="malformed duration"))
        elif ms <= 0:
            out.append(Violation(field=f"{path}.timeout", description="must be positive"))
        elif ms > MAX_TIMEOUT_MS:
            out.append(Violation(field=f"{path}.timeout", description="must be at most 24h"))
        else:
            rec.timeout_ms = ms
    else:
        rec.timeout_ms = 0  # the task's own timeout, else the deployment default

    # max_retries
    if spec.HasField("max_retries"):
        if 0 <= spec.max_retries <= MAX_RETRIES_LIMIT:
            rec.max_retries = spec.max_retries
        else:
            out.append(
                Violation(
                    field=f"{path}.max_retries",
                    description=f"must be between 0 and {MAX_RETRIES_LIMIT}, got {spec.max_retries}",
                )
            )
    else:
        rec.max_retries = -1  # the task's own budget, else the deployment default

    # request_id / parent_id
    if spec.request_id:
        check_text(out, f"{path}.request_id", spec.request_id, max_chars=MAX_REQUEST_ID_CHARS)
        rec.request_id = spec.request_id
    if spec.parent_id:
        canonical = canonical_uuid(spec.parent_id)
        if canonical is None:
            out.append(
                Violation(
                    field=f"{path}.parent_id", description=f"must be a UUID, got {quote(spec.parent_id)}"
                )
            )
        else:
            rec.parent_id = canonical
    else:
        # A top-level task is its own root; a child's root is resolved by the store.
        rec.root_id = rec.id

    # labels
    if spec.labels:
        if len(spec.labels) > MAX_LABELS:
            out.append(
                Violation(
                    field=f"{path}.labels", description=f"at most {MAX_LABELS} labels, got {len(spec.labels)}"
                )
            )
        else:
            for key, value in spec.labels.items():
                kp = payload.key_path(f"{path}.labels", key)
                check_text(out, kp, key, max_chars=MAX_LABEL_KEY_CHARS)
                check_text(out, kp, value, max_chars=MAX_LABEL_VALUE_CHARS)
            rec.labels.update(spec.labels)
    return rec


def _schedule(
    spec: task_pb2.TaskSpec, rec: task_record_pb2.TaskRecord, path: str, now_us: int, out: list[Violation]
) -> None:
    """A future eta/countdown makes the task SCHEDULED with run_at (see core/eta.py)."""
    when = eta.due(spec, now_us)
    out.extend(Violation(field=f"{path}.{f}", description=d) for f, d in when.errors)
    if when.run_at_us:
        rec.run_at_us = when.run_at_us
        if rec.state == task_pb2.TASK_STATE_QUEUED:
            rec.state = task_pb2.TASK_STATE_SCHEDULED


def _payload(
    msg: struct_pb2.ListValue | struct_pb2.Struct,
    path: str,
    out: list[Violation],
    *,
    is_list: bool,
) -> tuple[bytes, int]:
    try:
        if is_list:
            assert isinstance(msg, struct_pb2.ListValue)
            value: payload.JSON = payload.list_to_python(msg, path)
        else:
            assert isinstance(msg, struct_pb2.Struct)
            value = payload.struct_to_python(msg, path)
        text = payload.dumps(value)
    except payload.PayloadError as exc:
        out.append(Violation(field=exc.path or path, description=exc.description))
        return b"", 0
    for bad, is_key in payload.nul_paths(value, text, path):
        what = "key" if is_key else "string"
        out.append(
            Violation(field=bad, description=f"{what} must not contain NUL (\\u0000)", reason=NUL_CHARACTER)
        )
    return text, len(text)


def canonical_uuid(value: str) -> str | None:
    """The canonical lowercase hyphenated form, or None when ``value`` is not a UUID."""
    if len(value) > 64 or not ids.is_uuid(value):
        return None
    return str(uuid.UUID(value))


# --- TaskRecord -> Task --------------------------------------------------------


def record_to_task(rec: task_record_pb2.TaskRecord, *, with_payload: bool = True) -> task_pb2.Task:
    """The public view of a stored record (no lease token, pool id or trace headers)."""
    task = task_pb2.Task(
        id=rec.id,
        name=rec.name,
        priority=rec.priority,
        queue=rec.queue,
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
    )
    if rec.labels:
        task.labels.update(rec.labels)
    if rec.timeout_ms:
        task.timeout.FromMilliseconds(rec.timeout_ms)
    if with_payload:
        try:
            payload.json_to_list(rec.args_json, task.args)
            payload.json_to_struct(rec.kwargs_json, task.kwargs)
            if rec.context_json:
                payload.json_to_struct(rec.context_json, task.context)
            if rec.result_json:
                result = payload.json_to_value(rec.result_json)
                if result is not None:
                    task.result.CopyFrom(result)
        except Exception as exc:  # json_format.ParseError and friends: corrupt storage
            raise errors.internal(f"task {rec.id}: stored JSON does not decode: {exc}") from exc
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


def is_known_state(value: int) -> bool:
    return value in _STATES


def is_known_priority(value: int) -> bool:
    return value in _PRIORITIES


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
