"""The pool manager: a supervisor, not an executor.

It spawns ``Settings.workers`` worker processes and holds the pool's singletons:
the PAIR socket the scheduler dials (Dispatch in, PoolReport out), registration
with the scheduler, the RESPONDENT answering surveys, discovery announcements
and the heartbeat to the result-store. It routes each dispatched attempt to the
least-loaded live worker, tracks what every worker holds and whether it started,
and turns a worker's death into immediate Death reports (then respawns it).

The manager is a few objects, each given what it works with:

- ``PoolState``, ``Outbox`` (state.py): who the pool is and the report being
  gathered; ``StoreOutlets`` (reports.py): the requests to the store, open once
  the pool starts. Its loops run in one supervised set (core/background.py).
- ``Workers`` (processes.py): the worker processes, their reports and routing;
  ``Watchdog`` (watchdog.py) over them; ``Renewals`` (renewals.py) of what they
  hold; ``DispatchIntake`` (intake.py) feeding them.
- ``SchedulerLink`` (links.py): the scheduler and the registry; ``ReportRelay``
  (relay.py): reports to the store, slot notices through the link.

This module builds them, runs them and stops the whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os

from taskyard.bus.v1 import leases_pb2
from taskyard.core import contract, discovery, errors, health, rpc
from taskyard.core.background import Background, LoopEnded
from taskyard.core.config import PoolSettings
from taskyard.core.states import WorkerState
from taskyard.worker_pool import declarations, limit_declarations, registry
from taskyard.worker_pool import metrics as pool_metrics
from taskyard.worker_pool.intake import DispatchIntake
from taskyard.worker_pool.links import SchedulerLink
from taskyard.worker_pool.processes import Workers
from taskyard.worker_pool.relay import ReportRelay
from taskyard.worker_pool.renewals import Renewals
from taskyard.worker_pool.reports import StoreOutlets
from taskyard.worker_pool.state import Outbox, PoolState
from taskyard.worker_pool.watchdog import Watchdog

log = logging.getLogger(__name__)

READY_TIMEOUT = 120.0
# How long a stopping pool waits for the store to acknowledge its last reports.
REPORT_FLUSH_TIMEOUT = 5.0
# How long a starting pool waits for the store to take its tasks' declared limits
# before it registers anyway (the declaration goes on in the background).
LIMITS_DECLARE_WAIT = 5.0
# How long its background tasks get to end once cancelled (they hold nothing by then).
TASKS_END_TIMEOUT = 5.0


class Manager:
    def __init__(self, settings: PoolSettings, pool_id: str | None = None) -> None:
        self.settings = settings
        self.pool = PoolState(settings, pool_id)
        self.outbox = Outbox()
        # Cut off from the stores, or heard again: the scheduler is told at once.
        self.pool.contact.watch(self.outbox.slots_changed)
        # The manager's tasks, ended together at shutdown (core.background).
        self.background = Background("worker-pool")
        self.outlets = StoreOutlets(settings)
        self.workers = Workers(settings, self.pool, self.outbox, self.background, self.outlets)
        self.watchdog = Watchdog(settings, self.workers)
        self.renewals = Renewals(settings, self.pool, self.workers, self.watchdog)
        self.intake = DispatchIntake(settings, self.pool, self.workers, self.watchdog)
        self.link = SchedulerLink(settings, self.pool, self.workers, self.outbox)
        self.relay = ReportRelay(
            self.pool,
            self.outbox,
            self.outlets,
            self.link.notify_scheduler,
            start_notice_delay=settings.start_notice_delay,
        )
        self._store: rpc.Requester | None = None
        self._sender: asyncio.Task[None] | None = None
        self._peer: discovery.Peer | None = None

    # ------------------------------------------------------------------ run
    async def run(self, stop: asyncio.Event) -> int:
        if not self.settings.metrics_served:
            return await self._run(stop)
        gauges = pool_metrics.PoolGauges(self.pool.pool_id, self.workers.process_infos, self.pool.concurrency)
        unregister = pool_metrics.register(gauges)
        try:
            return await self._run(stop)
        finally:
            unregister()

    async def _run(self, stop: asyncio.Event) -> int:
        """Until ``stop``; a loop of the pool that ends first stops it as a signal would (in
        order: what it holds goes back), and the exit then says which (core.background)."""
        stopping = asyncio.ensure_future(self._stop_on_failure(stop))
        try:
            code = await self._run_until(stop)
        finally:
            stopping.cancel()
        if self.background.failure:
            raise LoopEnded(self.background.failure)
        return code

    async def _stop_on_failure(self, stop: asyncio.Event) -> None:
        await self.background.failed.wait()
        stop.set()

    async def _run_until(self, stop: asyncio.Event) -> int:
        await self._start()
        workers = self.workers
        if await _first(stop, workers.all_ready, limit=READY_TIMEOUT) is stop:
            return await self._shutdown()
        if not workers.all_ready.is_set():
            log.warning("not every worker became ready within %.0fs; registering anyway", READY_TIMEOUT)
        # The registry row says STARTING before any scheduler can lease to us: a
        # previous life of this pool id may have left it DRAINING (no lease then).
        assert self._store is not None, "opened by _start()"
        await self.link.beat(self._store, 2.0)
        # @task(rate_limit=/concurrency=) declarations -> the store's limits, before the
        # task names are registered: a task accepted under a name the pool has just
        # registered already finds its limits (the scheduler adds them at submit).
        # A store that does not answer in time does not hold up the start.
        limits = self.background.spawn(
            limit_declarations.declare_registered(self._store, self.pool.task_names), name="limits"
        )
        await asyncio.wait([limits], timeout=LIMITS_DECLARE_WAIT)
        self.link.want_registration()
        self.background.start(self.link.run_registration(), name="registration")
        self.link.open_surveys()
        self.background.start(self.link.answer_surveys(), name="surveys")
        if await _first(stop, self.link.registered) is stop:
            return await self._shutdown()
        self._serve(self._store)
        await stop.wait()
        return await self._shutdown()

    async def _start(self) -> None:
        """Open the pool's sockets, start its workers and what supervises them."""
        s, pool = self.settings, self.pool
        pool.task_names = registry.load_modules(s.task_modules)
        if not pool.task_names:
            log.warning("no task registered: set TASKYARD_TASK_MODULES (e.g. taskyard.examples)")
        pool.state = WorkerState.STARTING
        if s.transport == "ipc":
            os.makedirs(s.ipc_dir, exist_ok=True)
        pair = self.link.open_pair()
        self._store = rpc.Requester(
            s.store_addresses, max_message_bytes=s.max_message_bytes, timeout=s.request_timeout
        )
        self.outlets.open(self._store, self.pool.contact)
        log.info(
            "pool %s starting: %d workers x %d, pair %s, %d task names",
            pool.pool_id,
            s.workers,
            pool.concurrency,
            pool.pair_address,
            len(pool.task_names),
        )
        await self.workers.start()
        start = self.background.start
        self._sender = start(self.relay.run(), name="reports")
        start(self.intake.receive_pair(pair), name="pair")
        self.intake.open_leased_stream()
        start(self.intake.receive_leased_stream(), name="leased-stream")
        # Supervision: the watchdog over worker beats, memory and cancel deadlines,
        # and the pool's cancel-request stream.
        start(self.watchdog.run(), name="watchdog")
        start(self.renewals.receive_cancels(), name="cancel-stream")

    def _serve(self, store: rpc.Requester) -> None:
        """Registered: the pool takes work and says so to everyone who asks."""
        s, pool, start = self.settings, self.pool, self.background.start
        pool.state = WorkerState.RUNNING
        self.outbox.slots_changed()
        # @task(cron=/every=) declarations -> the store's schedules (declarations.py).
        self.background.spawn(declarations.declare_registered(store, pool.task_names), name="schedules")
        self._peer = discovery.Peer(
            s.discovery_addresses, self.link.announcement, interval=s.announce_interval
        )
        start(self._peer.run(), name="discovery")
        start(self.link.run_heartbeat(), name="heartbeat")
        start(self.renewals.run(), name="renewals")
        health.mark_ready()
        log.info(
            "worker-pool ready: pool %s registered with scheduler %s, capacity %d, worker pids %s",
            pool.pool_id,
            self.link.scheduler_id,
            pool.capacity,
            self.workers.worker_pids(),
        )

    # ------------------------------------------------------------ shutdown
    async def _shutdown(self) -> int:
        s, pool = self.settings, self.pool
        self.background.stopping()  # from now on its loops end as what they read closes
        log.info("draining: no new work; stopping %d workers", len(self.workers.handles))
        pool.state = WorkerState.DRAINING
        self.outbox.slots_changed()  # tell the scheduler: free_slots 0
        if self.link.registered.is_set() and self._store is not None:
            # Before any worker stops: from this commit on the store leases nothing
            # to this pool, so no dispatch can arrive after it stops listening
            # unnoticed (those committed earlier: _hand_back_leases).
            await self.link.beat(self._store, 2.0)
        pool.state = WorkerState.STOPPING
        await self.workers.stop(s.shutdown_timeout)
        # No more dispatches: one that arrives from now on would become a release
        # after the last flush and stay ASSIGNED until its lease lapses.
        self.link.close_pair()
        self.intake.close()
        await asyncio.sleep(0)  # let the receive loops see it and end
        await self._flush_reports()
        await self._hand_back_leases()
        pool.state = WorkerState.STOPPED
        if self.link.registered.is_set():
            req = rpc.Requester(s.store_addresses, max_message_bytes=s.max_message_bytes, timeout=1.0)
            await self.link.beat(req, 1.0)
            req.close()
        # The receiving sockets close before the tasks are awaited: a closed socket ends
        # a receive whose cancel pynng swallowed (lifecycle.end_tasks), which would
        # otherwise wait for a message that never comes and hold the exit forever.
        self.link.close()
        self.intake.close()
        self.renewals.close()
        if self._peer is not None:
            self._peer.close()
        await self.background.close(TASKS_END_TIMEOUT)
        if self._store is not None:
            self._store.close()
        log.info("worker-pool stopped")
        return 0

    async def _flush_reports(self) -> None:
        """Hand the last reports (releases) to the store before closing."""
        self.pool.closing = True
        self.outbox.slots_changed()
        if self._sender is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._sender), 1.0)
        if not await self.outlets.flushed(REPORT_FLUSH_TIMEOUT):
            log.warning("final reports not acknowledged by the store; leases will lapse instead")

    async def _hand_back_leases(self) -> None:
        """Leases of this pool still ASSIGNED in the store now belong to dispatches
        that were on their way when it stopped listening (a scheduler that had not yet
        heard of the drain, the store's post-commit stream): nothing here will run
        them, so they go back to the queue at once instead of waiting for their lease
        to lapse. Started (RUNNING) rows are never touched by this statement."""
        if self._store is None:
            return
        req = leases_pb2.ReconcileRequest(pool_ids=[self.pool.pool_id])
        try:
            reply = await self._store.call(contract.STORE_RECONCILE, req, timeout=2.0)
        except errors.TaskyardError as exc:
            log.warning("could not hand back unheld leases (%s): they will lapse", exc)
            return
        if reply.released:
            log.info("handed back %d leases dispatched to us while we stopped", len(reply.released))


async def _first(
    stop: asyncio.Event, other: asyncio.Event, limit: float | None = None
) -> asyncio.Event | None:
    """Which of two events fires first (None on timeout)."""
    a = asyncio.ensure_future(stop.wait())
    b = asyncio.ensure_future(other.wait())
    try:
        done, _ = await asyncio.wait({a, b}, timeout=limit, return_when=asyncio.FIRST_COMPLETED)
    finally:
        a.cancel()
        b.cancel()
    if a in done or stop.is_set():
        return stop
    if b in done:
        return other
    return None
