"""The lease, renew and rescue appliers (run inside the group-commit transaction)."""

from __future__ import annotations

from taskyard.bus.v1 import event_pb2, leases_pb2, task_record_pb2
from taskyard.core import ids
from taskyard.core.states import FINAL_VALUES, TaskState
from taskyard.v1 import task_pb2

from ..appliers import Db, Outcome
from ..arrays import text_array
from ..records import add_record, event_for_record, event_for_record_row, in_record_order, record_from_row
from ..transitions import SRC_ASSIGNED
from ..uuids import norm_uuid
from .refs import _Refs
from .reports import die

S = TaskState
RESCUE_DEFAULT_LIMIT = 1000


def lease_alone(reqs: list[tuple[leases_pb2.LeaseTasksRequest, int]]) -> bool:
    """Whether ``apply_lease`` writes these with one statement (the committer's
    ``Alone``): they come from one scheduler's term."""
    return len({req.term for req, _ in reqs}) <= 1


def one_request(reqs: list[leases_pb2.RenewLeasesRequest]) -> bool:
    """The committer's ``Alone`` of lease renewals: a lone request, one statement
    (one lease length)."""
    return len(reqs) == 1


async def apply_lease(db: Db, reqs: list[tuple[leases_pb2.LeaseTasksRequest, int]]) -> Outcome:
    replies = [leases_pb2.LeaseTasksReply() for _ in reqs]
    events: list[event_pb2.Event] = []
    # One statement per scheduler's term (fenced in SQL; 0 = unfenced): in practice
    # one, the leader's. The term gates the whole statement, so the planner's
    # estimates, and with them the plan, stay those of the leases alone.
    by_term: dict[int, list[int]] = {}
    for i, (req, _) in enumerate(reqs):
        by_term.setdefault(req.term, []).append(i)
    for term, members in by_term.items():
        t_ids: list[str] = []
        tokens: list[str] = []
        pools: list[str] = []
        lease_ms: list[int] = []
        owner: dict[tuple[str, str], int] = {}
        for i in members:
            req, ms = reqs[i]
            for lease in req.leases:
                tid = norm_uuid(lease.task_id)
                if tid is None:
                    continue
                token = lease.lease_token or ids.new_lease_token()
                owner.setdefault((tid, token), i)
                t_ids.append(tid)
                tokens.append(token)
                pools.append(req.pool_id)
                lease_ms.append(ms)
        if not t_ids:
            continue
        rows = await db.fetch(
            "lease_tasks",
            ids=t_ids,
            tokens=text_array(tokens),
            pool_ids=text_array(pools),
            lease_ms=lease_ms,
            sources=SRC_ASSIGNED.db,
            term=term,
        )
        ordered = in_record_order(rows)
        for row in rows:
            rec = add_record(replies[owner[(row["id"], row["lease_token"])]].tasks, row, ordered=ordered)
            events.append(event_for_record_row(row, rec, "task.assigned"))
    return Outcome(replies=list(replies), events=events)


async def apply_renew(db: Db, reqs: list[tuple[leases_pb2.RenewLeasesRequest, int]]) -> Outcome:
    replies = [leases_pb2.RenewLeasesReply() for _ in reqs]
    by_ms: dict[int, list[int]] = {}
    for i, (_, ms) in enumerate(reqs):
        by_ms.setdefault(ms, []).append(i)
    for ms, members in by_ms.items():
        refs = _Refs()
        for i in members:
            for ref in reqs[i][0].refs:
                if not refs.add(i, ref):
                    replies[i].lost.append(ref.task_id)
        kept: set[tuple[int, str, int, str]] = set()
        if refs.ids:
            refs.in_id_order()
            rows = await db.fetch(
                "renew_leases", ids=refs.ids, attempts=refs.attempts, tokens=refs.tokens, lease_ms=ms
            )
            for row in rows:
                for i in refs.owner.get((row["id"], row["ref_attempt"], row["ref_token"]), []):
                    kept.add((i, row["id"], row["ref_attempt"], row["ref_token"]))
                    if row["cancel_requested"]:
                        replies[i].cancel_requested.append(row["id"])
        for i in members:
            for ref in reqs[i][0].refs:
                tid = norm_uuid(ref.task_id)
                if tid is not None and (i, tid, ref.attempt, ref.lease_token) not in kept:
                    replies[i].lost.append(ref.task_id)
    return Outcome(replies=list(replies))


async def apply_rescue(db: Db, reqs: list[leases_pb2.RescueRequest]) -> Outcome:
    replies: list[leases_pb2.RescueReply] = []
    events: list[event_pb2.Event] = []
    finals: list[task_record_pb2.TaskRecord] = []
    for req in reqs:
        reply = leases_pb2.RescueReply()
        limit = req.limit if req.limit > 0 else RESCUE_DEFAULT_LIMIT
        lapsed = await db.fetch("lapsed_leases", limit=limit)
        if lapsed:
            refs = _Refs()
            for r in lapsed:
                refs.ids.append(str(r["id"]))
                refs.attempts.append(r["attempt"])
                refs.tokens.append(r["lease_token"])
            n = len(lapsed)
            rows = await die(
                db,
                refs,
                started=[bool(r["started"]) for r in lapsed],
                delays_ms=[max(0, req.retry_delay_ms)] * n,
                max_retries=[req.default_max_retries] * n,
                max_rescues=[req.max_rescues] * n,
                # A cancelled lease that lapsed: its pool is gone and never said
                # whether the body started, so never "not started" (KILL).
                cancel_steps=[task_pb2.CANCEL_STEP_KILL] * n,
            )
            for rec in map(record_from_row, rows):
                (reply.requeued if rec.state == int(S.QUEUED) else reply.failed).append(rec)
                events.append(event_for_record(rec))
                if rec.state in FINAL_VALUES:
                    finals.append(rec)
        replies.append(reply)
    return Outcome(replies=list(replies), events=events, finals=finals)
