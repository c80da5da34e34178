"""Every failed attempt of a task (``task_failures``), for GetTask."""

from __future__ import annotations

from asyncpg import Pool

from taskyard.bus.v1 import tasks_pb2
from taskyard.core import errors
from taskyard.core.errors import FieldViolation

from ..appliers import Stats
from ..queries import bind
from ..uuids import norm_uuid

# GetTask asks for one task; a bulk caller gets a bounded answer.
MAX_TASKS = 1000


async def get_failures(
    pool: Pool, stats: Stats, req: tasks_pb2.GetFailuresRequest
) -> tasks_pb2.GetFailuresReply:
    if len(req.task_ids) > MAX_TASKS:
        raise errors.invalid(
            [FieldViolation(field="task_ids", description=f"at most {MAX_TASKS} ids per request")]
        )
    ids = list(dict.fromkeys(t for t in (norm_uuid(raw) for raw in req.task_ids) if t is not None))
    reply = tasks_pb2.GetFailuresReply()
    if not ids:
        return reply
    stats.statements += 1
    by_task: dict[str, tasks_pb2.TaskFailures] = {}
    for row in await pool.fetch(*bind("task_failures", task_ids=ids)):
        item = by_task.get(row["task_id"])
        if item is None:
            item = by_task[row["task_id"]] = tasks_pb2.TaskFailures(task_id=row["task_id"])
        failure = item.failures.add(
            type=row["type"],
            message=row["message"],
            traceback=row["traceback"],
            attempt=row["attempt"],
            group_id=row["group_id"],
            redrive_id=row["redrive_id"],
            # A circuit breaker gave its retry back (writes/refunds.py).
            refunded=row["refunded"],
        )
        if row["failed_at_us"]:
            failure.failed_at.FromMicroseconds(row["failed_at_us"])
        if row["retry_at_us"]:
            failure.retry_at.FromMicroseconds(row["retry_at_us"])
    reply.tasks.extend(by_task[t] for t in ids if t in by_task)
    return reply
