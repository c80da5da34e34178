"""Running redrives: the leading scheduler re-queues dead letters at each redrive's rate.

A redrive is accepted by the store (gateway FailureService.Redrive): its row and
one item per matched task, the set fixed in one transaction. The leader runs
every RUNNING one, one step at a time: a step (``STORE_REDRIVE_STEP``) asks the
store to take up to ``limit`` pending items and re-queue their tasks, in one
transaction fenced by this leader's term. So the state of the work is the
items' in the database, never this process's: a new leader (or this one after
the store restarted) asks for the RUNNING redrives (``STORE_REDRIVES_ACTIVE``)
and goes on from the items still pending; an item is taken once, whoever took it.

Pacing is a token bucket per redrive, filled at ``rate`` a second up to one
second's worth (at least one item), and started empty: a redrive (or a leader
taking it over) never begins with a burst, so N items take at least
``(N - 1) / rate`` seconds from the first to the last. Each round (about every
``tick``) steps each redrive by what its bucket holds, at most ``MAX_STEP`` a
step. A step that fails still spends what it asked for: the store may have
committed it, and the rate is a maximum.

Pause, resume and cancel go through the store: the runner sees them in a
step's reply (a redrive no longer RUNNING is dropped) or at the next refresh
(every ``refresh`` seconds), which also picks up new and resumed redrives. The
clock is injected, so the pacing is tested without sleeping.
"""

from __future__ import annotations

import dataclasses
import logging
import math

from taskyard.bus.v1 import failures_pb2 as bus
from taskyard.core import contract, errors, rpc
from taskyard.core.clock import Clock, SystemClock
from taskyard.v1 import failure_service_pb2 as fs

log = logging.getLogger(__name__)

# Items one step may take: one transaction in the store, kept short.
MAX_STEP = 500
# Seconds between rounds of steps, and between reads of the RUNNING redrives.
TICK = 0.1
REFRESH = 1.0
# After a failed read of the RUNNING redrives, the next one this much later.
ERROR_BACKOFF = 1.0
RUNNING = fs.REDRIVE_STATE_RUNNING


@dataclasses.dataclass(kw_only=True)
class Bucket:
    """Tokens of one redrive: ``rate`` a second, at most ``capacity``, starting empty."""

    rate: float
    capacity: float
    tokens: float
    at: float

    @classmethod
    def empty(cls, rate: float, now: float) -> Bucket:
        return cls(rate=rate, capacity=max(1.0, rate), tokens=0.0, at=now)

    def refill(self, now: float) -> None:
        if now > self.at:
            self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.rate)
        self.at = max(self.at, now)

    def whole(self) -> int:
        """The items the bucket allows now."""
        return math.floor(self.tokens + 1e-9)

    def spend(self, items: int) -> None:
        self.tokens = max(0.0, self.tokens - items)


@dataclasses.dataclass(kw_only=True)
class Running:
    """One RUNNING redrive as the runner paces it."""

    id: str
    bucket: Bucket
    requeued: int = 0
    skipped: int = 0


class RedriveRunner:
    """The leader's runner of redrives for one term (``term``: the fence of every step)."""

    def __init__(
        self,
        store: rpc.Caller,
        *,
        term: int,
        clock: Clock | None = None,
        tick: float = TICK,
        refresh: float = REFRESH,
        max_step: int = MAX_STEP,
    ) -> None:
        self._store = store
        self.term = term
        self.clock: Clock = clock or SystemClock()
        self.tick = tick
        self.refresh_interval = refresh
        self.max_step = max(1, min(max_step, MAX_STEP))
        self.running: dict[str, Running] = {}
        # Counters, for tests and logs.
        self.steps = 0
        self.failed_steps = 0

    async def refresh(self) -> None:
        """Learn the RUNNING redrives: new ones start with an empty bucket, the others keep theirs."""
        reply = await self._store.call(contract.STORE_REDRIVES_ACTIVE, bus.ActiveRedrivesRequest())
        now = self.clock.monotonic()
        current: dict[str, Running] = {}
        for redrive in reply.redrives:
            if redrive.state != RUNNING or redrive.rate <= 0:
                continue
            known = self.running.get(redrive.id)
            if known is None:
                log.info("running redrive %s at %g/s (%d matched)", redrive.id, redrive.rate, redrive.matched)
                known = Running(id=redrive.id, bucket=Bucket.empty(redrive.rate, now))
            current[redrive.id] = known
        self.running = current

    async def pace(self) -> None:
        """One round: each RUNNING redrive stepped by what its bucket holds now."""
        for item in list(self.running.values()):
            bucket = item.bucket
            bucket.refill(self.clock.monotonic())
            while item.id in self.running and bucket.whole() >= 1:
                limit = min(bucket.whole(), self.max_step)
                taken = await self._step(item, limit)
                if taken < limit:
                    break  # nothing more pending now, or the step failed

    async def _step(self, item: Running, limit: int) -> int:
        """Items the step took (``limit`` spent whatever the answer); 0 on failure."""
        request = bus.RedriveStepRequest(id=item.id, limit=limit, term=self.term)
        item.bucket.spend(limit)
        self.steps += 1
        try:
            reply = await self._store.call(contract.STORE_REDRIVE_STEP, request)
        except errors.TaskyardError as exc:
            self.failed_steps += 1
            log.warning("redrive %s: step of %d failed: %s", item.id, limit, exc)
            if exc.code in (errors.Code.FAILED_PRECONDITION, errors.Code.NOT_FOUND):
                # Not RUNNING any more, or a term that is over: the next refresh says.
                self.running.pop(item.id, None)
            return 0
        item.requeued += reply.requeued
        item.skipped += reply.skipped
        if reply.redrive.state != RUNNING:
            self.running.pop(item.id, None)
            log.info(
                "redrive %s %s: %d re-queued, %d skipped",
                item.id,
                fs.RedriveState.Name(reply.redrive.state).removeprefix("REDRIVE_STATE_").lower(),
                reply.redrive.requeued,
                reply.redrive.skipped,
            )
        return int(reply.requeued + reply.skipped)

    async def run(self) -> None:
        """Until cancelled (the term's end): refresh every ``refresh`` seconds, pace every ``tick``."""
        next_refresh = self.clock.monotonic()
        while True:
            if self.clock.monotonic() >= next_refresh:
                try:
                    await self.refresh()
                    next_refresh = self.clock.monotonic() + self.refresh_interval
                except errors.TaskyardError as exc:
                    log.warning("reading the running redrives: %s", exc)
                    next_refresh = self.clock.monotonic() + ERROR_BACKOFF
            await self.pace()
            await self.clock.sleep(self.tick)
