"""Dead letters and their groups (FailureService's reads, sql/dead_letters.sql).

A dead letter is a task whose failure is final (migrations/0018_dead_letters.sql
marks it where the failure is written). A ``FailureFilter`` picks dead letters:
the conjunction of what is set; the store checks it again with the gateway's
rules (core/failure_filters.py), since any sender of the bus may reach it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import asyncpg

from taskyard.bus.v1 import failures_pb2 as bus
from taskyard.bus.v1 import tenants_pb2
from taskyard.core import errors, tenants
from taskyard.core import failure_filters as rules
from taskyard.core.errors import FieldViolation
from taskyard.v1 import failure_service_pb2 as fs
from taskyard.v1 import task_pb2

from .. import scopes
from ..appliers import Stats
from ..cursors import _int_part, _uuid_part, decode_cursor, encode_cursor
from ..queries import bind
from ..records import _json_map

# The limits failure_service.proto states (core/failure_filters.py).
DEFAULT_PAGE_SIZE = rules.DEFAULT_PAGE_SIZE
MAX_PAGE_SIZE = rules.MAX_PAGE_SIZE
# Ids a group shows, and dead letters a dry run shows.
GROUP_SAMPLE = 5
SAMPLE = 10
# ErrorInfo.reason of an unknown group.
GROUP_NOT_FOUND = "FAILURE_GROUP_NOT_FOUND"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Filter:
    """A checked ``FailureFilter`` as the parameters of ``{{dead_letter_filter}}``:
    ``None`` (SQL NULL) for a time not set, so any instant given, the epoch
    included, is a condition."""

    group_id: str = ""
    queue: str = ""
    name: str = ""
    failed_after_us: int | None = None
    failed_before_us: int | None = None
    labels: str = "{}"
    task_ids: tuple[str, ...] = ()
    reason: int = 0
    # Leave out the dead letters pending in an active redrive (a new redrive's set).
    not_pending: bool = False
    # Whose dead letters (scopes.py): the default tenant's unless said otherwise.
    all_tenants: bool = False
    tenant: str = ""

    def params(self) -> dict[str, Any]:
        return {
            "all_tenants": self.all_tenants,
            "tenant": self.tenant,
            "group_id": self.group_id,
            "queue": self.queue,
            "name": self.name,
            "failed_after_us": self.failed_after_us,
            "failed_before_us": self.failed_before_us,
            "labels": self.labels,
            "task_ids": list(self.task_ids),
            "reason": self.reason,
            "not_pending": self.not_pending,
        }


def check_filter(
    f: fs.FailureFilter, *, scope: tenants_pb2.TenantScope, groups: bool = False, path: str = "filter"
) -> Filter:
    """``f`` as parameters, checked by the gateway's rules (core/failure_filters.py: one
    set of rules, the store's second look included); INVALID_ARGUMENT naming the fields
    otherwise. ``groups``: ListFailureGroups' reading (group_id and task_ids ignored,
    nothing set = every group). ``scope``: whose dead letters; its tenant's queue is
    named as the tenant knows it, and matched qualified (core/tenants.py)."""
    owner = scopes.owner(scope)
    if owner and f.queue:
        bare = fs.FailureFilter()
        bare.CopyFrom(f)  # a copy: the caller's filter stays as given
        bare.queue = tenants.strip(owner, f.queue)
        f = bare
    checked = rules.check_filter(f, path, groups=groups)
    after = checked.failed_after.ToMicroseconds() if checked.HasField("failed_after") else None
    before = checked.failed_before.ToMicroseconds() if checked.HasField("failed_before") else None
    return Filter(
        group_id=checked.group_id,
        queue=tenants.qualify(owner, checked.queue.strip()) if checked.queue.strip() else "",
        name=checked.name.strip(),
        failed_after_us=after,
        failed_before_us=before,
        labels=json.dumps(dict(checked.labels), sort_keys=True) if checked.labels else "{}",
        task_ids=tuple(dict.fromkeys(checked.task_ids)),
        reason=checked.reason,
        all_tenants=scope.all,
        tenant=scope.tenant,
    )


def page_size(value: int) -> int:
    if not 0 <= value <= MAX_PAGE_SIZE:
        raise errors.invalid(
            [FieldViolation(field="page_size", description=f"must be between 1 and {MAX_PAGE_SIZE} (0: 100)")]
        )
    return value or DEFAULT_PAGE_SIZE


async def require_known_group(conn: asyncpg.Pool | asyncpg.Connection, f: Filter) -> None:
    """NOT_FOUND unless a dead letter or a failure of ``f``'s tenant has ever had its group."""
    group_id = f.group_id
    known = await conn.fetchval(
        *bind("failure_group_known", group_id=group_id, all_tenants=f.all_tenants, tenant=f.tenant)
    )
    if not known:
        raise errors.TaskyardError(
            errors.Code.NOT_FOUND, GROUP_NOT_FOUND, f"failure group {group_id} not found"
        )


def dead_letter(row: Mapping[str, Any]) -> fs.DeadLetter:
    """A DeadLetter from a row of ``dead_letters``."""
    item = fs.DeadLetter(
        task_id=row["id"],
        queue=row["queue"],
        name=row["name"],
        reason=row["dead_letter_reason"],
        group_id=row["group_id"],
        redrives=row["redrives"],
        failure=task_pb2.TaskFailure(
            type=row["type"],
            message=row["message"],
            traceback=row["traceback"],
            attempt=row["attempt"],
            group_id=row["group_id"],
        ),
    )
    if row["failed_at_us"]:
        item.failure.failed_at.FromMicroseconds(row["failed_at_us"])
    if labels := _json_map(row["labels"]):
        item.labels.update(labels)
    return item


async def read_dead_letters(
    conn: asyncpg.Pool | asyncpg.Connection,
    f: Filter,
    *,
    limit: int,
    after_us: int | None = None,
    after_id: str | None = None,
) -> list[asyncpg.Record]:
    rows: list[asyncpg.Record] = await conn.fetch(
        *bind("dead_letters", **f.params(), after_us=after_us, after_id=after_id, limit=limit)
    )
    return rows


async def list_dead_letters(
    pool: asyncpg.Pool, stats: Stats, req: bus.DeadLettersRequest
) -> bus.DeadLettersReply:
    r = req.request
    f = check_filter(r.filter, scope=req.scope)
    limit = page_size(r.page_size)
    after_us: int | None = None
    after_id: str | None = None
    if r.page_token:
        us, tid = decode_cursor(r.page_token, "d1", 2, "page_token")
        after_us, after_id = _int_part(us, "page_token"), _uuid_part(tid, "page_token")
    stats.statements += 1
    rows = await read_dead_letters(pool, f, limit=limit + 1, after_us=after_us, after_id=after_id)
    if not rows and f.group_id and not r.page_token:
        await require_known_group(pool, f)
    reply = bus.DeadLettersReply()
    out = reply.response
    out.failures.extend(dead_letter(row) for row in rows[:limit])
    if len(rows) > limit:
        last = rows[limit - 1]
        out.next_page_token = encode_cursor("d1", last["failed_at_us"], last["id"])
    return reply


async def list_failure_groups(
    pool: asyncpg.Pool, stats: Stats, req: bus.FailureGroupsRequest
) -> bus.FailureGroupsReply:
    r = req.request
    f = check_filter(r.filter, scope=req.scope, groups=True)
    limit = page_size(r.page_size)
    after_n: int | None = None
    after_group = ""
    if r.page_token:
        n, after_group = decode_cursor(r.page_token, "g1", 2, "page_token")
        after_n = _int_part(n, "page_token")
    stats.statements += 1
    rows = await pool.fetch(
        *bind("failure_groups", **f.params(), after_n=after_n, after_group=after_group, limit=limit + 1)
    )
    reply = bus.FailureGroupsReply()
    out = reply.response
    for row in rows[:limit]:
        group = out.groups.add(
            group_id=row["group_id"],
            queue=row["queue"],
            name=row["name"],
            type=row["type"],
            message=row["message"],
            frame=row["frame"],
            count=row["n"],
            sample_task_ids=row["ids"] or [],
            sample_traceback=row["traceback"],
        )
        if row["first_us"]:
            group.first_seen.FromMicroseconds(row["first_us"])
        if row["last_us"]:
            group.last_seen.FromMicroseconds(row["last_us"])
    if len(rows) > limit:
        last = rows[limit - 1]
        out.next_page_token = encode_cursor("g1", last["n"], last["group_id"])
    return reply
