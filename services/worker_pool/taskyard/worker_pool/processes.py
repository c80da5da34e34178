"""The manager's side of its worker processes.

Spawning a worker (a socketpair for its pipe, a sentinel for its exit), reading
what it reports, recycling it (no new work, then STOP once it holds none), the
death path (its held attempts become Death reports, then it is respawned), and
routing each dispatched attempt to the least-loaded live worker. The code that
runs inside a worker is worker.py; what the manager knows of one is handles.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import Coroutine
from typing import Any

from cachetools import FIFOCache

from taskyard.bus.v1 import dispatch_pb2, leases_pb2, pools_pb2, task_record_pb2
from taskyard.core import hops, metrics, tracing
from taskyard.core.background import Background
from taskyard.core.config import PoolSettings
from taskyard.core.states import WorkerState
from taskyard.v1 import task_pb2
from taskyard.worker_pool import attempts, beats, launcher, pipe, spans
from taskyard.worker_pool import metrics as pool_metrics
from taskyard.worker_pool.handles import Held, Key, WorkerHandle, log_exit, report_exit
from taskyard.worker_pool.reports import StoreOutlets
from taskyard.worker_pool.state import Outbox, PoolState

log = logging.getLogger("taskyard.worker_pool.manager")  # one logger name for the manager process

# Ended attempts remembered to drop a late second copy of their dispatch.
FINISHED_REMEMBERED = 10_000
MIB = 1024 * 1024


def _by_index(w: WorkerHandle) -> int:
    return w.index


def _held_by_any(workers: list[WorkerHandle], key: Key) -> bool:
    return any(key in w.held for w in workers)


class Workers:
    """The worker processes of one pool. Their reports go to ``outbox``, their log
    lines to the shipper of ``outlets``; background tasks (one reader per worker)
    are ``background``'s."""

    def __init__(
        self,
        settings: PoolSettings,
        pool: PoolState,
        outbox: Outbox,
        background: Background,
        outlets: StoreOutlets,
    ) -> None:
        self._settings = settings
        self._pool = pool
        self._outbox = outbox
        self._background = background
        self._outlets = outlets
        # By worker index; a respawned worker takes its predecessor's index.
        self.handles: dict[int, WorkerHandle] = {}
        self.all_ready = asyncio.Event()
        # Unix microseconds of the last dispatch routed to a worker (registry).
        self.last_dispatch_us = 0
        self.launcher = launcher.Launcher()
        # Indexes of live workers that died and are being started again, and the
        # attempts dispatched meanwhile with no other slot: they wait for the
        # replacement (starting one takes a fork server's round trip) instead of
        # bouncing back to the queue, each bounce a new attempt.
        self._respawning: set[int] = set()
        self._parked = dispatch_pb2.Dispatch()
        self._early_deaths: dict[int, int] = {}
        # Attempts that ended here lately, by (task, attempt, lease token): the second
        # copy of a dispatch (stream and PAIR both deliver it) must never run again.
        # The earliest ended is forgotten first: filled by setdefault, so one ended
        # again keeps its place (an assignment would move it to the end).
        self._finished: FIFOCache[tuple[str, int, str], None] = FIFOCache(FINISHED_REMEMBERED)

    # ------------------------------------------------------------ processes
    async def start(self) -> None:
        for index in range(max(1, self._settings.workers)):
            await self.spawn(index)

    async def spawn(self, index: int) -> None:
        parent_sock, child_sock = socket.socketpair()
        try:
            started = await self.launcher.start(child_sock, self._settings, self._pool.pool_id, index)
        except BaseException:
            parent_sock.close()
            raise
        finally:
            child_sock.close()
        proc = started.process
        reader, writer = await asyncio.open_connection(sock=parent_sock, limit=2**20)
        w = WorkerHandle(index, proc, reader, writer, time.monotonic(), pidfd=started.pidfd)
        self.handles[index] = w
        loop = asyncio.get_running_loop()
        loop.add_reader(proc.sentinel, self._on_sentinel, w)
        self._background.spawn(self._read_worker(w), name=f"worker-{index}")
        log.info("worker %d started (pid %s)", index, proc.pid)
        self._respawning.discard(index)
        if self._parked.tasks and not self._respawning:
            parked, self._parked = self._parked, dispatch_pb2.Dispatch()
            self.route(parked, arrived=False)

    def _release_parked(self, *, keep_waiting: bool = False) -> None:
        """The attempts waiting for a replacement that will not come (the pool stops,
        or the replacement could not be started), back to the queue, no retry spent.
        ``keep_waiting``: later dispatches may still wait for the replacement."""
        if not keep_waiting:
            self._respawning.clear()
        parked, self._parked = self._parked, dispatch_pb2.Dispatch()
        for record in parked.tasks:
            self._outbox.report.released.append(leases_pb2.Release(ref=attempts.ref_of(record, "")))
        if parked.tasks:
            self._outbox.slots_changed()

    def _on_sentinel(self, w: WorkerHandle) -> None:
        """The process exited: end its pipe even if a grandchild inherited the other end."""
        asyncio.get_running_loop().remove_reader(w.process.sentinel)
        w.writer.close()

    async def _read_worker(self, w: WorkerHandle) -> None:
        limit = self._settings.max_message_bytes + 1024
        try:
            while True:
                frame = await pipe.read(w.reader, limit)
                if frame is None:
                    break
                kind, body = frame
                if kind == pipe.REPORT:
                    report = dispatch_pb2.PoolReport()
                    report.ParseFromString(body)
                    self._apply_worker_report(w, report)
                elif kind == pipe.LOGS:
                    logs = self._outlets.logs
                    if logs is not None:
                        logs.add_frame(body)
                elif kind == pipe.BEAT:
                    self.on_beat(w, body)
                elif kind == pipe.RECYCLE:
                    self.recycle(w, body.decode("utf-8", "replace"))
                elif kind == pipe.HELLO:
                    self._on_hello(w)
        except pipe.FrameError as exc:
            log.error("worker %d sent a malformed frame: %s", w.index, exc)
        finally:
            await self._worker_gone(w)

    def _on_hello(self, w: WorkerHandle) -> None:
        w.ready = True
        self._early_deaths.pop(w.index, None)
        log.debug("worker %d ready (pid %s)", w.index, w.pid)
        if all(x.ready for x in self.handles.values()):
            self.all_ready.set()
        self._outbox.slots_changed()

    def _apply_worker_report(self, w: WorkerHandle, report: dispatch_pb2.PoolReport) -> None:
        outbox = self._outbox
        p = outbox.report
        held = w.held
        finished = self._finished
        if report.started:
            for ref in report.started:
                h = held.get((ref.task_id, ref.attempt))
                if h is not None:
                    h.started = True
                    h.started_at_us = ref.at_us
            p.started.extend(report.started)
        # Completed and released attempts both end here: the slot is free, and a
        # late second copy of their dispatch is recognised (``_finished``).
        for ended, into in ((report.completed, p.completed), (report.released, p.released)):
            if not ended:
                continue
            for e in ended:
                ref = e.ref
                task_id, attempt = ref.task_id, ref.attempt
                h = held.pop((task_id, attempt), None)
                finished.setdefault((task_id, attempt, ref.lease_token), None)
                if h is not None and h.head is not None and isinstance(e, leases_pb2.Completion):
                    head = h.head
                    pool_metrics.attempt_ended(
                        head.queue, head.name, spans.enqueued_us(head), e, h.charged_attempt
                    )
            into.extend(ended)  # type: ignore[arg-type]
        if report.completed or report.released:
            outbox.slots_changed()
        else:
            outbox.news.set()  # starts only: the store's news, not the scheduler's

    def _not_started(self, record: task_record_pb2.TaskRecord) -> None:
        """Report ``record``'s attempt cancelled before its body started."""
        done = attempts.cancelled_completion(
            task_pb2.CANCEL_STEP_NOT_STARTED, "cancelled before its pool started it"
        )
        done.ref.CopyFrom(attempts.ref_of(record, ""))
        self._outbox.report.completed.append(done)
        self._finished.setdefault((record.id, record.attempt, record.lease_token), None)
        self._outbox.slots_changed()

    async def _worker_gone(self, w: WorkerHandle) -> None:
        if w.gone:
            return
        w.gone = True
        if w.ready and not (self._pool.stopping() or self._pool.closing):
            self._respawning.add(w.index)
        loop = asyncio.get_running_loop()
        loop.remove_reader(w.process.sentinel)
        w.writer.close()
        pidfd, w.pidfd = w.pidfd, -1
        await self.launcher.reap(w.process, pidfd)
        w.exited.set()
        held, w.held = w.held, {}
        stopping = self._pool.stopping()
        for h in held.values():
            self._finished.setdefault((h.ref.task_id, h.ref.attempt, h.ref.lease_token), None)
        report_exit(w, held, stopping, self._settings, self._outbox.report)
        log_exit(w, held, stopping)
        self._outbox.slots_changed()
        if not (stopping or self._pool.closing):
            await self._respawn(w)
        if w.index in self._respawning:  # not started again: the pool stops
            self._release_parked()

    async def _respawn(self, w: WorkerHandle) -> None:
        if not w.ready:  # died before it was ready (import error?): back off
            n = self._early_deaths[w.index] = self._early_deaths.get(w.index, 0) + 1
            await asyncio.sleep(min(5.0, 0.2 * 2 ** (n - 1)))
        attempt = 0
        while not (self._pool.closing or self._pool.state in (WorkerState.DRAINING, WorkerState.STOPPING)):
            try:
                await self.spawn(w.index)
                return
            except (OSError, EOFError, RuntimeError) as exc:
                # The template could not fork (it died while starting, say): it is
                # started again on the next try.
                attempt += 1
                log.error("worker %d could not be started (try %d): %s", w.index, attempt, exc)
                self._release_parked(keep_waiting=True)  # no slot soon: not worth their wait
                await asyncio.sleep(min(5.0, 0.2 * 2 ** (attempt - 1)))

    async def stop(self, limit: float) -> None:
        """STOP to every worker; one still alive ``limit`` seconds later is killed."""
        for w in list(self.handles.values()):
            if not w.gone:
                with contextlib.suppress(ConnectionError, RuntimeError):
                    w.writer.write(pipe.pack(pipe.STOP))
        waits = [w.exited.wait() for w in self.handles.values() if not w.gone]
        if not waits or await _wait_all(waits, limit):
            return
        for w in list(self.handles.values()):
            if not w.gone and w.process.is_alive():
                log.warning("worker %d (pid %s) still alive after %.1fs: killing", w.index, w.pid, limit)
                w.kill()
        await _wait_all([w.exited.wait() for w in self.handles.values()], 10.0)

    # ------------------------------------------------------------ supervision inputs
    def on_beat(self, w: WorkerHandle, body: bytes) -> None:
        """A beat over the pipe; a worker past the memory limit is recycled at once."""
        w.last_beat = time.monotonic()
        w.last_beat_us = time.time_ns() // 1000
        w.rss_bytes, _ = beats.parse_beat(body)
        limit = self._settings.worker_max_memory_mib
        if limit > 0 and w.rss_bytes > limit * MIB and not w.recycling:
            self.recycle(w, f"resident memory {w.rss_bytes / MIB:.0f} MiB over the limit of {limit} MiB")

    def recycle(self, w: WorkerHandle, reason: str) -> None:
        if w.gone or w.recycling:
            return
        w.recycling = reason
        log.info(
            "worker %d (pid %s) recycling: %s; no new work, finishing %d held attempts",
            w.index,
            w.pid,
            reason,
            len(w.held),
        )
        self._outbox.slots_changed()  # fewer free slots
        self.stop_if_drained(w)

    def stop_if_drained(self, w: WorkerHandle) -> None:
        if w.recycling and not w.held and not w.stop_sent and not w.gone:
            w.stop_sent = True
            with contextlib.suppress(ConnectionError, RuntimeError):
                w.writer.write(pipe.pack(pipe.STOP))

    # ------------------------------------------------------------ routing
    def route(self, batch: dispatch_pb2.Dispatch, *, arrived: bool = True) -> None:
        """Each attempt of ``batch`` to the least-loaded worker that takes work; one
        without a slot waits for a worker being started again, else goes back to the
        queue; a second copy of one is dropped. ``arrived``: the batch just came (not
        parked ones routed again)."""
        per_worker: dict[int, dispatch_pb2.Dispatch] = {}
        workers = list(self.handles.values())
        # Who may take work does not change while a batch is routed, only how much
        # each holds: decided once, in index order (ties go to the lowest index).
        takers = sorted((w for w in workers if self._takes_work(w)), key=_by_index)
        if not self._pool.accepting():
            takers = []
        worker_ids: dict[int, str] = {}
        finished = self._finished
        concurrency = self._pool.concurrency
        default_retries, default_timeout = self._settings.max_retries, self._settings.task_timeout
        # An attempt's head is kept only for what uses it: metrics, and the span of
        # an attempt whose worker dies (a copy a task costs the manager otherwise).
        observed = tracing.enabled() or metrics.enabled()
        refused = 0
        if arrived:
            hops.stamp(batch.tasks, "pool.received")
        for record in batch.tasks:
            task_id, attempt = record.id, record.attempt
            key = (task_id, attempt)
            if (task_id, attempt, record.lease_token) in finished or _held_by_any(workers, key):
                continue  # held or just ended here: the second copy of one dispatch
            if record.cancel_requested:
                # Cancelled before this pool started it (the store sends a dispatched
                # attempt's cancel as a flagged copy, which may overtake the dispatch):
                # never started, and the dispatch arriving later is a second copy.
                self._not_started(record)
                continue
            target = None
            fewest = concurrency
            for w in takers:
                n = len(w.held)
                if n < fewest:
                    target, fewest = w, n
            if target is None and self._respawning and self._pool.accepting():
                self._parked.tasks.append(record)
                continue
            if target is None:
                # No slot (or draining): back to the queue, no retry burned.
                self._outbox.report.released.append(leases_pb2.Release(ref=attempts.ref_of(record, "")))
                refused += 1
                continue
            wid = worker_ids.get(target.index)
            if wid is None:
                wid = worker_ids[target.index] = attempts.worker_id(
                    self._pool.pool_id, target.index, target.pid
                )
            target.held[key] = Held(
                task_record_pb2.AttemptRef(
                    task_id=task_id, attempt=attempt, lease_token=record.lease_token, worker_id=wid
                ),
                max_retries=attempts.effective_max_retries(record, default_retries),
                timeout=attempts.timeout_of(record, default_timeout),
                name=record.name,
                charged_attempt=attempts.charged_attempt(record),
                head=spans.head_of(record) if observed else None,
            )
            d = per_worker.get(target.index)
            if d is None:
                d = per_worker[target.index] = dispatch_pb2.Dispatch()
            d.tasks.append(record)
        if per_worker:
            self.last_dispatch_us = attempts.now_us()
        for index, d in per_worker.items():
            self.handles[index].writer.write(pipe.pack(pipe.DISPATCH, d.SerializeToString()))
        if refused:
            log.warning("released %d dispatched attempts: no free slot", refused)
            self._outbox.slots_changed()

    def _takes_work(self, w: WorkerHandle) -> bool:
        """Live, or a replacement still starting whose slot was live before (its pipe
        holds the dispatch until it is ready): a respawn must not bounce work back
        to the queue. Not a worker that never became ready (a broken import)."""
        if w.gone or w.recycling or w.killed_for:
            return False
        return w.ready or w.index not in self._early_deaths

    # ------------------------------------------------------------ views
    def live(self) -> list[WorkerHandle]:
        """The workers not gone, ready or not."""
        return [w for w in self.handles.values() if not w.gone]

    def free_slots(self) -> int:
        if not self._pool.accepting():
            return 0
        concurrency = self._pool.concurrency
        return sum(max(0, concurrency - len(w.held)) for w in self.handles.values() if self._takes_work(w))

    def held_refs(self) -> list[task_record_pb2.AttemptRef]:
        now = attempts.now_us()
        out = []
        for w in self.handles.values():
            for h in w.held.values():
                ref = task_record_pb2.AttemptRef()
                ref.CopyFrom(h.ref)
                ref.at_us = now
                out.append(ref)
        return out

    def worker_pids(self) -> list[int]:
        return [w.pid for _, w in sorted(self.handles.items()) if not w.gone]

    def process_infos(self) -> list[pools_pb2.WorkerProcess]:
        out = []
        stopping = self._pool.stopping()
        for _, w in sorted(self.handles.items()):
            if w.gone:
                continue
            if stopping:
                state = "stopping"
            elif w.recycling:
                state = "recycling"
            elif not w.ready:
                state = "starting"
            else:
                state = "busy" if w.held else "idle"
            out.append(
                pools_pb2.WorkerProcess(
                    index=w.index,
                    pid=w.pid,
                    state=state,
                    rss_bytes=w.rss_bytes,
                    running_tasks=sum(1 for h in w.held.values() if h.started),
                    last_beat_us=w.last_beat_us,
                )
            )
        return out


async def _wait_all(waits: list[Coroutine[Any, Any, Any]], limit: float) -> bool:
    tasks = [asyncio.ensure_future(c) for c in waits]
    if not tasks:
        return True
    _, pending = await asyncio.wait(tasks, timeout=limit)
    for t in pending:
        t.cancel()
    return not pending
