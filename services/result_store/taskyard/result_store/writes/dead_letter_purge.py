"""PurgeDeadLetters: delete the dead letters a filter matches, now (with their logs and failures).

Chunks of ``CHUNK`` rows, each its own short statement (``SKIP LOCKED``), on the
store's pool rather than in the group commit, as the retention purge does: a
large purge never holds up the hot path. The request's id is recorded with the
first chunk (bus_requests.py), so a copy of the request deletes nothing more.
"""

from __future__ import annotations

import asyncio

import asyncpg

from taskyard.bus.v1 import envelope_pb2
from taskyard.bus.v1 import failures_pb2 as bus

from .. import bus_requests
from ..queries import bind
from ..reads.dead_letters import Filter, check_filter, require_known_group

CHUNK = 10_000
# A dry run counts every match (the count is the answer).
COUNT_ALL = 2**62


async def purge_dead_letters(
    pool: asyncpg.Pool, req: bus.PurgeDeadLettersRequest, request_id: str = ""
) -> bus.PurgeDeadLettersReply:
    f = check_filter(req.request.filter, scope=req.scope)
    if req.request.dry_run:
        n = await pool.fetchval(*bind("count_dead_letters", **f.params(), limit=COUNT_ALL))
        if not n and f.group_id:
            await require_known_group(pool, f)
        return _reply(int(n or 0))
    total = 0
    first = True
    while True:
        if first and request_id:
            rows = await _first_chunk(pool, f, request_id)
        else:
            rows = await pool.fetch(*bind("purge_dead_letters", **f.params(), limit=CHUNK))
        if first and not rows and f.group_id:
            await require_known_group(pool, f)
        first = False
        total += len(rows)
        if len(rows) < CHUNK:
            break
        await asyncio.sleep(0)  # let others at the pool between chunks
    if request_id and total >= CHUNK:  # past the first chunk: the total
        async with pool.acquire() as conn:
            await bus_requests.keep_replies(conn, [request_id], [_reply(total)])
    return _reply(total)


async def _first_chunk(pool: asyncpg.Pool, f: Filter, request_id: str) -> list[asyncpg.Record]:
    async with pool.acquire() as conn, conn.transaction():
        await bus_requests.record_one(conn, request_id, envelope_pb2.KIND_STORE_PURGE_DEAD_LETTERS)
        rows: list[asyncpg.Record] = await conn.fetch(*bind("purge_dead_letters", **f.params(), limit=CHUNK))
        await bus_requests.keep_replies(conn, [request_id], [_reply(len(rows))])
        return rows


def _reply(purged: int) -> bus.PurgeDeadLettersReply:
    reply = bus.PurgeDeadLettersReply()
    reply.response.purged = purged
    return reply
