"""How the manager starts, kills and reaps its worker processes.

Workers are forked from a preloaded template (template.py) through
multiprocessing's ``forkserver`` start method, so N workers share one
interpreter's imports copy-on-write. The template is the workers' parent, not
the manager, so the manager keeps a pidfd of each worker: it kills by pidfd (the
template reaps a dead worker at once, and its pid may then be reused) and, when
the template's word on a worker is only that the template itself died, it sees
by the pidfd whether the worker really ended. multiprocessing restarts a dead
template at the next start.

Where pidfds are missing (not Linux, or a kernel before 5.3) a worker could not
watch its manager past the template (bootstrap._watch_manager): workers are then
spawned as fresh interpreters, as they were before the template.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import logging
import multiprocessing
import multiprocessing.context
import multiprocessing.process
import os
import select
import signal
import socket
from typing import Any

from taskyard.core.config import PoolSettings
from taskyard.worker_pool import prefork

FORKSERVER = "forkserver"
SPAWN = "spawn"
# The template's preload (multiprocessing imports these in the forkserver).
TEMPLATE_MODULES = ["taskyard.worker_pool.template"]
# How long a worker that closed its pipe (or whose template died) may linger
# before it is killed, and how long its end is then awaited.
LINGER = 1.0
KILL_WAIT = 5.0

log = logging.getLogger("taskyard.worker_pool.manager")  # one logger name for the manager process


def _worker_main(*args: Any) -> None:
    """The worker's entry point, imported where it runs (the template has it
    already): the manager itself never runs a worker's runtime."""
    from taskyard.worker_pool import bootstrap

    bootstrap.main(*args)


def _pidfds_work() -> bool:
    try:
        fd = os.pidfd_open(os.getpid())
    except (AttributeError, OSError):
        return False
    os.close(fd)
    return True


def start_method() -> str:
    """``forkserver`` (the template) where pidfds work, ``spawn`` elsewhere."""
    return FORKSERVER if _pidfds_work() else SPAWN


def start_template() -> bool:
    """Start the template now, as a fork of this process (prefork.py), where workers
    are forked from one; called at the manager's start, before it runs a thread."""
    return start_method() == FORKSERVER and prefork.start_template(TEMPLATE_MODULES)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Started:
    process: multiprocessing.process.BaseProcess
    # The worker's pidfd (-1: none; the process object is then all there is).
    pidfd: int


class Launcher:
    """Worker processes for one manager. Starts and reaps run on one thread of
    their own: a start may wait for the template to import the runtime, and a
    process object's exit code must be read by one thread at a time."""

    def __init__(self, method: str | None = None) -> None:
        self.method = method or start_method()
        self._mp: multiprocessing.context.ForkServerContext | multiprocessing.context.SpawnContext
        if self.method == FORKSERVER:
            self._mp = multiprocessing.get_context("forkserver")
            self._mp.set_forkserver_preload(TEMPLATE_MODULES)
        else:
            self._mp = multiprocessing.get_context("spawn")
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="worker-starts")

    async def start(self, sock: socket.socket, settings: PoolSettings, pool_id: str, index: int) -> Started:
        """A worker process whose end of the pipe is ``sock``."""
        proc = self._mp.Process(
            target=_worker_main,
            args=(sock, settings, pool_id, index, os.getpid()),
            name=f"taskyard-worker-{index}",
        )
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, self._start, proc)

    def _start(self, proc: multiprocessing.process.BaseProcess) -> Started:
        proc.start()
        pidfd = -1
        if self.method == FORKSERVER and proc.pid:
            with contextlib.suppress(OSError):
                pidfd = os.pidfd_open(proc.pid)
        return Started(process=proc, pidfd=pidfd)

    async def reap(self, process: multiprocessing.process.BaseProcess, pidfd: int) -> None:
        """Wait for a worker whose pipe closed to end, kill it if it lingers; closes ``pidfd``."""
        await asyncio.get_running_loop().run_in_executor(self._thread, _reap, process, pidfd)

    def close(self) -> None:
        self._thread.shutdown(wait=False)


def kill(process: multiprocessing.process.BaseProcess, pidfd: int) -> None:
    """SIGKILL the worker (by pidfd when there is one: its pid may be reused). Without
    one, by pid only while its sentinel says it has not ended: a worker forked from
    the template is reaped by the template at once, and its pid is free from then on
    (a forked worker has no pidfd when it had ended before the manager opened one)."""
    if pidfd >= 0:
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    elif process.is_alive():
        process.kill()


def _ended(pidfd: int, timeout: float) -> bool:
    return bool(select.select([pidfd], [], [], timeout)[0])


def _reap(proc: multiprocessing.process.BaseProcess, pidfd: int) -> None:
    if pidfd < 0:
        proc.join(LINGER)
        if proc.is_alive():  # closed its pipe but lingers: useless, end it
            proc.kill()
            proc.join(KILL_WAIT)
        return
    try:
        # The template's word (the sentinel) may be its own death, not the worker's.
        if not _ended(pidfd, LINGER):
            log.warning("worker pid %s outlived its pipe (or its template): killing it", proc.pid)
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            _ended(pidfd, KILL_WAIT)
        proc.join(LINGER)  # its exit code, from the template
    finally:
        os.close(pidfd)
