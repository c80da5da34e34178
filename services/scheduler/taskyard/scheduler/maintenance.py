"""Periodic work that keeps the scheduler's cache honest with the store.

- rescue: leases that lapsed by the database's clock;
- promote: SCHEDULED/RETRYING rows whose time has come;
- reload: QUEUED rows the lanes do not know (start-up, a store's listener
  (re)connecting, and a fallback poll in case a wake-up was lost; a NOTIFY from
  outside brings only its own tasks, result_store/arrivals.py);
- survey: ask every pool what it holds, renew those leases, correct slots.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import pynng

from taskyard.bus.v1 import dispatch_pb2, lanes_pb2, leases_pb2, pools_pb2, task_record_pb2
from taskyard.core import contract, errors, rpc
from taskyard.core.retry import RetryPolicy
from taskyard.scheduler import pauses
from taskyard.scheduler.dispatcher import Dispatcher, ref_of
from taskyard.scheduler.flow import Flow
from taskyard.scheduler.lanes import Lanes, Ref
from taskyard.scheduler.metrics import LANES_RELOADS, LEASES_RESCUED
from taskyard.scheduler.pools import PoolRegistry
from taskyard.scheduler.reconciler import Reconciler

log = logging.getLogger(__name__)

PAGE = 1000
# A pool that misses this many surveys in a row is forgotten; its leases lapse.
MAX_MISSED_SURVEYS = 3
# Seconds between survey rounds while a restarted scheduler waits for a pool to answer.
QUICK_RESURVEY = 0.1
QUICK_WINDOW_MS = 100
# Seconds between reads of the stores' pool registry: a pool.lost or pool.registered
# event lost on the way costs at most this (pools.py, PoolRegistry.learn_states).
POOL_STATES_INTERVAL = 2.0
# Pools whose last heartbeat is older than this are left out of that read.
POOL_STATES_AGE_MS = 24 * 3600 * 1000


class Maintenance:
    def __init__(
        self,
        *,
        lanes: Lanes,
        pools: PoolRegistry,
        dispatcher: Dispatcher,
        store: rpc.Caller,
        policy: RetryPolicy,
        lease_ms: int,
        default_max_retries: int = 3,
        reconciler: Reconciler | None = None,
        flow: Flow | None = None,
    ) -> None:
        self._default_max_retries = default_max_retries
        self._lanes = lanes
        self._pools = pools
        self._dispatcher = dispatcher
        self._store = store
        self._policy = policy
        self._lease_ms = lease_ms
        self.reload_requested = asyncio.Event()
        # Restart reconciliation: a pool's first answer hands back orphaned leases.
        self.reconciler = reconciler
        # Leases that ended in the store free their limits' units.
        self._flow = flow

    def _pushed(self, refs: list[Ref]) -> None:
        if self._lanes.push_all(refs):
            self._dispatcher.wake.set()

    async def reload(self) -> int:
        """Page through every QUEUED row and enqueue the ones the lanes lack."""
        LANES_RELOADS.inc()
        # Paused queues first (a lost queue.resumed event must not park a queue's
        # tasks until restart), so a resumed queue's rows go straight to the lanes.
        if await pauses.load(self._store, self._lanes):
            self._dispatcher.wake.set()
        cursor, total = "", 0
        while True:
            reply = await self._store.call(
                contract.STORE_LOAD_QUEUED, lanes_pb2.LoadQueuedRequest(limit=PAGE, cursor=cursor)
            )
            refs = [ref_of(t) for t in reply.tasks]
            total += len(refs)
            self._pushed(refs)
            if not reply.next_cursor or not reply.tasks:
                return total
            cursor = reply.next_cursor

    async def rescue_and_promote(self) -> None:
        began = time.monotonic()
        rescued = await self._store.call(
            contract.STORE_RESCUE,
            leases_pb2.RescueRequest(
                limit=PAGE,
                retry_delay_ms=int(self._policy.delay(1) * 1000),
                default_max_retries=self._default_max_retries,
            ),
        )
        if rescued.requeued or rescued.failed:
            LEASES_RESCUED.labels("requeued").inc(len(rescued.requeued))
            LEASES_RESCUED.labels("failed").inc(len(rescued.failed))
            log.info(
                "rescued %d lapsed leases (%d failed for good)", len(rescued.requeued), len(rescued.failed)
            )
        if self._flow is not None and (rescued.requeued or rescued.failed):
            ended = [t.id for t in rescued.requeued] + [t.id for t in rescued.failed]
            self._flow.release_tasks(ended, before=began)
        self._pushed([ref_of(t) for t in rescued.requeued])
        promoted = await self._store.call(contract.STORE_PROMOTE_DUE, lanes_pb2.PromoteDueRequest(limit=PAGE))
        self._pushed([ref_of(t) for t in promoted.tasks])

    async def learn_pool_states(self) -> None:
        """Which pools a store declared lost, and which it heard from since: one read
        of the registry, whatever the number of tasks. A pool newly lost may have had
        leases refused (the store leases nothing to a lost pool) whose tasks left the
        lanes: they are loaded again."""
        reply = await self._store.call(
            contract.STORE_SERVERS, pools_pb2.ServersRequest(max_age_ms=POOL_STATES_AGE_MS)
        )
        if self._pools.learn_states({s.pool_id: s.state for s in reply.servers}):
            self.reload_requested.set()

    async def _learn_pool_states_once(self) -> None:
        try:
            await self.learn_pool_states()
        except errors.TaskyardError as exc:  # the rescue and the reload go on regardless
            log.debug("reading the pool registry failed: %s", exc)

    async def run_polling(self, polling_interval: float, fallback_interval: float) -> None:
        last_reload = time.monotonic()
        last_states = 0.0
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.reload_requested.wait(), polling_interval)
            try:
                if time.monotonic() - last_states >= POOL_STATES_INTERVAL:
                    last_states = time.monotonic()
                    await self._learn_pool_states_once()
                if self.reload_requested.is_set() or time.monotonic() - last_reload >= fallback_interval:
                    self.reload_requested.clear()
                    last_reload = time.monotonic()
                    await self.reload()
                await self.rescue_and_promote()
            except errors.TaskyardError as exc:
                log.warning("maintenance: %s", exc)

    async def run_survey(self, surveyor: pynng.Surveyor0, scheduler_id: str, interval: float) -> None:
        window = surveyor.survey_time
        while True:
            # Right after a restart, until every pool has answered once (the pools'
            # survey sockets are still redialling), short rounds follow each other
            # quickly, and such a round does not count as a missed survey.
            quick = self._awaiting_pools()
            surveyor.survey_time = min(window, QUICK_WINDOW_MS) if quick else window
            try:
                await self.survey_once(surveyor, scheduler_id, grace=2 * interval, count_misses=not quick)
            except errors.TaskyardError as exc:
                log.warning("survey: %s", exc)
            # Again now: a pool may have registered during the window.
            await asyncio.sleep(min(interval, QUICK_RESURVEY) if self._awaiting_pools() else interval)

    def _awaiting_pools(self) -> bool:
        return self.reconciler is not None and self.reconciler.pending(self._pools.pools)

    async def survey_once(
        self, surveyor: pynng.Surveyor0, scheduler_id: str, *, grace: float, count_misses: bool = True
    ) -> None:
        # Every pool we know answered: no need to sit out the rest of the window
        # (a pool we do not know yet is found by its registration or the next round).
        expected = set(self._pools.pools)
        surveyed_at = time.monotonic()
        await surveyor.asend(contract.SURVEY.encode(dispatch_pb2.Survey(scheduler_id=scheduler_id)))
        replies: list[dispatch_pb2.SurveyReply] = []
        while True:
            try:
                raw = await surveyor.arecv()
            except pynng.Timeout:
                break
            except pynng.NNGException:
                break
            try:
                reply = contract.SURVEY.open_answer(raw)
            except Exception:
                reply = None
            if reply is None:
                log.warning("malformed survey reply dropped")
                continue
            replies.append(reply)
            if expected and expected <= {r.pool_id for r in replies}:
                break
        answered: set[str] = set()
        refs: list[task_record_pb2.AttemptRef] = []
        now = time.monotonic()
        for reply in replies:
            pool = self._pools.upsert(
                pool_id=reply.pool_id,
                pair_address=reply.pair_address,
                names=list(reply.task_names),
                capacity=reply.capacity,
                state=reply.state,
                cut_off=reply.cut_off,
                tenants=list(reply.tenants),
            )
            if pool is None:  # its link dropped: a reply sent before it died
                continue
            answered.add(reply.pool_id)
            held = {r.task_id for r in reply.running}
            # Dispatches the pool never received (a message lost on the way) free
            # their slot here; their rows are rescued when the lease lapses.
            for task_id, sent_at in list(pool.inflight.items()):
                if task_id not in held and now - sent_at > grace:
                    del pool.inflight[task_id]
            if not pool.lost:
                # A lost pool's leases are left to lapse: its tasks go to the
                # pools a store hears from (what it runs could not be reported).
                refs.extend(reply.running)
        for pool_id, pool in list(self._pools.pools.items()):
            if pool_id not in answered and count_misses:
                pool.missed_surveys += 1
                if pool.missed_surveys >= MAX_MISSED_SURVEYS:
                    self._pools.remove(pool_id)
        if self.reconciler is not None:
            began = time.monotonic()
            released = await self.reconciler.after_survey(replies, surveyed_at)
            if self._flow is not None and released:
                self._flow.release_tasks((r.id for r in released), before=began)
            self._pushed(released)
        if refs:
            renewed = await self._store.call(
                contract.STORE_RENEW, leases_pb2.RenewLeasesRequest(refs=refs, lease_ms=self._lease_ms)
            )
            if renewed.lost:  # mostly finished while the survey was answered
                log.debug("%d attempts held by pools no longer current at renewal", len(renewed.lost))
        self._dispatcher.wake.set()
