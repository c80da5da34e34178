"""Conversions between database rows and bus messages."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from taskyard.bus.v1 import event_pb2, store_pb2, task_record_pb2
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
    rec = task_record_pb2.TaskRecord(
        id=row["id"],
        name=row["name"],
        args_json=row["args"].encode(),
        kwargs_json=row["kwargs"].encode(),
        priority=row["priority"],
        queue=row["queue"],
        timeout_ms=row["timeout_ms"],
        max_retries=row["max_retries"],
        request_id=row["request_id"],
        parent_id=row["parent_id"],
        root_id=row["root_id"],
        state=STATE_BY_NAME[row["state"]],  # type: ignore[arg-type]
        attempt=row["attempt"],
        result_json=row["result"].encode(),
        created_at_us=row["created_at_us"],
        started_at_us=row["started_at_us"],
        finished_at_us=row["finished_at_us"],
        updated_at_us=row["updated_at_us"],
        worker_id=row["worker_id"],
        cancel_requested=row["cancel_requested"],
        run_at_us=row["run_at_us"],
        lease_token=row["lease_token"],
        pool_id=row["pool_id"],
        resume_requested=row["resume_requested"],
        depends_on=row["depends_on"],
        idempotency_key=row["idempotency_key"],
        context_json=b"" if row["context"] == "{}" else row["context"].encode(),
        cancel_reason=row["cancel_reason"],
        cancel_step=row["cancel_step"],
        rescues=row["rescues"],
        schedule_id=row["schedule_id"],
        idempotency_expires_at_us=row["idempotency_expires_at_us"],
        uncharged_attempts=row["uncharged_attempts"],
        late_reports=row["late_reports"],
        late_attempt=row["late_attempt"],
    )
    labels = _json_map(row["labels"])
    if labels:
        rec.labels.update(labels)
    headers = _json_map(row["trace_headers"])
    if headers:
        rec.trace_headers.update(headers)
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


def queued_ref(row: Mapping[str, Any]) -> store_pb2.QueuedRef:
    return store_pb2.QueuedRef(
        id=row["id"],
        name=row["name"],
        priority=row["priority"],
        queue=row["queue"],
        created_at_us=row["created_at_us"],
    )


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
) -> event_pb2.Event:
    return event_pb2.Event(
        type=type_,
        task_id=task_id,
        state=STATE_BY_NAME.get(state, 0),  # type: ignore[arg-type]
        attempt=attempt,
        name=name,
        at_us=at_us,
        worker_id=worker_id,
        priority=priority,  # type: ignore[arg-type]
    )


_DUE_STATES = frozenset({int(TaskState.SCHEDULED), int(TaskState.RETRYING)})
# A final event carries its record up to this size of result + failure text.
EVENT_RECORD_LIMIT = 64 * 1024


def event_for_record(rec: task_record_pb2.TaskRecord, type_: str | None = None) -> event_pb2.Event:
    ev = event_pb2.Event(
        type=type_ or EVENT_BY_STATE[TaskState(rec.state).name],
        task_id=rec.id,
        state=rec.state,
        attempt=rec.attempt,
        name=rec.name,
        at_us=rec.updated_at_us,
        worker_id=rec.worker_id,
        priority=rec.priority,
        # When a SCHEDULED/RETRYING task becomes due: the scheduler's heap takes it from here.
        run_at_us=rec.run_at_us if rec.state in _DUE_STATES else 0,
    )
    if TaskState(rec.state).is_final and (
        len(rec.result_json) + len(rec.failure.traceback) + len(rec.failure.message) <= EVENT_RECORD_LIMIT
    ):
        ev.record.CopyFrom(rec)
        # Internal fencing data stays inside the store.
        ev.record.lease_token = ""
    return ev


def event_for_row(row: Mapping[str, Any]) -> event_pb2.Event:
    """An event from a short RETURNING row (id, state, attempt, name, priority, worker_id, at_us)."""
    return event(
        EVENT_BY_STATE[row["state"]],
        task_id=row["id"],
        state=row["state"],
        attempt=row["attempt"],
        name=row["name"],
        at_us=row["at_us"],
        worker_id=row["worker_id"],
        priority=row["priority"],
    )
