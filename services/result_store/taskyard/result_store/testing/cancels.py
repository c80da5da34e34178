"""CancelTasks of the in-memory store, as ``cancels.apply_cancel`` does it: a
task no pool holds is CANCELLED at once (step NOT_STARTED), a leased one
(ASSIGNED or RUNNING) only gets the flag (its pool stops it, or never starts
it, and reports the step), and the unfinished
descendants of either go the same way, the reason naming their ancestor."""

from __future__ import annotations

from taskyard.bus.v1 import tasks_pb2
from taskyard.core.states import LEASED_STATES, TaskState
from taskyard.v1 import task_pb2

from ..transitions import SRC_CANCEL_NOW
from ..uuids import norm_uuid
from ..writes.cancels import answer
from .rows import Row, Tasks, move

S = TaskState


def apply_cancel(tasks: Tasks, req: tasks_pb2.CancelTasksRequest, now_us: int) -> tasks_pb2.CancelTasksReply:
    reply = tasks_pb2.CancelTasksReply()
    wanted = sorted({u for x in req.ids if (u := norm_uuid(x)) is not None})
    cancelled = {row.id: row.copy() for row in _cancel_now(tasks, wanted, req.reason, now_us)}
    rest = [t for t in wanted if t not in cancelled]
    flagged = {row.id: row.copy() for row in _flag(tasks, rest, req.reason, now_us)}
    current = {t: row.copy() for t in rest if t not in flagged and (row := tasks.get(t)) is not None}
    answer(reply, req.ids, cancelled, flagged, current, set())
    tops = sorted({t for o in reply.outcomes if (o.cancelled or o.flagged) and (t := norm_uuid(o.id))})
    asked = {norm_uuid(x) for x in req.ids}
    reply.cancelled_children.extend(
        sorted(c for c, top in _cancel_children(tasks, tops, now_us).items() if top in asked)
    )
    return reply


def _cancel_now(tasks: Tasks, ids: list[str], reason: str, now_us: int) -> list[Row]:
    done: list[Row] = []
    for tid in ids:
        row = tasks.get(tid)
        if row is None or row.state not in SRC_CANCEL_NOW:
            continue
        move(row, S.CANCELLED, now_us)
        row.rec.cancel_reason = reason
        row.rec.cancel_step = task_pb2.CANCEL_STEP_NOT_STARTED
        row.rec.finished_at_us = now_us
        row.clear_lease()
        done.append(row)
    return done


def _flag(tasks: Tasks, ids: list[str], reason: str, now_us: int) -> list[Row]:
    flagged: list[Row] = []
    for tid in ids:
        row = tasks.get(tid)
        if row is None or row.state not in LEASED_STATES:
            continue
        row.rec.cancel_requested = True
        row.rec.cancel_reason = reason
        row.rec.updated_at_us = now_us
        flagged.append(row)
    return flagged


def _cancel_children(tasks: Tasks, tops: list[str], now_us: int) -> dict[str, str]:
    """Cancel or flag the unfinished descendants of ``tops``; the ones stopped,
    each with the top it descends from."""
    by_top: dict[str, list[str]] = {}
    for child, top in sorted(tasks.descendants(tops).items()):
        by_top.setdefault(top, []).append(child)
    stopped: dict[str, str] = {}
    for top, children in by_top.items():
        reason = f"parent {top} cancelled"
        now = _cancel_now(tasks, children, reason, now_us)
        flagged = _flag(tasks, [c for c in children if c not in {r.id for r in now}], reason, now_us)
        stopped.update((row.id, top) for row in now + flagged)
    return stopped
