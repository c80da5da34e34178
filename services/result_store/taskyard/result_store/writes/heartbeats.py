"""The heartbeat applier (runs inside the group-commit transaction)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from google.protobuf.message import Message

from taskyard.bus.v1 import event_pb2, pools_pb2
from taskyard.core.states import WorkerState

from ..appliers import Db, Outcome
from ..records import event


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


# Worker process states that end on purpose (the pool stops or recycles it).
_LEAVING = frozenset({"stopping", "recycling"})
_POOL_STOPPED = WorkerState.STOPPED.value
_POOL_LEAVING = frozenset(s.value for s in (WorkerState.DRAINING, WorkerState.STOPPING, WorkerState.STOPPED))


def lifecycle(hb: pools_pb2.HeartbeatRequest, row: Mapping[str, Any]) -> list[event_pb2.Event]:
    """What changed since the pool's previous heartbeat: worker processes that
    appeared (worker.started) or went, on purpose (worker.stopped: it was
    stopping or recycling, or the pool is stopping) or not (worker.died); the
    pool's stop."""
    pool, at_us = hb.pool_id, row["at_us"]
    now = {(p.index, p.pid) for p in hb.processes}
    before: dict[tuple[int, int], str] = {}
    if row["prev_processes"]:
        for p in json.loads(row["prev_processes"]):
            before[(p["index"], p["pid"])] = p["state"]
    out = [
        event("worker.started", worker_id=worker_id(pool, index, pid), at_us=at_us)
        for index, pid in sorted(now - before.keys())
    ]
    pool_leaving = hb.state in _POOL_LEAVING
    for (index, pid), state in sorted(before.items()):
        if (index, pid) not in now:
            gone = "worker.stopped" if pool_leaving or state in _LEAVING else "worker.died"
            out.append(event(gone, worker_id=worker_id(pool, index, pid), at_us=at_us))
    if hb.state == _POOL_STOPPED and row["prev_state"] != _POOL_STOPPED:
        out.append(event("pool.stopped", worker_id=pool, at_us=at_us))
    return out


def worker_id(pool_id: str, index: int, pid: int) -> str:
    """The id a pool gives a worker process (worker_pool/attempts.py)."""
    return f"{pool_id}/w{index}:{pid}"


def heartbeat_columns(*hs: pools_pb2.HeartbeatRequest) -> dict[str, list[Any]]:
    """The parameters of the heartbeat statements (sql/workers.sql heartbeat_rows)."""
    return dict(
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


async def apply_heartbeat(db: Db, reqs: list[pools_pb2.HeartbeatRequest]) -> Outcome:
    last: dict[str, pools_pb2.HeartbeatRequest] = {}
    for req in reqs:
        if req.pool_id:
            last[req.pool_id] = req
    events: list[event_pb2.Event] = []
    if last:
        hs = [last[pool] for pool in sorted(last)]  # rows are locked in key order (deadlocks between stores)
        columns = heartbeat_columns(*hs)
        first = await db.fetch("register_workers", **columns)
        for row in first:
            hb = last[row["pool_id"]]
            events.append(event("pool.registered", worker_id=row["pool_id"], at_us=row["at_us"]))
            events.extend(lifecycle(hb, {"at_us": row["at_us"], "prev_state": None, "prev_processes": None}))
            events.append(event("worker.heartbeat", worker_id=row["pool_id"], at_us=row["at_us"]))
        registered = sorted(row["pool_id"] for row in first)
        again = (
            await db.fetch("beat_workers", registered=registered, **columns) if len(first) < len(hs) else []
        )
        for row in again:
            hb = last[row["pool_id"]]
            # The first beat after it stopped or was lost (its id configured, or it
            # was only cut off) registers it again.
            if row["prev_state"] == _POOL_STOPPED:
                events.append(event("pool.registered", worker_id=row["pool_id"], at_us=row["at_us"]))
            events.extend(lifecycle(hb, row))
            events.append(event("worker.heartbeat", worker_id=row["pool_id"], at_us=row["at_us"]))
        # Declared names are kept for good (names.py): submittable while no pool serves them.
        declared = sorted({n for h in hs for n in h.task_names if n})
        if declared:
            await db.fetch("declare_task_names", names=declared)
    return Outcome(replies=[pools_pb2.HeartbeatReply() for _ in reqs], events=events)


async def apply_lose_pools(db: Db, reqs: list[pools_pb2.LosePoolsRequest]) -> Outcome:
    """Pools silent for longer than asked: STOPPED, and pool.lost each. Their worker
    processes get no event: gone with the pool, or only out of reach."""
    events: list[event_pb2.Event] = []
    replies: list[Message] = []
    for req in reqs:
        if time.monotonic_ns() // 1000 - req.requested_at_us > req.valid_for_us:
            replies.append(pools_pb2.LosePoolsReply(late=True))
            continue
        rows = await db.fetch("lose_silent_pools", silent_ms=req.silent_ms, limit=max(1, req.limit))
        replies.append(pools_pb2.LosePoolsReply(pool_ids=[row["pool_id"] for row in rows]))
        events.extend(event("pool.lost", worker_id=row["pool_id"], at_us=row["at_us"]) for row in rows)
    return Outcome(replies=replies, events=events)
