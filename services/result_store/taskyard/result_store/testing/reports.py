"""Report of the in-memory store, as ``reports.apply_report`` and its statements
do it: start notices, then successes, failures and cancel-stopped attempts, then
the late ones among the refused outcomes, then releases and deaths. Every entry
is fenced on its attempt and lease token, and on the states its target may be
reached from."""

from __future__ import annotations

import dataclasses
from collections.abc import MutableSequence

from taskyard.bus.v1 import leases_pb2, task_record_pb2
from taskyard.core.states import TaskState
from taskyard.v1 import task_pb2

from .. import transitions
from ..uuids import norm_uuid
from ..writes.reports import DIED_MESSAGE
from .rows import Row, Tasks, cancel_step, jsonb_text, move

S = TaskState
# An attempt ref as fencing compares it.
Ref = tuple[str, int, str]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Death:
    """What ends an attempt whose worker died (a report's entry, or a lapsed lease)."""

    started: bool
    delay_ms: int
    max_retries: int
    max_rescues: int
    cancel_step: int


@dataclasses.dataclass
class _Tally:
    reply: leases_pb2.ReportReply
    asked: int = 0
    applied: int = 0
    outcomes_asked: set[Ref] = dataclasses.field(default_factory=set)
    outcomes_applied: set[Ref] = dataclasses.field(default_factory=set)


def apply_report(tasks: Tasks, req: leases_pb2.ReportRequest, now_us: int) -> leases_pb2.ReportReply:
    # A result that is not JSON fails the whole request before anything changes.
    results = {
        i: jsonb_text(c.result_json.decode("utf-8", "replace") if c.result_json else "null")
        for i, c in enumerate(req.completed)
        if c.success and not c.cancel_step
    }
    tally = _Tally(reply=leases_pb2.ReportReply())
    for ref in req.started:
        row = _held(tasks, ref)
        if row is not None and row.state in transitions.SRC_RUNNING:
            move(row, S.RUNNING, now_us)
            row.rec.started_at_us = now_us
            row.rec.worker_id = ref.worker_id
            tally.reply.started.append(row.id)
    # Successes, failures, cancel-stopped attempts: one statement each, in this order.
    for kind in ("succeeded", "failed", "stopped"):
        for i, c in enumerate(req.completed):
            if _kind(c) == kind:
                _outcome(tasks, tally, c, results.get(i, ""), now_us)
    _note_late(tasks, tally)
    for release in req.released:
        row = _counted(tasks, tally, release.ref)
        if row is not None and _release(row, release.resume_requested, now_us):
            _applied(tally, tally.reply.released, row)
    for d in req.died:
        row = _counted(tasks, tally, d.ref)
        death = Death(
            started=d.started,
            delay_ms=d.retry_delay_ms,
            max_retries=d.max_retries,
            max_rescues=d.max_rescues,
            cancel_step=int(d.cancel_step),
        )
        if row is not None and die(row, death, now_us):
            _applied(tally, tally.reply.died, row)
    tally.reply.refused = tally.asked - tally.applied
    return tally.reply


def _kind(c: leases_pb2.Completion) -> str:
    if c.cancel_step:
        return "stopped"
    return "succeeded" if c.success else "failed"


def _held(tasks: Tasks, ref: task_record_pb2.AttemptRef) -> Row | None:
    row = tasks.get(norm_uuid(ref.task_id))
    return row if row is not None and row.holds(ref) else None


def _counted(tasks: Tasks, tally: _Tally, ref: task_record_pb2.AttemptRef) -> Row | None:
    tally.asked += 1
    return _held(tasks, ref)


def _applied(tally: _Tally, listed: MutableSequence[str], row: Row) -> None:
    tally.applied += 1
    listed.append(row.id)


def _outcome(tasks: Tasks, tally: _Tally, c: leases_pb2.Completion, result: str, now_us: int) -> None:
    tid = norm_uuid(c.ref.task_id)
    if tid is not None:
        tally.outcomes_asked.add((tid, c.ref.attempt, c.ref.lease_token))
    row = _counted(tasks, tally, c.ref)
    if row is None:
        return
    kind = _kind(c)
    if kind == "succeeded":
        done = _succeed(row, result, now_us)
    elif kind == "failed":
        done = _fail(row, c, now_us)
    else:
        done = row.rec.cancel_requested and row.state in transitions.SRC_CANCELLED_LEASED
        if done:
            move(row, S.CANCELLED, now_us)
            row.rec.cancel_step = cancel_step(int(c.cancel_step))
            row.rec.finished_at_us = now_us
    if not done:
        return
    # What every outcome sets: the start it may have overtaken (a body that never
    # ran has none), who ran it, no lease.
    if c.cancel_step == task_pb2.CANCEL_STEP_NOT_STARTED:
        row.rec.started_at_us = 0
    else:
        row.rec.started_at_us = row.rec.started_at_us or c.started_at_us or now_us
    row.rec.worker_id = c.ref.worker_id or row.rec.worker_id
    row.rec.resume_requested = False
    row.clear_lease()
    tally.outcomes_applied.add((row.id, c.ref.attempt, c.ref.lease_token))
    _applied(tally, tally.reply.completed, row)


def _succeed(row: Row, result: str, now_us: int) -> bool:
    if row.state not in transitions.SRC_SUCCESS:
        return False
    move(row, S.SUCCESS, now_us)
    row.rec.result_json = result.encode()
    row.rec.finished_at_us = now_us
    return True


def _budget(row: Row, given: int) -> int:
    """The retry budget: the row's own, else (-1) the one the sender resolved."""
    return row.rec.max_retries if row.rec.max_retries >= 0 else given


def _fail(row: Row, c: leases_pb2.Completion, now_us: int) -> bool:
    charged = c.ref.attempt - row.rec.uncharged_attempts
    if row.rec.cancel_requested:
        target, sources = S.CANCELLED, transitions.SRC_CANCELLED_LEASED
    elif c.retryable and charged <= _budget(row, c.max_retries):
        target, sources = S.RETRYING, transitions.SRC_RETRYING_LEASED
    else:
        target, sources = S.FAILURE, transitions.SRC_FAILURE
    if row.state not in sources:
        return False
    move(row, target, now_us)
    rec = row.rec
    rec.failure.type = c.failure.type or "Error"
    rec.failure.message = c.failure.message
    rec.failure.traceback = c.failure.traceback
    rec.failure.attempt = c.ref.attempt
    if target is S.RETRYING:
        rec.attempt += 1
        rec.run_at_us = now_us + max(c.retry_delay_ms, 0) * 1000
    else:
        rec.finished_at_us = now_us
    if target is S.CANCELLED:
        rec.cancel_step = cancel_step(2)  # it stopped itself, flag set: CANCEL_STEP_FLAG
    return True


def _note_late(tasks: Tasks, tally: _Tally) -> None:
    """Note on their rows the refused outcomes of superseded attempts, and of runs
    a cancel ended as not started: their bodies ran all the same."""
    late: dict[str, list[int]] = {}
    for tid, attempt, token in sorted(tally.outcomes_asked - tally.outcomes_applied):
        row = tasks.get(tid)
        if row is None:
            continue
        rec = row.rec
        unstarted = row.state is S.CANCELLED and rec.cancel_step == 1
        if rec.attempt != attempt or rec.lease_token not in ("", token) or unstarted:
            late.setdefault(tid, []).append(attempt)
    for tid, attempts in late.items():
        row = tasks.get(tid)
        assert row is not None
        row.rec.late_reports += len(attempts)
        row.rec.late_attempt = max(row.rec.late_attempt, *attempts)


def _release(row: Row, resume: bool, now_us: int) -> bool:
    """Back to QUEUED as a new attempt that spends no retry (CANCELLED when a
    cancel waits); "not started" never applies to a row a start notice reached."""
    cancel = row.rec.cancel_requested
    target, sources = (
        (S.CANCELLED, transitions.SRC_CANCELLED_LEASED)
        if cancel
        else (S.QUEUED, transitions.SRC_QUEUED_LEASED)
    )
    if row.state not in sources or not (resume or cancel or row.state is S.ASSIGNED):
        return False
    move(row, target, now_us)
    rec = row.rec
    if cancel:
        # CANCEL_STEP_ASYNCIO: the release stopped a started attempt; NOT_STARTED:
        # the pool hands back one it never started.
        rec.cancel_step = cancel_step(3 if resume else 1)
        rec.finished_at_us = now_us
    else:
        rec.pool_id = ""
        rec.worker_id = ""
        rec.attempt += 1
        rec.uncharged_attempts += 1
    rec.resume_requested = resume and not cancel
    row.clear_lease()
    return True


def _death_target(row: Row, death: Death, attempt: int) -> TaskState:
    rec = row.rec
    if rec.cancel_requested:
        return S.CANCELLED
    if row.state is not S.RUNNING and not death.started:
        return S.QUEUED
    if death.max_rescues > 0 and rec.rescues + 1 >= death.max_rescues:
        return S.FAILURE
    if attempt - rec.uncharged_attempts <= _budget(row, death.max_retries):
        return S.RETRYING
    return S.FAILURE


_DEATH_SOURCES = {
    S.QUEUED: transitions.SRC_QUEUED_LEASED,
    S.RETRYING: transitions.SRC_RETRYING_LEASED,
    S.FAILURE: transitions.SRC_FAILURE_LEASED,
    S.CANCELLED: transitions.SRC_CANCELLED_LEASED,
}


def die(row: Row, death: Death, now_us: int) -> bool:
    """The worker died holding ``row``'s current attempt: not started -> QUEUED,
    uncharged; started -> a WorkerProcessDied failure (quarantined at the rescue
    cap); a cancel requested -> CANCELLED."""
    rec = row.rec
    target = _death_target(row, death, rec.attempt)
    if row.state not in _DEATH_SOURCES[target]:
        return False
    quarantine = death.max_rescues > 0 and rec.rescues + 1 >= death.max_rescues
    failed_attempt = rec.attempt
    row_was_assigned = row.state is S.ASSIGNED
    move(row, target, now_us)
    if target in (S.RETRYING, S.QUEUED):
        rec.attempt += 1
    if target is S.QUEUED:
        rec.uncharged_attempts += 1
        rec.pool_id = ""
        rec.worker_id = ""
    if target is S.CANCELLED:
        # As the pool says; else NOT_STARTED for an attempt it never started and no
        # start notice reached; else CANCEL_STEP_KILL.
        unstarted = row_was_assigned and not death.started
        rec.cancel_step = cancel_step(death.cancel_step or (1 if unstarted else 4))
    if target in (S.RETRYING, S.FAILURE):
        message = DIED_MESSAGE
        if target is S.FAILURE and quarantine:
            message = (
                f"quarantined: its worker died {rec.rescues + 1} times running it "
                f"(TASKYARD_MAX_RESCUES = {death.max_rescues})"
            )
        rec.rescues += 1
        rec.failure.type = "WorkerProcessDied"
        rec.failure.message = message
        rec.failure.traceback = ""
        rec.failure.attempt = failed_attempt
    if target is S.RETRYING:
        rec.run_at_us = now_us + max(death.delay_ms, 0) * 1000
    if target in (S.FAILURE, S.CANCELLED):
        rec.finished_at_us = now_us
    rec.resume_requested = False
    row.clear_lease()
    return True
