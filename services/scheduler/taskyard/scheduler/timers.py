"""The due heap: SCHEDULED and RETRYING tasks, woken at their run time.

The heap of ``(run_at_us, task_id)`` is a cache of what the database holds,
never custody: it is filled at start-up with the rows due within ``window``
seconds (``LoadDueRequest``), reloaded every ``refresh`` seconds, and fed
between reloads by the scheduler's own inserts and by ``task.scheduled`` /
``task.retrying`` events. One timer sleeps until the earliest entry, then asks
the store to promote every due row at once (``PromoteDueRequest``: one guarded
statement, SCHEDULED/RETRYING -> QUEUED, decided by the database clock) and
hands the promoted refs to the lanes.

A promotion's reply carries the database's earliest remaining ``run_at``
(``next_due_us``); the timer also wakes for that one, so a row the heap never
heard of (a lost event, a row beyond the window) is still promoted on time, and
a row the database does not consider due yet (its clock a little behind ours)
is tried again shortly instead of being dropped.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
from collections.abc import Callable, Sequence
from typing import Protocol

from taskyard.bus.v1 import event_pb2, lanes_pb2, tasks_pb2
from taskyard.core import contract, rpc
from taskyard.core.clock import Clock, from_us, sleep_unless, to_us
from taskyard.core.states import TaskState
from taskyard.scheduler.dispatcher import Record, ref_of
from taskyard.scheduler.lanes import Ref

log = logging.getLogger(__name__)

# A due row the database did not promote yet is retried after this, doubling to RETRY_MAX.
RETRY_MIN = 0.02
RETRY_MAX = 1.0
# After a store error, wait this long before trying again.
ERROR_PAUSE = 0.2
# Event-driven reloads (a due event without a time) are at most this frequent.
MIN_RELOAD_GAP = 0.2


class DueSource(Protocol):
    """The store side of the heap (the scheduler's store requests; a fake in tests)."""

    async def load_due(self, window_ms: int) -> tuple[list[tuple[str, int]], bool]:
        """(task id, run_at_us) of rows due within the window, and whether the list was cut."""

    async def promote_due(self) -> tuple[list[Ref], int]:
        """Promote every due row; returns their refs and the next run_at_us left (0 = none)."""


class DueTimers:
    def __init__(
        self,
        *,
        source: DueSource,
        on_due: Callable[[Sequence[Ref]], None],
        clock: Clock,
        window: float = 60.0,
        refresh: float = 30.0,
    ) -> None:
        self._source = source
        self._on_due = on_due
        self._clock = clock
        self.window = window
        self.refresh = min(refresh, window / 2) if window > 0 else refresh
        self._heap: list[tuple[int, str]] = []
        # task id -> the run_at_us its live heap entry has (older entries are stale).
        self._at: dict[str, int] = {}
        # The database's earliest remaining run_at after the last promotion (0 = none).
        self._hint_us = 0
        self._retry = RETRY_MIN
        self._last_reload: float | None = None  # monotonic
        self._reload_gap = self.refresh
        self._reload_wanted = False
        self._changed = asyncio.Event()
        self.promoted = 0
        # Ids added while a store request (reload / promote) is out: its reply
        # predates them, so it must neither wipe nor pop them.
        self._during: set[str] | None = None

    def __len__(self) -> int:
        return len(self._at)

    def __contains__(self, task_id: str) -> bool:
        return task_id in self._at

    @property
    def next_us(self) -> int:
        """When the timer will next promote (unix microseconds; 0 = nothing known)."""
        self._drop_stale()
        times = [t for t in (self._heap[0][0] if self._heap else 0, self._hint_us) if t]
        return min(times, default=0)

    # --- feeding ---------------------------------------------------------------
    def add(self, task_id: str, run_at_us: int) -> bool:
        """Remember a task due at ``run_at_us``; False when it is beyond the window (a reload finds it)."""
        if run_at_us <= 0:
            return False
        if run_at_us > to_us(self._clock.now() + self.window):
            return False
        if self._at.get(task_id) == run_at_us:
            return True
        earlier = not self._heap or run_at_us < self._heap[0][0]
        if self._during is not None:
            self._during.add(task_id)
        self._at[task_id] = run_at_us
        heapq.heappush(self._heap, (run_at_us, task_id))
        if earlier:
            self._changed.set()
        return True

    def add_all(self, items: Sequence[tuple[str, int]]) -> int:
        return sum(1 for task_id, at in items if self.add(task_id, at))

    def request_reload(self) -> None:
        """Something became due at a time we were not told (an event without run_at)."""
        self._reload_wanted = True
        self._changed.set()

    def discard(self, task_id: str) -> None:
        """Forget a task (cancelled, promoted elsewhere); its heap entry goes stale."""
        self._at.pop(task_id, None)

    # --- the timer ---------------------------------------------------------------
    async def reload(self) -> int:
        """Replace the heap's content with the database's rows due within the window."""
        self._during = set()
        try:
            items, truncated = await self._source.load_due(int(self.window * 1000))
        finally:
            during, self._during = self._during, None
        kept = [(tid, at) for tid in during if (at := self._at.get(tid))]
        self._heap = [(at, tid) for tid, at in [*items, *kept] if at > 0]
        heapq.heapify(self._heap)
        self._at = {tid: at for at, tid in self._heap}
        gap = self.refresh
        if truncated and self._heap:  # more rows than one page: come back before the last one is due
            last = max(at for at, _ in self._heap)
            gap = min(gap, max(MIN_RELOAD_GAP, (from_us(last) - self._clock.now()) / 2))
        self._last_reload = self._clock.monotonic()
        self._reload_gap = gap
        self._reload_wanted = False
        self._changed.set()
        return len(self._at)

    async def promote(self) -> int:
        """Promote every due row now; hands the refs to ``on_due``."""
        # An entry added while the request was out (a retry with a tiny delay, a
        # new submission) may have committed after the database's query ran and
        # after it computed next_due_us, so unless it came back it stays for the
        # next round. (Older entries due meanwhile are covered by next_due_us.)
        self._during = set()
        try:
            refs, next_due_us = await self._source.promote_due()
        finally:
            during, self._during = self._during, None
        now_us = to_us(self._clock.now())
        returned = {r.id for r in refs}
        later: list[tuple[int, str]] = []
        while self._heap and self._heap[0][0] <= now_us:
            at, tid = heapq.heappop(self._heap)
            if tid in during and tid not in returned and self._at.get(tid) == at:
                later.append((at, tid))
            else:
                self._at.pop(tid, None)
        for item in later:
            heapq.heappush(self._heap, item)
        if refs:
            self.promoted += len(refs)
            self._on_due(refs)
        if next_due_us and next_due_us <= now_us and not refs:
            # Due by our clock, not (yet) by the database's: try again soon.
            self._hint_us = now_us + to_us(self._retry)
            self._retry = min(RETRY_MAX, self._retry * 2)
        else:
            self._hint_us = next_due_us
            self._retry = RETRY_MIN
        return len(refs)

    async def run(self) -> None:
        """Sleep until the earliest due time (or a change), promote, repeat; until cancelled."""
        while True:
            try:
                await self._step()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a store outage must not stop the timer
                log.warning("due timer: %s", exc)
                await self._clock.sleep(ERROR_PAUSE)

    def _reload_in(self) -> float:
        """Seconds until the next reload is due (0 = now)."""
        if self._last_reload is None:
            return 0.0
        gap = min(self._reload_gap, MIN_RELOAD_GAP) if self._reload_wanted else self._reload_gap
        return max(0.0, self._last_reload + gap - self._clock.monotonic())

    async def _step(self) -> None:
        if self._reload_in() <= 0:
            await self.reload()
        wake_us = self.next_us
        now = self._clock.now()
        if wake_us and from_us(wake_us) <= now:
            await self.promote()
            return
        delay = self._reload_in()
        if wake_us:
            delay = min(delay, from_us(wake_us) - now)
        await self._sleep(max(0.0, delay))

    async def _sleep(self, seconds: float) -> None:
        """Sleep on the clock, cut short by a change (an earlier entry, a reload request)."""
        self._changed.clear()
        await sleep_unless(self._clock, seconds, self._changed)

    def _drop_stale(self) -> None:
        while self._heap and self._at.get(self._heap[0][1]) != self._heap[0][0]:
            heapq.heappop(self._heap)


# --- the scheduler's glue ------------------------------------------------------------
_SCHEDULED = int(TaskState.SCHEDULED)
_DUE_EVENTS = frozenset({"task.scheduled", "task.retrying"})


class StoreDueSource:
    """``DueSource`` over the result-store's REQ/REP."""

    def __init__(self, store: rpc.Caller, *, page: int = 1000) -> None:
        self._store = store
        self._page = page

    async def load_due(self, window_ms: int) -> tuple[list[tuple[str, int]], bool]:
        reply = await self._store.call(contract.STORE_LOAD_DUE, lanes_pb2.LoadDueRequest(window_ms=window_ms))
        return [(t.id, t.run_at_us) for t in reply.tasks], reply.truncated

    async def promote_due(self) -> tuple[list[Ref], int]:
        refs: list[Ref] = []
        while True:
            reply = await self._store.call(
                contract.STORE_PROMOTE_DUE, lanes_pb2.PromoteDueRequest(limit=self._page)
            )
            refs.extend(ref_of(t) for t in reply.tasks)
            if len(reply.tasks) < self._page:
                return refs, reply.next_due_us


def feed_inserted(
    timers: DueTimers,
    records: Sequence[Record],
    inserted: Sequence[tasks_pb2.InsertedTask],
) -> None:
    """The SCHEDULED tasks a submission created go on the heap (their run_at is in the request)."""
    created = {t.id for t in inserted if t.created and t.state == _SCHEDULED}
    if created:
        timers.add_all([(r.id, r.run_at_us) for r in records if r.id in created])


def feed_events(timers: DueTimers, events: Sequence[event_pb2.Event]) -> None:
    """task.scheduled / task.retrying from any writer: onto the heap, or a reload when the time is unknown."""
    for e in events:
        if e.type in _DUE_EVENTS:
            if e.run_at_us:
                timers.add(e.task_id, e.run_at_us)
            elif e.task_id not in timers:
                timers.request_reload()
