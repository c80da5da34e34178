"""The child processes bench/compare starts: spawned to die with it, stopped by PID."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import psutil

# The command itself: it is also the peers' worker processes (--role).
COMPARE = Path(__file__).resolve().parents[1] / "compare"


# A runner killed hard must not leave children behind: each asks for SIGTERM at its
# parent's death (PR_SET_PDEATHSIG, kept across exec) in a small interpreter that then
# execs the command. Not in a preexec_fn: that makes subprocess fork() instead of
# vfork(), and fork() runs gRPC's at-fork handler in the child, which deadlocks when
# another thread of the runner is inside gRPC (the child never execs).
_GUARD = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None).prctl(1, signal.SIGTERM)\n"
    "if os.getppid() != int(sys.argv[1]):\n"  # orphaned before the line above
    "    sys.exit(0)\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


def die_with_runner() -> None:
    """In a child already running Python (a multiprocessing one): SIGTERM at its parent's death."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def dying_with_runner(argv: Sequence[str]) -> list[str]:
    """``argv``, started so that it gets SIGTERM when this process dies."""
    return [sys.executable, "-S", "-c", _GUARD, str(os.getpid()), *argv]


def spawn(argv: Sequence[str], log: IO[bytes]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(dying_with_runner(argv), stdout=log, stderr=subprocess.STDOUT)


def stop_children(children: Sequence[subprocess.Popen[bytes]], grace: float = 10.0) -> None:
    """SIGTERM by PID, SIGKILL after the grace; descendants seen before are killed too
    (psutil checks each one is still the process it saw, not a reused PID)."""
    descendants: list[psutil.Process] = []
    for child in children:
        with contextlib.suppress(psutil.Error):
            descendants.extend(psutil.Process(child.pid).children(recursive=True))
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for child in children:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)
    for process in descendants:
        with contextlib.suppress(psutil.Error):
            process.kill()


def self_argv(role: str, *args: str) -> list[str]:
    return [sys.executable, str(COMPARE), "--role", role, *args]
