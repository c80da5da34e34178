"""An LRU cache of final task records, for GetTasks and WaitTask.

Bounded (10,000 entries by default), entries expire after a TTL (1 h), and a
sweeper removes expired ones every 60 s (a put drops them too: an expired
entry never holds a place a live one needs). Time comes from an injected clock.
Only the store writes to it, when it finalizes tasks (or reads final ones).

It holds SUCCESS and CANCELLED records only: no transition leaves those
(core.states.TRANSITIONS, which the database enforces), so a record cached by
one store stays true whatever the other stores sharing the database commit. A
FAILURE is final only until a manual retry (FAILURE -> QUEUED), which may be
committed by any store, and no store hears of another's: failures are read
from the database each time. What may still change on a kept row is beside
its outcome, and another store's copy shows it only once it expires: a note
of a late report (this store's own notes replace its copy), a context update
of the last attempt that came after its outcome, its idempotency key freed
once its window passed, and the row's removal by the retention purge (the
purging store forgets it at once).
"""

from __future__ import annotations

import logging

from cachetools import TTLCache

from taskyard.bus.v1 import task_record_pb2
from taskyard.core.clock import Clock, SystemClock
from taskyard.core.states import IMMUTABLE_STATES

log = logging.getLogger(__name__)

# The states of the records kept, as records carry them.
KEPT_STATES = frozenset(int(s) for s in IMMUTABLE_STATES)


class _Records(TTLCache[str, task_record_pb2.TaskRecord]):
    """Records by task id, counting the live ones let go for room (expired ones
    are dropped before the bound is looked at)."""

    evictions = 0

    def popitem(self) -> tuple[str, task_record_pb2.TaskRecord]:
        item = super().popitem()
        self.evictions += 1
        return item


class ResultCache:
    def __init__(
        self,
        *,
        max_entries: int = 10_000,
        ttl_seconds: float = 3600.0,
        sweep_interval: float = 60.0,
        clock: Clock | None = None,
    ) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be >= 1")
        self.max_entries = max_entries
        self.ttl = ttl_seconds
        self.sweep_interval = sweep_interval
        self.clock: Clock = clock or SystemClock()
        # A get or put counts as a use (``in`` does not); a put starts the TTL anew.
        self._items = _Records(max_entries, ttl_seconds, timer=self.clock.monotonic)
        self.hits = 0
        self.misses = 0
        # Bumped by every invalidation: a reader that fetched a row before it
        # (put_if_current) may hold the record the invalidation was about.
        self.epoch = 0

    @property
    def evictions(self) -> int:
        return self._items.evictions

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._items

    def put(self, record: task_record_pb2.TaskRecord) -> bool:
        """Cache a record if it is SUCCESS or CANCELLED; returns whether it was cached."""
        if record.state not in KEPT_STATES:
            self._items.pop(record.id, None)
            return False
        self._items[record.id] = record
        return True

    def put_if_current(self, record: task_record_pb2.TaskRecord, epoch: int) -> bool:
        """``put`` for a record read from the database when the epoch was ``epoch``:
        skipped when an invalidation came in between (the row may be older than it)."""
        if epoch != self.epoch:
            return False
        return self.put(record)

    def get(self, task_id: str) -> task_record_pb2.TaskRecord | None:
        record = self._items.get(task_id)
        if record is None:
            self.misses += 1
            return None
        self.hits += 1
        return record

    def invalidate(self, task_id: str) -> None:
        self.epoch += 1
        self._items.pop(task_id, None)

    def sweep(self) -> int:
        """Remove expired entries; returns how many."""
        return len(self._items.expire())

    async def run_sweeper(self) -> None:
        """Sweep every ``sweep_interval`` seconds until cancelled."""
        while True:
            await self.clock.sleep(self.sweep_interval)
            removed = self.sweep()
            if removed:
                log.debug("result cache: swept %d expired entries", removed)
