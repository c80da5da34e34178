"""The schedulers' election: one leads, the others stand by.

Any number of schedulers may run against one store; one leads (it opens the
lanes, the registration and survey ports and the discovery hub, loads the lanes,
leases, dispatches, surveys, reconciles), the others stand by with no listener
open. Everyone who talks to "the scheduler" dials every scheduler's address on
one socket, so only the leader is ever reached; after a failover the dialers'
reconnects reach the new one and the pools register with it.

The leadership is one row in the database (the store's sql/leader.sql), reached
through the store (a scheduler holds no database connection), every expiry by
the database's clock, the one clock all schedulers share:

- A standby asks for the row every ~``RETRY`` seconds (jittered, so standbys
  that started together do not ask in step), or sooner, just after the
  holder's lease ends when the answer says it ends first. It is granted once
  expired or released; a new holder starts the next term.
- The leader renews every ``ttl / 4``: three renewals in a row may be lost
  before the row expires.
- A renewal refused (the row has another holder or term): the leader was
  deposed. It steps down in this process (nothing would restart it: neither
  ``taskyard dev`` nor a test cluster restarts a service that exits): its term
  ends as a stop does (listeners closed, lanes, pools and timers dropped with
  the term's ``Scheduler``) and it stands by again.
- The store out of reach: the leader keeps leading for ``STEP_DOWN_AFTER``
  times the ttl, then steps down by itself. Meanwhile a standby that reaches a
  store may take the expired row; every write that only a leader may make
  (leases at dispatch and at submission, restart reconciliation) carries the
  term and is refused in SQL once the term is over (fencing), so the old leader
  does no harm. But it would still take half the gateways' lane requests (the
  pools' PAIR listeners take the new leader beside it): cut off from the store
  for good, it would stall the suite behind a healthy standby. Stepping down at
  once instead would turn every short restart of the store into a failover and
  a reload of every lane.
- A graceful stop (SIGTERM) releases the row after the term's listeners are
  closed: a standby takes over within one ``RETRY``, and can bind the same
  addresses.

Failover after a leader dies: its row was renewed at most ``ttl / 4`` (and one
renewal's trip) before, so it expires at most ``ttl`` after the death, and a
standby asks ``EXPIRY_MARGIN`` after that (it was told when the lease ends; at
worst, its last answer predates the last renewal, within ``1.5 * RETRY``); then
it opens its listeners and
loads the lanes while the pools' redials (at most 0.25 s apart) reach it and
they register. With the default ``ttl`` of 2 s: about 2.5 s to the first
dispatch (docs/scaling.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable

from taskyard.bus.v1 import leader_pb2
from taskyard.core import contract, errors, rpc
from taskyard.core.clock import Clock, SystemClock, sleep_unless

log = logging.getLogger(__name__)

# Seconds between a standby's requests for the row, on average.
RETRY = 0.25
# A leader with no renewal answered for this many ttls steps down (the row has
# expired for a ttl already: a standby may lead).
STEP_DOWN_AFTER = 2.0
# Each wait is RETRY times a random factor in [1 - JITTER, 1 + JITTER].
JITTER = 0.5
# A standby told the row expires sooner than its next ask asks then, this much
# after (the answer's own trip): failover is not delayed by the polling.
EXPIRY_MARGIN = 0.02

# What leads for one term: returns once ``over`` is set (stop or deposed),
# its listeners closed.
Lead = Callable[[int, asyncio.Event], Awaitable[None]]


class Election:
    """One scheduler process's part in the election: ``run`` stands by, leads
    while elected (``lead``), and stands by again if deposed, until stopped."""

    def __init__(
        self,
        store: rpc.Caller,
        *,
        holder: str,
        ttl: float,
        clock: Clock | None = None,
        retry: float = RETRY,
        rng: random.Random | None = None,
    ) -> None:
        if ttl <= 0:
            raise ValueError("the leadership's ttl must be positive")
        self.holder = holder
        self.ttl = ttl
        # The term this scheduler holds; 0 while it stands by.
        self.term = 0
        # The holder as last seen (the logs name who leads).
        self.leader = ""
        self._store = store
        self._ttl_ms = max(1, round(ttl * 1000))
        self._clock: Clock = clock or SystemClock()
        self._retry = retry
        self._rng = rng or random.Random()
        # A request that waits longer than this is given up (the next one follows).
        self._timeout = ttl / 2
        self._unreachable = False
        # Seconds left of the holder's lease, as last answered (None: no answer).
        self._expires_in: float | None = None

    @property
    def renew_interval(self) -> float:
        return self.ttl / 4

    # --- one request each --------------------------------------------------------
    async def _ask(self, request: leader_pb2.LeadershipRequest) -> leader_pb2.LeadershipReply | None:
        """The store's answer, or None when it gives none (logged once an outage)."""
        try:
            reply = await self._store.call(contract.STORE_LEADERSHIP, request, timeout=self._timeout)
        except errors.TaskyardError as exc:
            if not self._unreachable:
                log.warning("election: no answer from the store (%s)", exc)
            self._unreachable = True
            return None
        if self._unreachable:
            log.info("election: the store answers again")
        self._unreachable = False
        self.leader = reply.holder
        self._expires_in = reply.expires_in_ms / 1000
        return reply

    async def acquire(self) -> bool:
        """Take the row if it is free; True when this scheduler now leads (``term``)."""
        self._expires_in = None
        reply = await self._ask(leader_pb2.LeadershipRequest(holder=self.holder, ttl_ms=self._ttl_ms))
        if reply is None or not reply.leader:
            return False
        self.term = reply.term
        return True

    async def renew(self) -> bool | None:
        """Extend the term held: True when kept, False when deposed (the row has
        another holder or term; ``term`` is then 0), None when the store did not answer."""
        reply = await self._ask(
            leader_pb2.LeadershipRequest(holder=self.holder, term=self.term, ttl_ms=self._ttl_ms)
        )
        if reply is None:
            return None
        if reply.leader:
            return True
        log.warning(
            "deposed: the leadership is %s's (term %d), not ours (term %d); standing by",
            reply.holder or "nobody",
            reply.term,
            self.term,
        )
        self.term = 0
        return False

    async def release(self) -> None:
        """Hand the row over at once (a graceful stop); unanswered, it simply expires."""
        if not self.term:
            return
        term, self.term = self.term, 0
        reply = await self._ask(leader_pb2.LeadershipRequest(holder=self.holder, term=term, release=True))
        if reply is not None:
            log.info("released the leadership (term %d)", term)

    # --- the loops -------------------------------------------------------------------
    async def campaign(self, stop: asyncio.Event) -> int:
        """Stand by until this scheduler wins the row: its term, or 0 when ``stop`` came first."""
        seen = None
        while not stop.is_set():
            if await self.acquire():
                log.info("elected leader (term %d)", self.term)
                return self.term
            if self.leader and self.leader != seen:  # an answer, naming a new holder
                seen = self.leader
                log.info("standing by: %s leads", self.leader)
            wait = self._retry * (1 + JITTER * (2 * self._rng.random() - 1))
            if self._expires_in and self._expires_in + EXPIRY_MARGIN < wait:
                wait = self._expires_in + EXPIRY_MARGIN  # the holder's lease ends first
            await sleep_unless(self._clock, wait, stop)
        return 0

    async def hold(self) -> None:
        """Renew every ``renew_interval`` until deposed, or unanswered for
        ``STEP_DOWN_AFTER`` ttls (returns; ``term`` is then 0). Runs until cancelled
        otherwise: through a stop too, until the term's listeners are closed and the
        row can be released."""
        interval = self.renew_interval
        due = answered = self._clock.monotonic()
        while True:
            due += interval
            await self._clock.sleep(max(0.0, due - self._clock.monotonic()))
            kept = await self.renew()
            if kept is False:
                return
            now = self._clock.monotonic()
            if kept:
                answered = now
            elif now - answered >= STEP_DOWN_AFTER * self.ttl:
                log.warning(
                    "no renewal answered for %.1f s: stepping down (term %d); standing by",
                    now - answered,
                    self.term,
                )
                self.term = 0
                return
            # A renewal that took longer than the interval: the next one at once, then on time.
            due = max(due, self._clock.monotonic() - interval)

    async def run(self, stop: asyncio.Event, lead: Lead) -> None:
        """Stand by, lead while elected, stand by again if deposed; until ``stop``.
        Every term ends with ``lead`` returning (its listeners closed); the row is
        then released unless another holder has it already."""
        while not stop.is_set():
            term = await self.campaign(stop)
            if not term:
                return
            over = asyncio.Event()
            keeper = asyncio.create_task(self._keep(over), name="scheduler-leadership")
            ender = asyncio.create_task(_relay(stop, over), name="scheduler-stop")
            try:
                await lead(term, over)
            finally:
                for task in (keeper, ender):
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
                await self.release()

    async def _keep(self, over: asyncio.Event) -> None:
        try:
            await self.hold()
        finally:
            over.set()  # deposed (or the keeper failed): the term ends


async def _relay(stop: asyncio.Event, over: asyncio.Event) -> None:
    await stop.wait()
    over.set()
