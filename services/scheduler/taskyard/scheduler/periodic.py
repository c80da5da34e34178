"""Firing periodic schedules.

The table ``schedules`` is the truth; the scheduler caches only the earliest
``next_run_at`` of an unpaused schedule (the top of the due heap, which the
table's partial index keeps sorted). The loop sleeps until then, asks the store
to claim and fire everything due (one transaction per request: guarded claim +
insert of the runs' tasks), puts the new tasks in the lanes, and sleeps again.
Due by the database's clock: every scheduler that may lead shares it, where
their own clocks may disagree (each reply says the time it fired by, and the
next wait is measured from it). A test injects a clock, whose time is sent
instead. It wakes early on a
``schedule.changed`` event (create, resume, declaration) and re-reads the
table every ``refresh_interval`` whatever happens, so a lost event only
delays a run by that much.

Two schedulers may run this loop against one store: the claim's guard
(``WHERE next_run_at = <due read>``) lets exactly one fire each run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from google.protobuf.message import Message

from taskyard.bus.v1 import envelope_pb2, event_pb2, schedule_pb2, tenants_pb2
from taskyard.core import contract, errors, rpc
from taskyard.core.clock import Clock, SystemClock, sleep_unless, to_us
from taskyard.core.states import TaskState
from taskyard.scheduler.dispatcher import ref_of
from taskyard.scheduler.lanes import Lanes
from taskyard.v1 import limit_pb2

log = logging.getLogger(__name__)

M = TypeVar("M", bound=Message)
CHANGED = "schedule.changed"
# When a due run could not be claimed (another scheduler holds its row), look
# again this much later instead of spinning.
RETRY_SOON = 0.05
# After a failed store request.
ERROR_BACKOFF = 1.0


class Periodic:
    def __init__(
        self,
        store: rpc.Caller,
        *,
        lanes: Lanes,
        wake: Callable[[], None],
        clock: Clock | None = None,
        refresh_interval: float = 10.0,
        limit: int = 100,
        declared: Callable[[], list[limit_pb2.Limit]] = list,
    ) -> None:
        self._store = store
        # The limits task names declare, sent with every firing (flow.py).
        self._declared = declared
        self._lanes = lanes
        self._wake = wake
        # None: the database's clock decides what is due; this one only sleeps.
        self.clock = clock
        self._sleeper: Clock = clock or SystemClock()
        # The time the last firing was by (Unix us), from the store's reply.
        self._fired_at_us = 0
        self.refresh_interval = refresh_interval
        self.limit = limit
        self.changed = asyncio.Event()
        # The cached top of the heap: earliest next_run_at (Unix us), 0 = none.
        self.next_due_us = 0
        # Counters, for tests and metrics.
        self.runs_fired = 0
        self.runs_skipped = 0

    def routes(self) -> list[rpc.Route[Any]]:
        return [rpc.serve(contract.SCHEDULE_TRIGGER, self._on_trigger)]

    def on_events(self, batch: event_pb2.EventBatch) -> None:
        if any(e.type == CHANGED for e in batch.events):
            self.changed.set()

    def _enqueue(self, reply: schedule_pb2.FireSchedulesReply) -> None:
        # Like a submission: only new QUEUED rows (a SCHEDULED/PENDING or
        # duplicate one is not the lanes' business; the timers or resolver own it).
        queued = int(TaskState.QUEUED)
        if self._lanes.push_all(ref_of(t) for t in reply.tasks if t.created and t.state == queued):
            self._wake()

    async def _on_trigger(
        self, request: schedule_pb2.FireSchedulesRequest, env: envelope_pb2.Envelope
    ) -> schedule_pb2.FireSchedulesReply:
        """A manual run (TriggerSchedule): fired by the store, enqueued here like a submission."""
        if not request.trigger:
            raise errors.invalid([errors.FieldViolation(field="trigger", description="must name a schedule")])
        if request.now_us <= 0:
            request.now_us = self._now_us()
        del request.declared[:]
        request.declared.extend(self._declared())
        # The trigger's own id: the store fires it once, whichever scheduler a copy reaches.
        reply = await self._store.call(contract.STORE_SCHEDULE_FIRE, request, message_id=env.message_id)
        self._enqueue(reply)
        self.runs_fired += len(reply.tasks)
        return reply

    async def fire_due(self) -> int:
        """Claim and fire every run due by the clock now; returns the runs fired."""
        fired = 0
        while True:
            reply = await self._store.call(
                contract.STORE_SCHEDULE_FIRE,
                schedule_pb2.FireSchedulesRequest(
                    now_us=self._now_us(),
                    limit=self.limit,
                    declared=self._declared(),
                    # Every tenant's schedules: the suite's own firing (a manual
                    # trigger keeps its caller's scope).
                    scope=tenants_pb2.TenantScope(all=True),
                ),
            )
            self._fired_at_us = reply.now_us
            self._enqueue(reply)
            fired += len(reply.tasks)
            self.runs_fired += len(reply.tasks)
            self.runs_skipped += reply.skipped
            self.next_due_us = reply.next_due_us
            if not reply.more:
                return fired

    def _now_us(self) -> int:
        """The time a firing is by: the injected clock's, or 0 (the database's)."""
        return to_us(self.clock.now()) if self.clock is not None else 0

    def _delay(self) -> float:
        """Seconds until the cached earliest run, bounded by the refresh interval:
        measured from the time the last firing was by (a store that answers
        without it, from the clock here)."""
        if not self.next_due_us:
            return self.refresh_interval
        now_us = self._fired_at_us or to_us((self.clock or SystemClock()).now())
        delay = (self.next_due_us - now_us) / 1_000_000
        return min(self.refresh_interval, max(delay, RETRY_SOON))

    async def run(self) -> None:
        while True:
            self.changed.clear()
            try:
                await self.fire_due()
                delay = self._delay()
            except errors.TaskyardError as exc:
                log.warning("firing schedules: %s", exc)
                delay = ERROR_BACKOFF
            await self._sleep(delay)

    async def _sleep(self, seconds: float) -> None:
        """Sleep on the injected clock; a change event ends it early."""
        if not self.changed.is_set():
            await sleep_unless(self._sleeper, seconds, self.changed)
