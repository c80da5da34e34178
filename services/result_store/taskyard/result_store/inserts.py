"""The insert applier (runs inside the group-commit transaction)."""

from __future__ import annotations

from typing import Any

from taskyard.bus.v1 import event_pb2, store_pb2, task_record_pb2
from taskyard.core import ids

from .committer import Db, Outcome
from .records import event, event_for_record, record_from_row, state_value
from .validation import norm_uuid


async def apply_insert(
    db: Db, reqs: list[tuple[store_pb2.InsertTasksRequest, list[tuple[Any, ...]]]]
) -> Outcome:
    rows = [row for _, params in reqs for row in params]
    leases = _fast_path_leases(reqs)
    if rows and leases:
        cols = [list(c) for c in zip(*rows, strict=True)]
        plan = [leases.get(row[0], ("", "", 0)) for row in rows]
        cols += [[p[0] for p in plan], [p[1] for p in plan], [p[2] for p in plan]]
        created = await db.fetch("insert_tasks_leasing", *cols)
    elif rows:
        created = await db.fetch("insert_tasks", *[list(c) for c in zip(*rows, strict=True)])
    else:
        created = []
    created_by_id = {r["id"]: r for r in created}
    claimed: set[str] = set()
    replies: list[store_pb2.InsertTasksReply] = []
    events: list[event_pb2.Event] = []
    leased: list[task_record_pb2.TaskRecord] = []
    dups: list[tuple[store_pb2.InsertedTask, str, str]] = []
    for _, params in reqs:
        reply = store_pb2.InsertTasksReply()
        for p in params:
            tid, request_id = p[0], p[8]
            row = created_by_id.get(tid)
            if row is not None and tid not in claimed:
                claimed.add(tid)
                reply.tasks.add(
                    id=tid,
                    state=state_value(row["state"]),
                    created=True,
                    priority=row["priority"],
                    name=row["name"],
                    queue=row["queue"],
                )
                events.append(
                    event(
                        "task.scheduled" if row["state"] == "SCHEDULED" else "task.queued",
                        task_id=tid,
                        state="SCHEDULED" if row["state"] == "SCHEDULED" else "QUEUED",
                        attempt=row["attempt"],
                        name=row["name"],
                        at_us=row["created_at_us"],
                        priority=row["priority"],
                    )
                )
                if row["state"] == "ASSIGNED":  # leased at birth (fast path)
                    rec = record_from_row(row)
                    reply.leased.append(rec)
                    leased.append(rec)
                    events.append(event_for_record(rec, "task.assigned"))
            else:
                item = reply.tasks.add(id=tid, created=False)
                dups.append((item, tid, request_id))
        replies.append(reply)
    if dups:
        found = await db.fetch(
            "lookup_duplicates",
            list({tid for _, tid, _ in dups}),
            list({rid for _, _, rid in dups if rid}),
        )
        by_id = {r["id"]: r for r in found}
        by_request = {r["request_id"]: r for r in found if r["request_id"]}
        for item, tid, request_id in dups:
            existing = (by_request.get(request_id) if request_id else None) or by_id.get(tid)
            if existing is not None:
                item.id = existing["id"]
                item.state = state_value(existing["state"])  # type: ignore[assignment]
                item.priority = existing["priority"]
                item.name = existing["name"]
                item.queue = existing["queue"]
    return Outcome(replies=list(replies), events=events, leased=leased)


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
