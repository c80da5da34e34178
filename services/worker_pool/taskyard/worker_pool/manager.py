"""The pool manager: a supervisor, not an executor.

It spawns ``Settings.workers`` worker processes and holds the pool's singletons:
the PAIR socket the scheduler dials (Dispatch in, PoolReport out), registration
with the scheduler, the RESPONDENT answering surveys, discovery announcements
and the heartbeat to the result-store. It routes each dispatched attempt to the
least-loaded live worker, tracks what every worker holds and whether it started,
and turns a worker's death into immediate Death reports (then respawns it).

The code is split by side: state.py holds what the manager holds (``PoolState``),
workers.py the worker processes (``Workers``), links.py the scheduler, store and
discovery (``SchedulerLink``); this module runs and stops the whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Coroutine
from typing import Any

import pynng

from taskyard.bus.v1 import envelope_pb2, reconcile_pb2
from taskyard.core import discovery, errors, lifecycle, transport
from taskyard.core.retry import RetryPolicy
from taskyard.core.states import WorkerState
from taskyard.worker_pool import declarations, pipe, registry
from taskyard.worker_pool.links import SchedulerLink
from taskyard.worker_pool.renewals import Renewals
from taskyard.worker_pool.reports import ReportForwarder
from taskyard.worker_pool.shipper import LogShipper

log = logging.getLogger(__name__)

READY_TIMEOUT = 120.0
# How long a stopping pool waits for the store to acknowledge its last reports.
REPORT_FLUSH_TIMEOUT = 5.0
# How long its background tasks get to end once cancelled (they hold nothing by then).
TASKS_END_TIMEOUT = 5.0


class Manager(Renewals, SchedulerLink):
    """Runs and stops the pool; constructed as ``Manager(settings, pool_id=None)`` (see PoolState)."""

    # ------------------------------------------------------------------ run
    async def run(self, stop: asyncio.Event) -> int:
        s = self.settings
        self.task_names = registry.load_modules(s.task_modules)
        if not self.task_names:
            log.warning("no task registered: set TASKYARD_TASK_MODULES (e.g. taskyard.examples)")
        self.state = WorkerState.STARTING
        if s.transport == "ipc":
            os.makedirs(s.ipc_dir, exist_ok=True)
        self._pair = transport.open_pair(
            max_message_bytes=s.max_message_bytes, listen=s.pool_pair_listen_address(self.pool_id)
        )
        # What we register and announce: the bound port on the advertise host (not 0.0.0.0).
        self.pair_address = s.advertised_pair_address(transport.listen_address(self._pair))
        self._store = transport.Requester(
            s.store_address, max_message_bytes=s.max_message_bytes, timeout=s.request_timeout
        )
        policy = RetryPolicy.from_settings(s)  # with TASKYARD_RETRY_JITTER, as the workers use
        self._starts = ReportForwarder(self._store, policy)
        self._outcomes = ReportForwarder(self._store, policy)
        self._logs = LogShipper(
            self._store, max_pending=s.log_buffer_lines, batch_bytes=max(1, s.max_message_bytes // 2)
        )
        loop = asyncio.get_running_loop()
        self._pair.add_post_pipe_connect_cb(
            lambda _pipe: transport.call_from_nng_thread(loop, self._on_pair_connected)
        )
        self._pair.add_post_pipe_remove_cb(
            lambda _pipe: transport.call_from_nng_thread(loop, self._on_pair_lost)
        )
        log.info(
            "pool %s starting: %d workers x %d, pair %s, %d task names",
            self.pool_id,
            s.workers,
            self.concurrency,
            self.pair_address,
            len(self.task_names),
        )
        for index in range(max(1, s.workers)):
            await self._spawn(index)
        self._sender = self._spawn_task(self._send_reports(), "reports")
        self._spawn_task(self._send_start_notices(), "start-notices")
        self._spawn_task(self._receive_dispatch(), "pair")
        self._leased_stream = transport.Inbox(
            transport.open_socket(
                pynng.Sub0, max_message_bytes=s.max_message_bytes, dial=s.pool_stream_address
            )
        )
        self._spawn_task(self._receive_leased_stream(), "leased-stream")
        # Supervision: the watchdog over worker beats, memory and cancel deadlines,
        # lease renewal and the pool's cancel-request stream (watchdog.py, renewals.py).
        self._spawn_task(self._watch_loop(), "watchdog")
        self._spawn_task(self._receive_cancels(), "cancel-stream")

        if await _first(stop, self._all_ready, limit=READY_TIMEOUT) is stop:
            return await self._shutdown()
        if not self._all_ready.is_set():
            log.warning("not every worker became ready within %.0fs; registering anyway", READY_TIMEOUT)
        # The registry row says STARTING before any scheduler can lease to us: a
        # previous life of this pool id may have left it DRAINING (no lease then).
        await self._beat(self._store, 2.0)
        self._register_wanted.set()
        self._spawn_task(self._registration_loop(), "registration")
        self._respondent = self._open_respondent(self._survey_address)
        self._spawn_task(self._answer_surveys(), "surveys")
        if await _first(stop, self._registered) is stop:
            return await self._shutdown()
        self.state = WorkerState.RUNNING
        self._mark_dirty()
        # @task(cron=/every=) declarations -> the store's schedules (declarations.py).
        self._spawn_task(declarations.declare_registered(self._store, self.task_names), "schedules")
        self._peer = discovery.Peer(s.discovery_address, self._announcement, interval=s.announce_interval)
        self._spawn_task(self._peer.run(), "discovery")
        self._spawn_task(self._heartbeat_loop(), "heartbeat")
        self._spawn_task(self._renew_loop(), "renewals")
        log.info(
            "worker-pool ready: pool %s registered with scheduler %s, capacity %d, worker pids %s",
            self.pool_id,
            self.scheduler_id,
            self.capacity,
            self.worker_pids(),
        )
        await stop.wait()
        return await self._shutdown()

    # ------------------------------------------------------------ shutdown
    async def _shutdown(self) -> int:
        s = self.settings
        log.info("draining: no new work; stopping %d workers", len(self.workers))
        self.state = WorkerState.DRAINING
        self._mark_dirty()  # tell the scheduler: free_slots 0
        if self._registered.is_set() and self._store is not None:
            # Before any worker stops: from this commit on the store leases nothing
            # to this pool, so no dispatch can arrive after it stops listening
            # unnoticed (those committed earlier: _hand_back_leases).
            await self._beat(self._store, 2.0)
        for w in list(self.workers.values()):
            if not w.gone:
                with contextlib.suppress(ConnectionError, RuntimeError):
                    w.writer.write(pipe.pack(pipe.STOP))
        self.state = WorkerState.STOPPING
        waits = [w.exited.wait() for w in self.workers.values() if not w.gone]
        if waits:
            done = await _wait_all(waits, s.shutdown_timeout)
            if not done:
                for w in list(self.workers.values()):
                    if not w.gone and w.process.is_alive():
                        log.warning(
                            "worker %d (pid %s) still alive after %.1fs: killing",
                            w.index,
                            w.pid,
                            s.shutdown_timeout,
                        )
                        w.process.kill()
                await _wait_all([w.exited.wait() for w in self.workers.values()], 10.0)
        # No more dispatches: one that arrives from now on would become a release
        # after the last flush and stay ASSIGNED until its lease lapses.
        for sock in (self._pair, self._leased_stream):
            if sock is not None:
                sock.close()
        await asyncio.sleep(0)  # let the receive loops see it and end
        # Hand the last reports (releases) to the store before closing.
        self._closing = True
        self._mark_dirty()
        if self._sender is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._sender), 1.0)
        if self._outcomes is not None and self._starts is not None:
            try:
                await asyncio.wait_for(
                    asyncio.gather(
                        self._outcomes.idle.wait(),
                        self._starts.idle.wait(),
                        *([self._logs.idle.wait()] if self._logs is not None else []),
                    ),
                    REPORT_FLUSH_TIMEOUT,
                )
            except TimeoutError:
                log.warning("final reports not acknowledged by the store; leases will lapse instead")
        await self._hand_back_leases()
        self.state = WorkerState.STOPPED
        if self._registered.is_set():
            req = transport.Requester(s.store_address, max_message_bytes=s.max_message_bytes, timeout=1.0)
            await self._beat(req, 1.0)
            req.close()
        # The receiving sockets close before the tasks are awaited: a closed socket ends
        # a receive whose cancel pynng swallowed (lifecycle.end_tasks), which would
        # otherwise wait for a message that never comes and hold the exit forever.
        for sock in (self._pair, self._respondent, self._leased_stream, self._cancel_stream):
            if sock is not None:
                sock.close()
        if self._peer is not None:
            self._peer.close()
        await lifecycle.end_tasks(list(self._tasks), TASKS_END_TIMEOUT)
        if self._store is not None:
            self._store.close()
        log.info("worker-pool stopped")
        return 0

    async def _hand_back_leases(self) -> None:
        """Leases of this pool still ASSIGNED in the store now belong to dispatches
        that were on their way when it stopped listening (a scheduler that had not yet
        heard of the drain, the store's post-commit stream): nothing here will run
        them, so they go back to the queue at once instead of waiting for their lease
        to lapse. Started (RUNNING) rows are never touched by this statement."""
        if self._store is None:
            return
        req = reconcile_pb2.ReconcileRequest(pool_ids=[self.pool_id])
        try:
            reply = await self._store.request(
                envelope_pb2.KIND_STORE_RECONCILE, req, reconcile_pb2.ReconcileReply, timeout=2.0
            )
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


async def _wait_all(waits: list[Coroutine[Any, Any, Any]], limit: float) -> bool:
    tasks = [asyncio.ensure_future(c) for c in waits]
    if not tasks:
        return True
    _, pending = await asyncio.wait(tasks, timeout=limit)
    for t in pending:
        t.cancel()
    return not pending
