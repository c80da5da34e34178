"""Restart reconciliation, store side: the leases a previous scheduler issued
that no answering pool holds go back to QUEUED at once (a new attempt, no retry burned)
instead of waiting for their lease to lapse. The races are discussed in
taskyard/scheduler/reconciler.py; here only the guards matter: the row must
still be ASSIGNED (a started row is never touched), held by one of the pools
named (a silent or unknown pool keeps its leases), under a token none of them
reported and not the asking scheduler's own, and leased before the cutoff (by
the database clock). A scheduler's request carries its term: nothing is
released unless it is the leading one, and then only leases of earlier terms."""

from __future__ import annotations

from taskyard.bus.v1 import event_pb2, leases_pb2
from taskyard.core.states import TaskState

from ..appliers import Db, Outcome
from ..records import event_for_record, record_from_row, record_queued_ref
from ..transitions import sources
from .requeues import released_message

DEFAULT_LIMIT = 1000
# Never RUNNING: a started attempt is the pool's to report (or its lease's to lapse).
SRC_RECONCILE = sources(TaskState.QUEUED, {TaskState.ASSIGNED}).db


async def apply_reconcile(db: Db, reqs: list[leases_pb2.ReconcileRequest]) -> Outcome:
    replies: list[leases_pb2.ReconcileReply] = []
    events: list[event_pb2.Event] = []
    requeued = []
    for req in reqs:
        reply = leases_pb2.ReconcileReply()
        pools = sorted({p for p in req.pool_ids if p})
        if pools:
            limit = req.limit if req.limit > 0 else DEFAULT_LIMIT
            ms = max(0, req.issued_before_ms_ago)
            rows = await db.fetch(
                "release_orphaned_leases",
                pool_ids=pools,
                held_tokens=list(req.held_tokens),
                issued_before_ms=ms,
                limit=limit,
                sources=SRC_RECONCILE,
                own_prefix=req.own_token_prefix,
                term=req.term,
            )
            for row in rows:
                rec = record_from_row(row)
                reply.released.append(record_queued_ref(rec))
                events.append(event_for_record(rec))
                requeued.append(rec)
        replies.append(reply)
    # Whoever asked (a restarted scheduler, or a pool that stopped), every
    # scheduler's lanes learn of the re-queued tasks after COMMIT (requeues.py).
    return Outcome(replies=list(replies), events=events, messages=released_message(requeued))
