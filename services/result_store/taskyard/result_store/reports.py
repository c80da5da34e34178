"""The report applier: started, completed, released and died attempts
(runs inside the group-commit transaction)."""

from __future__ import annotations

import asyncpg

from taskyard.bus.v1 import event_pb2, store_pb2, task_record_pb2
from taskyard.core import hops
from taskyard.core.states import FINAL_VALUES

from .committer import Db, Outcome
from .records import event_for_record, event_for_row, in_record_order, record_and_event, record_from_row
from .refs import _Refs
from .requeues import released_message
from .transitions import (
    SRC_CANCELLED_LEASED,
    SRC_FAILURE,
    SRC_FAILURE_LEASED,
    SRC_QUEUED_LEASED,
    SRC_RETRYING,
    SRC_RETRYING_LEASED,
    SRC_RUNNING,
    SRC_SUCCESS,
)
from .validation import text_array

DIED_MESSAGE = "the worker process died while running the attempt"


async def apply_report(db: Db, reqs: list[store_pb2.ReportRequest]) -> Outcome:
    n = len(reqs)
    replies = [store_pb2.ReportReply() for _ in reqs]
    applied = [0] * n
    asked = [0] * n
    events: list[event_pb2.Event] = []
    finals: list[task_record_pb2.TaskRecord] = []
    requeued: list[task_record_pb2.TaskRecord] = []  # released/died rows (QUEUED ones published)
    # Completions: each statement's refs and the rows it applied (for late_completions).
    c_notes: list[tuple[_Refs, list[asyncpg.Record]]] = []

    # 1. started: ASSIGNED -> RUNNING. Not counted in `refused`: a start notice
    # that arrives after its attempt's outcome is expected (they travel apart).
    refs = _Refs()
    workers: list[str] = []
    for i, req in enumerate(reqs):
        for ref in req.started:
            if refs.add(i, ref):
                workers.append(ref.worker_id)
    if refs.ids:
        rows = await db.fetch(
            "start_attempts",
            refs.ids,
            refs.attempts,
            text_array(refs.tokens),
            text_array(workers),
            SRC_RUNNING,
        )
        for row in rows:
            j = refs.claim(row["id"], row["attempt"], row["ref_token"])
            if j is None:
                continue
            replies[j].started.append(row["id"])
            events.append(event_for_row(row))

    # 2a. completed successfully: SUCCESS (the hot path, a lighter statement)
    trips: dict[str, hops.HopStamps] = {}  # a sampled task's stamps, for its final event
    refs = _Refs()
    s_result: list[str] = []
    s_worker: list[str] = []
    s_started: list[int] = []
    for i, req in enumerate(reqs):
        for c in req.completed:
            if not c.success or c.cancel_step:
                continue
            asked[i] += 1
            if c.hops:
                trips[c.ref.task_id] = c.hops
            if refs.add(i, c.ref):
                s_result.append(c.result_json.decode("utf-8", "replace") if c.result_json else "null")
                s_worker.append(c.ref.worker_id)
                s_started.append(c.started_at_us)
    if refs.ids:
        rows = await db.fetch(
            "complete_successes",
            refs.ids,
            refs.attempts,
            text_array(refs.tokens),
            s_result,
            text_array(s_worker),
            s_started,
            SRC_SUCCESS,
        )
        _claim_completions(rows, refs, replies, applied, events, finals)
        c_notes.append((refs, rows))

    # 2b. failed: RETRYING / FAILURE, decided in SQL
    refs = _Refs()
    c_success: list[bool] = []
    c_result: list[str] = []
    c_ftype: list[str | None] = []
    c_fmsg: list[str | None] = []
    c_ftb: list[str | None] = []
    c_retryable: list[bool] = []
    c_delay: list[int] = []
    c_worker: list[str] = []
    c_started: list[int] = []
    c_budget: list[int] = []
    for i, req in enumerate(reqs):
        for c in req.completed:
            if c.success or c.cancel_step:
                continue
            asked[i] += 1
            if c.hops:
                trips[c.ref.task_id] = c.hops
            if not refs.add(i, c.ref):
                continue
            c_success.append(False)
            c_result.append("null")
            c_ftype.append(c.failure.type or "Error")
            c_fmsg.append(c.failure.message)
            c_ftb.append(c.failure.traceback)
            c_retryable.append(c.retryable)
            c_delay.append(c.retry_delay_ms)
            c_worker.append(c.ref.worker_id)
            c_started.append(c.started_at_us)
            c_budget.append(c.max_retries)
    if refs.ids:
        rows = await db.fetch(
            "complete_attempts",
            refs.ids,
            refs.attempts,
            refs.tokens,
            c_success,
            c_result,
            c_ftype,
            c_fmsg,
            c_ftb,
            c_retryable,
            c_delay,
            c_worker,
            SRC_SUCCESS,
            SRC_RETRYING,
            SRC_FAILURE,
            c_started,
            c_budget,
            SRC_CANCELLED_LEASED,
        )
        _claim_completions(rows, refs, replies, applied, events, finals)
        c_notes.append((refs, rows))

    # 2c. stopped by a cancel request (step FLAG / ASYNCIO): CANCELLED
    refs = _Refs()
    k_step: list[int] = []
    k_worker: list[str] = []
    k_started: list[int] = []
    for i, req in enumerate(reqs):
        for c in req.completed:
            if not c.cancel_step:
                continue
            asked[i] += 1
            if refs.add(i, c.ref):
                k_step.append(int(c.cancel_step))
                k_worker.append(c.ref.worker_id)
                k_started.append(c.started_at_us)
    if refs.ids:
        rows = await db.fetch(
            "cancel_attempts",
            refs.ids,
            refs.attempts,
            refs.tokens,
            k_step,
            k_worker,
            k_started,
            SRC_CANCELLED_LEASED,
        )
        _claim_completions(rows, refs, replies, applied, events, finals)
        c_notes.append((refs, rows))
    # Completions fencing refused because their attempt was superseded (a newer
    # attempt or lease holds the row), or because a cancel ended the task as "not
    # started" while the body was in its start-notice delay: the body ran, so the
    # refusal is counted and noted on the task's row. Every re-run is a new
    # attempt (a rescue or a release moves the number on), so an older attempt
    # number is what tells. Not late: a duplicate within the drain, a re-sent
    # report whose first copy committed (same attempt, lease cleared).
    refused = _refused(c_notes)
    if refused:
        now = {
            r["id"]: (r["attempt"], r["lease_token"], r["cancelled_unstarted"])
            for r in await db.fetch("attempts_now", sorted({k[0] for k in refused}))
        }
        late = sorted(
            (tid, attempt)
            for tid, attempt, token in refused
            if tid in now and (now[tid][0] != attempt or now[tid][1] not in ("", token) or now[tid][2])
        )
        if late:
            await db.fetch("bump_counter", "late_completions", len(late))
            noted = await db.fetch("note_late_reports", [t for t, _ in late], [a for _, a in late])
            # A final row's cached record must show the note too.
            finals.extend(r for r in map(record_from_row, noted) if r.state in FINAL_VALUES)

    # 3. released: back to QUEUED as a new attempt that spends no retry
    refs = _Refs()
    resume: list[bool] = []
    for i, req in enumerate(reqs):
        for r in req.released:
            asked[i] += 1
            if refs.add(i, r.ref):
                resume.append(r.resume_requested)
    if refs.ids:
        rows = await db.fetch(
            "release_attempts",
            refs.ids,
            refs.attempts,
            refs.tokens,
            resume,
            SRC_QUEUED_LEASED,
            SRC_CANCELLED_LEASED,
        )
        for row in rows:
            j = refs.claim(row["id"], row["ref_attempt"], row["ref_token"])
            if j is None:
                continue
            applied[j] += 1
            rec = record_from_row(row)
            replies[j].released.append(rec.id)
            events.append(event_for_record(rec))
            requeued.append(rec)
            if rec.state in FINAL_VALUES:  # a cancel requested before the release
                finals.append(rec)

    # 4. died
    refs = _Refs()
    started: list[bool] = []
    delays: list[int] = []
    budgets: list[int] = []
    caps: list[int] = []
    steps: list[int] = []
    for i, req in enumerate(reqs):
        for d in req.died:
            asked[i] += 1
            if refs.add(i, d.ref):
                started.append(d.started)
                delays.append(d.retry_delay_ms)
                budgets.append(d.max_retries)
                caps.append(d.max_rescues)
                steps.append(int(d.cancel_step))
    if refs.ids:
        for row, rec in await _die(db, refs, started, delays, budgets, caps, steps):
            j = refs.claim(rec.id, row["ref_attempt"], row["ref_token"])
            if j is None:
                continue
            applied[j] += 1
            replies[j].died.append(rec.id)
            events.append(event_for_record(rec))
            requeued.append(rec)
            if rec.state in FINAL_VALUES:
                finals.append(rec)

    for i in range(n):
        replies[i].refused = asked[i] - applied[i]
        db.stats.refused += replies[i].refused
    # Released or unstarted-dead attempts are QUEUED again: their refs go to the
    # scheduler's lanes right after COMMIT (requeues.py), not at its fallback poll.
    return Outcome(
        replies=list(replies),
        events=events,
        finals=finals,
        messages=released_message(requeued),
        sampled=_carry_trips(events, trips) if trips else [],
    )


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


def _claim_completions(
    rows: list[asyncpg.Record],
    refs: _Refs,
    replies: list[store_pb2.ReportReply],
    applied: list[int],
    events: list[event_pb2.Event],
    finals: list[task_record_pb2.TaskRecord],
) -> None:
    ordered = in_record_order(rows)
    for row in rows:
        j = refs.claim(row["id"], row["ref_attempt"], row["ref_token"])
        if j is None:
            continue
        applied[j] += 1
        rec, ev = record_and_event(row, ordered=ordered)
        replies[j].completed.append(row["id"])
        events.append(ev)
        if rec.state in FINAL_VALUES:
            finals.append(rec)


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


async def _die(
    db: Db,
    refs: _Refs,
    started: list[bool],
    delays: list[int],
    budgets: list[int],
    rescue_caps: list[int],
    cancel_steps: list[int],
) -> list[tuple[asyncpg.Record, task_record_pb2.TaskRecord]]:
    rows = await db.fetch(
        "die_attempts",
        refs.ids,
        refs.attempts,
        refs.tokens,
        started,
        delays,
        [DIED_MESSAGE] * len(refs.ids),
        SRC_QUEUED_LEASED,
        SRC_RETRYING_LEASED,
        SRC_FAILURE_LEASED,
        budgets,
        rescue_caps,
        cancel_steps,
        SRC_CANCELLED_LEASED,
    )
    return [(row, record_from_row(row)) for row in rows]
