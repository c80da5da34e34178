"""Waiting with a deadline, saying how far it got."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def wait_until(done: Callable[[], bool], timeout: float, what: str, progress: Callable[[], str]) -> None:
    deadline = time.monotonic() + timeout
    last_print = time.monotonic()
    while not done():
        now = time.monotonic()
        if now > deadline:
            raise SystemExit(f"timed out after {timeout:.0f} s waiting for {what}: {progress()}")
        if now - last_print > 10:
            print(f"  ... {what}: {progress()}", flush=True)
            last_print = now
        time.sleep(0.05)


def wait_for_line(proc: subprocess.Popen[bytes], log: Path, needle: str, what: str) -> None:
    def seen() -> bool:
        return needle in log.read_text(errors="replace") or proc.poll() is not None

    wait_until(seen, 30, what, lambda: "not ready")
    if proc.poll() is not None:
        raise SystemExit(f"{what} exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
