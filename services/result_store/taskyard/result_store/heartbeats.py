"""The heartbeat applier (runs inside the group-commit transaction)."""

from __future__ import annotations

import json

from taskyard.bus.v1 import event_pb2, pools_pb2

from .committer import Db, Outcome
from .records import event


def _process(p: pools_pb2.WorkerProcess) -> dict[str, object]:
    """One worker process as stored in workers.processes (the registry's JSON shape)."""
    return {
        "index": p.index,
        "pid": p.pid,
        "state": p.state,
        "rss_bytes": p.rss_bytes,
        "running_tasks": p.running_tasks,
        "last_beat_us": p.last_beat_us,
    }


async def apply_heartbeat(db: Db, reqs: list[pools_pb2.HeartbeatRequest]) -> Outcome:
    last: dict[str, pools_pb2.HeartbeatRequest] = {}
    for req in reqs:
        if req.pool_id:
            last[req.pool_id] = req
    events: list[event_pb2.Event] = []
    if last:
        hs = list(last.values())
        rows = await db.fetch(
            "upsert_workers",
            pool_ids=[h.pool_id for h in hs],
            server_names=[h.server_name for h in hs],
            max_workers=[h.max_workers for h in hs],
            active_workers=[h.active_workers for h in hs],
            idle_workers=[h.idle_workers for h in hs],
            running=[h.running_tasks for h in hs],
            is_running=[h.is_running for h in hs],
            task_names=[json.dumps(list(h.task_names)) for h in hs],
            states=[h.state for h in hs],
            rss_bytes=[h.rss_bytes for h in hs],
            capacities=[h.capacity for h in hs],
            concurrency=[h.concurrency for h in hs],
            processes=[json.dumps([_process(p) for p in h.processes]) for h in hs],
            last_dispatch_us=[h.last_dispatch_at_us for h in hs],
        )
        for row in rows:
            if row["registered"]:  # its first heartbeat: the row was inserted, not updated
                events.append(event("pool.registered", worker_id=row["pool_id"], at_us=row["at_us"]))
            events.append(event("worker.heartbeat", worker_id=row["pool_id"], at_us=row["at_us"]))
        # Declared names are kept for good (names.py): submittable while no pool serves them.
        declared = sorted({n for h in hs for n in h.task_names if n})
        if declared:
            await db.fetch("declare_task_names", names=declared)
    return Outcome(replies=[pools_pb2.HeartbeatReply() for _ in reqs], events=events)
