"""The store's counters (taskyard_counters), read for the servers registry/status.

``late_completions`` is bumped by the report applier (reports.py) whenever
fencing refuses a completion: a superseded attempt finished after its task was
rescued or re-run.
"""

from __future__ import annotations

import asyncpg

from taskyard.bus.v1 import supervision_pb2

from .committer import Stats
from .queries import Q


async def read_counters(
    pool: asyncpg.Pool, stats: Stats, req: supervision_pb2.CountersRequest
) -> supervision_pb2.CountersReply:
    stats.statements += 1
    rows = await pool.fetch(Q["counters"], list(req.names))
    reply = supervision_pb2.CountersReply()
    for name in req.names:
        reply.values[name] = 0
    for row in rows:
        reply.values[row["name"]] = int(row["value"])
    return reply
