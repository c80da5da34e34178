"""Due rows: the promote-due applier (runs inside the group-commit transaction)
and the read that fills the scheduler's heap."""

from __future__ import annotations

from asyncpg import Pool

from taskyard.bus.v1 import event_pb2, lanes_pb2

from ..appliers import Db, Outcome, Stats
from ..queries import bind
from ..records import event_for_row, queued_ref
from ..transitions import SRC_PROMOTE

PROMOTE_DEFAULT_LIMIT = 1000


async def apply_promote(db: Db, reqs: list[lanes_pb2.PromoteDueRequest]) -> Outcome:
    replies: list[lanes_pb2.PromoteDueReply] = []
    events: list[event_pb2.Event] = []
    for req in reqs:
        limit = req.limit if req.limit > 0 else PROMOTE_DEFAULT_LIMIT
        reply = lanes_pb2.PromoteDueReply()
        for row in await db.fetch("promote_due", limit=limit, sources=SRC_PROMOTE.db):
            reply.tasks.append(queued_ref(row))
            events.append(event_for_row(row, "QUEUED"))
        reply.next_due_us = int(await db.fetchval("next_due") or 0)
        replies.append(reply)
    return Outcome(replies=list(replies), events=events)


# --- the scheduler's heap (a read) ------------------------------------------------
LOAD_DUE_DEFAULT_LIMIT = 10_000
LOAD_DUE_MAX_WINDOW_MS = 24 * 3600 * 1000


async def load_due(pool: Pool, stats: Stats, req: lanes_pb2.LoadDueRequest) -> lanes_pb2.LoadDueReply:
    """SCHEDULED/RETRYING rows due within the window, soonest first."""
    limit = min(req.limit, LOAD_DUE_DEFAULT_LIMIT) if req.limit > 0 else LOAD_DUE_DEFAULT_LIMIT
    window = min(max(0, req.window_ms), LOAD_DUE_MAX_WINDOW_MS)
    stats.statements += 1
    rows = await pool.fetch(*bind("load_due", window_ms=window, limit=limit))
    reply = lanes_pb2.LoadDueReply(now_us=rows[0]["now_us"] if rows else 0)
    for row in rows:
        if row["id"] is not None:
            reply.tasks.add(id=row["id"], run_at_us=row["run_at_us"])
    reply.truncated = len(reply.tasks) >= limit
    return reply
