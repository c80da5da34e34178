"""Handing what the workers report to the result-store, the only custody.

Results go straight to the store over REQ/REP, whose reply comes after COMMIT,
and are retried until then: a result never rides on a fire-and-forget socket
(a PAIR message dies with a peer that goes away). Start notices and outcomes
share one stream with one request in flight at a time: a report with nothing
ahead of it goes at once, those that arrive meanwhile are merged into the next
request (batching under load, with no timer), and a task's start is always
applied before its completion (the store applies a request's starts first).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Iterable

from taskyard.bus.v1 import dispatch_pb2, leases_pb2
from taskyard.core import contract, errors, rpc
from taskyard.core.config import PoolSettings
from taskyard.core.retry import Backoff, RetryPolicy
from taskyard.worker_pool import metrics as pool_metrics
from taskyard.worker_pool import poison
from taskyard.worker_pool.contact import StoreContact
from taskyard.worker_pool.shipper import LogShipper

log = logging.getLogger(__name__)

# The first pause and the cap of the pauses between tries of a report (core.retry.Backoff).
RETRY_PAUSE = (0.05, 2.0)


def _backoff() -> Backoff:
    first, cap = RETRY_PAUSE
    return Backoff(first=first, cap=cap)


class ReportForwarder:
    def __init__(
        self,
        store: rpc.Caller,
        policy: RetryPolicy,
        rng: random.Random | None = None,
        contact: StoreContact | None = None,
        batch_bytes: int | None = None,
    ) -> None:
        self._store = store
        # A request past this is sent in parts: the store's port refuses a message
        # past half of max_message_bytes (core/gate.py), and reports merged while
        # the store was away could grow past it and then be refused for ever.
        self._batch_bytes = batch_bytes
        self._contact = contact
        self._policy = policy
        self._rng = rng or random.Random()
        self._pending: leases_pb2.ReportRequest | None = None
        self._pump: asyncio.Task[None] | None = None
        self.refused = 0
        self.dropped = 0  # entries the store refused for good (see _isolate)
        self.requests = 0  # requests handed to the store, retries included
        self.starts_sent = 0  # start notices the store acknowledged
        self.idle = asyncio.Event()
        self.idle.set()

    def submit(self, report: dispatch_pb2.PoolReport) -> None:
        """Queue a report for the store; retry delays come from the retry policy."""
        if not (report.started or report.completed or report.released or report.died):
            return
        req = self._pending
        if req is None:
            req = self._pending = leases_pb2.ReportRequest()
        req.started.extend(report.started)
        for completion in report.completed:
            # The worker chose the delay (the task's own policy, Retry(delay=...)) unless 0.
            if not completion.success and completion.retryable and completion.retry_delay_ms <= 0:
                completion.retry_delay_ms = self._delay_ms(completion.ref.attempt)
        req.completed.extend(report.completed)
        req.released.extend(report.released)
        for death in report.died:
            if death.started and death.retry_delay_ms <= 0:  # else the task's own (processes.py)
                death.retry_delay_ms = self._delay_ms(death.ref.attempt)
            req.died.append(death)
        if self._pump is None:
            self.idle.clear()
            self._pump = asyncio.get_running_loop().create_task(self._run())

    def withdraw_starts(self, keys: Iterable[tuple[str, int]]) -> int:
        """Take the start notices of ``keys``' attempts (they ended) out of the
        request not sent yet: the attempts' ends carry their starts, in one request
        and one row write. How many were taken out."""
        req = self._pending
        if req is None or not req.started:
            return 0
        ended = set(keys)
        kept = [ref for ref in req.started if (ref.task_id, ref.attempt) not in ended]
        taken = len(req.started) - len(kept)
        if taken:
            del req.started[:]
            req.started.extend(kept)
        return taken

    def _delay_ms(self, attempt: int) -> int:
        return int(self._policy.delay(attempt, self._rng) * 1000)

    def _take(self) -> leases_pb2.ReportRequest | None:
        req, self._pending = self._pending, None
        if req is None or self._batch_bytes is None or req.ByteSize() <= self._batch_bytes:
            return req
        first, rest = _cut(req, self._batch_bytes)
        self._pending = rest
        return first

    async def _run(self) -> None:
        backoff = _backoff()
        try:
            while (req := self._take()) is not None:
                try:
                    reply = await self._call(req)
                except errors.TaskyardError as exc:
                    if poison.is_poison(exc):  # retrying as is would fail forever
                        await self._isolate(req, exc)
                        backoff.reset()
                        continue
                    # Keep the report, in front of anything newer, and try again: a
                    # result a worker handed over is not dropped while this process lives.
                    later, self._pending = self._pending, None
                    if later is not None:
                        req.MergeFrom(later)
                    self._pending = req
                    delay = backoff.next_delay()
                    if self._contact is not None:
                        self._contact.failed("report", exc.message)
                    log.warning("report to the store failed (%s); retrying in %.2fs", exc, delay)
                    await asyncio.sleep(delay)
                    continue
                backoff.reset()
                self._acknowledged(req)
                if reply.refused:
                    self.refused += reply.refused
                    log.info("store refused %d stale report entries (superseded attempts)", reply.refused)
        finally:
            self._pump = None
            self.idle.set()

    async def _call(self, req: leases_pb2.ReportRequest) -> leases_pb2.ReportReply:
        """The store's answer to ``req``; one left unanswered too long cuts the pool off."""
        watch = self._contact.watch_request("report") if self._contact is not None else None
        try:
            return await self._send(req)
        finally:
            if watch is not None:
                watch.cancel()

    def _acknowledged(self, req: leases_pb2.ReportRequest) -> None:
        if req.started:
            self.starts_sent += len(req.started)
            pool_metrics.start_notices("notice", len(req.started))

    def _send(self, req: leases_pb2.ReportRequest) -> Awaitable[leases_pb2.ReportReply]:
        self.requests += 1
        pool_metrics.report_sent()
        return self._store.call(contract.STORE_REPORT, req)

    async def _isolate(self, req: leases_pb2.ReportRequest, exc: errors.TaskyardError) -> None:
        """The store refused ``req`` for good: send its entries one by one (in
        order, before anything newer) and drop only those refused again, so one
        bad entry never blocks the pool's other reports."""
        if poison.size(req) > 1:
            log.warning(
                "the store refused a report of %d entries (%s): sending them one by one",
                poison.size(req),
                exc,
            )
        for single in poison.split(req):
            backoff = _backoff()
            while True:
                try:
                    reply = await self._send(single)
                    self._acknowledged(single)
                    self.refused += reply.refused
                    break
                except errors.TaskyardError as err:
                    if poison.is_poison(err):
                        self.dropped += 1
                        log.error(
                            "the store refused the report entry for %s (%s): dropped it",
                            poison.describe(single),
                            err,
                        )
                        break
                    delay = backoff.next_delay()
                    log.warning("report to the store failed (%s); retrying in %.2fs", err, delay)
                    await asyncio.sleep(delay)


Report = leases_pb2.ReportRequest


def _cut(req: Report, limit: int) -> tuple[Report, Report]:
    """The entries of ``req`` that fit in ``limit`` bytes (at least one), in the
    order the store applies them, and the rest."""
    first, rest = leases_pb2.ReportRequest(), leases_pb2.ReportRequest()
    taken = 0  # first's size: a request's bytes are the sum of its entries'
    full = False
    for single in poison.split(req):
        size = single.ByteSize()
        full = full or (taken > 0 and taken + size > limit)
        if full:
            rest.MergeFrom(single)
        else:
            first.MergeFrom(single)
            taken += size
    return first, rest


class StoreOutlets:
    """What the pool hands the result-store through: reports (outcomes and start
    notices, one stream) and task log lines. They exist once ``open`` gave them
    the store's requester (the pool dials the store when it starts)."""

    def __init__(self, settings: PoolSettings) -> None:
        self._settings = settings
        self.reports: ReportForwarder | None = None
        self.logs: LogShipper | None = None

    def open(self, store: rpc.Requester, contact: StoreContact | None = None) -> None:
        s = self._settings
        policy = RetryPolicy.from_settings(s)  # with TASKYARD_RETRY_JITTER, as the workers use
        batch_bytes = max(1, s.max_message_bytes // 2)
        self.reports = ReportForwarder(store, policy, contact=contact, batch_bytes=batch_bytes)
        self.logs = LogShipper(store, max_pending=s.log_buffer_lines, batch_bytes=batch_bytes)

    async def flushed(self, limit: float) -> bool:
        """Whether the store acknowledged everything handed over, waiting up to ``limit`` seconds."""
        if self.reports is None:
            return True
        waits = [self.reports.idle.wait()]
        if self.logs is not None:
            waits.append(self.logs.idle.wait())
        try:
            await asyncio.wait_for(asyncio.gather(*waits), limit)
        except TimeoutError:
            return False
        return True
