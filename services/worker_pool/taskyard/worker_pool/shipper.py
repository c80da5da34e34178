"""The manager's side of task logs: what its workers said, to the result-store.

Lines arrive in ``pipe.LOGS`` frames (``bus.v1.LogBatch``) and go to the store
over REQ/REP (``KIND_STORE_LOGS``), one request in flight, everything that came
meanwhile merged into the next (up to ``batch_lines`` lines): that is where the
batching comes from. A failed request is retried in front of anything newer.

Bounded: at most ``max_pending`` lines wait here; past that new lines are
dropped and counted per attempt, and the store records one marker line for them.
A task's outcome is handed to the store only after the lines its worker sent
before it were acknowledged (``target`` and ``reached``), so a log stream that ends with the
task has every line; the wait is capped so outcomes never hang on the log path.
It waits for that attempt's lines only, not for everything in flight: a quiet
task's result does not queue behind a chatty neighbour's logs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from taskyard.bus.v1 import logs_pb2
from taskyard.core import contract, errors, rpc
from taskyard.core.retry import Backoff
from taskyard.worker_pool import tasklogs

log = logging.getLogger("taskyard.worker_pool.manager")

# Attempts whose last line's position is remembered (see add).
MAX_MARKS = 100_000


class LogShipper:
    def __init__(
        self,
        store: rpc.Requester,
        *,
        max_pending: int = 50_000,
        batch_lines: int = 5_000,
        batch_bytes: int = 8 * 1024 * 1024,
    ) -> None:
        self._store = store
        self.max_pending = max(1, max_pending)
        self.batch_lines = max(1, batch_lines)
        # Also capped by size (at least one line): 5000 lines of 16 KiB would be
        # over the bus's message cap, and such a request fails on every retry.
        self.batch_bytes = max(1, batch_bytes)
        self._lines: list[logs_pb2.LogLine] = []
        self._context: list[logs_pb2.ContextUpdate] = []
        self._dropped: dict[tuple[str, int], int] = {}
        # Units (lines, context updates, drop notes) received / acknowledged or dropped.
        self._received = 0
        self._done = 0
        self._progress = asyncio.Condition()
        # Per attempt: the unit count once its last unit was received. Lines leave
        # in arrival order, so when that many units are acknowledged its lines are
        # (context updates and drop notes only go with a full drain: an attempt
        # that has some waits for everything received, see target).
        self._last_unit: dict[tuple[str, int], int] = {}
        self._needs_drain: set[tuple[str, int]] = set()
        self._pump: asyncio.Task[None] | None = None
        self.idle = asyncio.Event()
        self.idle.set()
        self.shipped = 0
        self.dropped = 0

    def add_frame(self, body: bytes) -> None:
        batch = logs_pb2.LogBatch()
        batch.ParseFromString(body)
        self.add(batch)

    def add(self, batch: logs_pb2.LogBatch) -> None:
        room = self.max_pending - len(self._lines)
        lines = batch.lines
        if len(lines) > room:
            for line in lines[max(0, room) :]:
                key = (line.task_id, line.attempt)
                self._dropped[key] = self._dropped.get(key, 0) + 1
            self.dropped += len(lines) - max(0, room)
            lines = lines[: max(0, room)]  # type: ignore[assignment]
        self._lines.extend(lines)
        self._context.extend(batch.context)
        for d in batch.dropped:
            key = (d.task_id, d.attempt)
            self._dropped[key] = self._dropped.get(key, 0) + d.count
        self._received += len(batch.lines) + len(batch.context) + sum(d.count for d in batch.dropped)
        for line in batch.lines:  # the received ones too: a drop note stands for them
            key = (line.task_id, line.attempt)
            self._last_unit.pop(key, None)  # re-inserted last: the dict stays in arrival order
            self._last_unit[key] = self._received
        # Bounded: an attempt whose lines came after its outcome (a sync body still
        # logging past its timeout) is never settled; the oldest marks go first (an
        # outcome whose mark is gone just does not wait).
        while len(self._last_unit) > MAX_MARKS:
            del self._last_unit[next(iter(self._last_unit))]
        for c in batch.context:
            self._needs_drain.add((c.task_id, c.attempt))
        for d in batch.dropped:
            self._needs_drain.add((d.task_id, d.attempt))
        if len(lines) < len(batch.lines):
            self._needs_drain.update((line.task_id, line.attempt) for line in batch.lines[len(lines) :])
        if len(self._needs_drain) > MAX_MARKS:
            self._needs_drain.clear()
        if self._pump is None and (self._lines or self._context or self._dropped):
            self.idle.clear()
            self._pump = asyncio.get_running_loop().create_task(self._run(), name="log-shipper")

    def forget(self, keys: Iterable[tuple[str, int]]) -> None:
        """Attempts that ended without an outcome to hold back (released, died)."""
        for key in keys:
            self._last_unit.pop(key, None)
            self._needs_drain.discard(key)

    def target(self, keys: Iterable[tuple[str, int]]) -> int:
        """The unit count by which the lines of ``keys`` received so far are
        acknowledged (see ``reached``). The keys are forgotten: their attempts ended."""
        target = 0
        for key in keys:
            if key in self._needs_drain:
                self._needs_drain.discard(key)
                target = max(target, self._received)
            target = max(target, self._last_unit.pop(key, 0))
        return target

    def target_of(self, task_id: str, attempt: int) -> int:
        """``target`` of one attempt: the hot path's form (every outcome asks)."""
        key = (task_id, attempt)
        target = self._last_unit.pop(key, 0)
        if self._needs_drain and key in self._needs_drain:
            self._needs_drain.discard(key)
            target = max(target, self._received)
        return target

    def is_reached(self, target: int) -> bool:
        return self._done >= target

    async def reached(self, target: int, limit: float) -> bool:
        """Wait (at most ``limit`` seconds) until ``target`` units are acknowledged."""
        if self._done >= target:
            return True
        try:
            async with asyncio.timeout(limit):
                async with self._progress:
                    await self._progress.wait_for(lambda: self._done >= target)
        except TimeoutError:
            return False
        return True

    def _take(self) -> tuple[logs_pb2.LogBatch, int] | None:
        if not (self._lines or self._context or self._dropped):
            return None
        n = tasklogs.fitting(self._lines, self.batch_lines, self.batch_bytes)
        lines, self._lines = self._lines[:n], self._lines[n:]
        batch = logs_pb2.LogBatch(lines=lines)
        units = len(lines)
        if not self._lines:  # context and drop notes go with the last lines they follow
            batch.context.extend(self._context)
            units += len(self._context)
            self._context = []
            for (task_id, attempt), count in self._dropped.items():
                batch.dropped.append(logs_pb2.DroppedLines(task_id=task_id, attempt=attempt, count=count))
            # A drop note stands for the lines it counts (one unit each was received).
            units += sum(self._dropped.values())
            self._dropped = {}
        return batch, units

    def _put_back(self, batch: logs_pb2.LogBatch) -> None:
        self._lines[:0] = list(batch.lines)
        self._context[:0] = list(batch.context)
        for d in batch.dropped:
            key = (d.task_id, d.attempt)
            self._dropped[key] = self._dropped.get(key, 0) + d.count

    async def _advance(self, units: int) -> None:
        self._done += units
        async with self._progress:
            self._progress.notify_all()

    async def _run(self) -> None:
        backoff = Backoff()
        try:
            while (taken := self._take()) is not None:
                batch, units = taken
                try:
                    await self._store.call(contract.STORE_LOGS, batch)
                except errors.TaskyardError as exc:
                    if exc.code.name == "INVALID_ARGUMENT":
                        log.warning("store refused %d log lines: %s", len(batch.lines), exc.message)
                        await self._advance(units)
                        continue
                    self._put_back(batch)
                    delay = backoff.next_delay()
                    (log.warning if backoff.failures in (1, 10) else log.debug)(
                        "log lines to the store failed (%s); retrying in %.2fs", exc.message, delay
                    )
                    await asyncio.sleep(delay)
                    continue
                backoff.reset()
                self.shipped += len(batch.lines)
                await self._advance(units)
        finally:
            self._pump = None
            self.idle.set()
