"""Processes a test runs as a user would in a terminal: ``taskyard dev`` and the
commands next to it (a second pool, the CLI), their output read line by line so a
test waits on what they print, and the check that nothing of them is left behind."""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import psutil
import pytest

from support.waiting import wait_until
from taskyard.cli.procs import session_members

# The venv's own entry points (taskyard), as an activated venv puts them first on PATH.
VENV_BIN = str(Path(sys.executable).parent)


def user_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a user's shell: none of the test run's TASKYARD_*/OTEL_*
    variables, the venv's bin first on PATH, unbuffered Python output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TASKYARD_", "QUEUE", "OTEL_"))}
    env["PATH"] = os.pathsep.join([VENV_BIN, env.get("PATH", "")])
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


class Terminal:
    """One command, its output (stdout and stderr) collected line by line."""

    def __init__(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], shell: bool = False
    ) -> None:
        self.argv = list(argv)
        self.log: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.proc = subprocess.Popen(
            argv[0] if shell else list(argv),
            shell=shell,
            executable="/bin/bash" if shell else None,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # like a terminal's own: a signal reaches only what we send it to
        )
        self.pid = self.proc.pid
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, ""):
            self.log.append(line)
            self._lines.put(line)
        self._lines.put(None)

    @property
    def text(self) -> str:
        return "".join(self.log)

    def wait_for(self, wanted: str | Callable[[str], bool], timeout: float) -> str:
        """The first line (from now on) that contains ``wanted`` (or satisfies it);
        fails with the output when the process ends or ``timeout`` passes first."""
        test = (lambda line: wanted in line) if isinstance(wanted, str) else wanted
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(
                    f"no line {wanted!r} within {timeout} s from {self.argv}:\n{self.text}"
                ) from None
            if line is None:
                self._lines.put(None)
                raise AssertionError(
                    f"{self.argv} exited ({self.proc.wait()}) before {wanted!r}:\n{self.text}"
                )
            if test(line):
                return line

    def read_to_end(self, timeout: float) -> str:
        """All it printed, once its output is closed (it exited)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"{self.argv} still printing after {timeout} s:\n{self.text}") from None
            if line is None:
                self._lines.put(None)
                return self.text

    def lines_until(self, last: str, timeout: float) -> list[str]:
        """The lines up to and including the first one that starts with ``last``."""
        taken: list[str] = []

        def take(line: str) -> bool:
            taken.append(line.rstrip("\n"))
            return line.startswith(last)

        self.wait_for(take, timeout)
        return taken

    def signal(self, sig: int, times: int = 1) -> None:
        """``times`` signals in a row, as fast as they can be sent (make forwarding
        a SIGTERM the process group also got; an impatient user)."""
        for _ in range(times):
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def stop(self, grace: float = 30.0) -> int:
        """SIGTERM, then SIGKILL of the whole session if it does not exit within ``grace``."""
        if self.proc.poll() is None:
            self.signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                kill_all([self.pid, *session_members([self.pid])])
                self.proc.wait()
        return self.proc.returncode


@contextlib.contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    """A directory under /tmp, removed afterwards. Not under pytest's tmp_path: run as
    root, pgserver runs PostgreSQL as its own user, which must traverse every parent,
    and pytest makes its /tmp/pytest-of-<user> owner-only again at each session start
    (another session running meanwhile is enough)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def processes_of(pids: Mapping[str, int]) -> set[int]:
    """The given processes and every descendant alive now."""
    seen = set(pids.values())
    for pid in list(seen):
        with contextlib.suppress(psutil.Error):
            seen.update(c.pid for c in psutil.Process(pid).children(recursive=True))
    return seen


def banner_pids(banner: Sequence[str]) -> dict[str, int]:
    """``name=pid`` of the banner's ``processes:`` line."""
    line = next(line for line in banner if line.strip().startswith("processes:"))
    return {name.strip(): int(pid) for name, pid in (p.split("=") for p in line.split(":", 1)[1].split(","))}


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def left_behind(pids: set[int], sessions: Sequence[int], settle: float = 10.0) -> list[int]:
    """Which of ``pids``, or of the processes in ``sessions`` (services run in sessions of
    their own, so orphans are found too), are still alive once they had ``settle``
    seconds to finish exiting (they were already told to)."""
    with contextlib.suppress(AssertionError):  # what is left is the answer
        wait_until(lambda: not any(alive(p) for p in pids), settle, "the processes to exit")
    return sorted(p for p in {*pids, *session_members(sessions)} if alive(p))


def kill_all(pids: Sequence[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def dev_argv(data_dir: Path, port: int, *, concurrency: int = 4) -> list[str]:
    """``taskyard dev`` for a test beside others: its own gRPC port and every other listener
    off (a test run starts several suites at once; the dashboard's usual 8080, checked free
    by two of them at the same moment, would go to both and fail one)."""
    argv = [sys.executable, "-m", "taskyard.cli", "dev", "--data-dir", str(data_dir), "--port", str(port)]
    argv += ["--no-jaeger", "--metrics-port", "0", "--http-port", "0", "--workers", "1"]
    return [*argv, "--concurrency", str(concurrency), "--grace", "5"]


# What `taskyard dev` prints once the whole suite serves.
DEV_READY = "Taskyard is ready"


def until_ready(proc: subprocess.Popen[str], log: list[str], timeout: float) -> None:
    """Until ``taskyard dev`` (``proc``, stdout piped as text) says it is ready; its lines go
    to ``log`` for as long as it runs. Fails the test when it exits or is not ready in time."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            log.append(line)
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    while True:
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"taskyard dev not ready in {timeout} s:\n{''.join(log[-40:])}")
        if line is None:
            pytest.fail(f"taskyard dev exited with {proc.wait()}:\n{''.join(log[-40:])}")
        if DEV_READY in line:
            return
