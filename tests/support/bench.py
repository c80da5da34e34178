"""Running a bench/ command from a test, bounded in time."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def run(command: str, *args: str, timeout: float) -> tuple[int, str]:
    """``bench/<command> args``: its exit code and output. The test's own TASKYARD_*
    settings are left out (the command starts a suite of its own). Past ``timeout``
    it gets SIGTERM, so it stops what it started by PID, and SIGKILL only if that
    hangs; the test then fails with what it printed."""
    proc = subprocess.Popen(
        [sys.executable, str(BENCH / command), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("TASKYARD_")},
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=30)
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"bench/{command} outlived {timeout}s:\n{out}")
    return proc.returncode, out
