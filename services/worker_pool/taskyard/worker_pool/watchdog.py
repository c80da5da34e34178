"""The manager's watchdog over its worker processes.

- Heartbeats: a worker beats from its own loop; silence means a wedged loop.
  Idle and silent past ``worker_idle_silence`` -> killed; busy and silent past
  ``worker_busy_silence_factor`` x the longest timeout it holds -> killed; never
  beaten within ``worker_start_silence`` of its spawn -> killed. Killing is all
  the watchdog does: the closed pipe drives the usual death path (processes.py).
- Memory: past ``worker_max_memory_mib`` a worker is recycled at the beat that
  says so (processes.py): no new work, it finishes what it holds, is told STOP
  over the pipe and replaced (a "replacement" in the log, not a death). A worker
  with a sync task that outlived its timeout asks for the same thing (RECYCLE
  frame). The watchdog sends the STOP a recycling worker was still owed.
- Cancel requests for running attempts: the worker is told (CANCEL frame; it
  sets the flag, then asyncio-cancels after ``cancel_grace``); an attempt still
  held ``cancel_deadline`` later gets its worker killed (Death.cancel_step KILL).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core.config import PoolSettings
from taskyard.worker_pool import beats
from taskyard.worker_pool.handles import WorkerHandle
from taskyard.worker_pool.processes import Workers

log = logging.getLogger("taskyard.worker_pool.manager")  # one logger name for the manager process


class Watchdog:
    def __init__(self, settings: PoolSettings, workers: Workers) -> None:
        self._settings = settings
        self._workers = workers

    # ------------------------------------------------------------ cancels
    def cancel_attempts(self, task_ids: Iterable[str]) -> int:
        """Cancel requests for tasks this pool may hold; returns how many attempts it told."""
        wanted = set(task_ids)
        if not wanted:
            return 0
        deadline = time.monotonic() + self._settings.cancel_deadline
        told = 0
        for w in self._workers.handles.values():
            if w.gone:
                continue
            keys = [k for k, h in w.held.items() if k[0] in wanted and not h.cancel_deadline]
            for k in keys:
                w.held[k].cancel_deadline = deadline
            if keys:
                told += len(keys)
                with contextlib.suppress(ConnectionError, RuntimeError):
                    w.writer.write(beats.cancel_frame(keys))
        if told:
            log.info("cancel requested for %d running attempts", told)
        return told

    def cancel_flagged(self, batch: dispatch_pb2.Dispatch) -> None:
        # A record dispatched with its flag set: the worker sets the flag itself;
        # the deadline still applies.
        flagged = [r.id for r in batch.tasks if r.cancel_requested]
        if flagged:
            self.cancel_attempts(flagged)

    # ------------------------------------------------------------ the loop
    def watch_once(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        for w in list(self._workers.handles.values()):
            if w.gone or w.killed_for:
                continue
            reason = self._silence(w, now)
            late = [h for h in w.held.values() if h.cancel_deadline and now > h.cancel_deadline]
            if not reason and late:
                for h in late:
                    h.cancel_kill = True
                w.spare_bystanders = True  # its other attempts are not to blame
                reason = f"{len(late)} cancelled attempts still running at the cancel deadline"
            if reason:
                self._kill(w, reason)
            else:
                self._workers.stop_if_drained(w)

    def _silence(self, w: WorkerHandle, now: float) -> str:
        """Why ``w``'s silence gets it killed ("" = it does not)."""
        s = self._settings
        if w.last_beat is None:
            if now - w.spawned_at > s.worker_start_silence:
                return f"never beat within {s.worker_start_silence:g}s of its start"
            return ""
        silence = now - w.last_beat
        if w.held:
            # Silence before it got its first held attempt was idle silence.
            silence = now - max(w.last_beat, min(h.since for h in w.held.values()))
            longest = max(h.timeout for h in w.held.values())
            limit = s.worker_busy_silence_factor * longest
            if silence > limit:
                return f"busy and silent for {silence:.1f}s (> {limit:g}s)"
        elif silence > s.worker_idle_silence:
            return f"idle and silent for {silence:.1f}s (> {s.worker_idle_silence:g}s)"
        return ""

    def _kill(self, w: WorkerHandle, reason: str) -> None:
        w.killed_for = reason
        log.warning("worker %d (pid %s) %s: killing", w.index, w.pid, reason)
        with contextlib.suppress(OSError, ValueError):
            w.kill()

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.watch_period())
            self.watch_once()

    def watch_period(self) -> float:
        s = self._settings
        return max(0.05, min(1.0, s.worker_heartbeat_interval / 2, s.cancel_deadline / 4))
