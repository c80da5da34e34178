"""The scheduler service: lanes, registration, discovery hub, dispatch and upkeep.

A process stands by until it wins the election (election.py), then leads: a
``Scheduler`` is one term of leadership, its listeners open from its start to its
end. ``serve`` runs the process: a new ``Scheduler`` each term it wins.
"""
# Length: __init__ wires the scheduler's parts and sockets, one line each.

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence

import pynng

from taskyard.bus.v1 import dispatch_pb2, envelope_pb2, event_pb2, leases_pb2, tasks_pb2, views_pb2
from taskyard.core import (
    contract,
    dialer,
    discovery,
    errors,
    health,
    hops,
    ids,
    lifecycle,
    roles,
    rpc,
    transport,
)
from taskyard.core.clock import SystemClock, sleep_unless
from taskyard.core.config import SchedulerSettings
from taskyard.core.priority import LANES
from taskyard.core.retry import Backoff, RetryPolicy
from taskyard.core.states import TaskState, WorkerState
from taskyard.scheduler import graph, pauses, payloads, spans, timers
from taskyard.scheduler import metrics as sched_metrics
from taskyard.scheduler.dispatcher import Dispatcher, ref_of
from taskyard.scheduler.election import Election
from taskyard.scheduler.flow import Flow
from taskyard.scheduler.lanes import Lanes, Ref
from taskyard.scheduler.maintenance import Maintenance
from taskyard.scheduler.periodic import Periodic
from taskyard.scheduler.pools import Pool, PoolRegistry
from taskyard.scheduler.reconciler import Reconciler
from taskyard.scheduler.redrives import RedriveRunner

log = logging.getLogger(__name__)

SURVEY_WINDOW_MS = 500
# TaskRecord.hops (field 39, length-delimited) as its tag's bytes: a submission
# without them carries no sampled task. They may also turn up inside some other
# field's bytes; such a submission only takes the slower way (parsed as heads).
_HOPS_TAG = b"\xba\x02"
_QUEUED = TaskState.QUEUED.value
_SCHEDULED = TaskState.SCHEDULED.value
# How long the scheduler's loops get to end once cancelled at stop.
TASKS_END_TIMEOUT = 5.0
# Seconds between attempts to listen on addresses a predecessor still holds.
LISTEN_RETRY = 0.25
# Seconds a leader waits for its addresses to be free before it gives up its term.
LISTEN_GIVE_UP = 10.0


class Scheduler:
    """One term of leadership (``term``, 0 outside an election): its writes that
    only a leader may make carry the term, and the store refuses them once it is over."""

    def __init__(
        self, settings: SchedulerSettings, store: rpc.Requester, *, term: int = 0, run_hub: bool = True
    ) -> None:
        self.settings = settings
        self.id = ids.new_instance_id("scheduler")
        self.term = term
        # Every insert names the term it was submitted in: the store tells the
        # leader to load what a deposed leader inserted (result_store/writes/inserts.py).
        self._term_field = tasks_pb2.InsertTasksRequest(lease_term=term).SerializeToString()
        self._lease_ms = int(settings.lease_seconds * 1000)
        mx = settings.max_message_bytes
        # The process's, shared by its terms and its election (serve).
        self.store = store
        # With TASKYARD_RETRY_JITTER, as the pools and the gateway's remote workers use it.
        self.policy = RetryPolicy.from_settings(settings)
        self.lanes = Lanes()
        self.pools = PoolRegistry(max_message_bytes=mx, on_report=self._on_report, on_change=self._wake)
        # Restart reconciliation: a predecessor's leases no pool holds (reconciler.py).
        self.reconciler = Reconciler(
            self.store, margin=settings.reconcile_margin, horizon=settings.lease_seconds, term=term
        )
        # Limits and fair share (flow.py): admission between the lanes and the pools.
        self.flow = Flow(self.lanes, self.store, wake=self._wake, term=term)
        self.flow.serving = self.pools.serving
        self.dispatcher = Dispatcher(
            self.lanes,
            self.pools,
            self.store,
            lease_ms=self._lease_ms,
            token_prefix=self.reconciler.token_prefix,
            term=term,
            flow=self.flow,
        )
        self.maintenance = Maintenance(
            lanes=self.lanes,
            pools=self.pools,
            dispatcher=self.dispatcher,
            store=self.store,
            policy=self.policy,
            lease_ms=self._lease_ms,
            default_max_retries=settings.max_retries,
            reconciler=self.reconciler,
            flow=self.flow,
        )
        # Delayed tasks and retries: the due heap, a cache of SCHEDULED/RETRYING rows.
        self.timers = timers.DueTimers(
            source=timers.StoreDueSource(self.store),
            on_due=self._on_due,
            clock=SystemClock(),
            window=settings.due_window,
            refresh=settings.due_refresh_interval,
        )
        # Periodic schedules: the firing loop, and the lanes' trigger route.
        self.periodic = Periodic(
            self.store,
            lanes=self.lanes,
            wake=self._wake,
            refresh_interval=settings.schedule_refresh_interval,
            declared=self.flow.declared_limits,
        )
        # Redrives of dead letters, paced, each step fenced by the term (redrives.py).
        self.redrives = RedriveRunner(self.store, term=term)
        # What is open is closed again if a later listener cannot bind (a deposed
        # leader on its way out may still hold the address: serve tries again).
        with contextlib.ExitStack() as opened:
            self._lane_servers: list[rpc.Responder] = []
            for p in LANES:
                lane = rpc.Responder(
                    settings.lane_listen_address(p),
                    [
                        rpc.serve_raw(contract.SUBMIT, self._on_submit),
                        rpc.serve(contract.FLOW_GATES, self.flow.on_gates),
                        *self.periodic.routes(),
                    ],
                    max_message_bytes=mx,
                )
                opened.callback(lane.close)
                self._lane_servers.append(lane)
            self._registration = rpc.Responder(
                settings.registration_listen_address,
                [rpc.serve(contract.REGISTER, self._on_register)],
                max_message_bytes=mx,
                concurrency=8,
            )
            opened.callback(self._registration.close)
            # Surveys go to pools alone: under their key (core.seal, for_audience).
            self._surveyor = transport.open_socket(
                pynng.Surveyor0,
                max_message_bytes=mx,
                listen=settings.survey_listen_address,
                audience=roles.WORKER_POOL,
            )
            opened.callback(self._surveyor.close)
            self._surveyor.survey_time = min(SURVEY_WINDOW_MS, int(settings.renew_interval * 500))
            # Every store's share: each publishes only what it committed.
            self._events = dialer.open_dialer(
                pynng.Sub0, settings.scheduler_stream_addresses, max_message_bytes=mx
            )
            opened.callback(self._events.close)
            # Only the event types it reads (transport.SCHEDULER_EVENT_TYPES), not every task's.
            self._events.subscribe(transport.SCHEDULER_TOPIC)
            # Only the leader relays announcements: a standby runs no hub.
            self._hub = discovery.Hub(settings.discovery_listen_address) if run_hub else None
            if self._hub is not None:
                opened.callback(self._hub.close)
            self._peer = discovery.Peer(
                settings.discovery_addresses, self._announcement, interval=settings.announce_interval
            )
            opened.pop_all()

    def _announcement(self) -> dispatch_pb2.Announcement:
        return dispatch_pb2.Announcement(service="scheduler", instance_id=self.id)

    def _wake(self) -> None:
        self.dispatcher.wake.set()

    # --- handlers ------------------------------------------------------------
    async def _on_submit(self, payload: bytes, env: envelope_pb2.Envelope) -> bytes:
        """A serialized SubmitRequest is already an InsertTasksRequest (both keep the
        records in field 1), so it goes to the store as it came, with the fast
        path's fields appended (concatenated messages merge). The records are
        parsed, as heads only, when something here reads them: hop stamps, the
        fast path, a delayed task's run time."""
        payload = payloads.checked(payload)  # in the handler: it knows the sender's role
        if not self.flow.loaded.is_set():  # a term's first moments
            await self.flow.wait_loaded()
        if self.flow.declared:  # the limits some task names declare
            payload = self.flow.declare(payload)
        insert = payload
        parsed: views_pb2.TaskRecordHeads | None = None
        if _HOPS_TAG in payload:
            parsed = views_pb2.TaskRecordHeads.FromString(payload)
            sampled = [t for t in parsed.tasks if t.hops]
            if sampled:
                hops.stamp(sampled, "scheduler.received")
                hops.stamp(sampled, "scheduler.sent")
                # Known fields first, then the unknown ones: the same record.
                insert = parsed.SerializeToString()
        pool: Pool | None = None
        leases: list[leases_pb2.Lease] = []
        began = 0
        if self.dispatcher.fast_path_open():
            began = spans.now_ns()
            parsed = parsed or views_pb2.TaskRecordHeads.FromString(payload)
            pool, leases = self.dispatcher.reserve_fast_path(parsed.tasks)
        if pool is not None:
            insert += tasks_pb2.InsertTasksRequest(
                pool_id=pool.pool_id, lease_ms=self._lease_ms, leases=leases, lease_term=self.term
            ).SerializeToString()
        else:
            insert += self._term_field
        # Units a tenant's quota gave at the insert (dispatcher._quota_admits) are
        # confirmed or given back by its outcome; none are taken without quotas.
        quotas = pool is not None and bool(self.flow.admission.quota_uses)
        try:
            raw = await self.store.call_raw(contract.STORE_INSERT, insert)
            reply = views_pb2.InsertTasksReplyView.FromString(raw)
        except Exception:
            if pool is not None:
                for lease in leases:
                    pool.inflight.pop(lease.task_id, None)
                if quotas:  # it may have committed: held until a resync says
                    self.flow.lease_failed((lease.task_id, lease.lease_token) for lease in leases)
            raise
        if pool is not None:
            leased = {t.id for t in reply.leased}
            for lease in leases:
                if lease.task_id not in leased:
                    pool.inflight.pop(lease.task_id, None)
                    if quotas:
                        self.flow.release(lease.task_id, lease.lease_token)
            if quotas:
                self.flow.confirm((t.id, t.lease_token) for t in reply.leased)
            self.dispatcher.send_backup(pool, reply.leased)
            spans.dispatched(reply.leased, pool_id=pool.pool_id, path="insert", started_ns=began)
        if reply.tasks:  # one submit, one tenant (its token's)
            self.dispatcher.headroom.submitted(reply.tasks[0].tenant)
        refs: list[Ref] = []
        scheduled = False
        for t in reply.tasks:
            if t.created:
                state = t.state
                if state == _QUEUED:
                    refs.append(ref_of(t))
                elif state == _SCHEDULED:
                    scheduled = True
        if scheduled:
            parsed = parsed or views_pb2.TaskRecordHeads.FromString(payload)
            timers.feed_inserted(self.timers, parsed.tasks, reply.tasks)
        if refs and self.lanes.push_all(refs):
            self.dispatcher.wake.set()
        # Without leased records the reply is a SubmitReply on the wire too.
        return dispatch_pb2.SubmitReply(tasks=reply.tasks).SerializeToString() if reply.leased else raw

    def _on_due(self, refs: Sequence[Ref]) -> None:
        if self.lanes.push_all(refs):
            self.dispatcher.wake.set()

    async def _on_register(
        self, request: dispatch_pb2.Register, env: envelope_pb2.Envelope
    ) -> dispatch_pb2.RegisterReply:
        # The pool declared its tasks' limits before registering (worker_pool/manager.py):
        # read them before its names can be used, so its first tasks get them. A
        # store that does not answer does not refuse the pool (the poll reads them).
        try:
            await self.flow.read_limits()
        except errors.TaskyardError as exc:
            log.info("reading the limits at a pool's registration failed: %s", exc)
        self.pools.upsert(
            pool_id=request.pool_id,
            pair_address=request.pair_address,
            names=list(request.task_names),
            capacity=request.capacity,
            registered=True,
            tenants=list(request.tenants),
        )
        # This scheduler's own survey address as pools dial it (not the one we listen on).
        return dispatch_pb2.RegisterReply(
            scheduler_id=self.id,
            survey_address=self.settings.advertised_survey_address,
            lease_ms=self._lease_ms,
        )

    async def _on_report(self, pool: Pool, report: dispatch_pb2.PoolReport) -> None:
        """A slot notice: the pool already handed the results to the store itself."""
        if report.state and report.state != WorkerState.STARTING.value:
            # A draining pool's releases must not look like free slots: what the
            # scheduler sent it now would arrive after it stopped listening.
            # (STARTING is ignored: a registered pool is dispatched to, and a
            # lost notice must not leave it looking unready until the next survey.)
            pool.state = report.state
        pool.cut_off = report.cut_off  # every notice says whether its reports reach a store
        release = self.flow.release
        if self.flow.admission.breakers.specs:
            # Circuit breakers count the outcomes (a cancelled attempt tells nothing).
            outcome = self.flow.outcome
            for c in report.completed:
                if not c.cancel_step:
                    outcome(c.ref.task_id, c.ref.lease_token, failed=not c.success, attempt=c.ref.attempt)
        for refs in (report.completed, report.released, report.died):
            for item in refs:
                pool.inflight.pop(item.ref.task_id, None)
                release(item.ref.task_id, item.ref.lease_token)
        self.dispatcher.wake.set()

    # --- loops ---------------------------------------------------------------
    async def _watch_events(self) -> None:
        while True:
            try:
                raw = await self._events.arecv()
            except pynng.Closed:
                return
            try:
                batch = contract.EVENTS.open(raw[len(transport.SCHEDULER_TOPIC) :])
            except Exception:  # a malformed batch must not stop the watcher
                log.warning("malformed event batch dropped")
                continue
            if batch is None:
                # Dependents released to QUEUED.
                if graph.released(raw[len(transport.SCHEDULER_TOPIC) :], self.lanes):
                    self.dispatcher.wake.set()
                continue
            graph.drop_cancelled(batch.events, self.lanes)
            for e in batch.events:
                if e.type == "task.cancelled":
                    self.flow.drop(e.task_id)
                elif e.type.startswith(("limit.", "tenant.")):
                    self.flow.changed.set()
            self._pool_news(batch.events)
            if batch is not None:
                self.periodic.on_events(batch)
                timers.feed_events(self.timers, batch.events)
                if pauses.on_events(self.lanes, batch):  # paused queues
                    self.dispatcher.wake.set()
            if batch is not None and any(e.type == "tasks.available" for e in batch.events):
                self.maintenance.reload_requested.set()

    def _pool_news(self, events: Sequence[event_pb2.Event]) -> None:
        """A store declared a pool lost (bench it; its refused leases' tasks are loaded
        again), or heard from one again (it may be given work)."""
        for e in events:
            if e.type == "pool.lost" and self.pools.declare_lost(e.worker_id):
                self.maintenance.reload_requested.set()
            elif e.type == "pool.registered":
                self.pools.heard(e.worker_id)

    async def _watch_announcements(self) -> None:
        seen: dict[str, str] = {}
        while True:
            await self._peer.changed.wait()
            self._peer.changed.clear()
            for ann in self._peer.alive("worker_pool", max_age=3 * self.settings.announce_interval):
                if ann.pair_address and seen.get(ann.instance_id) != ann.pair_address:
                    seen[ann.instance_id] = ann.pair_address
                    if ann.instance_id not in self.pools.pools:
                        self.pools.upsert(
                            pool_id=ann.instance_id,
                            pair_address=ann.pair_address,
                            names=list(ann.task_names),
                            capacity=ann.capacity,
                            tenants=list(ann.tenants),
                        )

    async def run(self, stop: asyncio.Event) -> None:
        if not self.settings.metrics_port:
            await self._serve(stop)
            return
        unregister = sched_metrics.register(
            sched_metrics.SchedulerState(
                self.lanes.depth, lambda: len(self.timers), lambda: len(self.pools.pools)
            )
        )
        unregister_flow = sched_metrics.register(sched_metrics.FlowState(self.flow.usage))
        unregister_breakers = sched_metrics.register(
            sched_metrics.BreakerState(self.flow.admission.breakers.figures)
        )
        try:
            await self._serve(stop)
        finally:
            unregister_breakers()
            unregister_flow()
            unregister()

    async def _serve(self, stop: asyncio.Event) -> None:
        s = self.settings
        tasks: list[asyncio.Task[None]] = []
        async with asyncio.TaskGroup() as tg:
            try:
                tasks += [tg.create_task(srv.serve()) for srv in self._lane_servers]
                tasks.append(tg.create_task(self._registration.serve()))
                if self._hub is not None:
                    tasks.append(tg.create_task(self._hub.run()))
                tasks.append(tg.create_task(self._peer.run()))
                tasks.append(tg.create_task(self._watch_events()))
                tasks.append(tg.create_task(self._watch_announcements()))
                tasks.append(tg.create_task(self.dispatcher.run()))
                tasks.append(tg.create_task(self.flow.run()))
                tasks.append(tg.create_task(self.flow.send_breaker_events()))
                tasks.append(tg.create_task(self.flow.send_breaker_refunds()))
                loaded = await self._initial_load(stop)
                log.info("scheduler ready (term %d, %d queued tasks loaded)", self.term, loaded)
                polling = self.maintenance.run_polling(s.polling_interval, s.fallback_polling_interval)
                tasks.append(tg.create_task(polling))
                tasks.append(
                    tg.create_task(self.maintenance.run_survey(self._surveyor, self.id, s.renew_interval))
                )
                tasks.append(tg.create_task(self.periodic.run()))
                tasks.append(tg.create_task(self.redrives.run()))
                tasks.append(tg.create_task(self.timers.run()))
                if self.term > 1:  # a predecessor, which may still have inserted meanwhile
                    tasks.append(tg.create_task(self._reload_after(max(s.leader_ttl, s.request_timeout))))
                await stop.wait()
                log.info("leadership ending (term %d)", self.term)
            finally:
                # Stopped, deposed, or a task failed (the group cancelled this body
                # once): nothing more goes out, every task is cancelled until it ends
                # (the hub and peer receive loops can swallow one cancel: end_tasks),
                # and the listeners are closed before the group waits for what is left,
                # so the next leader can bind even if a task never ends.
                self.dispatcher.close()
                try:
                    await lifecycle.end_tasks(tasks, TASKS_END_TIMEOUT)
                finally:
                    self.close()

    async def _reload_after(self, delay: float) -> None:
        """Load the lanes once more ``delay`` after the first load: an insert made
        through the deposed leader that was already running when this term began
        reads the old term (no wake-up from the store), and may commit after the
        first load, within a request's timeout."""
        await asyncio.sleep(delay)
        try:
            loaded = await self.maintenance.reload()
        except Exception as exc:  # an extra load that fails must not end the term
            log.warning("loading the lanes again after the takeover failed: %s", exc)
            self.maintenance.reload_requested.set()  # the maintenance loop's next poll
            return
        log.info("lanes loaded again after the takeover (term %d, %d queued tasks)", self.term, loaded)

    async def _initial_load(self, stop: asyncio.Event) -> int:
        """Rebuild the lanes from the store; wait for the store if it is not up yet."""
        backoff = Backoff(cap=1.0)
        while not stop.is_set():
            try:
                # reload() first reconciles the paused queues, before any task is pushed.
                return await self.maintenance.reload()
            except Exception as exc:
                log.info("waiting for the result-store: %s", exc)
                await asyncio.sleep(backoff.next_delay())
        return 0

    def close(self) -> None:
        self.dispatcher.close()  # first: a send failing on a closed link would release its lease
        for srv in self._lane_servers:
            srv.close()
        self._registration.close()
        self.pools.close()
        self._surveyor.close()
        self._events.close()
        self._peer.close()
        if self._hub is not None:
            self._hub.close()


async def serve(settings: SchedulerSettings, stop: asyncio.Event) -> None:
    """Run one scheduler process until ``stop``: on standby (no listener open) until
    it wins the election, then leading (a ``Scheduler`` for the term) until it stops
    or is deposed, then on standby again."""
    mx = settings.max_message_bytes
    store = rpc.Requester(settings.store_addresses, max_message_bytes=mx, timeout=settings.request_timeout)
    election = Election(store, holder=ids.new_instance_id("scheduler"), ttl=settings.leader_ttl)

    async def lead(term: int, over: asyncio.Event) -> None:
        scheduler = await _listening(settings, store, term, over)
        if scheduler is None:
            return
        sched_metrics.LEADER_TERM.set(term)
        try:
            await scheduler.run(over)
        finally:
            sched_metrics.LEADER_TERM.set(0)

    async def stopping() -> None:
        await stop.wait()
        log.info("scheduler stopping")

    said = asyncio.create_task(stopping())
    health.mark_ready()  # leading or standing by, a scheduler is what it should be
    try:
        await election.run(stop, lead)
    finally:
        said.cancel()
        store.close()


async def _listening(
    settings: SchedulerSettings, store: rpc.Requester, term: int, over: asyncio.Event
) -> Scheduler | None:
    """The term's Scheduler, its listeners open; None if the term is over first. An
    address still held (a deposed leader closing on the same host) is tried again,
    for ``LISTEN_GIVE_UP`` seconds: held longer (another process has the port), the
    term is given up, so that a standby that can listen leads instead."""
    clock = SystemClock()
    began: float | None = None
    while not over.is_set():
        try:
            return Scheduler(settings, store, term=term)
        except pynng.AddressInUse as exc:
            now = clock.monotonic()
            if began is None:
                began = now
                log.warning("waiting to listen: %s", exc)
            elif now - began >= LISTEN_GIVE_UP:
                log.error("cannot listen (%s) for %.0f s: giving up term %d", exc, now - began, term)
                return None
            await sleep_unless(clock, LISTEN_RETRY, over)
    return None
