"""The store's counters (taskyard_counters), read for the servers registry/status.

``late_completions`` is bumped by the report applier (writes/reports.py) whenever
fencing refuses a completion: a superseded attempt finished after its task was
rescued or re-run.

``bus_messages_refused`` (and ``bus_messages_refused.<reason>``) counts the
internal messages this store refused (core.seal: unsigned, unknown_key, bad_mac,
stale, replayed), added by ``record_bus_refusals`` while the store serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import asyncpg

from taskyard.bus.v1 import counters_pb2
from taskyard.core import seal

from .appliers import Stats
from .database_errors import OUTAGE
from .queries import bind

log = logging.getLogger(__name__)


async def read_counters(
    pool: asyncpg.Pool, stats: Stats, req: counters_pb2.CountersRequest
) -> counters_pb2.CountersReply:
    stats.statements += 1
    rows = await pool.fetch(*bind("counters", names=list(req.names)))
    reply = counters_pb2.CountersReply()
    for name in req.names:
        reply.values[name] = 0
    for row in rows:
        reply.values[row["name"]] = int(row["value"])
    return reply


BUS_REFUSED = "bus_messages_refused"
# Refused messages reach the table within about this many seconds; reading the
# process's counts is free, so an idle store costs nothing.
BUS_FLUSH_SECONDS = 0.5


async def record_bus_refusals(
    pool: asyncpg.Pool, refusals: seal.Refusals, *, interval: float = BUS_FLUSH_SECONDS
) -> None:
    """Add this process's refused bus messages to taskyard_counters until cancelled
    (a last flush then)."""
    written: dict[str, int] = {}
    try:
        while True:
            await asyncio.sleep(interval)
            try:
                await _flush(pool, refusals, written)
            except OUTAGE as exc:
                # The database is away (a restart): the counts wait for the next flush.
                log.debug("counting refused bus messages failed: %s", exc)
    finally:
        with contextlib.suppress(Exception):
            await asyncio.shield(_flush(pool, refusals, written))


async def _flush(pool: asyncpg.Pool, refusals: seal.Refusals, written: dict[str, int]) -> None:
    counts = refusals.counts()
    deltas = {reason: n - written.get(reason, 0) for reason, n in counts.items()}
    deltas = {reason: d for reason, d in deltas.items() if d > 0}
    if not deltas:
        return
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(*bind("bump_counter", name=BUS_REFUSED, delta=sum(deltas.values())))
        for reason, d in sorted(deltas.items()):
            await conn.execute(*bind("bump_counter", name=f"{BUS_REFUSED}.{reason}", delta=d))
    written.update(counts)
