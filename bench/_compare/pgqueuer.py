"""pgqueuer: 2 worker processes (QueueManager, an async no-op entrypoint); Queries.enqueue
of lists; latency: enqueue one job, then pgqueuer's CompletionWatcher."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .accounting import ProcessMap, tree
from .child import self_argv, spawn, stop_children
from .extras import module
from .poll import wait_for_line
from .run import Plan
from .servers import Servers
from .system import System, batch_queue, time_until_done


async def pgqueuer_worker(dsn: str, batch_size: int) -> None:
    """A worker process: one QueueManager on one asyncpg connection, as pgqueuer's
    README sets one up, with its default settings but the batch size."""
    import asyncpg

    pgq = module("pgqueuer")
    conn = await asyncpg.connect(dsn)
    qm = pgq.QueueManager(pgq.Queries(pgq.AsyncpgDriver(conn)))

    async def noop(job: Any) -> None:
        return None

    qm.entrypoint("noop")(noop)
    print("ready", flush=True)
    await qm.run(batch_size=batch_size)


class Pgqueuer:
    name = "pgqueuer"
    uses_postgres = True

    def __init__(self, dsn: str, workers: list[subprocess.Popen[bytes]], plan: Plan) -> None:
        self.dsn = dsn
        self.workers = workers
        self.plan = plan
        self.pgq = module("pgqueuer")

    def processes(self) -> ProcessMap:
        found: ProcessMap = {}
        for worker in self.workers:
            found |= tree(worker.pid, "worker", "worker child")
        return found

    def warm(self) -> None:
        """A few jobs through both workers first: their LISTEN and statements are set up
        before the clock starts, as the other systems' are by their readiness checks."""
        self._run_jobs(40, 10)

    def throughput(self) -> float:
        return self._run_jobs(self.plan.tasks, self.plan.batch)

    def _run_jobs(self, total: int, batch: int) -> float:
        return asyncio.run(
            time_until_done(
                self.dsn,
                lambda: self._submit_all(total, batch),
                # A finished job leaves the queue table in the statement that logs it.
                "SELECT count(*) FROM pgqueuer",
                lambda left: left == 0,
                self.plan.timeout,
                lambda left: f"pgqueuer: {left} jobs still queued after {self.plan.timeout} s",
            )
        )

    async def _submit_all(self, total: int, batch: int) -> None:
        import asyncpg

        work = batch_queue(total, batch)

        async def one_client() -> None:
            conn = await asyncpg.connect(self.dsn)
            try:
                queries = self.pgq.Queries(self.pgq.AsyncpgDriver(conn))
                while not work.empty():
                    size = work.get_nowait()
                    await queries.enqueue(["noop"] * size, [None] * size, [0] * size)
            finally:
                await conn.close()

        await asyncio.gather(*(one_client() for _ in range(self.plan.clients)))

    def latencies(self) -> list[float]:
        return asyncio.run(self._latencies())

    async def _latencies(self) -> list[float]:
        import asyncpg

        conn = await asyncpg.connect(self.dsn)
        try:
            driver = self.pgq.AsyncpgDriver(conn)
            queries = self.pgq.Queries(driver)
            completion = importlib.import_module("pgqueuer.core.completion")
            # Defaults: NOTIFY-driven, one status query per 50 ms debounce window.
            async with completion.CompletionWatcher(driver, queries=queries) as watcher:

                async def one() -> float:
                    t0 = time.perf_counter()
                    (job_id,) = await queries.enqueue("noop", None)
                    status = await asyncio.wait_for(watcher.wait_for(job_id), 30)
                    elapsed = (time.perf_counter() - t0) * 1000
                    if status != "successful":
                        raise SystemExit(f"pgqueuer: job {job_id} ended {status}")
                    return elapsed

                for _ in range(self.plan.warmup):
                    await one()
                return [await one() for _ in range(self.plan.samples)]
        finally:
            await conn.close()


@contextlib.contextmanager
def pgqueuer_system(servers: Servers, plan: Plan, work: Path, database: str) -> Iterator[System]:
    pgq = module("pgqueuer")
    with servers.postgres.database(database) as dsn:
        asyncio.run(_pgqueuer_install(pgq, dsn))
        logs = work / database
        logs.mkdir(parents=True, exist_ok=True)
        workers: list[subprocess.Popen[bytes]] = []
        log_files: list[IO[bytes]] = []
        try:
            for i in range(2):
                log: IO[bytes] = open(logs / f"worker-{i}.log", "ab")  # noqa: SIM115 - the child's log
                log_files.append(log)
                argv = self_argv(
                    "pgqueuer-worker",
                    "--dsn",
                    dsn,
                    "--pgqueuer-batch",
                    str(plan.pgqueuer_batch),
                )
                workers.append(spawn(argv, log))
            for i, worker in enumerate(workers):
                wait_for_line(worker, logs / f"worker-{i}.log", "ready", "pgqueuer worker")
            system = Pgqueuer(dsn, workers, plan)
            system.warm()
            yield system
        finally:
            stop_children(workers)
            for file in log_files:
                file.close()


async def _pgqueuer_install(pgq: Any, dsn: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        await pgq.Queries(pgq.AsyncpgDriver(conn)).install()
        # pgqueuer can install UNLOGGED tables; this comparison needs its durable default.
        unlogged = await conn.fetch(
            "SELECT relname FROM pg_class WHERE relname LIKE 'pgqueuer%' AND relpersistence = 'u'"
        )
        if unlogged:
            raise SystemExit(f"pgqueuer installed unlogged tables: {[r['relname'] for r in unlogged]}")
    finally:
        await conn.close()
