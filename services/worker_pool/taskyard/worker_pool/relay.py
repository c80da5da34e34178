"""The report loop: what the workers reported, to the result-store and the scheduler.

Once per loop iteration while there is news, the gathered report (``Outbox``)
goes to the store, which has custody of results, and a slot notice goes to the
scheduler through the function the pool gives for it (``SchedulerLink``).

Start notices and outcomes share one stream to the store (``StoreOutlets.reports``):
an outcome with nothing ahead of it goes at once, and what arrives while a request
is in flight goes in the next one. A start notice is held back (``HeldStarts``): a
short attempt's outcome comes first and carries its start (the time and the worker,
which the store applies with the outcome, ASSIGNED -> final), so a short task costs
one request and one row write. A start still held when its attempt ended in
another way (released, died) goes nowhere either: the release or death carries the
pool's own started flag. Only the starts of attempts that outlive the hold-back go
as notices, and one that has not left yet when its attempt ends is taken back: the
end carries it as well. One that has left is applied before the end (one request in
flight at a time), so it is never refused as late.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core import hops
from taskyard.core.background import Background
from taskyard.core.held_starts import HeldStarts, Key
from taskyard.worker_pool import metrics as pool_metrics
from taskyard.worker_pool.reports import StoreOutlets
from taskyard.worker_pool.state import Outbox, PoolState

log = logging.getLogger("taskyard.worker_pool.manager")  # one logger name for the manager process

# How long an outcome waits for the log lines ahead of it (then goes anyway),
# checking at every step whether a drain has begun.
LOG_SETTLE_TIMEOUT = 2.0
LOG_SETTLE_STEP = 0.1


class Cancellable(Protocol):
    def cancel(self) -> None: ...


# When a callback runs: ``loop.call_later`` (a test gives a clock of its own).
CallLater = Callable[[float, Callable[[], None]], Cancellable]


class ReportRelay:
    def __init__(
        self,
        pool: PoolState,
        outbox: Outbox,
        outlets: StoreOutlets,
        notify_scheduler: Callable[[dispatch_pb2.PoolReport], None],
        *,
        start_notice_delay: float,
        call_later: CallLater | None = None,
    ) -> None:
        self._pool = pool
        self._start_notice_delay = start_notice_delay
        self._outbox = outbox
        self._outlets = outlets
        self._notify_scheduler = notify_scheduler
        self._call_later = call_later
        self._held = HeldStarts()
        # The hold-back's tick, armed only while a start is held (an idle pool has no timer).
        self._tick: Cancellable | None = None
        # Starts carried by their attempt's end instead of a notice (the notices
        # acknowledged are the forwarder's ``starts_sent``).
        self.starts_carried = 0
        # Outcomes waiting apart for their log lines (_after_logs).
        self._log_waits = Background("pool report relay")

    async def run(self) -> None:
        """Until the pool closes and nothing is left: each report to the store, and a
        slot notice to the scheduler when slots or the pool's state changed."""
        try:
            await self._relay()
        finally:
            if self._tick is not None:
                self._tick.cancel()
                self._tick = None

    async def _relay(self) -> None:
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
                if self._log_waits.errands:  # they come back within a step, then this loop ends
                    await self._log_waits.drain()
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
        self._log_waits.spawn(self._after_logs(held, target), name="log-settle")

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
        """Outcomes go to the store at once (or with the next request, when one is in
        flight); start notices are held (``HeldStarts``) and go only when their
        attempt outlives the hold-back. Correctness does not depend on them: a death
        carries the pool's own started flag, and the store accepts ASSIGNED -> final
        with the start time and worker the outcome carries."""
        held = self._held
        if report.started:
            held.hold(report.started)
            del report.started[:]
        # Then out again if it ended: a start in the same report as its end is carried
        # too, and so is one handed to the stream that has not left yet.
        if report.completed or report.released or report.died:
            carried = 0
            gone: list[Key] = []
            for ended in (report.completed, report.released, report.died):
                for e in ended:
                    ref = e.ref
                    key = (ref.task_id, ref.attempt)
                    if held.take(key) is not None:
                        carried += 1
                    else:
                        gone.append(key)
            reports = self._outlets.reports
            if reports is not None:
                if gone:
                    carried += reports.withdraw_starts(gone)
                hops.stamp(report.completed, "pool.reported")
                reports.submit(report)
            if carried:
                self.starts_carried += carried
                pool_metrics.start_notices("outcome", carried)
        if held:
            self._arm()
        elif self._tick is not None:  # nothing left to age: an idle pool keeps no timer
            self._tick.cancel()
            self._tick = None

    def _arm(self) -> None:
        if self._tick is None:
            call_later = self._call_later or asyncio.get_running_loop().call_later
            self._tick = call_later(self._start_notice_delay, self._on_tick)

    def _on_tick(self) -> None:
        """The starts held a whole tick go, in the next request (with whatever else waits)."""
        self._tick = None
        due = self._held.age()
        reports = self._outlets.reports
        if due and reports is not None:
            reports.submit(dispatch_pb2.PoolReport(started=due))
        if self._held:
            self._arm()
