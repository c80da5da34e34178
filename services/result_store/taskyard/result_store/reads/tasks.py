"""The read side: straight to the pool, final records from the cache."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import asyncpg

from taskyard.bus.v1 import lanes_pb2, pools_pb2, task_record_pb2, tasks_pb2
from taskyard.core import errors
from taskyard.core.errors import FieldViolation
from taskyard.core.states import TaskState

from .. import scopes
from ..appliers import Stats
from ..cache import ResultCache
from ..cursors import _int_part, _uuid_part, decode_cursor, encode_cursor
from ..queries import bind
from ..records import queued_ref, record_from_row
from ..uuids import norm_uuid

LIST_DEFAULT_LIMIT = 100
LIST_MAX_LIMIT = 1000
LOAD_DEFAULT_LIMIT = 1000
LOAD_MAX_LIMIT = 10_000
TASK_NAMES_DEFAULT_AGE_MS = 60_000


def dead_letter_fields(rec: task_record_pb2.TaskRecord, row: Mapping[str, Any]) -> None:
    """What a row of ``get_tasks`` says beyond ``{{record}}``: its dead-letter reason
    and its final failure's group (a FAILURE record is never cached: always read so)."""
    if reason := row["dead_letter_reason"]:
        rec.dead_letter_reason = reason
    if rec.HasField("failure") and (group := row["failure_group"]):
        rec.failure.group_id = group


class Reads:
    def __init__(self, pool: asyncpg.Pool, cache: ResultCache, stats: Stats) -> None:
        self.pool = pool
        self.cache = cache
        self.stats = stats

    async def get(self, req: tasks_pb2.GetTasksRequest) -> tasks_pb2.GetTasksReply:
        found: dict[str, task_record_pb2.TaskRecord] = {}
        misses: list[str] = []
        scope = req.scope
        everyone = scope.all
        for raw in req.ids:
            tid = norm_uuid(raw)
            if tid is None or tid in found:
                continue
            rec = self.cache.get(tid)
            # A cached record of another tenant is read as a miss is (scopes.py): the
            # statement finds nothing, as for a missing id, by the same work.
            if rec is not None and (everyone or rec.tenant == scope.tenant):
                found[tid] = rec
            else:
                misses.append(tid)
        if misses:
            self.stats.statements += 1
            epoch = self.cache.epoch  # an invalidation meanwhile (a purge) makes these rows suspect
            for row in await self.pool.fetch(*bind("get_tasks", ids=misses, **scopes.params(scope))):
                rec = record_from_row(row)
                dead_letter_fields(rec, row)
                found[rec.id] = rec
                self.cache.put_if_current(rec, epoch)
        reply = tasks_pb2.GetTasksReply()
        seen: set[str] = set()
        for raw in req.ids:
            tid = norm_uuid(raw)
            if tid is not None and tid in found and tid not in seen:
                seen.add(tid)
                reply.tasks.append(found[tid])
        return reply

    async def list(self, req: tasks_pb2.ListTasksRequest) -> tasks_pb2.ListTasksReply:
        if req.limit < 0 or req.limit > LIST_MAX_LIMIT:
            raise errors.invalid(
                [FieldViolation(field="page_size", description=f"must be between 1 and {LIST_MAX_LIMIT}")]
            )
        limit = req.limit or LIST_DEFAULT_LIMIT
        c_us: int | None = None
        c_id: str | None = None
        if req.cursor:
            us, cid = decode_cursor(req.cursor, "l1", 2, "page_token")
            c_us, c_id = _int_part(us, "page_token"), _uuid_part(cid, "page_token")
        if any(s not in range(1, 10) for s in req.states):
            raise errors.invalid([FieldViolation(field="states", description="unknown state")])
        if req.priority not in (0, 1, 2, 3, 4):
            raise errors.invalid([FieldViolation(field="priority", description="unknown priority")])
        state_names = [TaskState(s).name for s in req.states] or None
        self.stats.statements += 1
        scope = req.scope
        # The default tenant's rows and every tenant's are listed by one statement,
        # one other tenant's by another (its own index: sql/tasks.sql).
        where: dict[str, bool | str]
        if scope.all or not scope.tenant:
            query, where = "list_tasks", {"all_tenants": scope.all}
        else:
            query, where = "list_tenant_tasks", {"tenant": scope.tenant}
        rows = await self.pool.fetch(
            *bind(
                query,
                states=state_names,
                name=req.name,
                queue=req.queue,
                priority=req.priority,
                after_us=c_us,
                after_id=c_id,
                limit=limit + 1,
                **where,
            )
        )
        reply = tasks_pb2.ListTasksReply()
        for row in rows[:limit]:
            reply.tasks.append(record_from_row(row))
        if len(rows) > limit:
            last = reply.tasks[-1]
            reply.next_cursor = encode_cursor("l1", last.created_at_us, last.id)
        return reply

    async def load_queued(self, req: lanes_pb2.LoadQueuedRequest) -> lanes_pb2.LoadQueuedReply:
        limit = min(req.limit, LOAD_MAX_LIMIT) if req.limit > 0 else LOAD_DEFAULT_LIMIT
        prio: int | None = None
        c_us: int | None = None
        c_id: str | None = None
        if req.cursor:
            p, us, cid = decode_cursor(req.cursor, "q1", 3, "cursor")
            prio, c_us, c_id = _int_part(p, "cursor"), _int_part(us, "cursor"), _uuid_part(cid, "cursor")
        self.stats.statements += 1
        rows = await self.pool.fetch(
            *bind("load_queued", after_priority=prio, after_us=c_us, after_id=c_id, limit=limit + 1)
        )
        reply = lanes_pb2.LoadQueuedReply()
        for row in rows[:limit]:
            reply.tasks.append(queued_ref(row))
        if len(rows) > limit:
            last = reply.tasks[-1]
            reply.next_cursor = encode_cursor("q1", last.priority, last.created_at_us, last.id)
        return reply

    async def task_names(self, req: pools_pb2.TaskNamesRequest) -> pools_pb2.TaskNamesReply:
        age = req.max_age_ms if req.max_age_ms > 0 else TASK_NAMES_DEFAULT_AGE_MS
        self.stats.statements += 1
        rows = await self.pool.fetch(*bind("task_names", max_age_ms=age))
        return pools_pb2.TaskNamesReply(names=[r["name"] for r in rows])
