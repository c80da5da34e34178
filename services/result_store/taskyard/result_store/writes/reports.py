"""The report applier: started, completed, released and died attempts
(runs inside the group-commit transaction).

Every kind of entry a report carries is applied the same way: the attempt refs
of all of a drain's entries of that kind are merged, one statement applies
them (fenced on attempt and lease token), and each applied row goes back to the
request that asked for it. ``_Step`` says, for one kind, which entries, which
statement with which columns, and what an applied row becomes.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import asyncpg

from taskyard.bus.v1 import event_pb2, leases_pb2, task_record_pb2
from taskyard.core import hops, tracing
from taskyard.core.states import FINAL_VALUES

from ..appliers import Db, Outcome
from ..arrays import text_array
from ..records import event_for_row, in_record_order, record_and_event, record_from_row
from ..transitions import (
    SRC_CANCELLED_LEASED,
    SRC_FAILURE,
    SRC_FAILURE_LEASED,
    SRC_QUEUED_LEASED,
    SRC_RETRYING_LEASED,
    SRC_RUNNING,
    SRC_SUCCESS,
)
from ..uuids import norm_uuid
from .refs import _Refs
from .requeues import released_message

DIED_MESSAGE = "the worker process died while running the attempt"
# Throttled attempts (RetryAfter) spend no retry while a task's uncharged attempts
# are fewer than this: past it (a downstream that never recovers), they do.
MAX_UNCHARGED = 10_000
# Columns sent as one array literal each (text_array), as the statements' refs'
# lease tokens are: short plain text that asyncpg would encode an element at a time.
_LITERAL_COLUMNS = frozenset({"worker_ids"})
_get = operator.attrgetter
_REF = _get("ref")


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Step:
    """How one kind of report entry is applied."""

    statement: str
    # The entries of this kind in a request, and the attempt each one names
    # (None: the entry is an AttemptRef itself).
    entries: Callable[[leases_pb2.ReportRequest], Iterable[Any]]
    ref: Callable[[Any], task_record_pb2.AttemptRef] | None = _REF
    # The statement's parameters besides ids, attempts and tokens: one array per
    # column, each element read from an entry; then the parameters common to all
    # entries (the allowed source states).
    columns: Mapping[str, Callable[[Any], Any]]
    constants: Mapping[str, Any]
    # The ReportReply field that lists the applied task ids.
    reply: str
    # A start notice: its rows are short (an event each, no record), and a refused
    # one is not counted in ReportReply.refused: a notice that arrives after its
    # attempt's outcome is expected (they travel apart). Other rows are full
    # records: each gives a record, an event carrying it when final, a final.
    notice: bool = False
    # An outcome: its hop stamps go on the final event, and a refused one may be late.
    outcome: bool = False
    # Whether an applied row may be QUEUED again: the scheduler's lanes hear of it (requeues.py).
    requeues: bool = False


def _result_text(c: leases_pb2.Completion) -> str:
    return c.result_json.decode("utf-8", "replace") if c.result_json else "null"


def _failure_type(c: leases_pb2.Completion) -> str:
    return c.failure.type or "Error"


def _completion_step(
    statement: str,
    entries: Callable[[leases_pb2.ReportRequest], Iterable[leases_pb2.Completion]],
    columns: Mapping[str, Callable[[leases_pb2.Completion], Any]],
    constants: Mapping[str, Any],
) -> _Step:
    """The step of one kind of completion: besides ``columns``, each says who ran
    the attempt and when it started, as it may overtake its start notice."""
    return _Step(
        statement=statement,
        entries=entries,
        columns={**columns, "worker_ids": _get("ref.worker_id"), "started_us": _get("started_at_us")},
        constants=constants,
        reply="completed",
        outcome=True,
    )


_STARTED = _Step(
    statement="start_attempts",
    entries=_get("started"),
    ref=None,
    columns={"worker_ids": _get("worker_id")},
    constants={"sources": SRC_RUNNING.db},
    reply="started",
    notice=True,
)
# The hot path, a lighter statement of its own: no retry decision, no failure row.
_SUCCEEDED = _completion_step(
    "complete_successes",
    lambda req: (c for c in req.completed if c.success and not c.cancel_step),
    {"results": _result_text},
    {"sources": SRC_SUCCESS.db},
)
# RETRYING or FAILURE (CANCELLED while a cancel is requested), decided in SQL.
_FAILED = _completion_step(
    "fail_attempts",
    lambda req: (c for c in req.completed if not c.success and not c.cancel_step),
    {
        "failure_types": _failure_type,
        "failure_messages": _get("failure.message"),
        "tracebacks": _get("failure.traceback"),
        "retryable": _get("retryable"),
        "delays_ms": _get("retry_delay_ms"),
        "max_retries": _get("max_retries"),
        "throttled": _get("failure.throttled"),
    },
    {
        "max_uncharged": MAX_UNCHARGED,
        # Leased ones: a FAILURE goes back to RETRYING only by a breaker's refund (sql/refunds.sql).
        "retrying_sources": SRC_RETRYING_LEASED.db,
        "failure_sources": SRC_FAILURE.db,
        "cancelled_sources": SRC_CANCELLED_LEASED.db,
    },
)
# Stopped by a cancel request (step FLAG or ASYNCIO): CANCELLED.
_STOPPED = _completion_step(
    "cancel_attempts",
    lambda req: (c for c in req.completed if c.cancel_step),
    {"steps": _get("cancel_step")},
    {"sources": SRC_CANCELLED_LEASED.db},
)
# Back to QUEUED as a new attempt that spends no retry.
_RELEASED = _Step(
    statement="release_attempts",
    entries=_get("released"),
    columns={"resume": _get("resume_requested")},
    constants={"queued_sources": SRC_QUEUED_LEASED.db, "cancelled_sources": SRC_CANCELLED_LEASED.db},
    reply="released",
    requeues=True,
)
_DIED = _Step(
    statement="die_attempts",
    entries=_get("died"),
    columns={
        "started": _get("started"),
        "delays_ms": _get("retry_delay_ms"),
        "max_retries": _get("max_retries"),
        "max_rescues": _get("max_rescues"),
        "cancel_steps": _get("cancel_step"),
    },
    constants={
        "message": DIED_MESSAGE,
        "queued_sources": SRC_QUEUED_LEASED.db,
        "retrying_sources": SRC_RETRYING_LEASED.db,
        "failure_sources": SRC_FAILURE_LEASED.db,
        "cancelled_sources": SRC_CANCELLED_LEASED.db,
    },
    reply="died",
    requeues=True,
)
# Late outcomes are told from the rows as the outcomes left them, before a
# release or a death of the same attempt moves it on.
_BEFORE_LATE = (_STARTED, _SUCCEEDED, _FAILED, _STOPPED)
_AFTER_LATE = (_RELEASED, _DIED)
_STEPS = _BEFORE_LATE + _AFTER_LATE


@dataclasses.dataclass
class _Drain:
    """What the statements of one drain applied, per request and in all."""

    replies: list[leases_pb2.ReportReply]
    asked: list[int]
    applied: list[int]
    events: list[event_pb2.Event] = dataclasses.field(default_factory=list)
    finals: list[task_record_pb2.TaskRecord] = dataclasses.field(default_factory=list)
    # Final rows that only had a late outcome noted (Outcome.refreshed).
    refreshed: list[task_record_pb2.TaskRecord] = dataclasses.field(default_factory=list)
    # Applied rows of tasks that carry a trace context (Outcome.traced), while tracing is on.
    traced: list[task_record_pb2.TaskRecord] = dataclasses.field(default_factory=list)
    # Released or died rows (the QUEUED ones are published after COMMIT).
    requeued: list[task_record_pb2.TaskRecord] = dataclasses.field(default_factory=list)
    # A sampled task's stamps, for its final event.
    trips: dict[str, hops.HopStamps] = dataclasses.field(default_factory=dict)
    # Each outcome statement's refs and the rows it applied (for late ones).
    outcomes: list[tuple[_Refs, list[asyncpg.Record]]] = dataclasses.field(default_factory=list)
    # Outcomes whose sender had revoked their lease already (Completion.revoked): late.
    revoked: set[tuple[str, int, str]] = dataclasses.field(default_factory=set)


def alone(reqs: list[leases_pb2.ReportRequest]) -> bool:
    """Whether ``apply_report`` writes these with one statement (the committer's
    ``Alone``): their entries are all of one kind. A late outcome's notes may
    follow; they stand alone too (the outcome they note was refused)."""
    kinds = 0
    for step in _STEPS:
        if any(True for req in reqs for _ in step.entries(req)):
            kinds += 1
            if kinds > 1:
                return False
    return True


async def apply_report(db: Db, reqs: list[leases_pb2.ReportRequest]) -> Outcome:
    n = len(reqs)
    drain = _Drain(replies=[leases_pb2.ReportReply() for _ in reqs], asked=[0] * n, applied=[0] * n)
    for step in _BEFORE_LATE:
        await _apply(db, reqs, step, drain)
    await _note_late(db, drain)
    for step in _AFTER_LATE:
        await _apply(db, reqs, step, drain)
    for reply, asked, applied in zip(drain.replies, drain.asked, drain.applied, strict=True):
        reply.refused = asked - applied
        db.stats.refused += reply.refused
    # Released or unstarted-dead attempts are QUEUED again: their refs go to the
    # scheduler's lanes right after COMMIT (requeues.py), not at its fallback poll.
    return Outcome(
        replies=list(drain.replies),
        events=drain.events,
        finals=drain.finals,
        refreshed=drain.refreshed,
        traced=drain.traced,
        messages=released_message(drain.requeued),
        sampled=_carry_trips(drain.events, drain.trips) if drain.trips else [],
    )


async def _apply(db: Db, reqs: list[leases_pb2.ReportRequest], step: _Step, drain: _Drain) -> None:
    """One statement for every entry of ``step``'s kind in the drain."""
    refs = _Refs()
    kept: list[Any] = []
    # Per-entry work is on the hot path: the step's fields are read once.
    add, keep, ref_of = refs.add, kept.append, step.ref
    counted, outcome, asked, trips = not step.notice, step.outcome, drain.asked, drain.trips
    for i, req in enumerate(reqs):
        for entry in step.entries(req):
            if counted:
                asked[i] += 1
            if outcome and entry.hops:
                trips[entry.ref.task_id] = entry.hops
            if outcome and getattr(entry, "revoked", False):  # Completion only
                # Never applied, only counted (_note_late): its sender ended the lease
                # already, and an UPDATE given two rows for one task (its end beside it
                # in the drain, say a timeout's) applies either of them.
                tid = norm_uuid(entry.ref.task_id)
                if tid is not None:
                    drain.revoked.add((tid, entry.ref.attempt, entry.ref.lease_token))
                continue
            if add(i, entry if ref_of is None else ref_of(entry)):
                keep(entry)
    if not kept:
        return
    kept = refs.in_id_order(kept)
    rows = await _run(db, step, refs, {c: list(map(read, kept)) for c, read in step.columns.items()})
    if outcome:
        drain.outcomes.append((refs, rows))
    if step.notice:
        _land_notices(rows, refs, step, drain)
    else:
        _land_records(rows, refs, step, drain)


def _land_notices(rows: list[asyncpg.Record], refs: _Refs, step: _Step, drain: _Drain) -> None:
    """Each applied notice back to the request that sent it, and its event."""
    claim, field, replies, events = refs.claim, step.reply, drain.replies, drain.events
    for row in rows:
        # The row's attempt is the notice's: the statement is fenced on it.
        j = claim(row["id"], row["attempt"], row["ref_token"])
        if j is not None:
            getattr(replies[j], field).append(row["id"])
            events.append(event_for_row(row))


def _land_records(rows: list[asyncpg.Record], refs: _Refs, step: _Step, drain: _Drain) -> None:
    """Each applied row back to the request that named its attempt, as a record and its event."""
    claim, field, replies, applied = refs.claim, step.reply, drain.replies, drain.applied
    events, finals = drain.events, drain.finals
    requeued = drain.requeued if step.requeues else None
    traced = drain.traced if tracing.enabled() else None
    ordered = in_record_order(rows)
    for row in rows:
        j = claim(row["id"], row["ref_attempt"], row["ref_token"])
        if j is None:
            continue
        getattr(replies[j], field).append(row["id"])
        applied[j] += 1
        rec, ev = record_and_event(row, ordered=ordered)
        events.append(ev)
        if requeued is not None:
            requeued.append(rec)
        if traced is not None and rec.trace_headers:
            traced.append(rec)
        if rec.state in FINAL_VALUES:  # for a release: a cancel requested before it
            finals.append(rec)


async def _run(db: Db, step: _Step, refs: _Refs, columns: Mapping[str, list[Any]]) -> list[asyncpg.Record]:
    """``step``'s statement for ``refs``, with one array per column of ``step``."""
    values = {c: text_array(v) if c in _LITERAL_COLUMNS else v for c, v in columns.items()}
    return await db.fetch(
        step.statement,
        ids=refs.ids,
        attempts=refs.attempts,
        tokens=text_array(refs.tokens),
        **values,
        **step.constants,
    )


async def die(db: Db, refs: _Refs, **columns: list[Any]) -> list[asyncpg.Record]:
    """Deaths of the attempts of ``refs`` outside a report (lapsed leases):
    ``columns`` as a report's died entries give them (``_DIED.columns``)."""
    return await _run(db, _DIED, refs, columns)


async def _note_late(db: Db, drain: _Drain) -> None:
    """Count and note the outcomes fencing refused because their attempt was
    superseded (a newer attempt or lease holds the row), or because a cancel
    ended the task as "not started" while the body was in its start-notice
    delay: the body ran, or because the sender had revoked the lease already (a
    remote worker's outcome after its cancel deadline or timeout). Every re-run
    is a new attempt (a rescue or a release moves the number on), so an older
    attempt number is what tells. Not late: a
    duplicate within the drain, a re-sent report whose first copy committed
    (same attempt, lease cleared)."""
    refused = _refused(drain.outcomes) | drain.revoked
    if not refused:
        return
    now = {r["id"]: r for r in await db.fetch("attempts_now", ids=sorted({tid for tid, _, _ in refused}))}
    late = sorted(
        (tid, attempt)
        for tid, attempt, token in refused
        if (row := now.get(tid)) is not None
        and (
            row["attempt"] != attempt
            or row["lease_token"] not in ("", token)
            or row["cancelled_unstarted"]
            or (tid, attempt, token) in drain.revoked
        )
    )
    if not late:
        return
    await db.fetch("bump_counter", name="late_completions", delta=len(late))
    noted = await db.fetch("note_late_reports", ids=[t for t, _ in late], attempts=[a for _, a in late])
    # A final row's cached record must show the note too; the task did not finish again.
    drain.refreshed.extend(r for r in map(record_from_row, noted) if r.state in FINAL_VALUES)


def _carry_trips(
    events: list[event_pb2.Event], trips: dict[str, hops.HopStamps]
) -> list[task_record_pb2.TaskRecord]:
    """Put each sampled task's stamps on its final event's record. That record
    may be the very object the cache is given (``record_and_event``), and stamps
    are not part of a task: the event gets a copy of its own."""
    out: list[task_record_pb2.TaskRecord] = []
    for ev in events:
        trip = trips.get(ev.task_id)
        if trip is not None and ev.HasField("record"):
            stamped = task_record_pb2.TaskRecord()
            stamped.CopyFrom(ev.record)
            stamped.hops.extend(trip)
            ev.ClearField("record")  # detaches the old record: whoever holds it keeps it unstamped
            ev.record.CopyFrom(stamped)
            out.append(ev.record)
    return out


def _refused(notes: list[tuple[_Refs, list[asyncpg.Record]]]) -> set[tuple[str, int, str]]:
    """The refs asked for that no statement applied.

    A statement applies a row once and returns it with the ref that matched, so
    one that returns as many rows as it was given refs applied all of them:
    when every statement did (the common case) nothing was refused, and no set
    of refs is built."""
    if all(len(rows) == len(refs.ids) for refs, rows in notes):
        return set()
    asked: set[tuple[str, int, str]] = set()
    applied: set[tuple[str, int, str]] = set()
    for refs, rows in notes:
        asked.update(zip(refs.ids, refs.attempts, refs.tokens, strict=True))
        applied.update((r["id"], r["ref_attempt"], r["ref_token"]) for r in rows)
    return asked - applied
