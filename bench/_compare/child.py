"""The child processes bench/compare starts: spawned to die with it, stopped by PID."""

from __future__ import annotations

import contextlib
import ctypes
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


def _die_with_runner() -> None:  # runs in the child
    # A runner killed hard must not leave workers behind: PR_SET_PDEATHSIG.
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)


def spawn(argv: Sequence[str], log: IO[bytes]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(list(argv), stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_runner)


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
