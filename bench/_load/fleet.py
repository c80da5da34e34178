"""The generator processes and the probe process of one system's run: started together
(multiprocessing, spawned: no fork of a process that has gRPC threads; or the compiled
generator's processes), each step handed to all at once, stopped by PID at the end."""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.context import SpawnContext
from typing import Any, Protocol

from . import generator, probe
from .compiled import CompiledGenerator
from .plan import Job, Outcome, ProbeJob, ProbeOutcome, Target

READY_TIMEOUT = 120.0  # a spawned process imports gRPC and the stubs (or Celery) first


class Member(Protocol):
    @property
    def pid(self) -> int: ...
    def ready(self, timeout: float) -> bool: ...
    def send(self, job: Any) -> None: ...
    def recv(self) -> Any: ...
    def stop(self) -> None: ...


class Spawned:
    """A Python process of ours (multiprocessing), a pipe to it."""

    def __init__(
        self, context: SpawnContext, body: Callable[[Any, Target, str], None], target: Target, prefix: str
    ) -> None:
        self._conn, theirs = context.Pipe()
        self.process = context.Process(target=body, args=(theirs, target, prefix), daemon=True)
        self.process.start()
        theirs.close()

    @property
    def pid(self) -> int:
        assert self.process.pid is not None
        return self.process.pid

    def ready(self, timeout: float) -> bool:
        return bool(self._conn.poll(timeout)) and self._conn.recv() == "ready"

    def send(self, job: Any) -> None:
        self._conn.send(job)

    def recv(self) -> Any:
        try:
            return self._conn.recv()
        except EOFError:
            raise SystemExit(f"bench/load: process {self.pid} ended ({self.process.exitcode})") from None

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self._conn.send(None)
        self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.kill()  # by its PID
            self.process.join(timeout=10)
        self._conn.close()


class Fleet:
    def __init__(self, target: Target, processes: int) -> None:
        self.target = target
        self._context = multiprocessing.get_context("spawn")
        self._generators: list[Member] = []
        self._probe: Member | None = None
        self._count = processes

    def start(self) -> None:
        # Ids unique to this run and process, so each one's results are its own (Celery).
        run = f"{os.getpid()}x{id(self):x}"
        for i in range(self._count):
            self._generators.append(
                CompiledGenerator(self.target)
                if self.target.client == "go"
                else Spawned(self._context, generator.serve, self.target, f"{run}g{i}")
            )
        self._probe = Spawned(self._context, probe.serve, self.target, f"{run}p")
        for member in [*self._generators, self._probe]:
            if not member.ready(READY_TIMEOUT):
                raise SystemExit(
                    f"bench/load: process {member.pid} did not become ready in {READY_TIMEOUT:.0f} s"
                )

    def step(
        self, jobs: Sequence[Job], probe_job: ProbeJob | None
    ) -> tuple[list[Outcome], ProbeOutcome | None]:
        """Runs one Job per generator process (or none: the probe alone) and, if given,
        the probe, all at once."""
        assert self._probe is not None
        busy = self._generators if jobs else []
        for member, job in zip(busy, jobs, strict=True):
            member.send(job)
        if probe_job is not None:
            self._probe.send(probe_job)
        outcomes = [member.recv() for member in busy]
        probed = self._probe.recv() if probe_job is not None else None
        return outcomes, probed

    def stop(self) -> None:
        for member in [*self._generators, *([self._probe] if self._probe else [])]:
            member.stop()


@contextlib.contextmanager
def fleet(target: Target, processes: int) -> Iterator[Fleet]:
    started = Fleet(target, processes)
    try:
        started.start()
        yield started
    finally:
        started.stop()
