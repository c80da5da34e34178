"""The manager's side facing the scheduler, and its presence in the registry.

The PAIR socket the scheduler dials (Dispatch in, slot notices out; which of its
peers is the scheduler is core/pair_peers.py's to tell), registration
with the scheduler, survey answers, discovery announcements and the heartbeat to
the result-store. What it tells them comes from the pool's state and its workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os

import psutil

from taskyard.bus.v1 import dispatch_pb2, leases_pb2, pools_pb2
from taskyard.core import contract, errors, rpc, transport
from taskyard.core.config import PoolSettings
from taskyard.core.pair_peers import SchedulerPeers
from taskyard.core.registration import Registration
from taskyard.core.states import WorkerState
from taskyard.worker_pool.processes import Workers
from taskyard.worker_pool.state import Outbox, PoolState

log = logging.getLogger("taskyard.worker_pool.manager")  # one logger name for the manager process

HEARTBEAT_INTERVAL = 5.0
MIN_BEAT_GAP = 0.1


class SchedulerLink:
    def __init__(self, settings: PoolSettings, pool: PoolState, workers: Workers, outbox: Outbox) -> None:
        self._settings = settings
        self._pool = pool
        self._workers = workers
        self._outbox = outbox
        self.registration = Registration(
            settings,
            describe=self._register,
            survey_reply=self.survey_reply,
            on_registered=outbox.slots_changed,
            active=lambda: pool.state in (WorkerState.STARTING, WorkerState.RUNNING),
            log=log,
        )
        self.registered = self.registration.registered
        self._pair: SchedulerPeers | None = None
        self._heartbeat_failures = 0

    @property
    def scheduler_id(self) -> str:
        return self.registration.scheduler_id

    # ------------------------------------------------------------ views
    def survey_reply(self) -> dispatch_pb2.SurveyReply:
        pool, workers = self._pool, self._workers
        return dispatch_pb2.SurveyReply(
            pool_id=pool.pool_id,
            running=workers.held_refs(),
            # Cut off from every store: no slot to offer (contact.py).
            free_slots=0 if pool.contact.cut_off else workers.free_slots(),
            capacity=pool.capacity,
            task_names=pool.task_names,
            tenants=pool.tenants,
            pair_address=pool.pair_address,
            state=pool.state.value,
            worker_pids=workers.worker_pids(),
            cut_off=pool.contact.cut_off,
        )

    def announcement(self) -> dispatch_pb2.Announcement:
        pool = self._pool
        return dispatch_pb2.Announcement(
            service="worker_pool",
            instance_id=pool.pool_id,
            task_names=pool.task_names,
            tenants=pool.tenants,
            pair_address=pool.pair_address,
            capacity=pool.capacity,
        )

    # ------------------------------------------------------------ PAIR
    def open_pair(self) -> SchedulerPeers:
        """Listen for the scheduler; the bound address becomes the pool's pair address.
        Several peers may connect: only those the seal admits are heard (core/pair_peers.py)."""
        s = self._settings
        sock = transport.open_pair(
            max_message_bytes=s.max_message_bytes,
            listen=s.pool_pair_listen_address(self._pool.pool_id),
            several=True,
        )
        # What we register and announce: the bound port on the advertise host (not 0.0.0.0).
        bound = transport.listen_address(sock)
        self._pool.pair_address = s.advertised_pair_address(bound)
        # A peer has a request's time to say hello: neither side's loop stalling for
        # less costs the scheduler its link.
        pair = self._pair = SchedulerPeers(
            sock, where=bound, on_lost=self._on_pair_lost, hello_timeout=s.request_timeout
        )
        pair.attach(asyncio.get_running_loop())
        return pair

    def notify_scheduler(self, report: dispatch_pb2.PoolReport) -> None:
        """Tell the scheduler which slots came free. Lossy by design: a notice that
        does not arrive (no scheduler connected) is corrected by the next survey."""
        notice = dispatch_pb2.PoolReport(
            pool_id=self._pool.pool_id,
            free_slots=0 if self._pool.contact.cut_off else self._workers.free_slots(),
            state=self._pool.state.value,
            cut_off=self._pool.contact.cut_off,
            released=report.released,
            died=[leases_pb2.Death(ref=d.ref, started=d.started) for d in report.died],
        )
        add = notice.completed.add  # the refs and outcomes only: what the scheduler reads
        for c in report.completed:
            # Circuit breakers count successes and failures (scheduler/breakers.py).
            add(success=c.success, cancel_step=c.cancel_step).ref.CopyFrom(c.ref)
        if self._pair is None or not self._pair.send(contract.POOL_REPORT.encode(notice)):
            log.debug("slot notice dropped: no scheduler connected")

    def _on_pair_lost(self) -> None:
        if self._pool.state in (WorkerState.STARTING, WorkerState.RUNNING) and self.registered.is_set():
            log.info("scheduler PAIR peer went away: registering again")
            self.registration.want()

    def close_pair(self) -> None:
        if self._pair is not None:
            self._pair.close()

    def close(self) -> None:
        if self._pair is not None:
            self._pair.close()
        self.registration.close()

    # ------------------------------------------------------------ registration and surveys
    def _register(self) -> dispatch_pb2.Register:
        pool = self._pool
        return dispatch_pb2.Register(
            pool_id=pool.pool_id,
            server_name=self._settings.server_name,
            pair_address=pool.pair_address,
            task_names=pool.task_names,
            tenants=pool.tenants,
            capacity=pool.capacity,
            pid=os.getpid(),
        )

    def want_registration(self) -> None:
        self.registration.want()

    async def run_registration(self) -> None:
        await self.registration.run()

    def open_surveys(self) -> None:
        self.registration.open_surveys()

    async def answer_surveys(self) -> None:
        await self.registration.answer_surveys()

    # ------------------------------------------------------------ heartbeat
    def heartbeat(self) -> pools_pb2.HeartbeatRequest:
        s, pool, workers = self._settings, self._pool, self._workers
        live = workers.live()
        active = sum(1 for w in live if w.held)
        rss = 0
        for pid in [os.getpid(), *(w.pid for w in live)]:
            with contextlib.suppress(psutil.Error, OSError):
                rss += psutil.Process(pid).memory_info().rss
        return pools_pb2.HeartbeatRequest(
            pool_id=pool.pool_id,
            server_name=s.server_name,
            max_workers=max(1, s.workers),
            active_workers=active,
            idle_workers=len(live) - active,
            running_tasks=sum(1 for w in live for h in w.held.values() if h.started),
            is_running=pool.state is WorkerState.RUNNING,
            task_names=pool.task_names,
            state=pool.state.value,
            rss_bytes=rss,
            capacity=pool.capacity,
            concurrency=pool.concurrency,
            processes=workers.process_infos(),
            last_dispatch_at_us=workers.last_dispatch_us,
        )

    async def beat(self, req: rpc.Requester, limit: float) -> None:
        try:
            await req.call(contract.STORE_HEARTBEAT, self.heartbeat(), timeout=limit)
            self._heartbeat_failures = 0
            self._pool.contact.heard()
        except errors.TaskyardError as exc:
            self._heartbeat_failures += 1
            self._pool.contact.failed("heartbeat", exc.message)
            (log.warning if self._heartbeat_failures in (1, 10) else log.debug)(
                "heartbeat to %s failed: %s", ", ".join(self._settings.store_addresses), exc.message
            )

    async def run_heartbeat(self) -> None:
        s = self._settings
        req = rpc.Requester(s.store_addresses, max_message_bytes=s.max_message_bytes, timeout=4.0)
        try:
            contact = self._pool.contact
            while True:
                contact.beat_now.clear()
                await self.beat(req, 4.0)
                # Cut off: beat again at once (a slow store answers and ends it), at
                # most every MIN_BEAT_GAP (a route that fails fast must not spin).
                await asyncio.sleep(MIN_BEAT_GAP)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(
                        contact.beat_now.wait(), min(HEARTBEAT_INTERVAL, s.worker_heartbeat_interval)
                    )
        finally:
            req.close()
