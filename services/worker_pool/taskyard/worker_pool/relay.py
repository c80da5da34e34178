"""The report loop: what the workers reported, to the result-store and the scheduler.

Once per loop iteration while there is news, the gathered report (``Outbox``)
goes to the store, which has custody of results (outcomes at once, start notices
a little later, an outcome after its own log lines), and a slot notice goes to
the scheduler through the function the pool gives for it (``SchedulerLink``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from taskyard.bus.v1 import dispatch_pb2, task_record_pb2
from taskyard.core import hops
from taskyard.worker_pool.reports import StoreOutlets
from taskyard.worker_pool.state import Outbox, PoolState

log = logging.getLogger("taskyard.worker_pool.manager")  # one logger name for the manager process

# A start notice waits this long (to twice as long) and is dropped if the attempt
# ends first: RUNNING shows for tasks that run longer, and short ones cost no write.
START_NOTICE_DELAY = 0.05
# How long an outcome waits for the log lines ahead of it (then goes anyway),
# checking at every step whether a drain has begun.
LOG_SETTLE_TIMEOUT = 2.0
LOG_SETTLE_STEP = 0.1


class ReportRelay:
    def __init__(
        self,
        pool: PoolState,
        outbox: Outbox,
        outlets: StoreOutlets,
        notify_scheduler: Callable[[dispatch_pb2.PoolReport], None],
    ) -> None:
        self._pool = pool
        self._outbox = outbox
        self._outlets = outlets
        self._notify_scheduler = notify_scheduler
        self._young_starts: dict[tuple[str, int], task_record_pb2.AttemptRef] = {}
        self._old_starts: dict[tuple[str, int], task_record_pb2.AttemptRef] = {}
        # Outcomes waiting apart for their log lines (_after_logs).
        self._log_waits: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        """Until the pool closes and nothing is left: each report to the store, and a
        slot notice to the scheduler when slots or the pool's state changed."""
        outbox, pool = self._outbox, self._pool
        while True:
            await outbox.news.wait()
            outbox.news.clear()
            report = outbox.take()
            logs = self._outlets.logs
            if logs is not None:
                logs.forget((r.ref.task_id, r.ref.attempt) for r in report.released)
                self._hold_back_for_logs(report)
            if pool.closing and not (report.started or report.completed or report.released or report.died):
                if self._log_waits:  # they come back within a step, then this loop ends
                    await asyncio.wait(set(self._log_waits))
                    continue
                return
            notice = outbox.take_notice()
            self._hand_to_store(report)
            if notice or report.completed or report.released or report.died:
                # After the outcome's request has gone out (the forwarder's task
                # was scheduled first): the result is the one being waited for.
                asyncio.get_running_loop().call_soon(self._notify_scheduler, report)
            if pool.closing:
                outbox.news.set()  # drain what came in meanwhile, then stop

    def _hold_back_for_logs(self, report: dispatch_pb2.PoolReport) -> None:
        """ops: the lines a worker sent before an outcome are stored before it, so a
        log stream that ends with the task misses none of them (a death may end its
        task too: its lines go first as well). Outcomes whose lines are not all
        acknowledged leave ``report`` and wait apart; the others go on at once, so a
        quiet task's result never waits for a chatty neighbour's lines."""
        logs = self._outlets.logs
        assert logs is not None
        target = 0  # the furthest unit a held-back outcome waits for
        # Most outcomes have no line in flight: the report is split (copies) only
        # when one of them waits.
        waiting_c: set[int] = set()
        for i, c in enumerate(report.completed):
            ref = c.ref
            t = logs.target_of(ref.task_id, ref.attempt)
            if not logs.is_reached(t):
                waiting_c.add(i)
                target = max(target, t)
        waiting_d: set[int] = set()
        for i, d in enumerate(report.died):
            t = logs.target_of(d.ref.task_id, d.ref.attempt)
            if not logs.is_reached(t):
                waiting_d.add(i)
                target = max(target, t)
        if not (waiting_c or waiting_d):
            return
        held, kept = dispatch_pb2.PoolReport(), dispatch_pb2.PoolReport()
        for i, c in enumerate(report.completed):
            (held if i in waiting_c else kept).completed.append(c)
        for i, d in enumerate(report.died):
            (held if i in waiting_d else kept).died.append(d)
        report.ClearField("completed")
        report.completed.extend(kept.completed)
        report.ClearField("died")
        report.died.extend(kept.died)
        task = asyncio.get_running_loop().create_task(self._after_logs(held, target), name="log-settle")
        self._log_waits.add(task)
        task.add_done_callback(self._log_waits.discard)

    async def _after_logs(self, held: dispatch_pb2.PoolReport, target: int) -> None:
        """Back into the report stream once the lines are stored, or at the settle
        limit, or within a step of a drain's start: the manager gives the report
        loop a second to hand its last outcomes over, and an outcome matters more
        than the order of its log lines (a lost one would run the task again)."""
        logs = self._outlets.logs
        assert logs is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + LOG_SETTLE_TIMEOUT
        try:
            while not await logs.reached(target, LOG_SETTLE_STEP):
                if self._pool.closing or loop.time() >= deadline:
                    break
        finally:
            self._outbox.report.completed.extend(held.completed)
            self._outbox.report.died.extend(held.died)
            self._outbox.news.set()

    def _hand_to_store(self, report: dispatch_pb2.PoolReport) -> None:
        """Outcomes go to the store at once. Start notices wait START_NOTICE_DELAY
        and are dropped when the outcome comes first: a short task costs the store
        no start write and its result never queues behind one. Correctness does not
        depend on them: a death carries the pool's own started flag, and the store
        accepts ASSIGNED -> final with the start time the outcome carries."""
        young, old = self._young_starts, self._old_starts
        for ref in report.started:
            young[(ref.task_id, ref.attempt)] = ref
        # Then out again if it ended: a start in the same report as its end is dropped too.
        for ended in (report.completed, report.released, report.died):
            for e in ended:
                ref = e.ref
                key = (ref.task_id, ref.attempt)
                young.pop(key, None)
                old.pop(key, None)
        outcomes = self._outlets.outcomes
        if outcomes is not None and (report.completed or report.released or report.died):
            del report.started[:]
            hops.stamp(report.completed, "pool.reported")
            outcomes.submit(report)

    async def send_start_notices(self) -> None:
        """Two generations: a start is sent one to two ticks after it happened."""
        while True:
            await asyncio.sleep(START_NOTICE_DELAY)
            due, self._old_starts, self._young_starts = self._old_starts, self._young_starts, {}
            starts = self._outlets.starts
            if due and starts is not None:
                starts.submit(dispatch_pb2.PoolReport(started=list(due.values())))
