"""What the event log's events after a cursor add up to: the dashboard's pulse.

The database counts (one statement, one row back, however many events), so a
dashboard open on a busy suite costs one small query per pulse instead of every
event crossing the bus and being parsed in the gateway. The window and its
cursor are those of ``event_log.read``: final events only, in log order, in
one REPEATABLE READ snapshot with the retention horizon.
"""

from __future__ import annotations

import asyncpg

from taskyard.bus.v1 import event_log_pb2
from taskyard.core import event_cursor

from .. import event_log, scopes
from ..queries import bind

# Caps of one summary, at most.
MAX_EVENTS = 50_000
MAX_LISTED = 1_000


async def summarize(
    pool: asyncpg.Pool, req: event_log_pb2.SummarizeEventsRequest
) -> event_log_pb2.SummarizeEventsReply:
    async with pool.acquire() as conn, conn.transaction(isolation="repeatable_read", readonly=True):
        return await _summarize(conn, req)


async def _summarize(
    conn: asyncpg.Connection, req: event_log_pb2.SummarizeEventsRequest
) -> event_log_pb2.SummarizeEventsReply:
    at = await event_log.position(conn, req.after)
    after, watermark = at.after, at.watermark
    if after is None:  # a pulse that begins now
        return event_log_pb2.SummarizeEventsReply(cursor=event_cursor.encode(*watermark), caught_up=True)
    limit = min(req.limit or MAX_EVENTS, MAX_EVENTS)
    max_ids = min(req.max_task_ids, MAX_LISTED)
    max_entered = min(req.max_entered, MAX_LISTED)
    row = await conn.fetchrow(
        *bind(
            "summarize_events",
            after_xid=str(after[0]),
            after_id=after[1],
            xmin=str(watermark[0]),
            limit=limit,
            max_task_ids=max_ids,
            max_entered=max_entered,
            **scopes.params(req.scope),
        )
    )
    assert row is not None  # aggregates without GROUP BY: always one row
    events = int(row["events"])
    caught_up = events < limit
    if caught_up:  # everything below the watermark has been summarized
        cursor = event_cursor.encode(*max(after, watermark))
    else:
        cursor = event_cursor.encode(int(row["last_xid"]), row["last_id"])
    ids, queues, names, states = row["task_ids"], row["queues"], row["task_names"], row["states"]
    return event_log_pb2.SummarizeEventsReply(
        cursor=cursor,
        caught_up=caught_up,
        events=events,
        task_ids=ids[:max_ids],
        entered=[
            event_log_pb2.EnteredState(queue=q, task_name=n, state=s)
            for q, n, s in zip(queues[:max_entered], names, states, strict=False)
        ],
        more=len(ids) > max_ids or len(queues) > max_entered,
        kinds=row["kinds"],
        schedule_made_task=row["schedule_made_task"],
        finished_states=row["finished_states"],
        finished_at_us=row["finished_at_us"],
        latency_us=row["latency_us"],
    )
