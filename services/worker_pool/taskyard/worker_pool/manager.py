"""The pool manager: a supervisor, not an executor.

It spawns ``Settings.workers`` worker processes and holds the pool's singletons:
the PAIR socket the scheduler dials (Dispatch in, PoolReport out), registration
with the scheduler, the RESPONDENT answering surveys, discovery announcements
and the heartbeat to the result-store. It routes each dispatched attempt to the
least-loaded live worker, tracks what every worker holds and whether it started,
and turns a worker's death into immediate Death reports (then respawns it).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import multiprocessing
import multiprocessing.process
import os
import socket
import time
from collections.abc import Coroutine
from typing import Any

import psutil
import pynng

from taskyard.bus.v1 import dispatch_pb2, envelope_pb2, store_pb2, task_record_pb2
from taskyard.core import discovery, errors, ids, transport
from taskyard.core.config import Settings
from taskyard.core.retry import RetryPolicy
from taskyard.core.states import WorkerState
from taskyard.worker_pool import pipe, registry, worker
from taskyard.worker_pool.reports import ReportForwarder

log = logging.getLogger(__name__)

Key = tuple[str, int]
HEARTBEAT_INTERVAL = 5.0
REGISTER_TIMEOUT = 3.0
READY_TIMEOUT = 120.0
# A start notice waits this long (to twice as long) and is dropped if the attempt
# ends first: RUNNING shows for tasks that run longer, and short ones cost no write.
START_NOTICE_DELAY = 0.05
# How long a stopping pool waits for the store to acknowledge its last reports.
REPORT_FLUSH_TIMEOUT = 5.0


@dataclasses.dataclass
class Held:
    ref: task_record_pb2.AttemptRef
    started: bool = False
    # The retry budget a death of this attempt is judged by.
    max_retries: int = 0


@dataclasses.dataclass(eq=False)
class WorkerHandle:
    index: int
    process: multiprocessing.process.BaseProcess
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    spawned_at: float
    held: dict[Key, Held] = dataclasses.field(default_factory=dict)
    ready: bool = False
    gone: bool = False
    exited: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)

    @property
    def pid(self) -> int:
        return self.process.pid or 0

    @property
    def live(self) -> bool:
        return self.ready and not self.gone


class Manager:
    def __init__(self, settings: Settings, pool_id: str | None = None) -> None:
        self.settings = settings
        self.pool_id = pool_id or ids.new_instance_id("pool")
        self.state = WorkerState.INIT
        self.concurrency = max(1, settings.concurrency)
        self.capacity = max(1, settings.workers) * self.concurrency
        self.task_names: list[str] = []
        self.pair_address = ""
        self.scheduler_id = ""
        self.workers: dict[int, WorkerHandle] = {}
        self._mp = multiprocessing.get_context("spawn")
        self._pending = dispatch_pb2.PoolReport()
        self._report_event = asyncio.Event()
        self._register_wanted = asyncio.Event()
        self._registered = asyncio.Event()
        self._all_ready = asyncio.Event()
        self._closing = False
        self._early_deaths: dict[int, int] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._sender: asyncio.Task[None] | None = None
        self._pair: Any = None
        self._store: transport.Requester | None = None
        self._starts: ReportForwarder | None = None
        self._young_starts: dict[tuple[str, int], task_record_pb2.AttemptRef] = {}
        self._old_starts: dict[tuple[str, int], task_record_pb2.AttemptRef] = {}
        self._outcomes: ReportForwarder | None = None
        self._respondent: Any = None
        self._survey_address = settings.survey_address
        self._peer: discovery.Peer | None = None
        self._heartbeat_failures = 0
        self._pair_peers = 0

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
        policy = RetryPolicy(base_seconds=s.retry_base_seconds, cap_seconds=s.retry_cap_seconds)
        self._starts = ReportForwarder(self._store, policy)
        self._outcomes = ReportForwarder(self._store, policy)
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

        if await _first(stop, self._all_ready, limit=READY_TIMEOUT) is stop:
            return await self._shutdown()
        if not self._all_ready.is_set():
            log.warning("not every worker became ready within %.0fs; registering anyway", READY_TIMEOUT)
        self._register_wanted.set()
        self._spawn_task(self._registration_loop(), "registration")
        self._respondent = self._open_respondent(self._survey_address)
        self._spawn_task(self._answer_surveys(), "surveys")
        if await _first(stop, self._registered) is stop:
            return await self._shutdown()
        self.state = WorkerState.RUNNING
        self._mark_dirty()
        self._peer = discovery.Peer(s.discovery_address, self._announcement, interval=s.announce_interval)
        self._spawn_task(self._peer.run(), "discovery")
        self._spawn_task(self._heartbeat_loop(), "heartbeat")
        log.info(
            "worker-pool ready: pool %s registered with scheduler %s, capacity %d, worker pids %s",
            self.pool_id,
            self.scheduler_id,
            self.capacity,
            self.worker_pids(),
        )
        await stop.wait()
        return await self._shutdown()

    def _spawn_task(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        t = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(t)
        t.add_done_callback(self._task_done)
        return t

    def _task_done(self, t: asyncio.Task[Any]) -> None:
        self._tasks.discard(t)
        if not t.cancelled() and t.exception() is not None:
            log.error("background task %s failed", t.get_name(), exc_info=t.exception())

    # ------------------------------------------------------------ views
    def accepting(self) -> bool:
        # STARTING too: a scheduler may dispatch as soon as it dials our PAIR,
        # before its RegisterReply has reached us.
        return self.state in (WorkerState.STARTING, WorkerState.RUNNING)

    def free_slots(self) -> int:
        if not self.accepting():
            return 0
        return sum(max(0, self.concurrency - len(w.held)) for w in self.workers.values() if w.live)

    def held_refs(self) -> list[task_record_pb2.AttemptRef]:
        now = worker.now_us()
        out = []
        for w in self.workers.values():
            for h in w.held.values():
                ref = task_record_pb2.AttemptRef()
                ref.CopyFrom(h.ref)
                ref.at_us = now
                out.append(ref)
        return out

    def worker_pids(self) -> list[int]:
        return [w.pid for _, w in sorted(self.workers.items()) if not w.gone]

    def survey_reply(self) -> dispatch_pb2.SurveyReply:
        return dispatch_pb2.SurveyReply(
            pool_id=self.pool_id,
            running=self.held_refs(),
            free_slots=self.free_slots(),
            capacity=self.capacity,
            task_names=self.task_names,
            pair_address=self.pair_address,
            state=self.state.value,
            worker_pids=self.worker_pids(),
        )

    def _announcement(self) -> dispatch_pb2.Announcement:
        return dispatch_pb2.Announcement(
            service="worker_pool",
            instance_id=self.pool_id,
            task_names=self.task_names,
            pair_address=self.pair_address,
            capacity=self.capacity,
        )

    # ------------------------------------------------------------ workers
    async def _spawn(self, index: int) -> None:
        parent_sock, child_sock = socket.socketpair()
        proc = self._mp.Process(
            target=worker.main,
            args=(child_sock, self.settings, self.pool_id, index),
            name=f"taskyard-worker-{index}",
        )
        try:
            proc.start()
        finally:
            child_sock.close()
        reader, writer = await asyncio.open_connection(sock=parent_sock, limit=2**20)
        w = WorkerHandle(index, proc, reader, writer, time.monotonic())
        self.workers[index] = w
        loop = asyncio.get_running_loop()
        loop.add_reader(proc.sentinel, self._on_sentinel, w)
        self._spawn_task(self._read_worker(w), f"worker-{index}")
        log.info("worker %d started (pid %s)", index, proc.pid)

    def _on_sentinel(self, w: WorkerHandle) -> None:
        """The process exited: end its pipe even if a grandchild inherited the other end."""
        asyncio.get_running_loop().remove_reader(w.process.sentinel)
        w.writer.close()

    async def _read_worker(self, w: WorkerHandle) -> None:
        try:
            while True:
                frame = await pipe.read(w.reader, self.settings.max_message_bytes + 1024)
                if frame is None:
                    break
                kind, body = frame
                if kind == pipe.REPORT:
                    report = dispatch_pb2.PoolReport()
                    report.ParseFromString(body)
                    self._apply_worker_report(w, report)
                elif kind == pipe.HELLO:
                    w.ready = True
                    self._early_deaths.pop(w.index, None)
                    log.debug("worker %d ready (pid %s)", w.index, w.pid)
                    if all(x.ready for x in self.workers.values()):
                        self._all_ready.set()
                    self._mark_dirty()
        except pipe.FrameError as exc:
            log.error("worker %d sent a malformed frame: %s", w.index, exc)
        finally:
            await self._worker_gone(w)

    def _apply_worker_report(self, w: WorkerHandle, report: dispatch_pb2.PoolReport) -> None:
        p = self._pending
        for ref in report.started:
            h = w.held.get((ref.task_id, ref.attempt))
            if h is not None:
                h.started = True
            p.started.append(ref)
        for c in report.completed:
            w.held.pop((c.ref.task_id, c.ref.attempt), None)
            p.completed.append(c)
        for r in report.released:
            w.held.pop((r.ref.task_id, r.ref.attempt), None)
            p.released.append(r)
        self._mark_dirty()

    async def _worker_gone(self, w: WorkerHandle) -> None:
        if w.gone:
            return
        w.gone = True
        loop = asyncio.get_running_loop()
        loop.remove_reader(w.process.sentinel)
        w.writer.close()
        proc = w.process
        await loop.run_in_executor(None, proc.join, 1.0)
        if proc.is_alive():  # closed its pipe but lingers: useless, end it
            proc.kill()
            await loop.run_in_executor(None, proc.join, 5.0)
        w.exited.set()
        held, w.held = w.held, {}
        shutting_down = self.state in (WorkerState.DRAINING, WorkerState.STOPPING, WorkerState.STOPPED)
        now = worker.now_us()
        for h in held.values():
            ref = task_record_pb2.AttemptRef()
            ref.CopyFrom(h.ref)
            ref.at_us = now
            if shutting_down:
                self._pending.released.append(store_pb2.Release(ref=ref, resume_requested=h.started))
            else:
                self._pending.died.append(
                    store_pb2.Death(ref=ref, started=h.started, max_retries=h.max_retries)
                )
        if shutting_down:
            log.info("worker %d (pid %s) stopped, exit code %s", w.index, w.pid, proc.exitcode)
        else:
            log.warning(
                "worker %d (pid %s) died, exit code %s, holding %d attempts (%d started): respawning",
                w.index,
                w.pid,
                proc.exitcode,
                len(held),
                sum(h.started for h in held.values()),
            )
        self._mark_dirty()
        if shutting_down or self._closing:
            return
        delay = 0.0
        if not w.ready:  # died before it was ready (import error?): back off
            n = self._early_deaths[w.index] = self._early_deaths.get(w.index, 0) + 1
            delay = min(5.0, 0.2 * 2 ** (n - 1))
        if delay:
            await asyncio.sleep(delay)
        if not (self._closing or self.state in (WorkerState.DRAINING, WorkerState.STOPPING)):
            await self._spawn(w.index)

    # ------------------------------------------------------------ PAIR
    async def _receive_dispatch(self) -> None:
        while True:
            try:
                raw = await self._pair.arecv()
            except pynng.Closed:
                return
            try:
                env = transport.decode(raw)
                if env.kind != envelope_pb2.KIND_DISPATCH:
                    log.warning("unexpected kind %s on the PAIR socket", env.kind)
                    continue
                batch = transport.unpack(env, dispatch_pb2.Dispatch)
            except Exception:
                log.warning("malformed message dropped on the PAIR socket")
                continue
            self._dispatch(batch)

    def _dispatch(self, batch: dispatch_pb2.Dispatch) -> None:
        per_worker: dict[int, dispatch_pb2.Dispatch] = {}
        holders = {k: w for w in self.workers.values() for k in w.held}
        refused = 0
        for record in batch.tasks:
            key = worker.key_of(record)
            if key in holders:
                continue  # already held: a duplicate delivery
            target = None
            if self.accepting():
                candidates = [w for w in self.workers.values() if w.live and len(w.held) < self.concurrency]
                if candidates:
                    target = min(candidates, key=lambda w: (len(w.held), w.index))
            if target is None:
                # No slot (or draining): back to the queue, no attempt burned.
                self._pending.released.append(store_pb2.Release(ref=worker.ref_of(record, "")))
                refused += 1
                continue
            ref = worker.ref_of(record, worker.worker_id(self.pool_id, target.index, target.pid))
            ref.at_us = 0
            target.held[key] = Held(
                ref, max_retries=worker.effective_max_retries(record, self.settings.max_retries)
            )
            holders[key] = target
            per_worker.setdefault(target.index, dispatch_pb2.Dispatch()).tasks.append(record)
        for index, d in per_worker.items():
            self.workers[index].writer.write(pipe.pack(pipe.DISPATCH, d.SerializeToString()))
        if refused:
            log.warning("released %d dispatched attempts: no free slot", refused)
            self._mark_dirty()

    def _mark_dirty(self) -> None:
        self._report_event.set()

    async def _send_reports(self) -> None:
        """Once per loop iteration while there is news: the report goes to the store
        (custody, acknowledged after COMMIT) and a slot notice to the scheduler."""
        while True:
            await self._report_event.wait()
            self._report_event.clear()
            report, self._pending = self._pending, dispatch_pb2.PoolReport()
            if self._closing and not (report.started or report.completed or report.released or report.died):
                return
            self._hand_to_store(report)
            self._notify_scheduler(report)
            if self._closing:
                self._report_event.set()  # drain what came in meanwhile, then stop

    def _hand_to_store(self, report: dispatch_pb2.PoolReport) -> None:
        """Outcomes go to the store at once. Start notices wait START_NOTICE_DELAY
        and are dropped when the outcome comes first: a short task costs the store
        no start write and its result never queues behind one. Correctness does not
        depend on them: a death carries the pool's own started flag, and the store
        accepts ASSIGNED -> final with the start time the outcome carries."""
        ended = {(c.ref.task_id, c.ref.attempt) for c in report.completed}
        ended.update((r.ref.task_id, r.ref.attempt) for r in report.released)
        ended.update((d.ref.task_id, d.ref.attempt) for d in report.died)
        for key in ended:
            self._young_starts.pop(key, None)
            self._old_starts.pop(key, None)
        for ref in report.started:
            key = (ref.task_id, ref.attempt)
            if key not in ended:
                self._young_starts[key] = ref
        if self._outcomes is not None and (report.completed or report.released or report.died):
            del report.started[:]
            self._outcomes.submit(report)

    async def _send_start_notices(self) -> None:
        """Two generations: a start is sent one to two ticks after it happened."""
        while True:
            await asyncio.sleep(START_NOTICE_DELAY)
            due, self._old_starts, self._young_starts = self._old_starts, self._young_starts, {}
            if due and self._starts is not None:
                self._starts.submit(dispatch_pb2.PoolReport(started=list(due.values())))

    def _notify_scheduler(self, report: dispatch_pb2.PoolReport) -> None:
        """Tell the scheduler which slots came free. Lossy by design: a notice that
        does not arrive (no scheduler connected) is corrected by the next survey."""
        notice = dispatch_pb2.PoolReport(
            pool_id=self.pool_id,
            free_slots=self.free_slots(),
            completed=[store_pb2.Completion(ref=c.ref) for c in report.completed],
            released=report.released,
            died=[store_pb2.Death(ref=d.ref, started=d.started) for d in report.died],
        )
        try:
            self._pair.send(transport.encode(envelope_pb2.KIND_POOL_REPORT, notice), block=False)
        except pynng.TryAgain:
            log.debug("slot notice dropped: no scheduler connected")
        except pynng.NNGException as exc:
            log.debug("slot notice not sent: %s", exc)

    def _on_pair_connected(self) -> None:
        self._pair_peers += 1

    def _on_pair_lost(self) -> None:
        self._pair_peers = max(0, self._pair_peers - 1)
        if self.state in (WorkerState.STARTING, WorkerState.RUNNING) and self._registered.is_set():
            log.info("scheduler PAIR peer went away: registering again")
            self._register_wanted.set()

    # ------------------------------------------------------------ registration and surveys
    async def _registration_loop(self) -> None:
        s = self.settings
        req = transport.Requester(
            s.registration_address, max_message_bytes=s.max_message_bytes, timeout=REGISTER_TIMEOUT
        )
        delay, failures = 0.1, 0
        try:
            while True:
                await self._register_wanted.wait()
                if self.state not in (WorkerState.STARTING, WorkerState.RUNNING):
                    return
                self._register_wanted.clear()
                msg = dispatch_pb2.Register(
                    pool_id=self.pool_id,
                    server_name=s.server_name,
                    pair_address=self.pair_address,
                    task_names=self.task_names,
                    capacity=self.capacity,
                    pid=os.getpid(),
                )
                try:
                    reply = await req.request(envelope_pb2.KIND_REGISTER, msg, dispatch_pb2.RegisterReply)
                except errors.TaskyardError as exc:
                    failures += 1
                    (log.warning if failures in (1, 10) or failures % 100 == 0 else log.debug)(
                        "registration with %s failed (%d): %s", s.registration_address, failures, exc.message
                    )
                    self._register_wanted.set()
                    await asyncio.sleep(delay)
                    delay = min(2.0, delay * 2)
                    continue
                delay, failures = 0.1, 0
                if reply.scheduler_id != self.scheduler_id:
                    log.info("registered with scheduler %s", reply.scheduler_id or "?")
                self.scheduler_id = reply.scheduler_id
                if reply.survey_address and reply.survey_address != self._survey_address:
                    self._survey_address = reply.survey_address
                    old, self._respondent = self._respondent, self._open_respondent(reply.survey_address)
                    if old is not None:
                        old.close()
                self._registered.set()
                self._mark_dirty()
        finally:
            req.close()

    def _open_respondent(self, address: str) -> Any:
        return transport.open_socket(
            pynng.Respondent0, max_message_bytes=self.settings.max_message_bytes, dial=address
        )

    async def _answer_surveys(self) -> None:
        while True:
            sock = self._respondent
            try:
                raw = await sock.arecv()
            except pynng.Closed:
                if self._closing or sock is self._respondent:
                    return
                continue  # replaced by a new one (survey address changed)
            try:
                env = transport.decode(raw)
                if env.kind != envelope_pb2.KIND_SURVEY:
                    continue
                survey = transport.unpack(env, dispatch_pb2.Survey)
            except Exception:
                log.warning("malformed survey dropped")
                continue
            if survey.scheduler_id and self._registered.is_set() and survey.scheduler_id != self.scheduler_id:
                log.info(
                    "survey from scheduler %s (registered with %s): registering again",
                    survey.scheduler_id,
                    self.scheduler_id,
                )
                self._register_wanted.set()
            reply = transport.encode(envelope_pb2.KIND_SURVEY, self.survey_reply(), message_id=env.message_id)
            try:
                await sock.asend(reply)
            except pynng.NNGException as exc:
                log.debug("survey reply dropped: %s", exc)

    # ------------------------------------------------------------ heartbeat
    def heartbeat(self) -> store_pb2.HeartbeatRequest:
        live = [w for w in self.workers.values() if not w.gone]
        active = sum(1 for w in live if w.held)
        rss = 0
        for pid in [os.getpid(), *(w.pid for w in live)]:
            with contextlib.suppress(psutil.Error, OSError):
                rss += psutil.Process(pid).memory_info().rss
        return store_pb2.HeartbeatRequest(
            pool_id=self.pool_id,
            server_name=self.settings.server_name,
            max_workers=max(1, self.settings.workers),
            active_workers=active,
            idle_workers=len(live) - active,
            running_tasks=sum(1 for w in live for h in w.held.values() if h.started),
            is_running=self.state is WorkerState.RUNNING,
            task_names=self.task_names,
            state=self.state.value,
            rss_bytes=rss,
            capacity=self.capacity,
        )

    async def _beat(self, req: transport.Requester, limit: float) -> None:
        try:
            await req.request(
                envelope_pb2.KIND_STORE_HEARTBEAT, self.heartbeat(), store_pb2.HeartbeatReply, timeout=limit
            )
            self._heartbeat_failures = 0
        except errors.TaskyardError as exc:
            self._heartbeat_failures += 1
            (log.warning if self._heartbeat_failures in (1, 10) else log.debug)(
                "heartbeat to %s failed: %s", self.settings.store_address, exc.message
            )

    async def _heartbeat_loop(self) -> None:
        s = self.settings
        req = transport.Requester(s.store_address, max_message_bytes=s.max_message_bytes, timeout=4.0)
        try:
            while True:
                await self._beat(req, 4.0)
                await asyncio.sleep(HEARTBEAT_INTERVAL)
        finally:
            req.close()

    # ------------------------------------------------------------ shutdown
    async def _shutdown(self) -> int:
        s = self.settings
        log.info("draining: no new work; stopping %d workers", len(self.workers))
        self.state = WorkerState.DRAINING
        self._mark_dirty()  # tell the scheduler: free_slots 0
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
        # Hand the last reports (releases) to the store before closing.
        self._closing = True
        self._mark_dirty()
        if self._sender is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._sender), 1.0)
        if self._outcomes is not None and self._starts is not None:
            try:
                await asyncio.wait_for(
                    asyncio.gather(self._outcomes.idle.wait(), self._starts.idle.wait()),
                    REPORT_FLUSH_TIMEOUT,
                )
            except TimeoutError:
                log.warning("final reports not acknowledged by the store; leases will lapse instead")
        self.state = WorkerState.STOPPED
        if self._registered.is_set():
            req = transport.Requester(s.store_address, max_message_bytes=s.max_message_bytes, timeout=1.0)
            await self._beat(req, 1.0)
            req.close()
        for t in list(self._tasks):
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for sock in (self._pair, self._respondent, self._store):
            if sock is not None:
                sock.close()
        if self._peer is not None:
            self._peer.close()
        log.info("worker-pool stopped")
        return 0


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
