"""Quick throughput check of the store's write path (in-process, no NNG).

    TASKYARD_DATABASE_URL=postgresql://... python -m taskyard.result_store.bench [tasks] [batch] [clients]

Drives the full lifecycle of ``tasks`` tasks through ``clients`` concurrent
callers, each request carrying ``batch`` tasks: insert (-> QUEUED), lease
(-> ASSIGNED), report started (-> RUNNING), report completed (-> SUCCESS),
and prints state changes per second (4 per task).
"""

from __future__ import annotations

import asyncio
import sys
import time

from taskyard.bus.v1 import store_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import ids
from taskyard.core.config import Settings

from .store import ResultStore


async def run(total: int, batch: int, clients: int) -> None:
    settings = Settings.from_env()
    store = await ResultStore.open(settings, publish=False)
    store.start(listen=False, sweep=False)
    chunks = [
        [tr.TaskRecord(id=ids.new_task_id(), name="bench", args_json=b"[1]") for _ in range(batch)]
        for _ in range(total // batch)
    ]
    queue: asyncio.Queue[list[tr.TaskRecord]] = asyncio.Queue()
    for c in chunks:
        queue.put_nowait(c)

    async def client() -> None:
        while not queue.empty():
            recs = queue.get_nowait()
            await store.insert(store_pb2.InsertTasksRequest(tasks=recs))
            token = ids.new_lease_token()
            leased = await store.lease(
                store_pb2.LeaseTasksRequest(
                    pool_id="bench",
                    lease_ms=60_000,
                    leases=[store_pb2.Lease(task_id=r.id, lease_token=token) for r in recs],
                )
            )
            refs = [tr.AttemptRef(task_id=t.id, attempt=t.attempt, lease_token=token) for t in leased.tasks]
            await store.report(store_pb2.ReportRequest(started=refs))
            await store.report(
                store_pb2.ReportRequest(
                    completed=[store_pb2.Completion(ref=r, success=True, result_json=b"2") for r in refs]
                )
            )

    t0 = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    dt = time.perf_counter() - t0
    n = len(chunks) * batch
    s = store.stats
    print(
        f"{n} tasks x 4 state changes in {dt:.2f}s: {4 * n / dt:,.0f} state changes/s "
        f"({n / dt:,.0f} tasks/s end to end); drains={s.drains} transactions={s.transactions} "
        f"statements={s.statements} requests={s.requests}"
    )
    await store.close()


def main() -> None:
    args = [int(a) for a in sys.argv[1:]]
    total, batch, clients = (args + [100_000, 100, 32][len(args) :])[:3]
    asyncio.run(run(total, batch, clients))


if __name__ == "__main__":
    main()
