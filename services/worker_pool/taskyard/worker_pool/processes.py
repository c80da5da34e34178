"""The manager's side of its worker processes.

Spawning a worker (a socketpair for its pipe, a sentinel for its exit), reading
what it reports, the death path (its held attempts become Death reports, then it
is respawned), and routing each dispatched attempt to the least-loaded live worker.
The code that runs inside a worker is worker.py.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import multiprocessing.process
import socket
import time
from collections.abc import Awaitable, Callable

import pynng

from taskyard.bus.v1 import dispatch_pb2, envelope_pb2, store_pb2, task_record_pb2
from taskyard.core import hops, transport
from taskyard.core.states import WorkerState
from taskyard.v1 import task_pb2
from taskyard.worker_pool import pipe, worker
from taskyard.worker_pool.state import PoolState

log = logging.getLogger("taskyard.worker_pool.manager")  # one logger name for the manager process

# Ended attempts remembered to drop a late second copy of their dispatch.
FINISHED_REMEMBERED = 10_000

Key = tuple[str, int]


@dataclasses.dataclass(slots=True)
class Held:
    ref: task_record_pb2.AttemptRef
    started: bool = False
    # The retry budget a death of this attempt is judged by.
    max_retries: int = 0
    # Seconds the attempt may run (a busy worker's silence is judged by it).
    timeout: float = 0.0
    # The task's name: a death's backoff is the task's @task(retry_...) policy,
    # taken at its charged attempt (worker.charged_attempt).
    name: str = ""
    charged_attempt: int = 1
    # Monotonic time by which a cancelled attempt must have stopped (0 = none),
    # and whether its worker was killed for missing it (Death.cancel_step KILL).
    cancel_deadline: float = 0.0
    cancel_kill: bool = False
    # Monotonic time of its dispatch: a worker's silence counts as "busy" from then.
    since: float = dataclasses.field(default_factory=time.monotonic)


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
    # Supervision (watchdog.py): last beat over the pipe (monotonic; None =
    # never), resident memory it reported, why it is being replaced ("" = it is
    # not: a recycling worker gets no new work and is stopped once it holds none).
    last_beat: float | None = None
    last_beat_us: int = 0
    rss_bytes: int = 0
    recycling: str = ""
    stop_sent: bool = False
    killed_for: str = ""
    # Killed only because cancelled attempts outlived their deadline: the other
    # attempts it held did nothing wrong, so they are re-queued (resume_requested,
    # no retry spent) rather than counted as deaths.
    spare_bystanders: bool = False

    @property
    def pid(self) -> int:
        return self.process.pid or 0

    @property
    def live(self) -> bool:
        return self.ready and not self.gone and not self.recycling


def _by_index(w: WorkerHandle) -> int:
    return w.index


def _held_by_any(workers: list[WorkerHandle], key: Key) -> bool:
    return any(key in w.held for w in workers)


class Workers(PoolState):
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
                elif kind == pipe.LOGS:
                    if self._logs is not None:
                        self._logs.add_frame(body)
                elif kind == pipe.BEAT:
                    self._on_beat(w, body)
                elif kind == pipe.RECYCLE:
                    self._recycle(w, body.decode("utf-8", "replace"))
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
        held = w.held
        finished = self._finished
        if report.started:
            for ref in report.started:
                h = held.get((ref.task_id, ref.attempt))
                if h is not None:
                    h.started = True
            p.started.extend(report.started)
        # Completed and released attempts both end here: the slot is free, and a
        # late second copy of their dispatch is recognised (``_finished``).
        for ended, into in ((report.completed, p.completed), (report.released, p.released)):
            if not ended:
                continue
            for e in ended:
                ref = e.ref
                task_id, attempt = ref.task_id, ref.attempt
                held.pop((task_id, attempt), None)
                finished[(task_id, attempt, ref.lease_token)] = None
            into.extend(ended)  # type: ignore[arg-type]
        self._trim_finished()
        if report.completed or report.released:
            self._mark_dirty()  # slots came free
        else:
            self._report_event.set()  # starts only: the store's news, not the scheduler's

    def _remember_finished(self, ref: task_record_pb2.AttemptRef) -> None:
        self._finished[(ref.task_id, ref.attempt, ref.lease_token)] = None
        self._trim_finished()

    def _trim_finished(self) -> None:
        finished = self._finished
        while len(finished) > FINISHED_REMEMBERED:
            finished.popitem(last=False)

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
            self._remember_finished(h.ref)
            ref = task_record_pb2.AttemptRef()
            ref.CopyFrom(h.ref)
            ref.at_us = now
            if (shutting_down or w.spare_bystanders) and not h.cancel_kill:
                self._pending.released.append(store_pb2.Release(ref=ref, resume_requested=h.started))
            else:
                self._pending.died.append(
                    store_pb2.Death(
                        ref=ref,
                        started=h.started,
                        max_retries=h.max_retries,
                        max_rescues=self.settings.max_rescues,
                        retry_delay_ms=worker.death_delay_ms(h.name, h.charged_attempt, self.settings)
                        if h.started
                        else 0,
                        cancel_step=task_pb2.CANCEL_STEP_KILL if h.cancel_kill else 0,  # type: ignore[arg-type]
                    )
                )
        if shutting_down:
            log.info("worker %d (pid %s) stopped, exit code %s", w.index, w.pid, proc.exitcode)
        elif w.recycling and not held and not w.killed_for:
            log.info(
                "worker %d (pid %s) replacement: %s; exit code %s, nothing interrupted",
                w.index,
                w.pid,
                w.recycling,
                proc.exitcode,
            )
        else:
            spared = sum(1 for h in held.values() if not h.cancel_kill) if w.spare_bystanders else 0
            log.warning(
                "worker %d (pid %s) died%s, exit code %s, holding %d attempts (%d started%s): respawning",
                w.index,
                w.pid,
                f" (killed: {w.killed_for})" if w.killed_for else "",
                proc.exitcode,
                len(held),
                sum(h.started for h in held.values()),
                f"; {spared} re-queued without spending a retry" if spared else "",
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
        await self._receive_dispatches(self._pair.arecv, b"", "the PAIR socket")

    async def _receive_leased_stream(self) -> None:
        # The fast path's hop (store -> pool): taken on the loop (transport.Inbox).
        topic = transport.dispatch_topic(self.pool_id)
        inbox = self._leased_stream
        assert inbox is not None, "opened by start()"
        inbox.sock.subscribe(topic)
        await self._receive_dispatches(inbox.recv, topic, "the leased stream")

    async def _receive_dispatches(
        self, recv: Callable[[], Awaitable[bytes]], topic: bytes, where: str
    ) -> None:
        while True:
            try:
                raw = await recv()
            except pynng.Closed:
                return
            try:
                batch = transport.open_message(
                    raw[len(topic) :], envelope_pb2.KIND_DISPATCH, dispatch_pb2.Dispatch
                )
            except Exception:
                log.warning("malformed message dropped on %s", where)
                continue
            if batch is None:
                log.warning("a message that is not a dispatch dropped on %s", where)
                continue
            self._dispatch(batch)

    def _dispatch(self, batch: dispatch_pb2.Dispatch) -> None:
        per_worker: dict[int, dispatch_pb2.Dispatch] = {}
        workers = list(self.workers.values())
        # Who may take work does not change while a batch is routed, only how much
        # each holds: decided once, in index order (ties go to the lowest index).
        takers = sorted((w for w in workers if self._takes_work(w)), key=_by_index)
        if not self.accepting():
            takers = []
        worker_ids: dict[int, str] = {}
        finished = self._finished
        concurrency = self.concurrency
        default_retries, default_timeout = self.settings.max_retries, self.settings.task_timeout
        refused = 0
        hops.stamp(batch.tasks, "pool.received")
        for record in batch.tasks:
            task_id, attempt = record.id, record.attempt
            key = (task_id, attempt)
            if (task_id, attempt, record.lease_token) in finished or _held_by_any(workers, key):
                continue  # held or just ended here: the second copy of one dispatch
            target = None
            fewest = concurrency
            for w in takers:
                n = len(w.held)
                if n < fewest:
                    target, fewest = w, n
            if target is None:
                # No slot (or draining): back to the queue, no retry burned.
                self._pending.released.append(store_pb2.Release(ref=worker.ref_of(record, "")))
                refused += 1
                continue
            wid = worker_ids.get(target.index)
            if wid is None:
                wid = worker_ids[target.index] = worker.worker_id(self.pool_id, target.index, target.pid)
            target.held[key] = Held(
                task_record_pb2.AttemptRef(
                    task_id=task_id, attempt=attempt, lease_token=record.lease_token, worker_id=wid
                ),
                max_retries=worker.effective_max_retries(record, default_retries),
                timeout=worker.timeout_of(record, default_timeout),
                name=record.name,
                charged_attempt=worker.charged_attempt(record),
            )
            d = per_worker.get(target.index)
            if d is None:
                d = per_worker[target.index] = dispatch_pb2.Dispatch()
            d.tasks.append(record)
        if per_worker:
            self.last_dispatch_us = worker.now_us()
        for index, d in per_worker.items():
            self.workers[index].writer.write(pipe.pack(pipe.DISPATCH, d.SerializeToString()))
        self._cancel_flagged(batch)
        if refused:
            log.warning("released %d dispatched attempts: no free slot", refused)
            self._mark_dirty()
