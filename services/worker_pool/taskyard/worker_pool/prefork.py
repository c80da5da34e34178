"""The template started as a fork of the manager, not as a new interpreter.

multiprocessing's ``forkserver`` starts its server (the template, template.py) and its
resource tracker as ``python -c <command>``: a new interpreter that imports the worker's
runtime again, about 0.45 CPU-s a pool start for modules the manager has imported
already. At the manager's start, before it runs any thread, opens any socket or sets up
logging, a fork of it is as clean as that new interpreter: the same modules and nothing
running. There, and only there, ``start_template`` has multiprocessing start both by a
fork that runs the same command, with the same file descriptors and the same command
line in ``ps``. A template that dies later is started again the library's way, a new
interpreter: by then the manager runs threads, and a fork would copy their locks.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.forkserver
import multiprocessing.resource_tracker
import multiprocessing.util
import os
import signal
import sys
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import setproctitle

# The module that makes a process the template when multiprocessing's server imports it
# (template._in_forkserver). Imported here already, it would not do so in a fork.
TEMPLATE_MODULE = "taskyard.worker_pool.template"
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
# Whether the tracker masks signals (it does wherever pthread_sigmask exists).
_TRACKER_SIGMASK: bool = getattr(multiprocessing.resource_tracker, "_HAVE_SIGMASK")  # noqa: B009


def threads() -> int:
    """Threads of this process, the interpreter's and any a C library started."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0  # no procfs: unknown, so never forked from


def start_template(preload: Sequence[str]) -> bool:
    """Start multiprocessing's server with ``preload`` (and its resource tracker) as forks
    of this process. False, and nothing started, when this process is not fit to fork
    from: the server is then started the library's way at the first worker's start."""
    if threads() != 1 or TEMPLATE_MODULE in sys.modules:
        return False
    for stream in (sys.stdout, sys.stderr):  # or the fork would write our buffers again
        stream.flush()
    multiprocessing.get_context("forkserver").set_forkserver_preload(list(preload))
    # Both start with SIGINT and SIGTERM held and let them through once they ignore them
    # (the tracker) or their workers' runtime is loaded (template.prepare_template). Ours
    # stay as they were: a stop sent to a manager that still starts waits for its handler.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        with _spawning_by_fork():
            multiprocessing.forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return True


@contextlib.contextmanager
def _spawning_by_fork() -> Iterator[None]:
    # multiprocessing.forkserver and .resource_tracker both start their process with
    # util.spawnv_passfds, looked up when they call it. The tracker's start also
    # unblocks SIGINT and SIGTERM once it has spawned, held before or not: a stop
    # pending in the manager would end it then, by the default action.
    spawn = multiprocessing.util.spawnv_passfds
    multiprocessing.util.spawnv_passfds = _fork_running
    setattr(multiprocessing.resource_tracker, "_HAVE_SIGMASK", False)  # noqa: B010 - private
    try:
        yield
    finally:
        multiprocessing.util.spawnv_passfds = spawn
        setattr(multiprocessing.resource_tracker, "_HAVE_SIGMASK", _TRACKER_SIGMASK)  # noqa: B010


def _fork_running(path: object, args: Sequence[Any], passfds: Sequence[int]) -> int:
    """What ``spawnv_passfds(path, args, passfds)`` starts, ``[python, *flags, "-c",
    command]``, as a fork of this process that runs ``command``."""
    command = args[list(args).index("-c") + 1]
    pid = os.fork()
    if pid:
        return pid
    status = 1
    try:
        _become_fresh(args, passfds)
        exec(compile(command, "<string>", "exec"), {"__name__": "__main__"})
        status = 0
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(status)


def _become_fresh(args: Sequence[Any], passfds: Sequence[int]) -> None:
    """What the new interpreter would have had: only the passed descriptors (and the
    standard three), ``python -c``'s argv, and multiprocessing's state fresh: a copy of
    the lock held across the fork would stay held, and a task body that starts
    processes of its own would wait on it for ever."""
    low = 0
    for fd in sorted({0, 1, 2, *passfds}):
        if low < fd:  # Python 3.11's closerange(n, n) closes every descriptor from n on
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))
    sys.argv = ["-c"]
    setattr(multiprocessing.resource_tracker, "_HAVE_SIGMASK", _TRACKER_SIGMASK)  # noqa: B010
    setproctitle.setproctitle(" ".join(os.fsdecode(arg) for arg in args))
    # multiprocessing's own state as a new interpreter has it: ensure_running holds the
    # server's lock across the fork, and the tracker's descriptor number is closed.
    for module, name in (
        (multiprocessing.forkserver, "_forkserver"),
        (multiprocessing.resource_tracker, "_resource_tracker"),
    ):
        state: Any = getattr(module, name)
        vars(state).update(vars(type(state)()))
