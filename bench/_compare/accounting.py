"""Process accounting: which processes make up a system, their CPU and peak RSS."""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path

import psutil

# pid -> process kind, for the processes of a system alive right now.
ProcessMap = dict[int, str]


def tree(root: int, root_kind: str, child_kind: str) -> ProcessMap:
    found: ProcessMap = {root: root_kind}
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process(root).children(recursive=True):
            found[child.pid] = child_kind
    return found


def cpu_seconds(processes: ProcessMap) -> dict[str, float]:
    """CPU seconds per kind, each process's own plus its reaped children's: a process
    that exits between two samples still counts, through its parent."""
    totals: dict[str, float] = {}
    for pid, kind in processes.items():
        try:
            t = psutil.Process(pid).cpu_times()
        except psutil.Error:
            continue
        own = t.user + t.system + t.children_user + t.children_system
        totals[kind] = totals.get(kind, 0.0) + own
    return totals


def client_cpu_seconds() -> float:
    # Children excluded: the peers' workers are this process's children once reaped.
    t = psutil.Process().cpu_times()
    return t.user + t.system


def peak_rss_mib(pid: int) -> float:
    """VmHWM: the process's peak resident set since it started, no sampling needed."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


@dataclasses.dataclass(frozen=True)
class CpuWindow:
    """CPU of a system's processes and of this client between two moments."""

    start: dict[str, float]
    client_start: float

    @classmethod
    def open(cls, processes: ProcessMap) -> CpuWindow:
        return cls(cpu_seconds(processes), client_cpu_seconds())

    def close(self, processes: ProcessMap) -> tuple[dict[str, float], float]:
        end = cpu_seconds(processes)
        kinds = {k: end.get(k, 0.0) - self.start.get(k, 0.0) for k in {*end, *self.start}}
        return kinds, client_cpu_seconds() - self.client_start
