"""The facts ExplainTask needs about a task that is not running (one read)."""

from __future__ import annotations

from asyncpg import Pool

from taskyard.bus.v1 import tasks_pb2
from taskyard.core import errors
from taskyard.core.errors import FieldViolation

from .. import scopes
from ..appliers import Stats
from ..queries import bind
from ..uuids import norm_uuid

# A pool that has not beaten for this long does not count as serving anything
# (the same default as the gateway's known task names).
DEFAULT_MAX_AGE_MS = 60_000


async def explain_facts(
    pool: Pool, stats: Stats, req: tasks_pb2.ExplainFactsRequest
) -> tasks_pb2.ExplainFactsReply:
    tid = norm_uuid(req.task_id)
    if tid is None:
        raise errors.invalid([FieldViolation(field="task_id", description="must be a UUID")])
    age = req.max_age_ms if req.max_age_ms > 0 else DEFAULT_MAX_AGE_MS
    stats.statements += 1
    row = await pool.fetchrow(*bind("explain_facts", id=tid, max_age_ms=age, **scopes.params(req.scope)))
    if row is None:
        return tasks_pb2.ExplainFactsReply(found=False)
    return tasks_pb2.ExplainFactsReply(
        found=True,
        queue_paused=row["queue_paused"],
        pools=row["pools"],
        capacity=row["capacity"],
        running=row["running"],
        depth_ahead=row["depth_ahead"],
        waiting_on=list(row["waiting_on"]),
    )
