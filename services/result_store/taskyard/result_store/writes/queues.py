"""Queue operations (an applier in the group commit) and the status/servers reads.

Pause/resume write the ``queues`` table and publish ``queue.paused`` /
``queue.resumed`` (Event.name = the queue) after COMMIT; the scheduler parks or
releases the queue's tasks at once. Clear cancels a queue's waiting tasks; retry
turns failed tasks into a new attempt (FAILURE -> QUEUED, attempt + 1) and
publishes their refs, which the scheduler's lanes take as they are (writes/requeues.py).
"""

from __future__ import annotations

import json
import time
from typing import Any

import asyncpg
from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from taskyard.bus.v1 import pools_pb2, queues_pb2, tenants_pb2
from taskyard.core import errors, roles, rpc, tenants, validation
from taskyard.core.errors import FieldViolation
from taskyard.core.states import TaskState, db_names, sources_of
from taskyard.v1 import queue_service_pb2 as qs

from .. import scopes
from ..appliers import Applier, Db, Outcome
from ..queries import bind
from ..records import event, event_for_record, event_for_row, record_from_row
from ..uuids import norm_uuid
from . import tenant_checks
from .requeues import queued_message

DEFAULT_QUEUE = "default"
RETRY_DEFAULT = 1000
RETRY_MAX = 10_000
SERVERS_DEFAULT_AGE_MS = 60_000
# What ClearQueue cancels: tasks waiting to run (a leased or running one is left alone).
_CLEARABLE = tuple(
    s
    for s in sources_of(TaskState.CANCELLED)
    if s in (TaskState.PENDING, TaskState.QUEUED, TaskState.SCHEDULED, TaskState.RETRYING)
)
_STATE_FIELD = {
    "PENDING": "pending",
    "QUEUED": "queued",
    "SCHEDULED": "scheduled",
    "ASSIGNED": "assigned",
    "RUNNING": "running",
    "RETRYING": "retrying",
    "SUCCESS": "succeeded",
    "FAILURE": "failed",
    "CANCELLED": "cancelled",
}
# FAILURE -> QUEUED is the manual retry of core.states; checked at import.
assert TaskState.FAILURE in sources_of(TaskState.QUEUED)


def queue_name(raw: str, *, field: str = "queue", default: str = DEFAULT_QUEUE) -> str:
    """``raw`` (or ``default`` when empty) if it is a valid queue name (core/names.py)."""
    return validation.chosen_name(raw, field, required=False) or default


def scoped_queue(raw: str, scope: tenants_pb2.TenantScope, *, default: str = DEFAULT_QUEUE) -> str:
    """The stored name of a queue a request names for its scope's tenant: checked as
    the tenant knows it, qualified (core/tenants.py); ``default`` (qualified) when
    empty. Another tenant's qualified name is no name of this tenant's: refused."""
    owner = scopes.owner(scope)
    bare = queue_name(tenants.strip(owner, raw), default=default)
    return tenants.qualify(owner, bare) if bare else ""


def failed_precondition(reason: str, message: str) -> errors.TaskyardError:

    return errors.TaskyardError(errors.Code.FAILED_PRECONDITION, reason, message)


def make_applier(*, development: bool) -> Applier:
    """The KIND_STORE_QUEUE_OP applier; ClearQueue only where ``development``."""

    async def apply_queue_ops(db: Db, reqs: list[queues_pb2.QueueOpRequest]) -> Outcome:
        out = Outcome(replies=[])
        for req in reqs:  # rare operations: one after the other, in one transaction
            out.replies.append(await _apply_one(db, req, out, development))
        return out

    return apply_queue_ops


def validate(req: queues_pb2.QueueOpRequest, *, development: bool) -> None:
    """Refuse a bad request before it joins a group commit."""
    op = req.op
    if op in (queues_pb2.QUEUE_OP_PAUSE, queues_pb2.QUEUE_OP_RESUME):
        scoped_queue(req.queue, req.scope)
    elif op == queues_pb2.QUEUE_OP_CLEAR:
        if not development:
            raise failed_precondition(
                "NOT_DEVELOPMENT",
                "ClearQueue cancels every waiting task and is allowed only in development "
                "(TASKYARD_ENVIRONMENT=development, as `taskyard dev` sets)",
            )
        if req.queue:
            scoped_queue(req.queue, req.scope)
    elif op == queues_pb2.QUEUE_OP_RETRY:
        if req.limit < 0 or req.limit > RETRY_MAX:
            raise errors.invalid([FieldViolation(field="limit", description=f"must be 0..{RETRY_MAX}")])
        bad = [i for i, raw in enumerate(req.ids) if norm_uuid(raw) is None]
        if bad:
            raise errors.invalid(
                [FieldViolation(field=f"ids[{i}]", description="must be a UUID") for i in bad[:10]]
            )
        if req.queue:
            scoped_queue(req.queue, req.scope)
    else:
        raise errors.invalid([FieldViolation(field="op", description="unknown queue operation")])


async def _apply_one(
    db: Db, req: queues_pb2.QueueOpRequest, out: Outcome, development: bool
) -> queues_pb2.QueueOpReply:
    now_us = time.time_ns() // 1000
    if req.op in (queues_pb2.QUEUE_OP_PAUSE, queues_pb2.QUEUE_OP_RESUME):
        paused = req.op == queues_pb2.QUEUE_OP_PAUSE
        name = scoped_queue(req.queue, req.scope)
        await db.fetch("set_queue_paused", name=name, paused=paused, owner=scopes.owner(req.scope))
        out.events.append(event("queue.paused" if paused else "queue.resumed", name=name, at_us=now_us))
        if not paused:  # what waited in it may run now
            out.events.append(event("tasks.available", at_us=now_us))
        # Only the queues row inside the single writer's transaction: the counts
        # (aggregates over tasks) are read after the commit (queue_info).
        return queues_pb2.QueueOpReply(queue=qs.QueueInfo(name=name, paused=paused))
    if req.op == queues_pb2.QUEUE_OP_CLEAR:
        rows = await db.fetch(
            "clear_queue",
            queue=scoped_queue(req.queue, req.scope, default=""),
            sources=db_names(_CLEARABLE),
            reason="queue cleared",
            **scopes.params(req.scope),
        )
        recs = [record_from_row(r) for r in rows]
        out.events.extend(event_for_record(rec, "task.cancelled") for rec in recs)
        out.finals.extend(recs)
        return queues_pb2.QueueOpReply(count=len(recs), ids=[rec.id for rec in recs])
    if req.op == queues_pb2.QUEUE_OP_RETRY:
        # A retry starts new work: refused for a suspended tenant here too, as the
        # gateway's copy of the tenants may be a moment behind (tenant_checks.py).
        await tenant_checks.check_owner(db.conn, scopes.owner(req.scope))
        ids = [norm_uuid(raw) for raw in req.ids]
        limit = req.limit or RETRY_DEFAULT
        rows = await db.fetch(
            "retry_failed",
            queue=scoped_queue(req.queue, req.scope, default=""),
            name=req.name.strip(),
            **scopes.params(req.scope),
            ids=[i for i in ids if i is not None],
            limit=limit,
            sources=db_names(sources_of(TaskState.QUEUED)),
        )
        out.events.extend(event_for_row(r) for r in rows)
        out.messages.extend(queued_message(rows))
        return queues_pb2.QueueOpReply(count=len(rows), ids=[r["id"] for r in rows])
    raise errors.invalid([FieldViolation(field="op", description="unknown queue operation")])


# ----------------------------------------------------------------------- reads
def _duration(seconds: float | None) -> Duration:
    d = Duration()
    if seconds:
        d.FromNanoseconds(int(seconds * 1e9))
    return d


def _ts(us: int) -> Timestamp | None:
    if not us:
        return None
    ts = Timestamp()
    ts.FromMicroseconds(us)
    return ts


async def _queue_infos(
    conn: Any, queue: str = "", scope: tenants_pb2.TenantScope = scopes.ALL
) -> list[qs.QueueInfo]:
    infos: dict[str, qs.QueueInfo] = {}

    def info(name: str) -> qs.QueueInfo:
        if name not in infos:
            infos[name] = qs.QueueInfo(name=name)
        return infos[name]

    where = scopes.params(scope)
    for row in await conn.fetch(*bind("queue_names", queue=queue, **where)):
        info(row["name"]).paused = row["paused"]
    for row in await conn.fetch(*bind("queue_counts", queue=queue, **where)):
        setattr(info(row["queue"]), _STATE_FIELD[row["state"]], row["n"])
    for row in await conn.fetch(*bind("queue_recent", queue=queue, **where)):
        i = info(row["queue"])
        i.mean_duration.CopyFrom(_duration(float(row["mean_seconds"] or 0)))
        i.failed_today = row["failed_today"]
    return [infos[k] for k in sorted(infos)]


async def queue_info(pool: asyncpg.Pool, reply: queues_pb2.QueueOpReply) -> queues_pb2.QueueOpReply:
    """A pause/resume reply completed with the queue's counts, on the read pool."""
    async with pool.acquire() as conn:
        infos = await _queue_infos(conn, reply.queue.name)
    if infos:
        infos[0].paused = reply.queue.paused  # what this request set, whatever came after
        reply.queue.CopyFrom(infos[0])
    return reply


async def read_status(pool: asyncpg.Pool, req: queues_pb2.QueueStatusRequest) -> queues_pb2.QueueStatusReply:
    # The scheduler's reads are every tenant's (it acts for no caller).
    scope = scopes.ALL if rpc.sender_role() == roles.SCHEDULER else req.scope
    where = scopes.params(scope)
    if req.paused_only:  # the scheduler's reconcile, on every reload: the small queues table only
        async with pool.acquire() as conn:
            paused = [r["name"] for r in await conn.fetch(*bind("paused_queues", **where))]
            return queues_pb2.QueueStatusReply(paused=paused)
    queue = scoped_queue(req.queue, scope, default="") if req.queue else ""
    async with pool.acquire() as conn:
        infos = await _queue_infos(conn, queue, scope)
        summary = await conn.fetchrow(*bind("servers_summary", max_age_ms=SERVERS_DEFAULT_AGE_MS))
        late = await conn.fetchval(*bind("counter_value", name="late_completions"))
        paused = [r["name"] for r in await conn.fetch(*bind("paused_queues", **where))]
    return queues_pb2.QueueStatusReply(
        queues=infos,
        servers=summary["servers"],
        capacity=summary["capacity"],
        running_tasks=summary["running"],
        late_completions=late or 0,
        paused=paused,
    )


def _processes(text: str) -> list[qs.WorkerProcess]:
    try:
        items = json.loads(text or "[]")
    except ValueError:
        return []
    out: list[qs.WorkerProcess] = []
    for p in items if isinstance(items, list) else []:
        if not isinstance(p, dict):
            continue
        wp = qs.WorkerProcess(
            index=int(p.get("index", 0) or 0),
            pid=int(p.get("pid", 0) or 0),
            state=str(p.get("state", "")),
            rss_bytes=int(p.get("rss_bytes", 0) or 0),
            running_tasks=int(p.get("running_tasks", 0) or 0),
        )
        beat = _ts(int(p.get("last_beat_us", 0) or 0))
        if beat is not None:
            wp.last_beat.CopyFrom(beat)
        out.append(wp)
    return out


async def read_servers(pool: asyncpg.Pool, req: pools_pb2.ServersRequest) -> pools_pb2.ServersReply:
    if req.max_age_ms < 0:
        raise errors.invalid([FieldViolation(field="max_age", description="must not be negative")])
    rows = await pool.fetch(*bind("list_servers", max_age_ms=req.max_age_ms or SERVERS_DEFAULT_AGE_MS))
    reply = pools_pb2.ServersReply()
    for r in rows:
        s = qs.Server(
            pool_id=r["pool_id"],
            server_name=r["server_name"],
            max_workers=r["max_workers"],
            active_workers=r["active_workers"],
            idle_workers=r["idle_workers"],
            running_tasks=r["running"],
            is_running=r["is_running"],
            state=r["state"],
            task_names=list(r["task_names"]),
            rss_bytes=r["rss_bytes"],
            capacity=r["capacity"],
            workers=_processes(r["processes"]),
            concurrency=r["concurrency"],
        )
        for field, us in (
            ("last_heartbeat", r["last_heartbeat_us"]),
            ("last_dispatch_at", r["last_dispatch_us"]),
        ):
            ts = _ts(us)
            if ts is not None:
                getattr(s, field).CopyFrom(ts)
        reply.servers.append(s)
    return reply
