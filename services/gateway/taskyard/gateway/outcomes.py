"""What a remote worker reports, to the result-store, in order and batched.

Log lines, progress, start notices and outcomes go to the store through one
queue with one request in flight: what arrives while a request is out is merged
into the next one (batching under load, with no timer), and a task's lines are
stored before the outcome that follows them, so a log stream that ends with the
task misses none. Reports are retried until the store answers (it has custody of
results; the reply comes after COMMIT); log lines are tried a few times, then
dropped and counted, as a pool's are.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable

from taskyard.bus.v1 import leases_pb2, logs_pb2
from taskyard.core import contract, errors, rpc
from taskyard.core.retry import Backoff
from taskyard.worker.v1 import worker_service_pb2 as wpb

log = logging.getLogger(__name__)

Item = leases_pb2.ReportRequest | logs_pb2.LogBatch
LOG_TRIES = 3


class StoreWriter:
    """``on_send`` is called as each request of reports leaves (the stream's slot
    notice goes with it)."""

    def __init__(
        self,
        store: rpc.Caller,
        *,
        on_send: Callable[[], None] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._store = store
        self._on_send = on_send
        self._sleep = sleep  # the pause between tries (tests pass one that only records)
        # Each item with the futures of those who wait for its answer.
        self._queue: deque[tuple[Item, list[asyncio.Future[None]]]] = deque()
        self._news = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self.dropped_lines = 0

    # ------------------------------------------------------------ queueing
    def report(self, report: leases_pb2.ReportRequest) -> None:
        self._put(report)

    def report_answered(self, report: leases_pb2.ReportRequest) -> asyncio.Future[None]:
        """Queue ``report``; the future is done once the store has answered it."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._put(report, done)
        return done

    def logs(self, ref: wpb.AttemptRef, lines: Iterable[wpb.LogLine]) -> None:
        batch = logs_pb2.LogBatch()
        for line in lines:
            at_us = line.time.ToMicroseconds() if line.HasField("time") else _now_us()
            batch.lines.add(
                task_id=ref.task_id,
                attempt=ref.attempt,
                at_us=at_us,
                type=line.level or "info",
                message=line.message,
            )
        if batch.lines:
            self._put(batch)

    def progress(self, ref: wpb.AttemptRef, fraction: float, message: str) -> None:
        """As a Python task's ``ctx.progress``: the context's "progress" and a line."""
        fraction = min(1.0, max(0.0, fraction))
        now = _now_us()
        entry = {"fraction": fraction, "message": message, "at_us": now}
        batch = logs_pb2.LogBatch()
        # The store takes a patch as [path, value] pairs (as a pool's context flush sends it).
        patch = [[["progress"], entry]]
        batch.context.add(task_id=ref.task_id, attempt=ref.attempt, patch_json=json.dumps(patch).encode())
        batch.lines.add(
            task_id=ref.task_id,
            attempt=ref.attempt,
            at_us=now,
            type="progress",
            message=f"{fraction:.0%} {message}".rstrip(),
        )
        self._put(batch)

    def _put(self, item: Item, done: asyncio.Future[None] | None = None) -> None:
        last = self._queue[-1] if self._queue else None
        if last is not None and type(last[0]) is type(item):
            last[0].MergeFrom(item)  # type: ignore[arg-type]
            if done is not None:
                last[1].append(done)
        else:
            self._queue.append((item, [] if done is None else [done]))
        self._idle.clear()
        self._news.set()

    async def flushed(self) -> None:
        """Until everything queued so far has been answered (or given up)."""
        await self._idle.wait()

    # ------------------------------------------------------------ sending
    async def run(self) -> None:
        while True:
            await self._news.wait()
            self._news.clear()
            while self._queue:
                item, waiting = self._queue.popleft()
                if isinstance(item, leases_pb2.ReportRequest):
                    if self._on_send is not None:
                        self._on_send()
                    await self._send_report(item)
                else:
                    await self._send_logs(item)
                for done in waiting:
                    if not done.done():
                        done.set_result(None)
            self._idle.set()

    async def _send_report(self, report: leases_pb2.ReportRequest) -> None:
        backoff = Backoff()
        while True:
            try:
                reply = await self._store.call(contract.STORE_REPORT, report)
            except errors.TaskyardError as exc:
                delay, tries = backoff.next_delay(), backoff.failures
                (log.warning if tries in (1, 10) else log.debug)(
                    "report to the store failed (%d), again in %.2f s: %s", tries, delay, exc.message
                )
                await self._sleep(delay)
                continue
            if reply.refused:
                log.debug("%d updates refused by fencing", reply.refused)
            return

    async def _send_logs(self, batch: logs_pb2.LogBatch) -> None:
        backoff = Backoff()
        for tries in range(LOG_TRIES):
            try:
                await self._store.call(contract.STORE_LOGS, batch)
                return
            except errors.TaskyardError as exc:
                log.debug("log lines to the store failed (%d): %s", tries + 1, exc.message)
                if tries + 1 < LOG_TRIES:  # the reports queued behind wait for no pause after the last
                    await self._sleep(backoff.next_delay())
        self.dropped_lines += len(batch.lines)


def _now_us() -> int:
    return int(time.time() * 1e6)
