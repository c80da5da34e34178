"""Task logs and context: the write (an applier in the group commit) and the read.

Every line of a drain goes in ONE statement (``insert_logs``), which hands out
offsets from ``tasks.log_seq`` under the task row's lock: dense and ordered per
task. After COMMIT one ``task.log`` event per task carries the new ``log_seq``,
which is what a following stream waits on (no polling). The context updates of a
drain are one statement too (``apply_context``), which also logs a durable
``task.progress`` event per task whose progress it set: one per drain, however
many reports a burst merged.
"""

from __future__ import annotations

import json
import time

import asyncpg
from google.protobuf.timestamp_pb2 import Timestamp

from taskyard.bus.v1 import event_pb2, logs_pb2
from taskyard.core import errors, telemetry
from taskyard.core.errors import FieldViolation
from taskyard.core.states import TaskState
from taskyard.v1 import task_pb2

from .. import scopes
from ..appliers import Applier, Db, Outcome
from ..queries import bind
from ..uuids import norm_uuid

DEFAULT_MAX_LINES = 100_000
PAGE_DEFAULT = 100
PAGE_MAX = 1000
FINAL_NAMES = frozenset(s.name for s in TaskState if s.is_final)


def dropped_line(count: int) -> str:
    return f"[taskyard] {count} log line(s) dropped: the log buffer was full (the store was slow)"


def truncated_line(max_lines: int) -> str:
    return f"[taskyard] log truncated: more than {max_lines} lines; later lines are dropped"


def make_applier(max_lines: int = DEFAULT_MAX_LINES) -> Applier:
    """The KIND_STORE_LOGS applier with the deployment's per-task line cap."""

    async def apply_logs(db: Db, reqs: list[logs_pb2.LogBatch]) -> Outcome:
        return await _apply(db, reqs, max(1, max_lines))

    return apply_logs


async def _apply(db: Db, reqs: list[logs_pb2.LogBatch], max_lines: int) -> Outcome:
    ids: list[str] = []
    attempts: list[int] = []
    ats: list[int] = []
    types: list[str] = []
    messages: list[str] = []
    valid: dict[str, str | None] = {}
    last_req_of: dict[str, int] = {}

    def ok(task_id: str) -> str | None:
        if task_id not in valid:
            valid[task_id] = norm_uuid(task_id)
        return valid[task_id]

    now_us = time.time_ns() // 1000
    for i, req in enumerate(reqs):
        for line in req.lines:
            tid = ok(line.task_id)
            if tid is None:
                continue
            ids.append(tid)
            attempts.append(line.attempt)
            ats.append(line.at_us)
            types.append(line.type or "info")
            messages.append(line.message)
            last_req_of[tid] = i
        for d in req.dropped:
            tid = ok(d.task_id)
            if tid is None or d.count <= 0:
                continue
            ids.append(tid)
            attempts.append(d.attempt)
            ats.append(now_us)
            types.append("warning")
            messages.append(dropped_line(d.count))
            last_req_of[tid] = i
    replies = [logs_pb2.LogBatchReply() for _ in reqs]
    events: list[event_pb2.Event] = []
    if ids:
        rows = await db.fetch(
            "insert_logs",
            task_ids=ids,
            attempts=attempts,
            at_us=ats,
            types=types,
            messages=messages,
            max_lines=max_lines,
            marker=truncated_line(max_lines),
        )
        for row in rows:
            tid = row["task_id"]
            reply = replies[last_req_of.get(tid, 0)]
            reply.stored += row["stored"]
            reply.dropped += row["dropped"]
            if row["stored"]:
                events.append(
                    event_pb2.Event(type="task.log", task_id=tid, log_seq=row["log_seq"], at_us=now_us)
                )
    await _apply_context(db, reqs)
    return Outcome(replies=list(replies), events=events)


def alone(reqs: list[logs_pb2.LogBatch]) -> bool:
    """The committer's ``Alone`` of log batches: a lone batch that writes either
    lines or a context update (one statement), not both: the two must stand or
    fall together, or a resent batch would store its lines twice."""
    return len(reqs) == 1 and not (reqs[0].context and (reqs[0].lines or reqs[0].dropped))


async def _apply_context(db: Db, reqs: list[logs_pb2.LogBatch]) -> None:
    # One merged patch per task (pairs in arrival order), from its latest attempt.
    merged: dict[str, tuple[int, list[object]]] = {}
    for req in reqs:
        for u in req.context:
            tid = norm_uuid(u.task_id)
            if tid is None:
                continue
            try:
                pairs = json.loads(u.patch_json)
            except ValueError:
                continue
            if not isinstance(pairs, list):
                continue
            attempt, acc = merged.get(tid, (u.attempt, []))
            if u.attempt > attempt:
                acc = []
                attempt = u.attempt
            elif u.attempt < attempt:
                continue
            acc.extend(p for p in pairs if isinstance(p, list) and len(p) == 2 and isinstance(p[0], list))
            merged[tid] = (attempt, acc)
    if merged:
        tids = sorted(merged)  # rows are locked in id order (deadlocks between stores)
        await db.fetch(
            "apply_context",
            ids=tids,
            attempts=[merged[t][0] for t in tids],
            patches=[json.dumps(merged[t][1]) for t in tids],
            progress=[_sets_progress(merged[t][1]) for t in tids],
        )


def _sets_progress(pairs: list[object]) -> bool:
    """Whether a merged patch sets the task's "progress" (ctx.progress, or a key
    under it): its statement then logs one task.progress event, whatever the
    number of reports merged into it (docs/events.md)."""
    return any(p[0][:1] == ["progress"] for p in pairs if isinstance(p, list))


def _ts(us: int) -> Timestamp:
    ts = Timestamp()
    ts.FromMicroseconds(us)
    return ts


async def read_logs(
    pool: asyncpg.Pool, req: logs_pb2.GetLogsRequest, *, max_bytes: int = 32 * 1024 * 1024
) -> logs_pb2.GetLogsReply:
    """A page of ``req.limit`` lines at most, cut short (at least one line) once it
    holds ``max_bytes``: long lines must not make a reply over the bus's cap."""
    tid = norm_uuid(req.task_id)
    if tid is None:
        raise errors.invalid([FieldViolation(field="id", description="must be a UUID")])
    if req.from_offset < 0:
        raise errors.invalid([FieldViolation(field="from_offset", description="must be >= 0")])
    if req.limit < 0 or req.limit > PAGE_MAX:
        raise errors.invalid([FieldViolation(field="page_size", description=f"must be 1..{PAGE_MAX}")])
    limit = req.limit or PAGE_DEFAULT
    async with pool.acquire() as conn:
        # The head first: lines that commit in between only make the page longer,
        # never a "final and complete" answer that misses them.
        head = await conn.fetchrow(*bind("log_head", id=tid, **scopes.params(req.scope)))
        if head is None:
            return logs_pb2.GetLogsReply(found=False, next_offset=req.from_offset)
        rows = await conn.fetch(*bind("get_logs", id=tid, from_offset=req.from_offset, limit=limit))
    reply = logs_pb2.GetLogsReply(
        found=True, final=head["state"] in FINAL_NAMES, log_seq=max(head["log_seq"], 0)
    )
    size = 0
    trace_id = telemetry.trace_id_of(head["traceparent"])
    for row in rows:
        line = task_pb2.TaskLog(
            offset=row["seq"],
            type=row["type"],
            message=row["message"],
            created_at=_ts(row["at_us"]),
            attempt=row["attempt"],
            trace_id=trace_id,
        )
        size += line.ByteSize() + 8  # field tag and length prefix
        if size > max_bytes and reply.logs:
            break
        reply.logs.append(line)
    reply.next_offset = reply.logs[-1].offset + 1 if reply.logs else req.from_offset
    reply.log_seq = max(reply.log_seq, reply.next_offset)
    return reply
