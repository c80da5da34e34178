"""The report applier: started, completed, released and died attempts
(runs inside the group-commit transaction)."""

from __future__ import annotations

import asyncpg

from taskyard.bus.v1 import event_pb2, store_pb2, task_record_pb2

from .committer import Db, Outcome
from .records import event_for_record, event_for_row, record_from_row
from .refs import _Refs
from .transitions import (
    _FINAL_VALUES,
    SRC_FAILURE,
    SRC_FAILURE_LEASED,
    SRC_QUEUED_LEASED,
    SRC_RETRYING,
    SRC_RETRYING_LEASED,
    SRC_RUNNING,
    SRC_SUCCESS,
)

DIED_MESSAGE = "the worker process died while running the attempt"


async def apply_report(db: Db, reqs: list[store_pb2.ReportRequest]) -> Outcome:
    n = len(reqs)
    replies = [store_pb2.ReportReply() for _ in reqs]
    applied = [0] * n
    asked = [0] * n
    events: list[event_pb2.Event] = []
    finals: list[task_record_pb2.TaskRecord] = []

    # 1. started: ASSIGNED -> RUNNING. Not counted in `refused`: a start notice
    # that arrives after its attempt's outcome is expected (they travel apart).
    refs = _Refs()
    workers: list[str] = []
    for i, req in enumerate(reqs):
        for ref in req.started:
            if refs.add(i, ref):
                workers.append(ref.worker_id)
    if refs.ids:
        rows = await db.fetch("start_attempts", refs.ids, refs.attempts, refs.tokens, workers, SRC_RUNNING)
        for row in rows:
            j = refs.claim(row["id"], row["attempt"], row["ref_token"])
            if j is None:
                continue
            replies[j].started.append(row["id"])
            events.append(event_for_row(row))

    # 2a. completed successfully: SUCCESS (the hot path, a lighter statement)
    refs = _Refs()
    s_result: list[str] = []
    s_worker: list[str] = []
    s_started: list[int] = []
    for i, req in enumerate(reqs):
        for c in req.completed:
            if not c.success:
                continue
            asked[i] += 1
            if refs.add(i, c.ref):
                s_result.append(c.result_json.decode("utf-8", "replace") if c.result_json else "null")
                s_worker.append(c.ref.worker_id)
                s_started.append(c.started_at_us)
    if refs.ids:
        rows = await db.fetch(
            "complete_successes",
            refs.ids,
            refs.attempts,
            refs.tokens,
            s_result,
            s_worker,
            s_started,
            SRC_SUCCESS,
        )
        _claim_completions(rows, refs, replies, applied, events, finals)

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
            if c.success:
                continue
            asked[i] += 1
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
        )
        _claim_completions(rows, refs, replies, applied, events, finals)

    # 3. released: back to QUEUED, attempt kept
    refs = _Refs()
    resume: list[bool] = []
    for i, req in enumerate(reqs):
        for r in req.released:
            asked[i] += 1
            if refs.add(i, r.ref):
                resume.append(r.resume_requested)
    if refs.ids:
        rows = await db.fetch(
            "release_attempts", refs.ids, refs.attempts, refs.tokens, resume, SRC_QUEUED_LEASED
        )
        for row in rows:
            j = refs.claim(row["id"], row["attempt"], row["ref_token"])
            if j is None:
                continue
            applied[j] += 1
            replies[j].released.append(row["id"])
            events.append(event_for_row(row))

    # 4. died
    refs = _Refs()
    started: list[bool] = []
    delays: list[int] = []
    budgets: list[int] = []
    for i, req in enumerate(reqs):
        for d in req.died:
            asked[i] += 1
            if refs.add(i, d.ref):
                started.append(d.started)
                delays.append(d.retry_delay_ms)
                budgets.append(d.max_retries)
    if refs.ids:
        for row, rec in await _die(db, refs, started, delays, budgets):
            j = refs.claim(rec.id, row["ref_attempt"], row["ref_token"])
            if j is None:
                continue
            applied[j] += 1
            replies[j].died.append(rec.id)
            events.append(event_for_record(rec))
            if rec.state in _FINAL_VALUES:
                finals.append(rec)

    for i in range(n):
        replies[i].refused = asked[i] - applied[i]
        db.stats.refused += replies[i].refused
    return Outcome(replies=list(replies), events=events, finals=finals)


def _claim_completions(
    rows: list[asyncpg.Record],
    refs: _Refs,
    replies: list[store_pb2.ReportReply],
    applied: list[int],
    events: list[event_pb2.Event],
    finals: list[task_record_pb2.TaskRecord],
) -> None:
    for row in rows:
        j = refs.claim(row["id"], row["ref_attempt"], row["ref_token"])
        if j is None:
            continue
        applied[j] += 1
        rec = record_from_row(row)
        replies[j].completed.append(rec.id)
        events.append(event_for_record(rec))
        if rec.state in _FINAL_VALUES:
            finals.append(rec)


async def _die(
    db: Db, refs: _Refs, started: list[bool], delays: list[int], budgets: list[int]
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
    )
    return [(row, record_from_row(row)) for row in rows]
