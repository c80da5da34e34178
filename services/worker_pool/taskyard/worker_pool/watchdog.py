"""The manager's watchdog over its worker processes (issue #4 points 2 and 4,
issue #3 items 4 and 5 on the pool side).

- Heartbeats: a worker beats from its own loop; silence means a wedged loop.
  Idle and silent past ``worker_idle_silence`` -> killed; busy and silent past
  ``worker_busy_silence_factor`` x the longest timeout it holds -> killed; never
  beaten within ``worker_start_silence`` of its spawn -> killed. Killing is all
  the watchdog does: the closed pipe drives the usual death path (processes.py).
- Memory: past ``worker_max_memory_mib`` a worker is recycled: no new work, it
  finishes what it holds, is told STOP over the pipe and replaced (a
  "replacement" in the log, not a death). A worker with a sync task that
  outlived its timeout asks for the same thing (RECYCLE frame).
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

from taskyard.bus.v1 import dispatch_pb2, supervision_pb2
from taskyard.worker_pool import beats, pipe
from taskyard.worker_pool.processes import WorkerHandle, Workers

log = logging.getLogger("taskyard.worker_pool.manager")  # one logger name for the manager process

MIB = 1024 * 1024


class Watchdog(Workers):
    # ------------------------------------------------------------ inputs
    def _on_beat(self, w: WorkerHandle, body: bytes) -> None:
        w.last_beat = time.monotonic()
        w.last_beat_us = time.time_ns() // 1000
        w.rss_bytes, _ = beats.parse_beat(body)
        limit = self.settings.worker_max_memory_mib
        if limit > 0 and w.rss_bytes > limit * MIB and not w.recycling:
            self._recycle(w, f"resident memory {w.rss_bytes / MIB:.0f} MiB over the limit of {limit} MiB")

    def _recycle(self, w: WorkerHandle, reason: str) -> None:
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
        self._mark_dirty()  # fewer free slots
        self._stop_if_drained(w)

    def _stop_if_drained(self, w: WorkerHandle) -> None:
        if w.recycling and not w.held and not w.stop_sent and not w.gone:
            w.stop_sent = True
            with contextlib.suppress(ConnectionError, RuntimeError):
                w.writer.write(pipe.pack(pipe.STOP))

    # ------------------------------------------------------------ cancels
    def cancel_attempts(self, task_ids: Iterable[str]) -> int:
        """Cancel requests for tasks this pool may hold; returns how many attempts it told."""
        wanted = set(task_ids)
        if not wanted:
            return 0
        deadline = time.monotonic() + self.settings.cancel_deadline
        told = 0
        for w in self.workers.values():
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

    def _cancel_flagged(self, batch: dispatch_pb2.Dispatch) -> None:
        # A record dispatched with its flag set: the worker sets the flag itself;
        # the deadline still applies.
        flagged = [r.id for r in batch.tasks if r.cancel_requested]
        if flagged:
            self.cancel_attempts(flagged)

    # ------------------------------------------------------------ the loop
    def watch_once(self, now: float | None = None) -> None:
        s = self.settings
        now = time.monotonic() if now is None else now
        for w in list(self.workers.values()):
            if w.gone or w.killed_for:
                continue
            reason = ""
            if w.last_beat is None:
                if now - w.spawned_at > s.worker_start_silence:
                    reason = f"never beat within {s.worker_start_silence:g}s of its start"
            else:
                silence = now - w.last_beat
                if w.held:
                    # Silence before it got its first held attempt was idle silence.
                    silence = now - max(w.last_beat, min(h.since for h in w.held.values()))
                    longest = max(h.timeout for h in w.held.values())
                    limit = s.worker_busy_silence_factor * longest
                    if silence > limit:
                        reason = f"busy and silent for {silence:.1f}s (> {limit:g}s)"
                elif silence > s.worker_idle_silence:
                    reason = f"idle and silent for {silence:.1f}s (> {s.worker_idle_silence:g}s)"
            late = [h for h in w.held.values() if h.cancel_deadline and now > h.cancel_deadline]
            if not reason and late:
                for h in late:
                    h.cancel_kill = True
                w.spare_bystanders = True  # its other attempts are not to blame
                reason = f"{len(late)} cancelled attempts still running at the cancel deadline"
            if reason:
                self._kill(w, reason)
            else:
                self._stop_if_drained(w)

    def _kill(self, w: WorkerHandle, reason: str) -> None:
        w.killed_for = reason
        log.warning("worker %d (pid %s) %s: killing", w.index, w.pid, reason)
        with contextlib.suppress(OSError, ValueError):
            w.process.kill()

    async def _watch_loop(self) -> None:
        while True:
            await asyncio.sleep(self.watch_period())
            self.watch_once()

    def watch_period(self) -> float:
        s = self.settings
        return max(0.05, min(1.0, s.worker_heartbeat_interval / 2, s.cancel_deadline / 4))

    # ------------------------------------------------------------ registry
    def process_infos(self) -> list[supervision_pb2.WorkerProcess]:
        out = []
        for _, w in sorted(self.workers.items()):
            if w.gone:
                continue
            if self.state.value in ("DRAINING", "STOPPING", "STOPPED"):
                state = "stopping"
            elif w.recycling:
                state = "recycling"
            elif not w.ready:
                state = "starting"
            else:
                state = "busy" if w.held else "idle"
            out.append(
                supervision_pb2.WorkerProcess(
                    index=w.index,
                    pid=w.pid,
                    state=state,
                    rss_bytes=w.rss_bytes,
                    running_tasks=sum(1 for h in w.held.values() if h.started),
                    last_beat_us=w.last_beat_us,
                )
            )
        return out
