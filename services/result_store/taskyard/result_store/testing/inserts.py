"""InsertTasks of the in-memory store, as ``inserts.apply_insert`` and the
``insert_tasks*`` statements do it: rows already checked by ``validate_insert``."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Container

from taskyard.bus.v1 import task_record_pb2, tasks_pb2
from taskyard.core import errors, ids
from taskyard.core.errors import FieldViolation
from taskyard.core.states import TaskState
from taskyard.v1 import task_pb2

from ..transitions import SRC_CANCEL_NOW
from ..uuids import norm_uuid
from ..writes.insert_row import InsertRow
from .rows import Row, Tasks, jsonb_text, move, wire_priority, wire_state

S = TaskState


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Lease:
    """A lease the scheduler's fast path asks for at insert."""

    token: str
    lease_ms: int


def apply_insert(
    tasks: Tasks,
    req: tasks_pb2.InsertTasksRequest,
    rows: list[InsertRow],
    *,
    now_us: int,
    draining: Container[str],
) -> tasks_pb2.InsertTasksReply:
    _check_parents(tasks, rows)
    tasks.free_expired_keys({row.idempotency_key for row in rows if row.idempotency_key}, now_us)
    leases = _fast_path_leases(req) if req.pool_id and req.pool_id not in draining else {}
    # A child's root is read before the batch goes in, as the statement's snapshot reads it.
    roots = {row.id: _root_of(tasks, row) for row in rows}
    reply = tasks_pb2.InsertTasksReply()
    created: list[Row] = []
    dups: list[tuple[tasks_pb2.InsertedTask, InsertRow]] = []
    for row in rows:
        new = Row(_record(row, roots[row.id], now_us))
        lease = leases.get(row.id)
        if lease is not None and row.state == S.QUEUED.name:
            new.rec.state = wire_state(S.ASSIGNED)
            new.rec.lease_token = lease.token
            new.rec.pool_id = req.pool_id
            new.lease_expires_us = now_us + lease.lease_ms * 1000
        item = reply.tasks.add(id=row.id)
        if tasks.add(new):
            created.append(new)
            item.created = True
        else:
            dups.append((item, row))
    orphans = _cancel_orphans(tasks, created, now_us)
    for item, new in zip((i for i in reply.tasks if i.created), created, strict=True):
        _describe(item, new.rec)
        if new.state is S.ASSIGNED and new.id not in orphans:
            reply.leased.append(new.copy())
    for item, row in dups:
        first = tasks.first_of(request_id=row.request_id, key=row.idempotency_key, task_id=row.id)
        if first is not None:
            item.id = first.id
            _describe(item, first.rec)
    return reply


def _describe(item: tasks_pb2.InsertedTask, rec: task_record_pb2.TaskRecord) -> None:
    item.state = rec.state
    item.priority = rec.priority
    item.name = rec.name
    item.queue = rec.queue
    if rec.HasField("flow"):
        item.flow.CopyFrom(rec.flow)


def _record(row: InsertRow, root_id: str, now_us: int) -> task_record_pb2.TaskRecord:
    rec = _plain_record(row, root_id, now_us)
    if row.flow is not None:
        rec.flow.ParseFromString(row.flow)
    return rec


def _plain_record(row: InsertRow, root_id: str, now_us: int) -> task_record_pb2.TaskRecord:
    return task_record_pb2.TaskRecord(
        id=row.id,
        name=row.name,
        args_json=jsonb_text(row.args).encode(),
        kwargs_json=jsonb_text(row.kwargs).encode(),
        priority=wire_priority(row.priority),
        queue=row.queue,
        timeout_ms=row.timeout_ms,
        max_retries=row.max_retries,
        request_id=row.request_id,
        parent_id=row.parent_id or "",
        root_id=root_id,
        labels=json.loads(row.labels),
        state=wire_state(TaskState[row.state]),
        attempt=row.attempt,
        created_at_us=row.created_at_us if row.created_at_us > 0 else now_us,
        updated_at_us=now_us,
        run_at_us=max(0, row.run_at_us),
        trace_headers=json.loads(row.trace_headers),
        depends_on=row.dependencies(),
        idempotency_key=row.idempotency_key,
        idempotency_expires_at_us=row.idempotency_expires_at_us if row.idempotency_key else 0,
    )


def _root_of(tasks: Tasks, row: InsertRow) -> str:
    if row.root_id:
        return row.root_id
    parent = tasks.get(row.parent_id)
    if parent is not None and parent.rec.root_id:
        return parent.rec.root_id
    return row.parent_id or ""


def _check_parents(tasks: Tasks, rows: list[InsertRow]) -> None:
    """Refuse records whose parent does not exist (nor comes in the same batch)."""
    batch = {row.id for row in rows}
    violations = [
        FieldViolation(field=f"tasks[{i}].parent_id", description=f"no task {row.parent_id}")
        for i, row in enumerate(rows)
        if row.parent_id and row.parent_id not in batch and tasks.get(row.parent_id) is None
    ]
    if violations:
        raise errors.invalid(violations, "; ".join(f"{v.field}: {v.description}" for v in violations[:3]))


def _cancel_orphans(tasks: Tasks, created: list[Row], now_us: int) -> set[str]:
    """New children of a parent already cancelled, or being cancelled while it
    runs, are cancelled at once: the parent's cancel swept its descendants before
    they existed."""
    orphans: set[str] = set()
    for row in created:
        parent = tasks.get(row.rec.parent_id)
        if parent is None or row.state not in SRC_CANCEL_NOW:
            continue
        if parent.state is S.CANCELLED or (parent.rec.cancel_requested and parent.state is S.RUNNING):
            move(row, S.CANCELLED, now_us)
            row.rec.cancel_reason = f"parent {parent.id} cancelled"
            row.rec.cancel_step = task_pb2.CANCEL_STEP_NOT_STARTED
            row.rec.finished_at_us = now_us
            row.rec.pool_id = ""
            row.clear_lease()
            orphans.add(row.id)
    return orphans


def _fast_path_leases(req: tasks_pb2.InsertTasksRequest) -> dict[str, _Lease]:
    out: dict[str, _Lease] = {}
    for lease in req.leases:
        tid = norm_uuid(lease.task_id)
        if tid is not None and tid not in out:
            out[tid] = _Lease(token=lease.lease_token or ids.new_lease_token(), lease_ms=req.lease_ms)
    return out
