"""GetTaskTree's read: the hierarchy (parent_id) of a task from its root."""

from __future__ import annotations

from asyncpg import Pool

from taskyard.bus.v1 import graph_pb2
from taskyard.core import errors
from taskyard.core.errors import FieldViolation

from .. import scopes
from ..appliers import Stats
from ..queries import bind
from ..records import record_from_row
from ..uuids import norm_uuid

# The seed's cap: a bigger tree comes back truncated.
MAX_TREE_NODES = 10_000
# Payloads (args, kwargs, result, context) of a big tree stop at this many bytes,
# so the reply stays well under the bus's message limit; the nodes still come.
PAYLOAD_BUDGET = 4 * 1024 * 1024


async def task_tree(pool: Pool, stats: Stats, req: graph_pb2.TaskTreeRequest) -> graph_pb2.TaskTreeReply:
    tid = norm_uuid(req.id)
    if tid is None:
        raise errors.invalid([FieldViolation(field="id", description="must be a task id (UUID)")])
    limit = req.limit if 0 < req.limit <= MAX_TREE_NODES else MAX_TREE_NODES
    stats.statements += 1
    # One row more than asked tells whether the tree was cut.
    rows = await pool.fetch(*bind("graph_tree", id=tid, limit=limit + 1, **scopes.params(req.scope)))
    reply = graph_pb2.TaskTreeReply(found=bool(rows), truncated=len(rows) > limit)
    spent = 0
    for row in rows[:limit]:
        node = reply.nodes.add(depth=row["depth"], path=list(row["path"]))
        rec = record_from_row(row)
        # Internal fencing data stays inside the store.
        rec.lease_token = ""
        spent += len(rec.args_json) + len(rec.kwargs_json) + len(rec.result_json) + len(rec.context_json)
        if spent > PAYLOAD_BUDGET:
            for name in ("args_json", "kwargs_json", "result_json", "context_json"):
                rec.ClearField(name)
            rec.failure.traceback = ""
        node.task.CopyFrom(rec)
    if rows:
        reply.root_id = rows[0]["id"]
    return reply
