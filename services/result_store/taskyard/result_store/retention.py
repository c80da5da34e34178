"""Retention: final tasks older than the window are deleted, logs and failures with them;
events older than their own window (TASKYARD_EVENT_RETENTION) too; the items of
redrives finished before the window, and those redrives' rows a year after.

Chunks of ``CHUNK`` rows, each its own short statement (``SKIP LOCKED``), outside
the group committer so a large purge never holds up the hot path. Only final
rows (SUCCESS, FAILURE, CANCELLED) whose ``finished_at`` is before the cutoff
are touched. Time comes from the store's injected clock.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import asyncpg

from taskyard.bus.v1 import envelope_pb2, queues_pb2, tenants_pb2
from taskyard.core.clock import Clock

from . import bus_requests, scopes
from .database_errors import OUTAGE
from .queries import bind

log = logging.getLogger(__name__)

CHUNK = 10_000
DAY_US = 86_400 * 1_000_000
# A finished redrive's row (its audit's summary) is kept this long, or the
# retention window if that is longer; its items go after the window.
REDRIVE_ROWS_DAYS = 365.0


class Purger:
    def __init__(
        self,
        pool: asyncpg.Pool,
        clock: Clock,
        *,
        retention_days: float,
        event_retention_seconds: float = 86_400.0,
        on_purged: Callable[[list[str]], None] | None = None,
        chunk: int = CHUNK,
        keep_requests_s: float = bus_requests.MIN_KEEP_SECONDS,
    ) -> None:
        self.pool = pool
        self.clock = clock
        self.retention_us = int(retention_days * DAY_US)
        self.event_retention_us = int(event_retention_seconds * 1_000_000)
        self.chunk = max(1, chunk)
        self._on_purged = on_purged or (lambda ids: None)
        self.purged_total = 0
        self._lock = asyncio.Lock()
        self._keep_requests_s = keep_requests_s

    async def purge(
        self,
        older_than_us: int | None = None,
        *,
        request_id: str = "",
        scope: tenants_pb2.TenantScope = scopes.ALL,
    ) -> int:
        """Delete final tasks finished more than ``older_than_us`` ago (default: the window),
        of the tenants ``scope`` reaches (a tenant's PurgeTasks: its own; retention: every one).

        ``request_id``: a PurgeTasks request's message id, recorded with the first chunk
        (bus_requests.py), so a copy of the request deletes nothing, on any store; it is
        answered with the count this purge deleted (kept with the first chunk's, then
        with the total once the last chunk is done)."""
        window = self.retention_us if older_than_us is None else older_than_us
        cutoff_us = int(self.clock.now() * 1_000_000) - max(0, window)
        whose = scopes.params(scope)
        total = 0
        async with self._lock:  # one purge at a time (the hourly one and PurgeTasks)
            first = True
            while True:
                if first and request_id:
                    rows = await self._first_chunk(cutoff_us, request_id, whose)
                else:
                    rows = await self.pool.fetch(
                        *bind("purge_final", before_us=cutoff_us, limit=self.chunk, **whose)
                    )
                first = False
                if rows:
                    self._on_purged([r["id"] for r in rows])
                total += len(rows)
                if len(rows) < self.chunk:
                    break
                await asyncio.sleep(0)  # let others at the pool between chunks
            if request_id and total >= self.chunk:  # past the first chunk: the total
                async with self.pool.acquire() as conn:
                    await bus_requests.keep_replies(conn, [request_id], [_purged(total)])
        self.purged_total += total
        if total:
            log.info("retention: purged %d final tasks finished before the cutoff", total)
        return total

    async def _first_chunk(
        self, cutoff_us: int, request_id: str, whose: dict[str, Any]
    ) -> list[asyncpg.Record]:
        async with self.pool.acquire() as conn, conn.transaction():
            await bus_requests.record_one(conn, request_id, envelope_pb2.KIND_STORE_QUEUE_OP)
            rows: list[asyncpg.Record] = await conn.fetch(
                *bind("purge_final", before_us=cutoff_us, limit=self.chunk, **whose)
            )
            await bus_requests.keep_replies(conn, [request_id], [_purged(len(rows))])
            return rows

    async def forget_requests(self) -> int:
        """Forget the bus request ids past their keeping time (bus_requests.py), at most
        ``bus_requests.FORGET_LIMIT`` a statement; how many."""
        total = 0
        async with self._lock:
            while True:
                gone = await bus_requests.forget(self.pool, keep_s=self._keep_requests_s)
                total += gone
                if gone < bus_requests.FORGET_LIMIT:
                    break
                await asyncio.sleep(0)
        if total:
            log.info("retention: forgot %d bus request ids past their keeping time", total)
        return total

    async def purge_events(self, older_than_us: int | None = None) -> int:
        """Delete the events committed more than ``older_than_us`` ago (default: the
        event window), oldest first, and move the event horizon past them."""
        window = self.event_retention_us if older_than_us is None else older_than_us
        before_us = int(self.clock.now() * 1_000_000) - max(0, window)
        total = 0
        async with self._lock:
            bound = await self.pool.fetchrow(*bind("event_purge_bound", before_us=before_us))
            assert bound is not None  # the watermark when no event is recent
            bound_xid, bound_id = bound["xid"], bound["id"]
            while True:
                purged = await self.pool.fetchval(
                    *bind(
                        "purge_events",
                        bound_xid=bound_xid,
                        bound_id=bound_id,
                        limit=self.chunk,
                    )
                )
                total += purged or 0
                if (purged or 0) < self.chunk:
                    break
                await asyncio.sleep(0)
        if total:
            log.info("retention: purged %d events committed before the cutoff", total)
        return total

    async def purge_redrives(
        self, items_older_than_us: int | None = None, rows_older_than_us: int | None = None
    ) -> tuple[int, int]:
        """Delete the items of redrives finished more than ``items_older_than_us`` ago
        (default: the window), then the redrives themselves finished more than
        ``rows_older_than_us`` ago (default: ``REDRIVE_ROWS_DAYS``, or the window if
        longer): a redrive's row is its audit's summary (who, when, the filter, how
        many), kept longer than the fate of each task. (items, redrives) deleted."""
        now_us = int(self.clock.now() * 1_000_000)
        items_window = self.retention_us if items_older_than_us is None else items_older_than_us
        rows_window = (
            max(self.retention_us, int(REDRIVE_ROWS_DAYS * DAY_US))
            if rows_older_than_us is None
            else rows_older_than_us
        )
        counts = []
        async with self._lock:
            for query, window in (("purge_redrive_items", items_window), ("purge_redrives", rows_window)):
                total = 0
                while True:
                    gone = int(
                        await self.pool.fetchval(
                            *bind(query, before_us=now_us - max(0, window), limit=self.chunk)
                        )
                    )
                    total += gone
                    if gone < self.chunk:
                        break
                    await asyncio.sleep(0)
                counts.append(total)
        items, rows = counts
        if items or rows:
            log.info("retention: deleted %d items of finished redrives and %d redrives", items, rows)
        return items, rows

    async def run(self, interval: float) -> None:
        """Purge every ``interval`` seconds until cancelled (the first one right away)."""
        while True:
            try:
                await self.purge()
                await self.purge_events()
                await self.purge_redrives()
                await self.forget_requests()
            except OUTAGE as exc:
                log.warning("retention purge failed: %s (next in %.0fs)", exc, interval)
            except Exception:  # anything else must not end the hourly purge silently
                log.exception("retention purge failed (next in %.0fs)", interval)
            await self.clock.sleep(interval)


def _purged(count: int) -> queues_pb2.QueueOpReply:
    """The reply of a PurgeTasks that deleted ``count`` tasks (operations.py's)."""
    return queues_pb2.QueueOpReply(count=count)
