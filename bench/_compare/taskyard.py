"""Taskyard: the four services as separate processes (NNG over ipc), 2 worker processes;
BatchSubmitTasks through the gRPC edge; latency: SubmitTask, then WaitTask."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
from google.protobuf import duration_pb2
from support.cluster import Cluster

from taskyard.core import seal
from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

from .accounting import ProcessMap, tree
from .run import Plan
from .servers import Servers
from .system import System, batch_queue, measure, time_until_done


class Taskyard:
    name = "taskyard"
    uses_postgres = True

    def __init__(self, cluster: Cluster, plan: Plan) -> None:
        self.cluster = cluster
        self.plan = plan

    def processes(self) -> ProcessMap:
        found: ProcessMap = {}
        for name, proc in self.cluster.procs.items():
            if name == "worker-pool":
                pool = tree(proc.pid, "pool manager", "worker")
                # multiprocessing's resource tracker is a child of the manager, not a worker.
                helpers = set(pool) - set(self.cluster.worker_pids()) - {proc.pid}
                found |= pool | dict.fromkeys(helpers, "pool helper")
            else:
                found |= tree(proc.pid, name, f"{name} child")
        return found

    def throughput(self) -> float:
        return asyncio.run(
            time_until_done(
                self.cluster.database_url,
                self._submit_all,
                "SELECT count(*) FROM tasks WHERE state = 'SUCCESS'",
                lambda done: done >= self.plan.tasks,
                self.plan.timeout,
                lambda done: f"taskyard: {done}/{self.plan.tasks} SUCCESS after {self.plan.timeout} s",
            )
        )

    async def _submit_all(self) -> None:
        work = batch_queue(self.plan.tasks, self.plan.batch)

        async def one_client() -> None:
            async with grpc.aio.insecure_channel(self.cluster.target) as channel:
                stub = task_service_pb2_grpc.TaskServiceStub(channel)
                while not work.empty():
                    size = work.get_nowait()
                    request = task_service_pb2.BatchSubmitTasksRequest(
                        tasks=[task_pb2.TaskSpec(name="noop") for _ in range(size)]
                    )
                    reply = await stub.BatchSubmitTasks(request, timeout=60)
                    assert len(reply.tasks) == size

        await asyncio.gather(*(one_client() for _ in range(self.plan.clients)))

    def latencies(self) -> list[float]:
        with grpc.insecure_channel(self.cluster.target) as channel:
            stub = task_service_pb2_grpc.TaskServiceStub(channel)

            def one() -> float:
                t0 = time.perf_counter()
                sub = stub.SubmitTask(
                    task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name="noop")),
                    timeout=30,
                )
                reply = stub.WaitTask(
                    task_service_pb2.WaitTaskRequest(
                        id=sub.task.id, timeout=duration_pb2.Duration(seconds=30)
                    ),
                    timeout=40,
                )
                elapsed = (time.perf_counter() - t0) * 1000
                if reply.timed_out or reply.task.state != task_pb2.TASK_STATE_SUCCESS:
                    raise SystemExit(f"taskyard: task {sub.task.id} ended {reply.task.state}")
                return elapsed

            return measure(one, self.plan)


@contextlib.contextmanager
def taskyard_system(servers: Servers, plan: Plan, work: Path, database: str) -> Iterator[System]:
    with servers.postgres.database(database) as dsn:
        cluster = Cluster(
            dsn,
            work / database,
            bus_keys=seal.generate_role_keys("bench"),  # as bench_cluster (bench/_common.py)
            workers=2,
            concurrency=plan.taskyard_concurrency,
            server_name="bench",
            development=False,
        )
        ok = False
        try:
            cluster.start()
            cluster.wait_ready(timeout=60)
            cluster.wait_workers(2)
            yield Taskyard(cluster, plan)
            ok = True
        finally:
            if not ok:
                print(cluster.logs_tail(), file=sys.stderr)
            cluster.stop()
