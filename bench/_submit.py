"""Submissions for the flow-control benchmarks (bench/fairness, bench/flow): batches of
TaskSpecs sent from a few concurrent gRPC channels, and the first lease of chosen
tasks recorded by the database, for their queue wait."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import grpc

from taskyard.v1 import limit_pb2, task_pb2, task_service_pb2, task_service_pb2_grpc

# Tasks labelled "bench_wait": when the row was inserted and when it was first leased
# (QUEUED -> ASSIGNED, or inserted leased), at the database's clock. Its queue wait is
# the lease less created_at (the gateway's acceptance); the lease less the insert is
# the part spent as a QUEUED row, after the submission path.
LEASES_SQL = """
CREATE TABLE IF NOT EXISTS bench_first_lease (
  task_id uuid PRIMARY KEY,
  inserted_at timestamptz,
  leased_at timestamptz
);
CREATE OR REPLACE FUNCTION bench_record_lease() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO bench_first_lease VALUES (
      NEW.id, clock_timestamp(), CASE WHEN NEW.state = 'ASSIGNED' THEN clock_timestamp() END);
  ELSIF NEW.state = 'ASSIGNED' THEN
    UPDATE bench_first_lease SET leased_at = clock_timestamp()
    WHERE task_id = NEW.id AND leased_at IS NULL;
  END IF;
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS bench_record_lease ON tasks;
CREATE TRIGGER bench_record_lease AFTER INSERT OR UPDATE OF state ON tasks
  FOR EACH ROW WHEN (NEW.labels ? 'bench_wait') EXECUTE FUNCTION bench_record_lease();
"""

# (ms from created_at, ms from the row's insert) to the first lease.
WAITS_SQL = """
SELECT extract(epoch FROM l.leased_at - t.created_at)::float8 * 1000 AS ms,
       extract(epoch FROM l.leased_at - l.inserted_at)::float8 * 1000 AS row_ms
FROM tasks t JOIN bench_first_lease l ON l.task_id = t.id
WHERE t.id = ANY($1::uuid[]) AND l.leased_at IS NOT NULL
"""


def spec(
    name: str,
    *,
    fairness_key: str = "",
    limits: Sequence[tuple[str, str]] = (),
    labels: dict[str, str] | None = None,
) -> task_pb2.TaskSpec:
    return task_pb2.TaskSpec(
        name=name,
        fairness_key=fairness_key,
        limits=[limit_pb2.LimitUse(limit=n, key=k) for n, k in limits],
        labels=labels or {},
    )


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    """A call's metadata with ``token`` ("": none)."""
    return (("authorization", f"Bearer {token}"),) if token else ()


async def submit_batches(
    target: str,
    batches: Sequence[Sequence[task_pb2.TaskSpec]],
    clients: int,
    *,
    tokens: Sequence[str] = (),
) -> list[str]:
    """Every batch through BatchSubmitTasks from ``clients`` channels at once; the ids.
    ``tokens``: the token each batch is sent with (a tenant's: its tasks are that
    tenant's), one per batch; empty: none."""
    if tokens and len(tokens) != len(batches):
        raise ValueError(f"{len(tokens)} tokens for {len(batches)} batches")
    work: asyncio.Queue[tuple[Sequence[task_pb2.TaskSpec], str]] = asyncio.Queue()
    for i, b in enumerate(batches):
        work.put_nowait((b, tokens[i] if tokens else ""))
    ids: list[str] = []

    async def one_client() -> None:
        async with grpc.aio.insecure_channel(target) as channel:
            stub = task_service_pb2_grpc.TaskServiceStub(channel)
            while True:
                try:
                    batch, token = work.get_nowait()
                except asyncio.QueueEmpty:
                    return
                reply = await stub.BatchSubmitTasks(
                    task_service_pb2.BatchSubmitTasksRequest(tasks=list(batch)),
                    timeout=120,
                    metadata=bearer(token),
                )
                ids.extend(t.id for t in reply.tasks)

    await asyncio.gather(*(one_client() for _ in range(clients)))
    return ids


async def in_flight(conn: Any) -> int:
    """Tasks QUEUED, ASSIGNED or RUNNING: two counts on the partial indexes that hold
    just those rows, cheap however many rows are final."""
    queued = await conn.fetchval("SELECT count(*) FROM tasks WHERE state = 'QUEUED'")
    leased = await conn.fetchval("SELECT count(*) FROM tasks WHERE state IN ('ASSIGNED', 'RUNNING')")
    return int(queued) + int(leased)


async def wait_drained(conn: Any, within: float, what: str) -> float:
    """Until no task is QUEUED, ASSIGNED or RUNNING (every 0.1 s); when (perf_counter)."""
    deadline = time.perf_counter() + within
    last = time.perf_counter()
    while True:
        left = await in_flight(conn)
        now = time.perf_counter()
        if left == 0:
            return now
        if now > deadline:
            raise SystemExit(f"timed out: {left} {what} not final after {within:g} s")
        if now - last > 5:
            print(f"  ... {left} {what} not final yet", flush=True)
            last = now
        await asyncio.sleep(0.1)
