"""A task's failed attempts (``task_failures``), for GetTask and ExplainTask: the
last ``MAX_FAILURES_PER_TASK``, with how many came before and how many a circuit
breaker refunded, counted in SQL. A task throttled for hours has thousands of
failures: all of them would not fit in a reply (gRPC's 4 MiB)."""

from __future__ import annotations

from asyncpg import Pool

from taskyard.bus.v1 import tasks_pb2
from taskyard.core import errors
from taskyard.core.errors import FieldViolation

from .. import scopes
from ..appliers import Stats
from ..queries import bind
from ..uuids import norm_uuid

# GetTask asks for one task; a bulk caller gets a bounded answer.
MAX_TASKS = 1000
# The failed attempts returned per task, the newest (Task.failures, earlier_failures).
MAX_FAILURES_PER_TASK = 100


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
    if req.counts_only:
        for row in await pool.fetch(*bind("failure_counts", task_ids=ids, **scopes.params(req.scope))):
            by_task[row["task_id"]] = tasks_pb2.TaskFailures(
                task_id=row["task_id"], earlier=row["total"], refunded=row["refunded"]
            )
        reply.tasks.extend(by_task[t] for t in ids if t in by_task)
        return reply
    for row in await pool.fetch(
        *bind("task_failures", task_ids=ids, per_task=MAX_FAILURES_PER_TASK, **scopes.params(req.scope))
    ):
        item = by_task.get(row["task_id"])
        if item is None:
            item = by_task[row["task_id"]] = tasks_pb2.TaskFailures(
                task_id=row["task_id"],
                earlier=max(0, row["total"] - MAX_FAILURES_PER_TASK),
                refunded=row["refunded_n"],
            )
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
