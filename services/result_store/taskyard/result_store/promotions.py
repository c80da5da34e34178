"""The promote-due applier (runs inside the group-commit transaction)."""

from __future__ import annotations

from taskyard.bus.v1 import event_pb2, store_pb2

from .committer import Db, Outcome
from .records import event, queued_ref
from .transitions import SRC_PROMOTE

PROMOTE_DEFAULT_LIMIT = 1000


async def apply_promote(db: Db, reqs: list[store_pb2.PromoteDueRequest]) -> Outcome:
    replies: list[store_pb2.PromoteDueReply] = []
    events: list[event_pb2.Event] = []
    for req in reqs:
        limit = req.limit if req.limit > 0 else PROMOTE_DEFAULT_LIMIT
        reply = store_pb2.PromoteDueReply()
        for row in await db.fetch("promote_due", limit, SRC_PROMOTE):
            reply.tasks.append(queued_ref(row))
            events.append(
                event(
                    "task.queued",
                    task_id=row["id"],
                    state="QUEUED",
                    attempt=row["attempt"],
                    name=row["name"],
                    at_us=row["at_us"],
                    worker_id=row["worker_id"],
                    priority=row["priority"],
                )
            )
        reply.next_due_us = int(await db.fetchval("next_due") or 0)
        replies.append(reply)
    return Outcome(replies=list(replies), events=events)
