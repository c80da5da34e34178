"""bench/chaos --go-worker: one Go worker (clients/go/bin/chaos-worker) beside the pools.

It speaks the public worker protocol to the gateway (or to each gateway of the scaled
topology in turn, the next one when its own goes away), runs the same task names as
the pools and journals its runs as bench/chaos_tasks.py does, so the runner checks
them as it checks the pools' runs. The schedule gains one fault: the Go worker
SIGKILLed while it holds attempts, and started again. Its runs are told apart by
their pid, one per process started.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / "clients/go/bin/chaos-worker"
KEY = "go-worker"
LABEL = "SIGKILL the Go worker, restart"
MAX_SLOTS = 256  # a worker's slots at most (the gateway's limit, worker.MaxSlots)
# The suite's services end with their launcher (taskyard.core.lifecycle); so does the worker.
LAUNCHER_PID = "TASKYARD_LAUNCHER_PID"
# Environment variables of the runner that must not reach the worker (the suite's own settings).
_SCRUB_PREFIXES = ("TASKYARD_", "OTEL_")


def missing() -> str:
    """Why the Go worker cannot run here, or "" when it can."""
    if not BINARY.exists():
        return f"{BINARY.relative_to(ROOT)} is not built: run `make clients-go` (or `make clients`)"
    return ""


class GoWorker:
    """The Go worker's process: started, SIGKILLed and started again, stopped by its PID."""

    def __init__(self, *, targets: Sequence[str], journal: Path, log_path: Path, slots: int) -> None:
        self.targets = list(targets)
        self.slots = slots
        self.log_path = log_path
        base = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUB_PREFIXES)}
        self.env = {
            **base,
            "TASKYARD_TARGET": ",".join(self.targets),
            "TASKYARD_CHAOS_JOURNAL": str(journal),
            "TASKYARD_WORKER_SLOTS": str(slots),
            LAUNCHER_PID: str(os.getpid()),
            # No TASKYARD_TOKEN: the runner's gateways take no tokens (loopback, no tokens file).
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self.pids: list[int] = []  # every process started, in order
        self._log: IO[bytes] | None = None
        self._offset = 0  # where the current process's lines begin in the log

    @property
    def pid(self) -> int:
        return self.proc.pid if self.proc is not None else 0

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout: float = 30.0) -> str:
        """Start the worker and wait for its ``ready <worker_id>`` line: the id."""
        if self.running():
            raise RuntimeError(f"the Go worker is still running (pid {self.pid})")
        if self._log is not None:
            self._log.close()
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - kept open for the child's life
        self._log.write(f"----- go-worker starting at {time.strftime('%H:%M:%S')} -----\n".encode())
        self._log.flush()
        self._offset = self._log.tell()
        # No preexec_fn (see taskyard.cli.procs.spawn): the worker asks to end with
        # its launcher itself, from TASKYARD_LAUNCHER_PID.
        self.proc = subprocess.Popen(
            [str(BINARY)],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.pids.append(self.proc.pid)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ident = self.worker_id()
            if ident:
                return ident
            if self.proc.poll() is not None:
                raise RuntimeError(f"the Go worker exited with {self.proc.returncode}:\n{self.tail()}")
            time.sleep(0.05)
        raise RuntimeError(f"the Go worker was not welcomed within {timeout:g} s:\n{self.tail()}")

    def welcomes(self) -> list[str]:
        """The worker ids of the current process, one per welcome (a reconnection adds one)."""
        with contextlib.suppress(FileNotFoundError), open(self.log_path, "rb") as fh:
            fh.seek(self._offset)
            lines = fh.read().decode("utf-8", "replace").splitlines()
            return [line.split()[1] for line in lines if line.startswith("ready ") and len(line.split()) == 2]
        return []

    def worker_id(self) -> str:
        """The pool id the suite knows the current connection by ("" before the first welcome)."""
        ids = self.welcomes()
        return ids[-1] if ids else ""

    def all_welcomes(self) -> int:
        """Welcomes over every process started: starts plus reconnections."""
        with contextlib.suppress(FileNotFoundError):
            text = self.log_path.read_text("utf-8", "replace")
            return sum(1 for line in text.splitlines() if line.startswith("ready "))
        return 0

    def kill(self) -> int:
        """SIGKILL, by PID: the pid killed."""
        if self.proc is None:
            return 0
        pid = self.proc.pid
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        return pid

    def stop(self, grace: float = 5.0) -> None:
        """SIGTERM (a drain), then SIGKILL past ``grace``; by PID, idempotent."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.kill()
        if self._log is not None:
            self._log.close()
            self._log = None

    def tail(self, lines: int = 20) -> str:
        with contextlib.suppress(FileNotFoundError):
            text = self.log_path.read_text("utf-8", "replace").splitlines()[-lines:]
            return "\n".join([f"===== go-worker: last {len(text)} lines of {self.log_path} =====", *text])
        return ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class GoFigures:
    """What the journal says the Go worker ran."""

    pids: tuple[int, ...]
    welcomes: int
    runs: int  # body runs by any of its processes
    all_runs: int  # body runs by everyone
    tasks: int  # tasks with at least one run by it
    ends: Mapping[str, int]  # "ok", "raise", "" (cut short) -> runs

    @property
    def passed(self) -> bool:
        """It took part: it ran attempts, and finished some."""
        return self.runs > 0 and self.ends.get("ok", 0) > 0

    def lines(self) -> list[str]:
        share = 100.0 * self.runs / self.all_runs if self.all_runs else 0.0
        return [
            f"  body runs         {self.runs:>7}  ({share:.1f} % of all, over {self.tasks} tasks; "
            f"ok {self.ends.get('ok', 0)}, raised {self.ends.get('raise', 0)}, "
            f"cut short {self.ends.get('', 0)})",
            f"  processes         {len(self.pids):>7}  (pids {' '.join(map(str, self.pids))})",
            f"  welcomed          {self.welcomes:>7}  (its starts, and reconnections after a gateway died)",
        ]


def figures(worker: GoWorker, runs: Mapping[str, Sequence[tuple[int, str]]]) -> GoFigures:
    """``runs``: each task's body runs as (pid, end), end "ok", "raise" or "" (cut short)."""
    pids = set(worker.pids)
    ours = [(task_id, end) for task_id, task_runs in runs.items() for pid, end in task_runs if pid in pids]
    return GoFigures(
        pids=tuple(worker.pids),
        welcomes=worker.all_welcomes(),
        runs=len(ours),
        all_runs=sum(len(v) for v in runs.values()),
        tasks=len({task_id for task_id, _ in ours}),
        ends=dict(collections.Counter(end for _, end in ours)),
    )
