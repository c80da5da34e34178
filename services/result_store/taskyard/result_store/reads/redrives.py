"""Redrives as FailureService shows them: their rows and items (sql/redrives.sql), listed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import asyncpg
from google.protobuf import json_format

from taskyard.bus.v1 import failures_pb2 as bus
from taskyard.bus.v1 import tenants_pb2
from taskyard.core import errors
from taskyard.core import failure_filters as rules
from taskyard.core.errors import FieldViolation
from taskyard.v1 import failure_service_pb2 as fs

from .. import scopes
from ..appliers import Stats
from ..cursors import _int_part, _uuid_part, decode_cursor, encode_cursor
from ..queries import bind
from ..uuids import norm_uuid
from .dead_letters import page_size

REDRIVE_NOT_FOUND = "REDRIVE_NOT_FOUND"


def redrive_id(raw: str, field: str = "id") -> str:
    """A redrive's id (the store makes UUIDs), else INVALID_ARGUMENT."""
    rid = norm_uuid(raw) if raw else None
    if rid is None:
        raise errors.invalid([FieldViolation(field=field, description="must be a redrive id (a UUID)")])
    return rid


def not_found(rid: str) -> errors.TaskyardError:
    return errors.TaskyardError(errors.Code.NOT_FOUND, REDRIVE_NOT_FOUND, f"redrive {rid} not found")


def redrive_from_row(row: Mapping[str, Any]) -> fs.Redrive:
    """A Redrive from a row with the ``{{redrive_columns}}``."""
    redrive = fs.Redrive(
        id=row["id"],
        rate=row["rate"],
        state=row["state"],
        created_by=row["created_by"],
        matched=row["matched"],
        requeued=row["requeued"],
        skipped=row["skipped"],
        note=row["note"],
    )
    json_format.Parse(row["filter"], redrive.filter)
    for us, ts in (
        (row["created_at_us"], redrive.created_at),
        (row["updated_at_us"], redrive.updated_at),
        (row["finished_at_us"], redrive.finished_at),
    ):
        if us:
            ts.FromMicroseconds(us)
    return redrive


def filter_json(f: fs.FailureFilter) -> str:
    """How a redrive keeps its filter (``redrive_from_row`` reads it back)."""
    return json_format.MessageToJson(f, indent=None)


async def get_redrive(
    conn: asyncpg.Pool | asyncpg.Connection, rid: str, scope: tenants_pb2.TenantScope
) -> fs.Redrive:
    """The redrive ``rid`` of ``scope``'s tenant; NOT_FOUND for another tenant's, as for a missing one."""
    row = await conn.fetchrow(*bind("get_redrive", id=rid, **scopes.params(scope)))
    if row is None:
        raise not_found(rid)
    return redrive_from_row(row)


async def list_redrives(
    pool: asyncpg.Pool, stats: Stats, req: bus.RedriveListRequest
) -> bus.RedriveListReply:
    """Redrives newest first, or (``items`` set) one redrive's items in the order they are taken."""
    reply = bus.RedriveListReply()
    if req.HasField("items"):
        await _items(pool, stats, req.items, reply.items, req.scope)
        return reply
    r = req.redrives
    limit = page_size(r.page_size)
    after_us: int | None = None
    after_id: str | None = None
    if r.page_token:
        us, rid = decode_cursor(r.page_token, "r1", 2, "page_token")
        after_us, after_id = _int_part(us, "page_token"), _uuid_part(rid, "page_token")
    stats.statements += 1
    rows = await pool.fetch(
        *bind(
            "list_redrives", after_us=after_us, after_id=after_id, limit=limit + 1, **scopes.params(req.scope)
        )
    )
    reply.redrives.redrives.extend(redrive_from_row(row) for row in rows[:limit])
    if len(rows) > limit:
        last = rows[limit - 1]
        reply.redrives.next_page_token = encode_cursor("r1", last["created_at_us"], last["id"])
    return reply


async def _items(
    pool: asyncpg.Pool,
    stats: Stats,
    r: fs.ListRedriveItemsRequest,
    out: fs.ListRedriveItemsResponse,
    scope: tenants_pb2.TenantScope,
) -> None:
    rid = redrive_id(r.id)
    limit = page_size(r.page_size)
    after_seq = 0
    if r.page_token:
        (seq,) = decode_cursor(r.page_token, "i1", 1, "page_token")
        after_seq = _int_part(seq, "page_token")
    stats.statements += 1
    rows = await pool.fetch(
        *bind("list_redrive_items", id=rid, after_seq=after_seq, limit=limit + 1, **scopes.params(scope))
    )
    if not rows and not r.page_token:
        await get_redrive(pool, rid, scope)  # NOT_FOUND for an unknown redrive (or another tenant's)
    for row in rows[:limit]:
        item = out.items.add(
            task_id=row["task_id"],
            outcome=row["outcome"],
            failed_attempt=row["failed_attempt"],
            new_attempt=row["new_attempt"],
            detail=row["detail"],
        )
        if row["at_us"]:
            item.at.FromMicroseconds(row["at_us"])
    if len(rows) > limit:
        out.next_page_token = encode_cursor("i1", rows[limit - 1]["seq"])


async def active_redrives(
    pool: asyncpg.Pool, stats: Stats, req: bus.ActiveRedrivesRequest
) -> bus.ActiveRedrivesReply:
    stats.statements += 1
    # Bounded: a store has at most that many RUNNING or PAUSED (writes/redrives.py).
    rows = await pool.fetch(*bind("active_redrives", limit=rules.MAX_ACTIVE_REDRIVES))
    return bus.ActiveRedrivesReply(redrives=[redrive_from_row(row) for row in rows])
