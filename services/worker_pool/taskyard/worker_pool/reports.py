"""Handing what the workers report to the result-store, the only custody.

Results go straight to the store over REQ/REP, whose reply comes after COMMIT,
and are retried until then: a result never rides on a fire-and-forget socket
(a PAIR message dies with a peer that goes away). One request is in flight at a
time, so a task's "started" is always applied before its completion; reports
that arrive meanwhile are merged into the next request, which is where batching
comes from under load.
"""

from __future__ import annotations

import asyncio
import logging
import random

from taskyard.bus.v1 import dispatch_pb2, envelope_pb2, store_pb2
from taskyard.core import errors, transport
from taskyard.core.retry import RetryPolicy

log = logging.getLogger(__name__)

RETRY_BACKOFF = (0.05, 0.2, 0.5, 1.0, 2.0)


class ReportForwarder:
    def __init__(
        self, store: transport.Requester, policy: RetryPolicy, rng: random.Random | None = None
    ) -> None:
        self._store = store
        self._policy = policy
        self._rng = rng or random.Random()
        self._pending: store_pb2.ReportRequest | None = None
        self._pump: asyncio.Task[None] | None = None
        self.refused = 0
        self.idle = asyncio.Event()
        self.idle.set()

    def submit(self, report: dispatch_pb2.PoolReport) -> None:
        """Queue a report for the store; retry delays come from the retry policy."""
        if not (report.started or report.completed or report.released or report.died):
            return
        req = self._pending
        if req is None:
            req = self._pending = store_pb2.ReportRequest()
        req.started.extend(report.started)
        for completion in report.completed:
            if not completion.success and completion.retryable:
                completion.retry_delay_ms = self._delay_ms(completion.ref.attempt)
            req.completed.append(completion)
        req.released.extend(report.released)
        for death in report.died:
            if death.started:
                death.retry_delay_ms = self._delay_ms(death.ref.attempt)
            req.died.append(death)
        if self._pump is None:
            self.idle.clear()
            self._pump = asyncio.get_running_loop().create_task(self._run())

    def _delay_ms(self, attempt: int) -> int:
        return int(self._policy.delay(attempt, self._rng) * 1000)

    def _take(self) -> store_pb2.ReportRequest | None:
        req, self._pending = self._pending, None
        return req

    async def _run(self) -> None:
        failures = 0
        try:
            while (req := self._take()) is not None:
                try:
                    reply = await self._store.request(
                        envelope_pb2.KIND_STORE_REPORT, req, store_pb2.ReportReply
                    )
                except errors.TaskyardError as exc:
                    # Keep the report, in front of anything newer, and try again: a
                    # result a worker handed over is not dropped while this process lives.
                    later = self._take()
                    if later is not None:
                        req.MergeFrom(later)
                    self._pending = req
                    delay = RETRY_BACKOFF[min(failures, len(RETRY_BACKOFF) - 1)]
                    failures += 1
                    log.warning("report to the store failed (%s); retrying in %.2fs", exc, delay)
                    await asyncio.sleep(delay)
                    continue
                failures = 0
                if reply.refused:
                    self.refused += reply.refused
                    log.info("store refused %d stale report entries (superseded attempts)", reply.refused)
        finally:
            self._pump = None
            self.idle.set()
