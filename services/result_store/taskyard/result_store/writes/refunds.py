"""Circuit breakers' refunds (STORE_BREAKER_REFUNDS): failed attempts the leading
scheduler's breakers counted as an outage's get their retry back.

The scheduler decides which (scheduler/breakers.py: the failures that opened a
breaker, and every failure while it is open or half-open); the store owns the
charge. A request is one write of the committer, like a report (its revived
tasks' events go out after COMMIT, so the scheduler's due heap hears of them):
one statement (``refund_attempts``, sql/refunds.sql), fenced by the leader's
term, marks each failure refunded at most once and adds the refunds to the
task's uncharged attempts; a task whose last failure was refunded while its
spent retries made it a dead letter is RETRYING again, due at the breaker's
next probe, unless another task depends on it (its failure cut that chain:
the dependents are cancelled, so it stays FAILURE). An attempt a redrive or
RetryTasks wrote off (at or before the one it started the task again from) is
not refunded. A refund sent twice (a reply lost, the store restarted) refunds
nothing the second time. The attempts whose failure is not written yet (the
pool's notice overtook its report) come back as ``pending``: the scheduler asks
again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from taskyard.bus.v1 import flow_pb2
from taskyard.core import contract, errors, rpc
from taskyard.core.errors import FieldViolation

from ..appliers import Db, Outcome
from ..records import record_and_event
from ..uuids import norm_uuid
from .reports import MAX_UNCHARGED

# Attempts per request (the scheduler sends at most this many: flow.py REFUND_BATCH).
MAX_REFUNDS = 1000
NOT_LEADER = "NOT_LEADER"
# The applier's word to the route, in a reply's ``revived`` (never a count).
_STALE_TERM = -1


def check_refunds(req: flow_pb2.BreakerRefundsRequest) -> None:
    """Refuse a malformed request before it joins a group commit."""
    found: list[FieldViolation] = []
    if req.term <= 0:
        found.append(FieldViolation(field="term", description="must be the scheduler's term (1 or more)"))
    if len(req.refunds) > MAX_REFUNDS:
        found.append(FieldViolation(field="refunds", description=f"at most {MAX_REFUNDS} per request"))
    for i, r in enumerate(req.refunds[:MAX_REFUNDS]):
        if norm_uuid(r.task_id) is None:
            found.append(FieldViolation(field=f"refunds[{i}].task_id", description="must be a task id"))
        if r.attempt < 1:
            found.append(FieldViolation(field=f"refunds[{i}].attempt", description="must be 1 or more"))
        if len(found) >= 10:
            break
    if found:
        raise errors.invalid(found)


def refunds_reply(
    req: flow_pb2.BreakerRefundsRequest, reply: flow_pb2.BreakerRefundsReply
) -> flow_pb2.BreakerRefundsReply:
    """The applier's reply as the caller gets it: a stale term is an error."""
    if reply.revived == _STALE_TERM:
        raise errors.TaskyardError(
            errors.Code.FAILED_PRECONDITION,
            NOT_LEADER,
            f"term {req.term} is not the leading scheduler's: the refunds are refused",
        )
    return reply


async def refund(
    submit: Callable[..., Awaitable[Any]], req: flow_pb2.BreakerRefundsRequest
) -> flow_pb2.BreakerRefundsReply:
    """Carry out ``req`` through ``submit`` (the store's committer)."""
    check_refunds(req)
    reply = await submit(contract.STORE_BREAKER_REFUNDS, req, max(1, len(req.refunds)))
    return refunds_reply(req, reply)


def routes(submit: Callable[..., Awaitable[Any]]) -> list[rpc.Route[Any]]:
    """The STORE_BREAKER_REFUNDS route."""

    async def route(req: flow_pb2.BreakerRefundsRequest) -> flow_pb2.BreakerRefundsReply:
        return await refund(submit, req)

    return [rpc.serve_call(contract.STORE_BREAKER_REFUNDS, route)]


async def apply_refunds(db: Db, reqs: list[flow_pb2.BreakerRefundsRequest]) -> Outcome:
    """The KIND_STORE_BREAKER_REFUNDS applier: each request in turn, in the drain's transaction."""
    out = Outcome(replies=[])
    for req in reqs:
        out.replies.append(await _refund(db, req, out))
    return out


async def _refund(db: Db, req: flow_pb2.BreakerRefundsRequest, out: Outcome) -> flow_pb2.BreakerRefundsReply:
    items = {(str(norm_uuid(r.task_id)), r.attempt): r.next_probe_at_us for r in req.refunds}
    if not items:
        return flow_pb2.BreakerRefundsReply()
    ids = [i for i, _ in items]
    attempts = [a for _, a in items]
    term = await db.fetchval("leader_term_now")
    if term != req.term:
        return flow_pb2.BreakerRefundsReply(revived=_STALE_TERM)
    rows = await db.fetch(
        "refund_attempts",
        ids=ids,
        attempts=attempts,
        run_at_us=list(items.values()),
        term=req.term,
        max_uncharged=MAX_UNCHARGED,
    )
    reply = flow_pb2.BreakerRefundsReply(refunded=sum(r["refunds"] for r in rows))
    revive = [r for r in rows if r["revive"]]
    if revive:
        revived = await db.fetch(
            "revive_refunded", ids=[r["id"] for r in revive], run_at_us=[r["run_at_us"] for r in revive]
        )
        reply.revived = len(revived)
        await db.fetch("refund_retry_at", ids=[r["id"] for r in revived])
        # task.retrying with its run_at: the scheduler's due heap takes it from there.
        out.events.extend(record_and_event(r)[1] for r in revived)
    for row in await db.fetch("refunds_pending", ids=ids, attempts=attempts):
        reply.pending.add(
            task_id=row["id"], attempt=row["attempt"], next_probe_at_us=items[(row["id"], row["attempt"])]
        )
    return reply
