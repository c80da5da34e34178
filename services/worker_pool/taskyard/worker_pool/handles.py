"""What the manager knows of each worker process and of the attempts it holds,
and what becomes of those attempts when the process exits."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import multiprocessing.process
import time

from taskyard.bus.v1 import dispatch_pb2, leases_pb2, task_record_pb2
from taskyard.core.config import PoolSettings
from taskyard.v1 import task_pb2
from taskyard.worker_pool import attempts, launcher, spans
from taskyard.worker_pool import metrics as pool_metrics

log = logging.getLogger("taskyard.worker_pool.manager")  # one logger name for the manager process

Key = tuple[str, int]


@dataclasses.dataclass(slots=True)
class Held:
    ref: task_record_pb2.AttemptRef
    started: bool = False
    # The retry budget a death of this attempt is judged by.
    max_retries: int = 0
    # Seconds the attempt may run (a busy worker's silence is judged by it).
    timeout: float = 0.0
    # The task's name: a death's backoff is the task's @task(retry_...) policy,
    # taken at its charged attempt (attempts.charged_attempt).
    name: str = ""
    charged_attempt: int = 1
    # Monotonic time by which a cancelled attempt must have stopped (0 = none),
    # and whether its worker was killed for missing it (Death.cancel_step KILL).
    cancel_deadline: float = 0.0
    cancel_kill: bool = False
    # Monotonic time of its dispatch: a worker's silence counts as "busy" from then.
    since: float = dataclasses.field(default_factory=time.monotonic)
    # What the attempt's metrics and, when its worker dies, its span are made of:
    # the record's head (not the record: it would keep its whole dispatch batch alive).
    head: task_record_pb2.TaskRecord | None = None
    # When the worker said it started (unix microseconds; 0 = not yet).
    started_at_us: int = 0


@dataclasses.dataclass(eq=False)
class WorkerHandle:
    index: int
    process: multiprocessing.process.BaseProcess
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    spawned_at: float
    held: dict[Key, Held] = dataclasses.field(default_factory=dict)
    ready: bool = False
    gone: bool = False
    exited: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)
    # Supervision (watchdog.py): last beat over the pipe (monotonic; None =
    # never), resident memory it reported, why it is being replaced ("" = it is
    # not: a recycling worker gets no new work and is stopped once it holds none).
    last_beat: float | None = None
    last_beat_us: int = 0
    rss_bytes: int = 0
    recycling: str = ""
    stop_sent: bool = False
    killed_for: str = ""
    # Killed only because cancelled attempts outlived their deadline: the other
    # attempts it held did nothing wrong, so they are re-queued (resume_requested,
    # no retry spent) rather than counted as deaths.
    spare_bystanders: bool = False
    # The process's pidfd (launcher.py; -1: none, or closed once it was reaped).
    pidfd: int = -1

    @property
    def pid(self) -> int:
        return self.process.pid or 0

    def kill(self) -> None:
        launcher.kill(self.process, self.pidfd)

    @property
    def live(self) -> bool:
        return self.ready and not self.gone and not self.recycling


def report_exit(
    w: WorkerHandle,
    held: dict[Key, Held],
    stopping: bool,
    settings: PoolSettings,
    report: dispatch_pb2.PoolReport,
) -> None:
    """The attempts a worker held when it exited, into ``report``: released when
    the pool stopped it or it was killed for a neighbour's missed cancel deadline
    (nothing of theirs went wrong), deaths otherwise."""
    now = attempts.now_us()
    for h in held.values():
        ref = task_record_pb2.AttemptRef()
        ref.CopyFrom(h.ref)
        ref.at_us = now
        if (stopping or w.spare_bystanders) and not h.cancel_kill:
            report.released.append(leases_pb2.Release(ref=ref, resume_requested=h.started))
        else:
            if h.started and h.head is not None:
                # Its own span died with it: the manager, which saw the death, records it.
                spans.died(h.head, ref.worker_id, h.started_at_us or now, now, _death_reason(w))
            report.died.append(
                leases_pb2.Death(
                    ref=ref,
                    started=h.started,
                    max_retries=h.max_retries,
                    max_rescues=settings.max_rescues,
                    retry_delay_ms=attempts.death_delay_ms(h.name, h.charged_attempt, settings)
                    if h.started
                    else 0,
                    cancel_step=task_pb2.CANCEL_STEP_KILL if h.cancel_kill else 0,  # type: ignore[arg-type]
                )
            )


def log_exit(w: WorkerHandle, held: dict[Key, Held], stopping: bool) -> None:
    exitcode = w.process.exitcode
    if stopping:
        log.info("worker %d (pid %s) stopped, exit code %s", w.index, w.pid, exitcode)
    elif w.recycling and not held and not w.killed_for:
        log.info(
            "worker %d (pid %s) replacement: %s; exit code %s, nothing interrupted",
            w.index,
            w.pid,
            w.recycling,
            exitcode,
        )
    else:
        pool_metrics.DEATHS.labels(_death_cause(w)).inc()
        spared = sum(1 for h in held.values() if not h.cancel_kill) if w.spare_bystanders else 0
        log.warning(
            "worker %d (pid %s) died%s, exit code %s, holding %d attempts (%d started%s): respawning",
            w.index,
            w.pid,
            f" (killed: {w.killed_for})" if w.killed_for else "",
            exitcode,
            len(held),
            sum(h.started for h in held.values()),
            f"; {spared} re-queued without spending a retry" if spared else "",
        )
        for h in held.values():
            if h.started and h.head is not None:
                # One line per interrupted attempt, with its task's trace id.
                log.warning(
                    "attempt %d of %s %s died with worker %d",
                    h.ref.attempt,
                    h.name,
                    h.ref.task_id,
                    w.index,
                    extra={"task_trace": h.head.trace_headers},
                )


def _death_cause(w: WorkerHandle) -> str:
    """A label for the death: ``unresponsive`` or ``cancel_deadline`` (the watchdog
    killed it), ``signal`` (killed by someone else, or the OOM killer), ``exit``."""
    if w.killed_for:
        return "cancel_deadline" if w.spare_bystanders else "unresponsive"
    code = w.process.exitcode
    return "signal" if code is not None and code < 0 else "exit"


def _death_reason(w: WorkerHandle) -> str:
    code = w.process.exitcode
    if w.killed_for:
        return f"its worker process was killed: {w.killed_for}"
    if code is not None and code < 0:
        return f"its worker process died of signal {-code}"
    return f"its worker process exited with code {code}"
