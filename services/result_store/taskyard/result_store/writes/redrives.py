"""Redrives: their creation and control (on the pool) and their steps (through the committer).

Creation (STORE_REDRIVE_CREATE) matches the filter and, unless a dry run,
writes the redrive and one item per matched dead letter in one transaction: the
set is fixed then. It may write 100,000 items, so it runs on its own connection,
never in the group commit; so do the controls (STORE_REDRIVE_CONTROL), rare and
often refused (a pause of a redrive that is DONE). Both are carried out once per
database (bus_requests.py).

A step (STORE_REDRIVE_STEP) re-queues tasks: it is a write of the committer like
RetryTasks (writes/queues.py), so its tasks' events are published after COMMIT
with the refs of what it queued, which the scheduler's lanes take as they are
(writes/requeues.py: a step every 100 ms must not make the leader read every
QUEUED row again). Its transaction
locks the redrive's row first (``lock_redrive``): a step is refused unless it
comes with the leading scheduler's term, and takes nothing unless the redrive is
RUNNING; two steps of one redrive, or a step and a cancel, run one after the
other, so an item is taken once. Each task is re-queued only if it is still a
dead letter at the attempt its item took (``redrive_step``).
"""

from __future__ import annotations

import dataclasses
import uuid

import asyncpg

from taskyard.bus.v1 import envelope_pb2, tenants_pb2
from taskyard.bus.v1 import failures_pb2 as bus
from taskyard.core import errors
from taskyard.core import failure_filters as rules
from taskyard.core.errors import FieldViolation
from taskyard.core.states import TaskState, db_names, sources_of
from taskyard.v1 import failure_service_pb2 as fs

from .. import bus_requests, scopes
from ..appliers import Db, Outcome
from ..queries import bind
from ..reads.dead_letters import (
    SAMPLE,
    check_filter,
    dead_letter,
    read_dead_letters,
    require_known_group,
)
from ..reads.redrives import filter_json, get_redrive, not_found, redrive_from_row, redrive_id
from ..records import event_for_row
from . import tenant_checks
from .requeues import queued_message

K = envelope_pb2
# The limits failure_service.proto states.
MAX_MATCHED = 100_000
MAX_ACTIVE = rules.MAX_ACTIVE_REDRIVES
# Items one step may take (the leader asks for at most 500: scheduler/redrives.py).
MAX_STEP = 1000
# Where failures_pb2 (RedriveState, RedriveOutcome) and migrations/0019 agree.
RUNNING = fs.REDRIVE_STATE_RUNNING
PAUSED = fs.REDRIVE_STATE_PAUSED
CANCELLED = fs.REDRIVE_STATE_CANCELLED
SKIPPED = fs.REDRIVE_OUTCOME_SKIPPED
# ErrorInfo.reason of the refusals.
NOT_DEAD_LETTERS = "NOT_DEAD_LETTERS"
TOO_MANY_MATCHED = "TOO_MANY_MATCHED"
NOTHING_TO_REDRIVE = "NOTHING_TO_REDRIVE"
REDRIVE_STATE = "REDRIVE_STATE"
NOT_LEADER = "NOT_LEADER"
PENDING_ELSEWHERE = "PENDING_IN_ANOTHER_REDRIVE"
TOO_MANY_REDRIVES = "TOO_MANY_REDRIVES"
# What a control moves a redrive from, and to.
_CONTROLS = {
    bus.REDRIVE_OP_PAUSE: ((RUNNING,), PAUSED),
    bus.REDRIVE_OP_RESUME: ((PAUSED,), RUNNING),
    bus.REDRIVE_OP_CANCEL: ((RUNNING, PAUSED), CANCELLED),
}
# The applier's word to the step's handler, in a reply's ``requeued`` (never a count).
_STALE_TERM = -1
_UNKNOWN = -2
# FAILURE -> QUEUED is the manual retry of core.states, which a redrive is.
assert TaskState.FAILURE in sources_of(TaskState.QUEUED)
_QUEUED_SOURCES = db_names(sources_of(TaskState.QUEUED))


def _named(rid: str, state: int) -> str:
    """A redrive as a refusal names it: ``redrive <id> (RUNNING)``."""
    return f"redrive {rid} ({fs.RedriveState.Name(state).removeprefix('REDRIVE_STATE_')})"


def _seen(rid: str, row: asyncpg.Record, scope: tenants_pb2.TenantScope) -> str:
    """Redrive ``rid`` (``row``: its state and tenant) as a refusal names it to a
    caller of ``scope``: by its id when the caller may see it, else only as an
    operator's (a tenant's dead letter is in no other tenant's redrive; its id and
    state are not the tenant's to know)."""
    if scopes.reaches(scope, row["tenant"]):
        return _named(rid, row["state"])
    return "a redrive of an operator's"


def _precondition(reason: str, message: str) -> errors.TaskyardError:
    return errors.TaskyardError(errors.Code.FAILED_PRECONDITION, reason, message)


def _check_request(r: fs.RedriveRequest) -> None:
    """The gateway's rules (core/failure_filters.py), checked again: any sender of the bus may reach it."""
    out: list[rules.Violation] = []
    rules.check_rate(out, r.rate)
    rules.check_note(out, r.note)
    rules.raise_if(out)


async def create_redrive(
    pool: asyncpg.Pool, req: bus.CreateRedriveRequest, request_id: str = ""
) -> bus.CreateRedriveReply:
    r = req.request
    # The dead letters pending in another active redrive are left out: two redrives
    # pushing the same tasks would add their rates against the same downstream.
    f = dataclasses.replace(check_filter(r.filter, scope=req.scope), not_pending=True)
    _check_request(r)
    reply = bus.CreateRedriveReply()
    out = reply.response
    async with pool.acquire() as conn, conn.transaction():
        if not r.dry_run:
            await conn.execute(*bind("lock_redrive_creation"))
        if request_id and not r.dry_run:
            await bus_requests.record_one(conn, request_id, K.KIND_STORE_REDRIVE_CREATE)
        if not r.dry_run:
            # A redrive starts new work: refused for a suspended tenant (tenant_checks.py).
            await tenant_checks.check_owner(conn, scopes.owner(req.scope))
        if f.task_ids:
            rows = await conn.fetch(
                *bind("not_dead_letters", task_ids=list(f.task_ids), limit=10, **scopes.params(req.scope))
            )
            if rows:
                ids = ", ".join(row["id"] for row in rows)
                raise _precondition(NOT_DEAD_LETTERS, f"not dead letters (nothing was changed): {ids}")
            rows = await conn.fetch(*bind("pending_elsewhere", task_ids=list(f.task_ids), limit=10))
            if rows:
                raise _precondition(
                    PENDING_ELSEWHERE,
                    "already pending in another redrive (nothing was changed): "
                    + ", ".join(f"{row['id']} in {_seen(row['redrive_id'], row, req.scope)}" for row in rows)
                    + "; wait for it to finish or cancel it",
                )
        if not r.dry_run:
            # Each tenant's own cap: one tenant's redrives never use up another's.
            active = int(await conn.fetchval(*bind("count_active_redrives", owner=scopes.owner(req.scope))))
            if active >= MAX_ACTIVE:
                raise _precondition(
                    TOO_MANY_REDRIVES,
                    f"{active} of the tenant's redrives are running or paused, the most a tenant may "
                    f"have at once ({MAX_ACTIVE}): wait for one to finish or cancel one",
                )
        matched = int(await conn.fetchval(*bind("count_dead_letters", **f.params(), limit=MAX_MATCHED)))
        if matched > MAX_MATCHED:
            raise _precondition(
                TOO_MANY_MATCHED, f"the filter matches more than {MAX_MATCHED:,} dead letters: narrow it"
            )
        if not matched and f.group_id:
            await require_known_group(conn, f)
        out.sample.extend(dead_letter(row) for row in await read_dead_letters(conn, f, limit=SAMPLE))
        out.matched = matched
        if r.dry_run:
            return reply
        if not matched:
            every = dataclasses.replace(f, not_pending=False)
            holding = await conn.fetch(*bind("redrives_holding", **every.params(), limit=3))
            if holding:
                raise _precondition(
                    NOTHING_TO_REDRIVE,
                    "nothing to redrive: every dead letter the filter matches is pending in another redrive ("
                    + ", ".join(_seen(row["id"], row, req.scope) for row in holding)
                    + ")",
                )
            raise _precondition(NOTHING_TO_REDRIVE, "nothing to redrive: the filter matches no dead letter")
        row = await conn.fetchrow(
            *bind(
                "create_redrive",
                **f.params(),
                redrive_id=str(uuid.uuid4()),
                filter_json=filter_json(r.filter),
                rate=r.rate,
                note=r.note,
                created_by=req.created_by,
                owner=scopes.owner(req.scope),
            )
        )
        assert row is not None  # an INSERT ... SELECT count(*): one row
        if row["matched"] > MAX_MATCHED:  # more arrived since the count: rolled back
            raise _precondition(
                TOO_MANY_MATCHED, f"the filter matches more than {MAX_MATCHED:,} dead letters: narrow it"
            )
        out.redrive.CopyFrom(redrive_from_row(row))
        out.matched = row["matched"]
        if request_id:
            await bus_requests.keep_replies(conn, [request_id], [reply])
    return reply


async def control_redrive(
    pool: asyncpg.Pool, req: bus.RedriveControlRequest, request_id: str = ""
) -> bus.RedriveControlReply:
    rid = redrive_id(req.id)
    where = scopes.params(req.scope)
    if req.op == bus.REDRIVE_OP_GET:
        return bus.RedriveControlReply(redrive=await get_redrive(pool, rid, req.scope))
    if req.op not in _CONTROLS:
        raise errors.invalid([FieldViolation(field="op", description="unknown redrive operation")])
    sources, target = _CONTROLS[req.op]
    async with pool.acquire() as conn, conn.transaction():
        if request_id:
            await bus_requests.record_one(conn, request_id, K.KIND_STORE_REDRIVE_CONTROL)
        locked = await conn.fetchrow(*bind("lock_redrive", id=rid, **where))
        if locked is None:
            raise not_found(rid)
        if locked["state"] not in sources:
            state = fs.RedriveState.Name(locked["state"]).removeprefix("REDRIVE_STATE_")
            wanted = " or ".join(fs.RedriveState.Name(s).removeprefix("REDRIVE_STATE_") for s in sources)
            raise _precondition(REDRIVE_STATE, f"redrive {rid} is {state}, not {wanted}")
        if target == CANCELLED:
            await conn.execute(*bind("cancel_redrive_items", id=rid))
        row = await conn.fetchrow(*bind("set_redrive_state", id=rid, state=target, sources=list(sources)))
        assert row is not None  # its state was checked under the lock
        reply = bus.RedriveControlReply(redrive=redrive_from_row(row))
        if request_id:
            await bus_requests.keep_replies(conn, [request_id], [reply])
    return reply


def check_step(req: bus.RedriveStepRequest) -> None:
    """Refuse a bad step before it joins a group commit."""
    redrive_id(req.id)
    if not 1 <= req.limit <= MAX_STEP:
        raise errors.invalid([FieldViolation(field="limit", description=f"must be 1..{MAX_STEP}")])


def step_reply(req: bus.RedriveStepRequest, reply: bus.RedriveStepReply) -> bus.RedriveStepReply:
    """The applier's reply as the step's caller gets it: a refusal is an error."""
    if reply.requeued == _UNKNOWN:
        raise not_found(req.id)
    if reply.requeued == _STALE_TERM:
        raise _precondition(
            NOT_LEADER, f"term {req.term} is not the leading scheduler's: the step is refused"
        )
    return reply


async def apply_steps(db: Db, reqs: list[bus.RedriveStepRequest]) -> Outcome:
    """The KIND_STORE_REDRIVE_STEP applier: each step in turn, in the drain's transaction."""
    out = Outcome(replies=[])
    for req in reqs:
        out.replies.append(await _step(db, req, out))
    return out


async def _step(db: Db, req: bus.RedriveStepRequest, out: Outcome) -> bus.RedriveStepReply:
    rid = redrive_id(req.id)
    locked = await db.fetch("lock_redrive", id=rid, **scopes.params(scopes.ALL))
    if not locked:
        return bus.RedriveStepReply(requeued=_UNKNOWN)
    if locked[0]["leader_term"] != req.term:
        return bus.RedriveStepReply(requeued=_STALE_TERM)
    if locked[0]["state"] != RUNNING:  # paused or over: nothing taken, the caller sees why
        (row,) = await db.fetch("get_redrive", id=rid, **scopes.params(scopes.ALL))
        return bus.RedriveStepReply(redrive=redrive_from_row(row))
    rows = await db.fetch("redrive_step", id=rid, limit=req.limit, sources=_QUEUED_SOURCES)
    requeued = [r for r in rows if r["id"] is not None]
    skipped = sum(1 for r in rows if r["outcome"] == SKIPPED)
    out.events.extend(event_for_row(r) for r in requeued)
    out.messages.extend(queued_message(requeued))
    (row,) = await db.fetch("count_redrive_step", id=rid, requeued=len(requeued), skipped=skipped)
    return bus.RedriveStepReply(redrive=redrive_from_row(row), requeued=len(requeued), skipped=skipped)
