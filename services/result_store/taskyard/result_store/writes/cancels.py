"""The cancel applier (runs inside the group-commit transaction).

A task no pool holds is CANCELLED at once (step NOT_STARTED: guaranteed, no
pool was handed the attempt). A leased one (ASSIGNED: dispatched, maybe not
started; RUNNING) only gets the flag; its pool is told and reports the step:
NOT_STARTED if it never started the body, else FLAG, ASYNCIO or KILL."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from taskyard.bus.v1 import event_pb2, task_record_pb2, tasks_pb2
from taskyard.core.states import FINAL_VALUES
from taskyard.v1 import task_pb2

from ..appliers import Db, Outcome
from ..records import event_for_record, record_from_row
from ..transitions import SRC_CANCEL_NOW
from ..uuids import norm_uuid

Records = dict[str, task_record_pb2.TaskRecord]
ALL_TENANTS: Mapping[str, object] = {"all_tenants": True, "tenant": ""}


async def apply_cancel(db: Db, reqs: list[tasks_pb2.CancelTasksRequest]) -> Outcome:
    replies = [tasks_pb2.CancelTasksReply() for _ in reqs]
    events: list[event_pb2.Event] = []
    finals: list[task_record_pb2.TaskRecord] = []
    flagged_all: list[task_record_pb2.TaskRecord] = []
    # One set of statements per reason and scope (a scope reaches its tenant's rows
    # only: another tenant's task is not found, as a missing one, scopes.py).
    by_reason: dict[tuple[str, bool, str], list[int]] = {}
    for i, req in enumerate(reqs):
        by_reason.setdefault((req.reason, req.scope.all, req.scope.tenant), []).append(i)
    for (reason, all_tenants, tenant), members in by_reason.items():
        scope = {"all_tenants": all_tenants, "tenant": tenant}
        wanted = sorted({u for i in members for x in reqs[i].ids if (u := norm_uuid(x)) is not None})
        cancelled: Records = {}
        flagged: Records = {}
        current: Records = {}
        if wanted:
            cancelled, flagged = await _cancel_or_flag(db, wanted, reason, events, finals, scope)
            flagged_all.extend(flagged.values())
            rest = [t for t in wanted if t not in cancelled and t not in flagged]
            if rest:
                for row in await db.fetch("cancel_lookup", ids=rest, **scope):
                    rec = record_from_row(row)
                    current[rec.id] = rec
        reported: set[str] = set()
        for i in members:
            answer(replies[i], reqs[i].ids, cancelled, flagged, current, reported)
    flagged_all.extend(await _cancel_children(db, reqs, replies, events, finals))
    return Outcome(replies=list(replies), events=events, finals=finals, leased=dispatched(flagged_all))


def dispatched(flagged: Iterable[task_record_pb2.TaskRecord]) -> list[task_record_pb2.TaskRecord]:
    """The flagged attempts that were dispatched but not started (ASSIGNED), to
    go to their pool again with the flag set, on the stream a lease at insert
    takes (``Outcome.leased``): the pool holds no worker id for them yet, so
    the pool's cancel topic cannot name it, and a pool that has not started the
    body must hear of the cancel before it does. The pool answers with the step
    (NOT_STARTED when it never started the body), and drops the copy as a second
    dispatch of an attempt it holds or has ended. Shared with the in-memory store."""
    return [rec for rec in flagged if rec.state == task_pb2.TASK_STATE_ASSIGNED and rec.pool_id]


async def _cancel_or_flag(
    db: Db,
    ids: list[str],
    reason: str,
    events: list[event_pb2.Event],
    finals: list[task_record_pb2.TaskRecord],
    scope: Mapping[str, object] = ALL_TENANTS,
) -> tuple[Records, Records]:
    """Cancel at once those of ``ids`` not running, then flag the running ones
    among the rest; the records of each. ``scope``: whose rows (scopes.params);
    a task's descendants are its own tenant's."""
    cancelled: Records = {}
    for row in await db.fetch("cancel_now", ids=ids, sources=SRC_CANCEL_NOW.db, reason=reason, **scope):
        rec = record_from_row(row)
        cancelled[rec.id] = rec
        events.append(event_for_record(rec, "task.cancelled"))
        finals.append(rec)
    flagged: Records = {}
    rest = [t for t in ids if t not in cancelled]
    if rest:
        for row in await db.fetch("cancel_flag", ids=rest, reason=reason, **scope):
            rec = record_from_row(row)
            flagged[rec.id] = rec
            events.append(event_for_record(rec, "task.cancel_requested"))
    return cancelled, flagged


async def _cancel_children(
    db: Db,
    reqs: list[tasks_pb2.CancelTasksRequest],
    replies: list[tasks_pb2.CancelTasksReply],
    events: list[event_pb2.Event],
    finals: list[task_record_pb2.TaskRecord],
) -> list[task_record_pb2.TaskRecord]:
    """Unfinished descendants of the tasks this drain cancelled or flagged: the
    ones not started are CANCELLED now, running ones get the flag; the reason
    names the cancelled ancestor. One recursive statement finds them all.

    Then it looks again under the ones it just stopped, until it finds no new
    one: a child that another store inserted meanwhile held its parent's row
    (FOR SHARE, dependencies.check_refs), so this cancel waited for that insert
    to commit before it could stop the parent, and only a later statement sees
    the child. (A child inserted after this commits sees its parent cancelled:
    cancel_orphans.) Usually the second look finds nothing. Returns the
    records of the ones flagged."""
    flagged_all: list[task_record_pb2.TaskRecord] = []
    tops = sorted(
        {t for r in replies for o in r.outcomes if (o.cancelled or o.flagged) and (t := norm_uuid(o.id))}
    )
    # The ancestor asked for that each task found descends from.
    ancestor: dict[str, str] = {t: t for t in tops}
    by_top: dict[str, list[str]] = {}
    stopped: set[str] = set()
    while tops:
        found: dict[str, list[str]] = {}
        for row in await db.fetch("graph_descendants", ids=tops):
            if row["id"] not in ancestor:
                top = ancestor[row["id"]] = ancestor[row["top"]]
                found.setdefault(top, []).append(row["id"])
        now: set[str] = set()
        for top, children in found.items():
            children.sort()  # rows are locked in id order (deadlocks between stores)
            reason = f"parent {top} cancelled"
            cancelled, flagged = await _cancel_or_flag(db, children, reason, events, finals)
            flagged_all.extend(flagged.values())
            now.update(cancelled, flagged)
            by_top.setdefault(top, []).extend(children)
        stopped |= now
        tops = sorted(now)
    for req, reply in zip(reqs, replies, strict=True):
        asked = {norm_uuid(x) for x in req.ids}
        reply.cancelled_children.extend(
            sorted(c for top, children in by_top.items() if top in asked for c in children if c in stopped)
        )
    return flagged_all


def answer(
    reply: tasks_pb2.CancelTasksReply,
    asked: Sequence[str],
    cancelled: Mapping[str, task_record_pb2.TaskRecord],
    flagged: Mapping[str, task_record_pb2.TaskRecord],
    current: Mapping[str, task_record_pb2.TaskRecord],
    reported: set[str],
) -> None:
    """One outcome per id asked, in the order asked, and the record of each task
    found (once: an id asked again, here or earlier in ``reported``, is not
    cancelled twice). Shared with the in-memory store."""
    for raw in asked:
        tid = norm_uuid(raw)
        out = reply.outcomes.add(id=raw)
        found: task_record_pb2.TaskRecord | None = None
        if tid is None:
            out.not_found = True
        elif tid in cancelled and tid not in reported:
            out.cancelled = True
            found = cancelled[tid]
        elif tid in flagged:
            out.flagged = True
            found = flagged[tid]
        elif tid in cancelled or tid in current:
            found = cancelled.get(tid) or current[tid]
            # Not final: it moved under us between the statements, and nothing changed.
            out.already_final = found.state in FINAL_VALUES
        else:
            out.not_found = True
        if tid is not None and found is not None:
            reported.add(tid)
            reply.tasks.append(found)
