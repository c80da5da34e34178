"""What a run of bench/compare is asked to do and what it measured."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Plan:
    tasks: int
    batch: int
    clients: int
    samples: int
    warmup: int
    taskyard_concurrency: int
    pgqueuer_batch: int
    timeout: float


@dataclasses.dataclass(frozen=True)
class KindFigures:
    kind: str
    processes: int
    cpu_us_per_task: float
    peak_rss_mib: float


@dataclasses.dataclass(frozen=True)
class RunResult:
    system: str
    round: int
    tasks: int
    seconds: float
    p50_ms: float
    p99_ms: float
    kinds: tuple[KindFigures, ...]
    client_us_per_task: float
    sequential_us_per_task: float

    @property
    def tasks_per_s(self) -> float:
        return self.tasks / self.seconds

    @property
    def cpu_us_per_task(self) -> float:
        return sum(k.cpu_us_per_task for k in self.kinds)
