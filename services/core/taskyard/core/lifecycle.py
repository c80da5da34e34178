"""Service lifecycle: logging, signals, and a stop event every service waits on."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import sys
from collections.abc import Coroutine, Iterable, Iterator
from typing import Any, TypeVar

from taskyard.core import health, tracing

T = TypeVar("T")

log = logging.getLogger(__name__)

# The signals that stop a service (its drain), SIGTERM from a supervisor, SIGINT from a terminal.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
# How often end_tasks repeats its cancel to a task that has not ended yet: long
# enough for a task's own clean-up after the first cancel not to be cut short.
RECANCEL_INTERVAL = 0.5
# How long the tasks a service's main coroutine left running get to end after it returns.
LEFTOVER_TASKS_LIMIT = 5.0
# The process id of the process that launched this one (cli.procs.spawn sets it): the
# service ends when that process dies (end_with_launcher).
LAUNCHER_PID = "TASKYARD_LAUNCHER_PID"
_PR_SET_PDEATHSIG = 1


def setup_logging(service: str, level: str = "INFO") -> None:
    """Log lines to stderr; a line logged in a span (or about a task, with
    ``extra={"task_trace": record.trace_headers}``) ends with its trace id."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(tracing.TraceIds())
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format=f"%(asctime)s {service}[%(process)d] %(levelname)s %(name)s: %(message)s%(trace)s",
        handlers=[handler],
    )


def end_with_launcher() -> None:
    """Linux: be sent SIGTERM (a stop, as from a supervisor) when the process named by
    TASKYARD_LAUNCHER_PID, our parent, dies; at once if it already has. Elsewhere, or
    without the variable, nothing. The variable is removed, so that the processes this
    one starts do not take our parent for theirs.

    The service asks for the signal itself, first thing: the launcher cannot ask for
    it between fork and exec without a ``preexec_fn``, which makes ``subprocess`` use
    fork() instead of vfork(), and fork() runs gRPC's at-fork handler in the child,
    which deadlocks when another thread of the launcher is inside gRPC (the child never
    execs, its launcher waits in Popen for good)."""
    raw = os.environ.pop(LAUNCHER_PID, "")
    if not raw or sys.platform != "linux":
        return
    try:
        launcher = int(raw)
    except ValueError:
        raise ValueError(f"{LAUNCHER_PID} must be a process id, not {raw!r}") from None
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM)) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl(PR_SET_PDEATHSIG): {os.strerror(errno)}")
    # Orphaned before the line above, we would never get the signal: then it is now.
    if os.getppid() != launcher:
        os.kill(os.getpid(), signal.SIGTERM)


@contextlib.contextmanager
def stop_signals_held() -> Iterator[None]:
    """Block SIGTERM/SIGINT in this thread for the block: a process started inside it
    (fork or exec) inherits the mask, so a stop signal that reaches it while it still
    imports and sets up stays pending instead of killing it with the default action
    half-started; ``stop_event_on_signals`` lets it through once a handler waits."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def stop_event_on_signals(*signals: signal.Signals) -> asyncio.Event:
    """An event set by SIGTERM/SIGINT (or the given signals) in the running loop,
    which withdraws the process's readiness (health.py) too.

    Unblocks them afterwards: a launcher (``stop_signals_held``) may have started us
    with them blocked, and one that arrived meanwhile is delivered now, to the handler."""
    loop = asyncio.get_running_loop()
    event = asyncio.Event()
    wanted = signals or STOP_SIGNALS

    def stopping() -> None:
        health.mark_ready(False)  # draining: the probes say so at once
        event.set()

    for sig in wanted:
        loop.add_signal_handler(sig, stopping)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, wanted)
    return event


async def end_tasks(tasks: Iterable[asyncio.Task[Any]], limit: float) -> set[asyncio.Task[Any]]:
    """Cancel the tasks and wait until they have ended, at most ``limit`` seconds;
    returns those still running then (each logged).

    One cancel is not enough: pynng's asyncio receive and send swallow the
    CancelledError when their NNG operation completed in the same instant (they
    return the message instead), and the task goes on to its next wait as if it had
    never been cancelled. So the cancel is repeated until each task has ended."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    pending = set(tasks)
    while pending:
        for t in pending:
            t.cancel()
        left = deadline - loop.time()
        if left <= 0:
            break
        done, pending = await asyncio.wait(pending, timeout=min(RECANCEL_INTERVAL, left))
        for t in done:
            if not t.cancelled():
                t.exception()  # retrieved: a failure was reported where the task ran
    for t in pending:
        log.warning("task %s did not end within %.1fs of its cancel", t.get_name(), limit)
    return pending


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run a process's main coroutine, on uvloop unless TASKYARD_EVENT_LOOP=asyncio.

    Every hop of a task is a wake-up of some event loop; uvloop makes each one
    cheaper, which is most of what latency is made of here.
    """
    if os.environ.get("TASKYARD_EVENT_LOOP", "uvloop") != "asyncio":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.run(_then_end_tasks(main))
    return asyncio.run(_then_end_tasks(main))


async def _then_end_tasks(main: Coroutine[Any, Any, T]) -> T:
    """``main``, then the tasks it left running ended by ``end_tasks``: the runner
    cancels them only once and waits for them without a limit."""
    health.attach_loop(asyncio.get_running_loop())  # the probes' liveness is this loop's
    try:
        return await main
    finally:
        health.attach_loop(None)
        if left := asyncio.all_tasks() - {asyncio.current_task()}:
            await end_tasks(left, LEFTOVER_TASKS_LIMIT)
