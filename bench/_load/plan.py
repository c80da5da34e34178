"""What a step of bench/load asks of each generator process, and what each reports."""

from __future__ import annotations

import dataclasses
import enum


class Kind(enum.Enum):
    CLOSED = "closed"  # a fixed number in flight: the next send when one ends
    OPEN = "open"  # sends at times fixed in advance, whatever came back


@dataclasses.dataclass(frozen=True, kw_only=True)
class Target:
    """What a generator or probe process talks to; the same for the whole run of a system."""

    system: str  # "taskyard" or "celery"
    address: str  # the gateway's host:port, or the Redis URL
    mode: str  # "submit" (SubmitTask + WaitTask) or "runtask" (TaskService/RunTask)
    # "sync" (the sync API's futures, answered on gRPC's threads), "aio" or "go" (the
    # compiled generator at `binary`); the probe is the sync client whatever this says
    client: str
    channels: int  # gRPC channels (or Redis connections) of each process
    binary: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Job:
    """One step for one generator process. Times are time.monotonic(), the same clock
    in every process of the machine (CLOCK_MONOTONIC)."""

    kind: Kind
    start_at: float
    duration: float
    # Completions (closed) or sends (open) before start_at + warmup are not counted.
    warmup: float
    max_tasks: int  # this process's share of the step's bound
    inflight: int = 0  # closed: this process's share
    rate: float = 0.0  # open: the whole step's arrivals per second
    index: int = 0  # open: this process's place among `of` (its arrivals interleave)
    of: int = 1
    drain: float = 30.0  # after the last send, how long to wait for what is still out


@dataclasses.dataclass(frozen=True, kw_only=True)
class Outcome:
    """What one generator process measured in one step."""

    sent: int
    counted: int  # tasks whose latency is counted (sent, or for closed ended, in the window)
    latencies_ms: tuple[float, ...]  # of counted tasks that ended, from their scheduled send
    errors: int
    unfinished: int  # still out when the drain ran out
    window: float  # seconds counted: the step less its warm-up (closed: up to its bound)
    lags_ms: tuple[float, ...]  # open: actual send less scheduled send, of each counted send
    cpu_seconds: float  # this process, all its threads, over the step and its drain
    first_error: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ProbeJob:
    start_at: float
    stop_at: float


@dataclasses.dataclass(frozen=True, kw_only=True)
class ProbeOutcome:
    latencies_ms: tuple[float, ...]
    errors: int
    first_error: str = ""


def arrivals(job: Job) -> list[float]:
    """The send times of one process in an open step: the step's arrivals at a fixed rate,
    dealt out in turn to the `of` processes, so together they arrive evenly."""
    if job.rate <= 0:
        raise ValueError("an open step needs a rate above 0")
    times: list[float] = []
    i = job.index
    while len(times) < job.max_tasks:
        offset = i / job.rate
        if offset >= job.duration:
            break
        times.append(job.start_at + offset)
        i += job.of
    return times


def shares(total: int, parts: int) -> list[int]:
    """``total`` split over ``parts`` as evenly as whole numbers allow."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]
