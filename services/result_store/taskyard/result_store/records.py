"""Conversions between database rows and bus messages."""

from __future__ import annotations

import json
import operator
from collections.abc import Mapping, Sequence
from itertools import islice
from typing import Any

from google.protobuf.internal.containers import RepeatedCompositeFieldContainer

from taskyard.bus.v1 import event_pb2, lanes_pb2, task_record_pb2
from taskyard.core.states import TaskState
from taskyard.v1 import task_pb2

STATE_BY_NAME: dict[str, int] = {s.name: int(s) for s in TaskState}


def state_value(name: str) -> int:
    return STATE_BY_NAME.get(name, 0)


def _json_map(text: str | None) -> dict[str, str]:
    if not text or text == "{}":
        return {}
    data = json.loads(text)
    if not isinstance(data, dict):
        return {}
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in data.items()}


def record_from_row(row: Mapping[str, Any]) -> task_record_pb2.TaskRecord:
    """A full TaskRecord from a row selected with the ``{{record}}`` columns."""
    return _with_maps(task_record_pb2.TaskRecord(**_record_fields(row)), row)


def add_record(
    records: RepeatedCompositeFieldContainer[task_record_pb2.TaskRecord],
    row: Mapping[str, Any],
    *,
    ordered: bool = False,
) -> task_record_pb2.TaskRecord:
    """``record_from_row`` built in place at the end of ``records`` (a reply's
    repeated field): appending a record built apart would copy it. ``ordered``:
    the row's columns start with ``{{record}}``'s (``in_record_order``)."""
    fields = _ordered_fields(row) if ordered else _record_fields(row)
    return _with_maps(records.add(**fields), row)


# The columns of ``{{record}}`` (sql/tasks.sql), in its order.
RECORD_COLUMNS = (
    "id", "name", "args", "kwargs", "priority", "queue", "timeout_ms", "max_retries", "request_id",
    "parent_id", "root_id", "labels", "state", "attempt", "result", "failure_type", "failure_message",
    "failure_traceback", "failure_attempt", "created_at_us", "started_at_us", "finished_at_us",
    "updated_at_us", "worker_id", "cancel_requested", "run_at_us", "trace_headers", "lease_token",
    "pool_id", "resume_requested", "depends_on", "idempotency_key", "context", "cancel_reason",
    "cancel_step", "rescues", "schedule_id", "idempotency_expires_at_us", "uncharged_attempts",
    "late_reports", "late_attempt", "flow", "redrive_id", "redriven_from_attempt", "tenant",
)  # fmt: skip


def in_record_order(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the rows of one statement start with the ``{{record}}`` columns,
    in order: then a record is read by unpacking a row, not by 41 key lookups."""
    return bool(rows) and tuple(islice(rows[0].keys(), len(RECORD_COLUMNS))) == RECORD_COLUMNS


# A record's plain fields: (position in RECORD_COLUMNS, TaskRecord field, whether
# the column's text goes into a bytes field). The others are read apart: state
# (an enum), context (its empty value is "{}"), labels, trace headers, failure,
# flow (serialized; NULL for a task without flow control).
_TO_BYTES = {"args": "args_json", "kwargs": "kwargs_json", "result": "result_json"}
_APART = frozenset(
    {"state", "context", "labels", "trace_headers", "flow"}
    | {c for c in RECORD_COLUMNS if c.startswith("failure_")}
)
_PLAIN = tuple(
    (i, _TO_BYTES.get(column, column), column in _TO_BYTES)
    for i, column in enumerate(RECORD_COLUMNS)
    if column not in _APART
)
_STATE_AT = RECORD_COLUMNS.index("state")
_CONTEXT_AT = RECORD_COLUMNS.index("context")
_FLOW_AT = RECORD_COLUMNS.index("flow")
_FLOW = task_record_pb2.FlowControl.FromString
_BY_NAME = operator.itemgetter(*RECORD_COLUMNS)


def _fields(values: Sequence[Any]) -> dict[str, Any]:
    """Constructor keywords of a record from its ``{{record}}`` values, in order.

    Only set values go to the constructor: each keyword costs about as much as
    a set field, even a default one, and most of a record's are defaults."""
    kw: dict[str, Any] = {"state": STATE_BY_NAME[values[_STATE_AT]]}
    for i, field, to_bytes in _PLAIN:
        v = values[i]
        if v:
            kw[field] = v.encode() if to_bytes else v
    context = values[_CONTEXT_AT]
    if context != "{}":
        kw["context_json"] = context.encode()
    flow = values[_FLOW_AT]
    if flow is not None:
        kw["flow"] = _FLOW(flow)
    return kw


def _ordered_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """``_fields`` of a row whose columns start with ``RECORD_COLUMNS``: read by position."""
    return _fields(tuple(row.values()))


def _record_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    return _fields(_BY_NAME(row))


def _with_maps(rec: task_record_pb2.TaskRecord, row: Mapping[str, Any]) -> task_record_pb2.TaskRecord:
    # Most rows have neither map: a look at the text spares the call.
    labels = row["labels"]
    if labels and labels != "{}":
        rec.labels.update(_json_map(labels))
    headers = row["trace_headers"]
    if headers and headers != "{}":
        rec.trace_headers.update(_json_map(headers))
    if row["failure_type"] is not None or row["failure_message"] is not None:
        rec.failure.CopyFrom(
            task_pb2.TaskFailure(
                type=row["failure_type"] or "",
                message=row["failure_message"] or "",
                traceback=row["failure_traceback"] or "",
                attempt=row["failure_attempt"] or 0,
            )
        )
    return rec


def queued_ref(row: Mapping[str, Any]) -> lanes_pb2.QueuedRef:
    """A ref from a row with id, name, priority, queue, created_at_us, flow and tenant
    (the scheduler's lanes share a lane by tenant; a row without it is the default's)."""
    ref = lanes_pb2.QueuedRef(
        id=row["id"],
        name=row["name"],
        priority=row["priority"],
        queue=row["queue"],
        created_at_us=row["created_at_us"],
        tenant=row.get("tenant") or "",
    )
    if (flow := row["flow"]) is not None:
        ref.flow.ParseFromString(flow)
    return ref


def record_queued_ref(rec: task_record_pb2.TaskRecord) -> lanes_pb2.QueuedRef:
    """``queued_ref`` of a row already read into a record."""
    ref = lanes_pb2.QueuedRef(
        id=rec.id,
        name=rec.name,
        priority=rec.priority,
        queue=rec.queue,
        created_at_us=rec.created_at_us,
        tenant=rec.tenant,
    )
    if rec.HasField("flow"):
        ref.flow.CopyFrom(rec.flow)
    return ref


# Event types by the state a change leads to.
EVENT_BY_STATE: dict[str, str] = {
    "PENDING": "task.queued",
    "QUEUED": "task.queued",
    "SCHEDULED": "task.scheduled",
    "ASSIGNED": "task.assigned",
    "RUNNING": "task.started",
    "SUCCESS": "task.succeeded",
    "FAILURE": "task.failed",
    "RETRYING": "task.retrying",
    "CANCELLED": "task.cancelled",
}


def event(
    type_: str,
    *,
    task_id: str = "",
    state: str = "",
    attempt: int = 0,
    name: str = "",
    at_us: int = 0,
    worker_id: str = "",
    priority: int = 0,
    queue: str = "",
    root_id: str = "",
) -> event_pb2.Event:
    # Unset values stay out of the constructor (each keyword costs, even a default).
    kw: dict[str, Any] = {"type": type_}
    if task_id:
        kw["task_id"] = task_id
    if state:
        kw["state"] = STATE_BY_NAME.get(state, 0)
    if attempt:
        kw["attempt"] = attempt
    if name:
        kw["name"] = name
    if at_us:
        kw["at_us"] = at_us
    if worker_id:
        kw["worker_id"] = worker_id
    if priority:
        kw["priority"] = priority
    if queue:
        kw["queue"] = queue
    if root_id:
        kw["root_id"] = root_id
    return event_pb2.Event(**kw)


_DUE_STATES = frozenset({int(TaskState.SCHEDULED), int(TaskState.RETRYING)})
_FINAL_STATES = frozenset(int(s) for s in TaskState if s.is_final)
_EVENT_BY_VALUE: dict[int, str] = {int(s): EVENT_BY_STATE[s.name] for s in TaskState}
# A final event carries its record up to this size of result + failure text.
EVENT_RECORD_LIMIT = 64 * 1024


def event_for_record(rec: task_record_pb2.TaskRecord, type_: str | None = None) -> event_pb2.Event:
    state = rec.state
    kw: dict[str, Any] = {
        "type": type_ or _EVENT_BY_VALUE[state],
        "task_id": rec.id,
        "state": state,
        "attempt": rec.attempt,
        "name": rec.name,
        "at_us": rec.updated_at_us,
        "queue": rec.queue,
    }
    if root_id := rec.root_id:
        kw["root_id"] = root_id
    if worker_id := rec.worker_id:
        kw["worker_id"] = worker_id
    if priority := rec.priority:
        kw["priority"] = priority
    if state in _DUE_STATES:
        # When a SCHEDULED/RETRYING task becomes due: the scheduler's heap takes it from here.
        kw["run_at_us"] = rec.run_at_us
    ev = event_pb2.Event(**kw)
    if state in _FINAL_STATES:
        failure = rec.failure
        if len(rec.result_json) + len(failure.traceback) + len(failure.message) <= EVENT_RECORD_LIMIT:
            ev.record.CopyFrom(rec)
            if rec.lease_token:
                # Internal fencing data stays inside the store.
                ev.record.lease_token = ""
    return ev


def event_for_record_row(
    row: Mapping[str, Any], rec: task_record_pb2.TaskRecord, type_: str | None = None
) -> event_pb2.Event:
    """``event_for_record(rec, type_)`` for ``rec`` built from ``row``: the
    event's fields come from the row (cheaper to read than the record's)."""
    state = STATE_BY_NAME[row["state"]]
    ev = event_pb2.Event(**_event_fields(row, state, type_))
    if state in _FINAL_STATES and _fits_event(row):
        ev.record.CopyFrom(rec)
        if row["lease_token"]:
            # Internal fencing data stays inside the store.
            ev.record.lease_token = ""
    return ev


def record_and_event(
    row: Mapping[str, Any], type_: str | None = None, *, ordered: bool = False
) -> tuple[task_record_pb2.TaskRecord, event_pb2.Event]:
    """``record_from_row(row)`` and its ``event_for_record_row``. A final
    event's record is built once, inside the event, and returned as the record
    too (no copy): the two are the same when the row holds no lease token.
    ``ordered``: as for ``add_record``."""
    state = STATE_BY_NAME[row["state"]]
    fields = _ordered_fields(row) if ordered else _record_fields(row)
    if state in _FINAL_STATES and not row["lease_token"] and _fits_event(row):
        ev = event_pb2.Event(**_event_fields(row, state, type_), record=fields)
        return _with_maps(ev.record, row), ev
    rec = _with_maps(task_record_pb2.TaskRecord(**fields), row)
    return rec, event_for_record_row(row, rec, type_)


def _event_fields(row: Mapping[str, Any], state: int, type_: str | None) -> dict[str, Any]:
    kw: dict[str, Any] = {
        "type": type_ or _EVENT_BY_VALUE[state],
        "task_id": row["id"],
        "state": state,
        "queue": row["queue"],
    }
    if v := row["root_id"]:
        kw["root_id"] = v
    if v := row["attempt"]:
        kw["attempt"] = v
    if v := row["name"]:
        kw["name"] = v
    if v := row["updated_at_us"]:
        kw["at_us"] = v
    if v := row["worker_id"]:
        kw["worker_id"] = v
    if v := row["priority"]:
        kw["priority"] = v
    if state in _DUE_STATES and (v := row["run_at_us"]):
        kw["run_at_us"] = v
    return kw


def _fits_event(row: Mapping[str, Any]) -> bool:
    """Whether a final event carries the record: result + failure text within
    EVENT_RECORD_LIMIT (the result's UTF-8 bytes, as in ``result_json``)."""
    result = row["result"]
    size = len(result) if result.isascii() else len(result.encode())
    if row["failure_type"] is not None or row["failure_message"] is not None:  # the record's failure is set
        size += len(row["failure_traceback"] or "") + len(row["failure_message"] or "")
    return size <= EVENT_RECORD_LIMIT


def event_for_row(row: Mapping[str, Any], state: str | None = None) -> event_pb2.Event:
    """An event from a short RETURNING row (id, state, attempt, name, priority,
    worker_id, at_us, queue, root_id); ``state`` for a row that does not return its own."""
    state = state or row["state"]
    return event(
        EVENT_BY_STATE[state],
        task_id=row["id"],
        state=state,
        attempt=row["attempt"],
        name=row["name"],
        at_us=row["at_us"],
        worker_id=row["worker_id"],
        priority=row["priority"],
        queue=row["queue"],
        root_id=row["root_id"],
    )
