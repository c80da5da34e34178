"""Tasks inserted by anyone but the store, told to the scheduler one by one.

A row written outside the store (``taskyard_submit`` in an application's
transaction, psql) NOTIFYs the stores' channel at its commit. Telling the
scheduler "tasks are available" makes it page through every QUEUED row: with a
deep backlog and an application that enqueues in each of its transactions, it
would re-read the backlog continuously. So on a notification the store reads
the events those inserts logged (marked ``external``, migrations/0017), after
its cursor, and publishes their tasks as the other writes that make tasks
QUEUED do: a ``KIND_GRAPH_RELEASED`` of their refs (the lanes push them; one
they hold already is ignored), a ``task.scheduled`` with its time for one with
an ETA (the scheduler's timers).

The events are read in (xid, id) order, only below the oldest running
transaction (``pg_snapshot_xmin``): an event of a transaction still running can
then never land behind the cursor. A committed event above that bound waits
for the older transaction; it is read again shortly after (a few milliseconds,
doubling). What the cursor cannot vouch for falls back to the full reload
(``tasks.available``), as every wake-up did before:

- every (re)connect of the listener (notifications sent while it was away are
  lost): the cursor restarts at the watermark taken first, so a commit before
  it is found by the reload the wake-up causes, and one after by the cursor;
- events the retention purge deleted past the cursor;
- an older transaction holding the bound back for over ``blocked_reload_after``
  (again each such interval while new ones commit behind it);
- a read that failed.

Several stores may read the same events: each publishes what it read, and the
lanes ignore a task they hold. A notification that arrives during a read
triggers another read (``_wanted`` is cleared before it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import asyncpg

from taskyard.bus.v1 import event_pb2, graph_pb2, lanes_pb2
from taskyard.core import contract

from .database_errors import OUTAGE
from .events import EventPublisher
from .queries import bind
from .records import queued_ref

log = logging.getLogger(__name__)

# Events read per statement (ReleasedTasks of this many refs stays far under a message's cap).
PAGE = 1000
# First wait for an event committed behind a running transaction, in seconds; it doubles.
SETTLE_WAIT = 0.002
MAX_SETTLE_WAIT = 0.1
# A running transaction that holds committed events back this long: they are loaded whole.
BLOCKED_RELOAD_AFTER = 1.0
# After a failed read, before the next try (the full reload follows it); it doubles
# while the reads keep failing (the database away), up to MAX_RETRY_AFTER.
RETRY_AFTER = 0.5
MAX_RETRY_AFTER = 5.0

Cursor = tuple[int, int]


class Arrivals:
    def __init__(
        self,
        pool: asyncpg.Pool,
        publisher: EventPublisher,
        *,
        page: int = PAGE,
        blocked_reload_after: float = BLOCKED_RELOAD_AFTER,
    ) -> None:
        self._pool = pool
        self._publisher = publisher
        self._page = page
        self._blocked_reload_after = blocked_reload_after
        # None until the listener's first connect (that one loads everything).
        self.cursor: Cursor | None = None
        self._restart = False
        self._wanted = asyncio.Event()
        # While committed events wait behind a running transaction: since when, the
        # next wait, and the newest event a full reload has covered.
        self._blocked_since: float | None = None
        self._wait = SETTLE_WAIT
        self._covered: Cursor = (0, 0)
        # Figures (tests, bench/transactional_enqueue).
        self.reads = 0
        self.published = 0
        self.full_reloads = 0
        # Set after every pass that left nothing readable behind the cursor.
        self.caught_up = asyncio.Event()

    async def notified(self) -> None:
        """The listener heard a notification: read what is new."""
        self.caught_up.clear()
        self._wanted.set()

    async def connected(self) -> None:
        """The listener (re)connected: anything may have been missed; load everything."""
        self.caught_up.clear()
        self._restart = True
        self._wanted.set()

    async def run(self) -> None:
        wait: float | None = None
        retry = RETRY_AFTER
        while True:
            if wait is None:
                await self._wanted.wait()
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wanted.wait(), wait)
            self._wanted.clear()
            try:
                wait = await self._catch_up()
                retry = RETRY_AFTER
            except OUTAGE as exc:
                log.warning("reading the tasks inserted outside the store failed (%s); loading all", exc)
                self._restart = True
                wait, retry = retry, min(retry * 2, MAX_RETRY_AFTER)

    async def _catch_up(self) -> float | None:
        """Read and publish what is new; the seconds until another look is due, or None."""
        if self._restart:
            await self._start_over()
        if self.cursor is None:
            return None
        while True:
            self.reads += 1
            mark = await self._pool.fetchrow(*bind("arrivals_watermark"))
            assert mark is not None
            if (int(mark["horizon_xid"]), mark["horizon_id"]) > self.cursor:
                await self._start_over()  # the purge deleted events the cursor had not read
                continue
            xmin = int(mark["xmin"])
            newest = None if mark["newest_xid"] is None else (int(mark["newest_xid"]), mark["newest_id"])
            if newest is None or newest <= self.cursor:
                return self._settled()
            rows = await self._pool.fetch(
                *bind(
                    "read_arrivals",
                    after_xid=str(self.cursor[0]),
                    after_id=self.cursor[1],
                    xmin=str(xmin),
                    limit=self._page,
                )
            )
            if rows:
                self.cursor = (int(rows[-1]["xid"]), rows[-1]["event_id"])
                self._publish(rows)
            if len(rows) == self._page:
                continue
            if newest <= self.cursor:
                return self._settled()
            return await self._behind_a_transaction(newest)

    async def _start_over(self) -> None:
        self._restart = False  # first: a reconnect during the read below starts over again
        mark = await self._pool.fetchrow(*bind("arrivals_watermark"))
        assert mark is not None
        # Below the watermark everything has committed before the reload reads.
        self.cursor = (int(mark["xmin"]), 0)
        self._blocked_since = None
        self._covered = self.cursor
        await self._publisher.tasks_available()
        self.full_reloads += 1

    def _settled(self) -> float | None:
        """Nothing readable is left behind the cursor: no other look is due."""
        self._blocked_since = None
        self._wait = SETTLE_WAIT
        if not self._wanted.is_set():  # else a notification came during the pass
            self.caught_up.set()
        return None

    async def _behind_a_transaction(self, newest: Cursor) -> float:
        now = time.monotonic()
        if self._blocked_since is None:
            self._blocked_since = now
            self._wait = SETTLE_WAIT
        elif now - self._blocked_since >= self._blocked_reload_after and newest > self._covered:
            # A long transaction holds the bound back: what committed behind it is loaded
            # whole, as any wake-up did before (the cursor reads it again once final).
            self._blocked_since = now
            self._covered = newest
            await self._publisher.tasks_available()
            self.full_reloads += 1
        else:
            self._wait = min(self._wait * 2, MAX_SETTLE_WAIT)
        return self._wait

    def _publish(self, rows: list[asyncpg.Record]) -> None:
        refs: list[lanes_pb2.QueuedRef] = []
        timers: list[event_pb2.Event] = []
        for row in rows:
            state = row["state"]
            if state == "QUEUED":
                refs.append(queued_ref(row))
            elif state == "SCHEDULED":
                timers.append(
                    event_pb2.Event(
                        type="task.scheduled",
                        task_id=row["id"],
                        name=row["name"],
                        queue=row["queue"],
                        run_at_us=row["run_at_us"],
                    )
                )
            # Else nothing to tell: gone, PENDING (the graph releases it), or leased already.
        if refs:
            self._publisher.publish_message(contract.GRAPH_RELEASED, graph_pb2.ReleasedTasks(tasks=refs))
        if timers:
            self._publisher.publish_for_scheduler(timers)
        self.published += len(refs) + len(timers)
