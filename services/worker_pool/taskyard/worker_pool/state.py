"""What the pool manager holds, and the views computed from it.

``PoolState`` is the common base of ``Manager`` (manager.py) and its two halves,
``Workers`` (workers.py: the worker processes) and ``SchedulerLink`` (links.py:
the scheduler, the store and discovery). It owns every attribute they share.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import multiprocessing
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from taskyard.bus.v1 import dispatch_pb2, supervision_pb2, task_record_pb2
from taskyard.core import discovery, ids, transport
from taskyard.core.config import Settings
from taskyard.core.states import WorkerState
from taskyard.worker_pool import worker
from taskyard.worker_pool.reports import ReportForwarder
from taskyard.worker_pool.shipper import LogShipper

if TYPE_CHECKING:
    from taskyard.worker_pool.processes import WorkerHandle

log = logging.getLogger("taskyard.worker_pool.manager")  # one logger name for the manager process


class PoolState:
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
        # Whether the scheduler's slot notice is due (a slot or the pool's state
        # changed); a worker's start report alone is news for the store only.
        self._notice_wanted = False
        # Outcomes waiting apart for their log lines (links.SchedulerLink._after_logs).
        self._log_waits: set[asyncio.Task[None]] = set()
        self._register_wanted = asyncio.Event()
        self._registered = asyncio.Event()
        self._all_ready = asyncio.Event()
        self._closing = False
        self._early_deaths: dict[int, int] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._sender: asyncio.Task[None] | None = None
        self._pair: Any = None
        # The store's post-commit stream of attempts leased to this pool (fast path).
        self._leased_stream: transport.Inbox | None = None
        # Attempts that ended here lately, by (task, attempt, lease token): the second
        # copy of a dispatch (stream and PAIR both deliver it) must never run again.
        self._finished: collections.OrderedDict[tuple[str, int, str], None] = collections.OrderedDict()
        self._store: transport.Requester | None = None
        self._starts: ReportForwarder | None = None
        self._young_starts: dict[tuple[str, int], task_record_pb2.AttemptRef] = {}
        self._old_starts: dict[tuple[str, int], task_record_pb2.AttemptRef] = {}
        self._outcomes: ReportForwarder | None = None
        # ops: task log lines and context updates on their way to the store.
        self._logs: LogShipper | None = None
        self._respondent: Any = None
        self._survey_address = settings.survey_address
        self._peer: discovery.Peer | None = None
        self._heartbeat_failures = 0
        self._pair_peers = 0
        # Unix microseconds of the last dispatch routed to a worker (registry).
        self.last_dispatch_us = 0
        # The store's per-pool stream of cancel requests (renewals.py).
        self._cancel_stream: Any = None

    def _spawn_task(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        t = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(t)
        t.add_done_callback(self._task_done)
        return t

    def _task_done(self, t: asyncio.Task[Any]) -> None:
        self._tasks.discard(t)
        if not t.cancelled() and t.exception() is not None:
            log.error("background task %s failed", t.get_name(), exc_info=t.exception())

    def _mark_dirty(self) -> None:
        self._notice_wanted = True
        self._report_event.set()

    # Supervision hooks, implemented by Watchdog (watchdog.py).
    def _on_beat(self, w: WorkerHandle, body: bytes) -> None:
        raise NotImplementedError

    def _recycle(self, w: WorkerHandle, reason: str) -> None:
        raise NotImplementedError

    def _cancel_flagged(self, batch: dispatch_pb2.Dispatch) -> None:
        raise NotImplementedError

    def process_infos(self) -> list[supervision_pb2.WorkerProcess]:
        raise NotImplementedError

    # ------------------------------------------------------------ views
    def accepting(self) -> bool:
        # STARTING too: a scheduler may dispatch as soon as it dials our PAIR,
        # before its RegisterReply has reached us.
        return self.state in (WorkerState.STARTING, WorkerState.RUNNING)

    def free_slots(self) -> int:
        if not self.accepting():
            return 0
        return sum(
            max(0, self.concurrency - len(w.held)) for w in self.workers.values() if self._takes_work(w)
        )

    def _takes_work(self, w: WorkerHandle) -> bool:
        """Live, or a replacement still starting whose slot was live before (its pipe
        holds the dispatch until it is ready): a respawn must not bounce work back
        to the queue. Not a worker that never became ready (a broken import)."""
        if w.gone or w.recycling or w.killed_for:
            return False
        return w.ready or w.index not in self._early_deaths

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
