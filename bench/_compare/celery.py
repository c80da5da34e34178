"""Celery: one prefork worker with --concurrency 2 on Redis (broker db 0, results db 1);
apply_async in a loop; latency: delay().get()."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .accounting import ProcessMap, tree
from .child import self_argv, spawn, stop_children
from .extras import module, redis_module
from .poll import wait_until
from .run import Plan
from .servers import Redis, Servers
from .system import System, measure


def celery_app(redis_url: str) -> tuple[Any, Any]:
    """The app and its no-op task, built the same way in the client and the worker."""
    celery = module("celery")
    app = celery.Celery("bench", broker=f"{redis_url}/0", backend=f"{redis_url}/1")

    def noop() -> None:
        return None

    return app, app.task(name="bench.noop")(noop)


def celery_worker(redis_url: str) -> None:
    app, _ = celery_app(redis_url)
    app.worker_main(["worker", "--pool", "prefork", "--concurrency", "2", "--loglevel", "WARNING"])


class Celery:
    name = "celery"
    uses_postgres = False

    def __init__(self, redis: Redis, worker: subprocess.Popen[bytes], plan: Plan) -> None:
        self.redis = redis
        self.worker = worker
        self.plan = plan
        self.app, self.noop = celery_app(redis.url)
        self.results = redis_module().Redis(port=redis.port, db=1)

    def processes(self) -> ProcessMap:
        return tree(self.worker.pid, "worker main", "worker child") | self.redis.processes()

    def throughput(self) -> float:
        self.results.flushdb()
        t0 = time.perf_counter()
        # One producer connection for the whole loop, as a bulk submitter would hold one.
        with self.app.producer_or_acquire() as producer:
            for _ in range(self.plan.tasks):
                self.noop.apply_async(producer=producer)
        # Each result is a key of its own in the results database.
        wait_until(
            lambda: int(self.results.dbsize()) >= self.plan.tasks,
            self.plan.timeout,
            "celery results",
            lambda: f"{self.results.dbsize()}/{self.plan.tasks}",
        )
        return time.perf_counter() - t0

    def latencies(self) -> list[float]:
        def one() -> float:
            t0 = time.perf_counter()
            self.noop.delay().get(timeout=30)
            return (time.perf_counter() - t0) * 1000

        return measure(one, self.plan)

    def close(self) -> None:
        self.results.close()
        self.app.close()


@contextlib.contextmanager
def celery_system(servers: Servers, plan: Plan, work: Path, database: str) -> Iterator[System]:
    module("celery")
    assert servers.redis is not None
    servers.redis.flush()
    logs = work / database
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / "worker.log", "ab") as log:
        worker = spawn(self_argv("celery-worker", "--redis-url", servers.redis.url), log)
        system: Celery | None = None
        try:
            system = Celery(servers.redis, worker, plan)
            # The first get() waits until the worker (and both children) took a task.
            system.noop.delay().get(timeout=60)
            yield system
        finally:
            if system is not None:
                system.close()
            stop_children([worker])
