"""The generator processes and the probe process of one system's run: started together
(multiprocessing, spawned: no fork of a process that has gRPC threads), each step handed
to all at once, stopped by PID at the end."""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.process import BaseProcess
from typing import Any

from . import generator, probe
from .plan import Job, Outcome, ProbeJob, ProbeOutcome, Target

READY_TIMEOUT = 120.0  # a spawned process imports gRPC and the stubs (or Celery) first


class Fleet:
    def __init__(self, target: Target, processes: int) -> None:
        self.target = target
        self._context = multiprocessing.get_context("spawn")
        self._generators: list[tuple[BaseProcess, multiprocessing.connection.Connection]] = []
        self._probe: tuple[BaseProcess, multiprocessing.connection.Connection] | None = None
        self._count = processes

    def start(self) -> None:
        # Ids unique to this run and process, so each one's results are its own (Celery).
        run = f"{os.getpid()}x{id(self):x}"
        for i in range(self._count):
            self._generators.append(self._spawn(generator.serve, f"{run}g{i}"))
        self._probe = self._spawn(probe.serve, f"{run}p")
        for process, conn in [*self._generators, self._probe]:
            self._expect_ready(process, conn)

    def _spawn(
        self, body: Callable[[Any, Target, str], None], prefix: str
    ) -> tuple[BaseProcess, multiprocessing.connection.Connection]:
        ours, theirs = self._context.Pipe()
        process = self._context.Process(target=body, args=(theirs, self.target, prefix), daemon=True)
        process.start()
        theirs.close()
        return process, ours

    @staticmethod
    def _expect_ready(process: BaseProcess, conn: multiprocessing.connection.Connection) -> None:
        if not conn.poll(READY_TIMEOUT) or conn.recv() != "ready":
            raise SystemExit(
                f"bench/load: process {process.pid} did not become ready in {READY_TIMEOUT:.0f} s"
            )

    def step(
        self, jobs: Sequence[Job], probe_job: ProbeJob | None
    ) -> tuple[list[Outcome], ProbeOutcome | None]:
        """Runs one Job per generator process (or none: the probe alone) and, if given,
        the probe, all at once."""
        assert self._probe is not None
        busy = self._generators if jobs else []
        for (_, conn), job in zip(busy, jobs, strict=True):
            conn.send(job)
        if probe_job is not None:
            self._probe[1].send(probe_job)
        outcomes = [self._receive(p, c) for p, c in busy]
        probed = self._receive(*self._probe) if probe_job is not None else None
        return outcomes, probed

    @staticmethod
    def _receive(process: BaseProcess, conn: multiprocessing.connection.Connection) -> Any:
        try:
            return conn.recv()
        except EOFError:
            raise SystemExit(f"bench/load: process {process.pid} ended ({process.exitcode})") from None

    def stop(self) -> None:
        everyone = [*self._generators, *([self._probe] if self._probe else [])]
        for _, conn in everyone:
            with contextlib.suppress(OSError):
                conn.send(None)
        for process, conn in everyone:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()  # by its PID
                process.join(timeout=10)
            conn.close()

    @property
    def pids(self) -> list[int]:
        return [p.pid for p, _ in self._generators if p.pid is not None]


@contextlib.contextmanager
def fleet(target: Target, processes: int) -> Iterator[Fleet]:
    started = Fleet(target, processes)
    try:
        started.start()
        yield started
    finally:
        started.stop()
