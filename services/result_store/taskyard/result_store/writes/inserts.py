"""The insert applier (runs inside the group-commit transaction)."""
# Length: apply_insert is every task's insert (the hot path): a statement and its outcomes.

from __future__ import annotations

import time
from typing import Any, NamedTuple

from taskyard.bus.v1 import event_pb2, task_record_pb2, tasks_pb2
from taskyard.core import ids

from ..appliers import Db, Outcome
from ..arrays import text_array
from ..records import (
    EVENT_BY_STATE,
    add_record,
    event,
    event_for_record,
    event_for_record_row,
    record_from_row,
    state_value,
)
from ..transitions import SRC_CANCEL_NOW
from ..uuids import norm_uuid
from . import dependencies, tenant_checks
from .insert_row import TEXT_FIELDS, InsertRow


class _Lease(NamedTuple):
    """A lease the scheduler's fast path asks for at insert."""

    token: str
    pool_id: str
    lease_ms: int
    term: int = 0  # the leading scheduler's, fenced in SQL (0 = unfenced)


_NO_LEASE = _Lease("", "", 0)
_DEFAULT_ONLY = {""}


def alone(reqs: list[tuple[tasks_pb2.InsertTasksRequest, list[InsertRow]]]) -> bool:
    """Whether ``apply_insert`` writes these with one statement (the committer's
    ``Alone``): no row names a parent or dependencies, whose checks, holds and
    releases must stand or fall with the rows, nor a tenant, whose row is held
    until COMMIT (tenant_checks.py)."""
    return not any(
        row.parent_id is not None or row.has_dependencies or row.tenant for _, rows in reqs for row in rows
    )


async def apply_insert(db: Db, reqs: list[tuple[tasks_pb2.InsertTasksRequest, list[InsertRow]]]) -> Outcome:
    rows = [row for _, new_rows in reqs for row in new_rows]
    # A tenant's tasks only while it is known and active (tenant_checks.py): one
    # statement, none for a drain of the default tenant's tasks (most drains).
    named = {row.tenant for row in rows}
    if named != _DEFAULT_ONLY:
        await tenant_checks.check_inserts(db, named)
    # Dependencies and parents must exist, and are held until COMMIT: a cancel
    # or a final committed meanwhile by another store is seen by the statements
    # below, or sees these rows (dependencies.py). One statement, only when named.
    in_batch = await dependencies.check_refs(
        db, rows, [i for _, new_rows in reqs for i in range(len(new_rows))], hold=True
    )
    leases = _fast_path_leases(reqs)
    if rows and leases:
        plan = [leases.get(row.id, _NO_LEASE) for row in rows]
        created = await db.fetch(
            "insert_tasks_leasing",
            **_columns(rows),
            lease_token=text_array([p.token for p in plan]),
            pool_id=text_array([p.pool_id for p in plan]),
            lease_ms=[p.lease_ms for p in plan],
            lease_term=[p.term for p in plan],
        )
    elif rows:
        created = await db.fetch("insert_tasks", **_columns(rows))
    else:
        created = []
    created_by_id = {r["id"]: r for r in created}
    await dependencies.hold_batch_refs(db, in_batch)
    # Children of a parent already cancelled (or being cancelled) are cancelled
    # at once; one statement, only when the batch names parents.
    with_parent = _with_parent(rows, created) if any(row.parent_id is not None for row in rows) else []
    orphans = await _cancel_orphans(db, with_parent)
    # New PENDING rows whose dependencies are already final are decided in this
    # same transaction, so a dependency finishing meanwhile cannot strand them.
    pending = [r["id"] for r in created if r["state"] == "PENDING" and r["id"] not in orphans]
    resolved = await dependencies.resolve_inserted(db, pending)
    changed = {rec.id: rec for rec in resolved.released + resolved.cancelled}
    changed.update(orphans)
    claimed: set[str] = set()
    replies: list[tasks_pb2.InsertTasksReply] = []
    events: list[event_pb2.Event] = []
    leased: list[task_record_pb2.TaskRecord] = []
    # Sampled tasks' stamps (core/hops.py), carried onto their leased records.
    trips = {r.id: r.hops for req, _ in reqs for r in req.tasks if r.hops}
    sampled: list[task_record_pb2.TaskRecord] = []
    dups: list[tuple[tasks_pb2.InsertedTask, InsertRow]] = []
    for _, new_rows in reqs:
        reply = tasks_pb2.InsertTasksReply()
        for new in new_rows:
            tid = new.id
            row = created_by_id.get(tid)
            if row is not None and tid not in claimed:
                claimed.add(tid)
                now = changed.get(tid)
                item = reply.tasks.add(
                    id=tid,
                    state=now.state if now is not None else state_value(row["state"]),
                    created=True,
                    priority=row["priority"],
                    name=row["name"],
                    queue=row["queue"],
                    tenant=new.tenant,
                )
                if (flow := row["flow"]) is not None:
                    item.flow.ParseFromString(flow)
                first = row["state"] if row["state"] in ("SCHEDULED", "PENDING") else "QUEUED"
                events.append(
                    event(
                        EVENT_BY_STATE[first],
                        task_id=tid,
                        state=first,
                        attempt=row["attempt"],
                        name=row["name"],
                        at_us=row["created_at_us"],
                        priority=row["priority"],
                        queue=row["queue"],
                        root_id=row["root_id"],
                    )
                )
                if tid in orphans:
                    events.append(event_for_record(orphans[tid], "task.cancelled"))
                elif row["state"] == "ASSIGNED":  # leased at birth (fast path)
                    rec = add_record(reply.leased, row)
                    leased.append(rec)
                    if tid in trips:
                        rec.hops.extend(trips[tid])
                        sampled.append(rec)
                    events.append(event_for_record_row(row, rec, "task.assigned"))
            else:
                dups.append((reply.tasks.add(id=tid, created=False), new))
        replies.append(reply)
    events.extend(resolved.events)
    if created and _from_an_ended_term(reqs, created[0]["leader_term"]):
        # Its scheduler was deposed and has not noticed yet: the tasks it keeps in
        # its lanes it will never lease (fenced), and the leader loaded its lanes
        # before they were here. The leader reloads on this wake-up instead of at
        # its next fallback poll.
        events.append(event("tasks.available", at_us=time.time_ns() // 1000))
    if dups:
        await _describe_duplicates(db, dups)
    return Outcome(
        replies=list(replies),
        events=events,
        leased=leased,
        finals=resolved.cancelled + list(orphans.values()),
        sampled=sampled,
    )


async def _describe_duplicates(db: Db, dups: list[tuple[tasks_pb2.InsertedTask, InsertRow]]) -> None:
    """Fill each reply item of a row not inserted with the task that was there first."""
    found = await db.fetch(
        "lookup_duplicates",
        ids=list({row.id for _, row in dups}),
        request_ids=list({row.request_id for _, row in dups if row.request_id}),
        idempotency_keys=list({row.idempotency_key for _, row in dups if row.idempotency_key}),
    )
    # Each key is its tenant's own: the same text held by another tenant's task is
    # no duplicate of this row's (0026_tenant_keys.sql), nor is its id.
    by_id = {(r["tenant"], r["id"]): r for r in found}
    by_request = {(r["tenant"], r["request_id"]): r for r in found if r["request_id"]}
    by_key = {(r["tenant"], r["idempotency_key"]): r for r in found if r["idempotency_key"]}
    for item, row in dups:
        # request_id is permanent and wins; then a live idempotency key.
        existing = (
            (by_request.get((row.tenant, row.request_id)) if row.request_id else None)
            or (by_key.get((row.tenant, row.idempotency_key)) if row.idempotency_key else None)
            or by_id.get((row.tenant, row.id))
        )
        if existing is not None:
            item.id = existing["id"]
            item.tenant = existing["tenant"]
            item.state = state_value(existing["state"])  # type: ignore[assignment]
            item.priority = existing["priority"]
            item.name = existing["name"]
            item.queue = existing["queue"]
            if (flow := existing["flow"]) is not None:
                item.flow.ParseFromString(flow)


def _columns(rows: list[InsertRow]) -> dict[str, Any]:
    """The insert statements' parameters: one array per field of ``rows``."""
    cols: dict[str, Any] = dict(zip(InsertRow._fields, map(list, zip(*rows, strict=True)), strict=True))
    for field in TEXT_FIELDS:
        cols[field] = text_array(cols[field])
    if not any(cols["flow"]):
        # No row uses flow control: NULL arrays, which unnest pads with NULLs, so
        # not one element of either column is encoded.
        cols["flow"] = cols["limit_names"] = None
    return cols


def _with_parent(rows: list[InsertRow], created: list[Any]) -> list[str]:
    """The created rows whose record named a parent."""
    has_parent = {row.id: row.parent_id is not None for row in rows}
    return sorted(r["id"] for r in created if has_parent.get(r["id"], False))


async def _cancel_orphans(db: Db, ids: list[str]) -> dict[str, task_record_pb2.TaskRecord]:
    if not ids:
        return {}
    rows = await db.fetch("cancel_orphans", ids=ids, sources=SRC_CANCEL_NOW.db)
    return {rec.id: rec for rec in map(record_from_row, rows)}


def _from_an_ended_term(reqs: list[tuple[tasks_pb2.InsertTasksRequest, list[InsertRow]]], term: int) -> bool:
    """Whether a request of the drain came from a scheduler whose term is over
    (``term`` is the current one; a request's 0 is unfenced)."""
    return any(req.lease_term and req.lease_term != term for req, _ in reqs)


def _fast_path_leases(
    reqs: list[tuple[tasks_pb2.InsertTasksRequest, list[InsertRow]]],
) -> dict[str, _Lease]:
    """task id -> its lease, for the scheduler's fast path."""
    out: dict[str, _Lease] = {}
    for req, _ in reqs:
        if not req.pool_id:
            continue
        for lease in req.leases:
            tid = norm_uuid(lease.task_id)
            if tid is not None and tid not in out:
                token = lease.lease_token or ids.new_lease_token()
                out[tid] = _Lease(token, req.pool_id, req.lease_ms, req.lease_term)
    return out
