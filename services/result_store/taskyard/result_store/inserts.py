"""The insert applier (runs inside the group-commit transaction)."""

from __future__ import annotations

from typing import Any

from taskyard.bus.v1 import event_pb2, store_pb2, task_record_pb2
from taskyard.core import ids

from . import dependencies
from .committer import Db, Outcome
from .records import (
    EVENT_BY_STATE,
    add_record,
    event,
    event_for_record,
    event_for_record_row,
    record_from_row,
    state_value,
)
from .transitions import SRC_CANCEL_NOW
from .validation import norm_uuid, text_array


async def apply_insert(
    db: Db, reqs: list[tuple[store_pb2.InsertTasksRequest, list[tuple[Any, ...]]]]
) -> Outcome:
    rows = [row for _, params in reqs for row in params]
    # Graph slice: dependencies and parents must exist (one statement, only when named).
    await dependencies.check_refs(db, rows, [i for _, params in reqs for i in range(len(params))])
    leases = _fast_path_leases(reqs)
    if rows and leases:
        cols = _columns(rows)
        plan = [leases.get(row[0], ("", "", 0)) for row in rows]
        cols += [text_array([p[0] for p in plan]), text_array([p[1] for p in plan]), [p[2] for p in plan]]
        created = await db.fetch("insert_tasks_leasing", *cols)
    elif rows:
        created = await db.fetch("insert_tasks", *_columns(rows))
    else:
        created = []
    created_by_id = {r["id"]: r for r in created}
    # Children of a parent already cancelled (or being cancelled) are cancelled
    # at once; one statement, only when the batch names parents.
    with_parent = (
        [r["id"] for r, p in zip(created, _params_of(rows, created), strict=True) if p]
        if any(row[9] is not None for row in rows)
        else []
    )
    orphans = await _cancel_orphans(db, with_parent)
    # New PENDING rows whose dependencies are already final are decided in this
    # same transaction, so a dependency finishing meanwhile cannot strand them.
    pending = [r["id"] for r in created if r["state"] == "PENDING" and r["id"] not in orphans]
    resolved = await dependencies.resolve_inserted(db, pending)
    changed = {rec.id: rec for rec in resolved.released + resolved.cancelled}
    changed.update(orphans)
    claimed: set[str] = set()
    replies: list[store_pb2.InsertTasksReply] = []
    events: list[event_pb2.Event] = []
    leased: list[task_record_pb2.TaskRecord] = []
    # Sampled tasks' stamps (core/hops.py), carried onto their leased records.
    trips = {r.id: r.hops for req, _ in reqs for r in req.tasks if r.hops}
    sampled: list[task_record_pb2.TaskRecord] = []
    dups: list[tuple[store_pb2.InsertedTask, str, str, str]] = []
    for _, params in reqs:
        reply = store_pb2.InsertTasksReply()
        for p in params:
            tid, request_id = p[0], p[8]
            row = created_by_id.get(tid)
            if row is not None and tid not in claimed:
                claimed.add(tid)
                now = changed.get(tid)
                reply.tasks.add(
                    id=tid,
                    state=now.state if now is not None else state_value(row["state"]),
                    created=True,
                    priority=row["priority"],
                    name=row["name"],
                    queue=row["queue"],
                )
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
                item = reply.tasks.add(id=tid, created=False)
                dups.append((item, tid, request_id, p[18]))
        replies.append(reply)
    events.extend(resolved.events)
    if dups:
        found = await db.fetch(
            "lookup_duplicates",
            list({d[1] for d in dups}),
            list({d[2] for d in dups if d[2]}),
            list({d[3] for d in dups if d[3]}),
        )
        by_id = {r["id"]: r for r in found}
        by_request = {r["request_id"]: r for r in found if r["request_id"]}
        by_key = {r["idempotency_key"]: r for r in found if r["idempotency_key"]}
        for item, tid, request_id, key in dups:
            # request_id is permanent and wins; then a live idempotency key.
            existing = (
                (by_request.get(request_id) if request_id else None)
                or (by_key.get(key) if key else None)
                or by_id.get(tid)
            )
            if existing is not None:
                item.id = existing["id"]
                item.state = state_value(existing["state"])  # type: ignore[assignment]
                item.priority = existing["priority"]
                item.name = existing["name"]
                item.queue = existing["queue"]
    return Outcome(
        replies=list(replies),
        events=events,
        leased=leased,
        finals=resolved.cancelled + list(orphans.values()),
        sampled=sampled,
    )


# The parameters the insert statements take as one array literal (text_array).
_TEXT_COLUMNS = (1, 5, 8, 12, 18)


def _columns(rows: list[tuple[Any, ...]]) -> list[Any]:
    """The insert statements' parameters: one array per column of ``rows``."""
    cols: list[Any] = [list(c) for c in zip(*rows, strict=True)]
    for i in _TEXT_COLUMNS:
        cols[i] = text_array(cols[i])
    return cols


def _params_of(rows: list[tuple[Any, ...]], created: list[Any]) -> list[bool]:
    """For each created row, whether its request named a parent (params[9])."""
    has_parent = {row[0]: row[9] is not None for row in rows}
    return [has_parent.get(r["id"], False) for r in created]


async def _cancel_orphans(db: Db, ids: list[str]) -> dict[str, task_record_pb2.TaskRecord]:
    if not ids:
        return {}
    rows = await db.fetch("cancel_orphans", ids, SRC_CANCEL_NOW)
    return {rec.id: rec for rec in map(record_from_row, rows)}


def _fast_path_leases(
    reqs: list[tuple[store_pb2.InsertTasksRequest, list[tuple[Any, ...]]]],
) -> dict[str, tuple[str, str, int]]:
    """task id -> (lease token, pool, lease ms) for the scheduler's fast path."""
    out: dict[str, tuple[str, str, int]] = {}
    for req, _ in reqs:
        if not req.pool_id:
            continue
        for lease in req.leases:
            tid = norm_uuid(lease.task_id)
            if tid is not None and tid not in out:
                out[tid] = (lease.lease_token or ids.new_lease_token(), req.pool_id, req.lease_ms)
    return out
