"""One handler per ``KIND_STORE_*`` kind.

Writes are validated here, then queued to the ``Committer`` whose appliers (the
``apply_*`` functions) turn a group of requests of one kind into one multi-row
statement. Reads go to the pool directly (final records from the cache).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from collections.abc import Iterable
from typing import Any

import asyncpg

from taskyard.bus.v1 import envelope_pb2, event_pb2, store_pb2, task_record_pb2
from taskyard.core import errors, ids, states
from taskyard.core.errors import FieldViolation
from taskyard.core.priority import Priority
from taskyard.core.states import TaskState

from .cache import ResultCache
from .committer import Db, Outcome, Stats
from .queries import Q
from .records import (
    event,
    event_for_record,
    event_for_row,
    queued_ref,
    record_from_row,
    state_value,
)

S = TaskState
LIST_DEFAULT_LIMIT = 100
LIST_MAX_LIMIT = 1000
LOAD_DEFAULT_LIMIT = 1000
LOAD_MAX_LIMIT = 10_000
RESCUE_DEFAULT_LIMIT = 1000
PROMOTE_DEFAULT_LIMIT = 1000
TASK_NAMES_DEFAULT_AGE_MS = 60_000
DIED_MESSAGE = "the worker process died while running the attempt"


def _db_states(items: Iterable[TaskState]) -> list[str]:
    return states.db_names(tuple(items))


# Allowed source states, from the one transition table.
SRC_ASSIGNED = _db_states(states.sources_of(S.ASSIGNED))
SRC_RUNNING = _db_states(states.sources_of(S.RUNNING))
SRC_SUCCESS = _db_states(states.sources_of(S.SUCCESS))
SRC_RETRYING = _db_states(states.sources_of(S.RETRYING))
SRC_FAILURE = _db_states(states.sources_of(S.FAILURE))
# Releases and deaths only ever concern leased attempts.
SRC_QUEUED_LEASED = _db_states(set(states.sources_of(S.QUEUED)) & states.LEASED_STATES)
SRC_RETRYING_LEASED = _db_states(set(states.sources_of(S.RETRYING)) & states.LEASED_STATES)
SRC_FAILURE_LEASED = _db_states(set(states.sources_of(S.FAILURE)) & states.LEASED_STATES)
SRC_CANCEL_NOW = _db_states(set(states.sources_of(S.CANCELLED)) - {S.RUNNING})
SRC_PROMOTE = _db_states(set(states.sources_of(S.QUEUED)) & {S.SCHEDULED, S.RETRYING})

_INITIAL_VALUES = frozenset(int(s) for s in states.INITIAL_STATES)
_FINAL_VALUES = frozenset(int(s) for s in states.FINAL_STATES)


# --- helpers ----------------------------------------------------------------
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def norm_uuid(value: str) -> str | None:
    """The canonical text of a UUID, or None when it is not one."""
    if _CANONICAL_UUID.fullmatch(value):  # the common case: already canonical
        return value
    try:
        return str(uuid.UUID(value))
    except (ValueError, AttributeError, TypeError):
        return None


def _bad_page_token(field: str, why: str) -> errors.TaskyardError:
    import grpc

    return errors.TaskyardError(
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_PAGE_TOKEN",
        f"{field} is not a valid page token: {why}",
        (FieldViolation(field=field, description=f"not a token returned by a previous call ({why})"),),
    )


def encode_cursor(*parts: object) -> str:
    raw = ":".join(str(p) for p in parts).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(token: str, tag: str, n: int, field: str) -> list[str]:
    try:
        padded = token + "=" * (-len(token) % 4)
        raw = base64.urlsafe_b64decode(padded.encode("ascii")).decode("ascii")
    except (binascii.Error, UnicodeError, ValueError) as exc:
        raise _bad_page_token(field, "undecodable") from exc
    parts = raw.split(":")
    if len(parts) != n + 1 or parts[0] != tag:
        raise _bad_page_token(field, "wrong shape")
    return parts[1:]


def _int_part(value: str, field: str) -> int:
    try:
        return int(value)
    except ValueError as exc:
        raise _bad_page_token(field, "not a number") from exc


def _uuid_part(value: str, field: str) -> str:
    u = norm_uuid(value)
    if u is None:
        raise _bad_page_token(field, "bad id")
    return u


def _json_text(data: bytes, default: str, field: str, violations: list[FieldViolation]) -> str:
    if not data:
        return default
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        violations.append(FieldViolation(field=field, description="must be UTF-8 JSON"))
        return default


# --- validation of inserts ------------------------------------------------------
def validate_insert(req: store_pb2.InsertTasksRequest) -> list[tuple[Any, ...]]:
    """Check and normalize the records; returns one parameter tuple per record."""
    out: list[tuple[Any, ...]] = []
    violations: list[FieldViolation] = []
    for i, r in enumerate(req.tasks):
        f = f"tasks[{i}]"
        tid = norm_uuid(r.id)
        if tid is None:
            violations.append(FieldViolation(field=f"{f}.id", description="must be a UUID"))
        if not r.name:
            violations.append(FieldViolation(field=f"{f}.name", description="must not be empty"))
        parent = norm_uuid(r.parent_id) if r.parent_id else None
        if r.parent_id and parent is None:
            violations.append(FieldViolation(field=f"{f}.parent_id", description="must be a UUID"))
        root = norm_uuid(r.root_id) if r.root_id else None
        if r.root_id and root is None:
            violations.append(FieldViolation(field=f"{f}.root_id", description="must be a UUID"))
        if r.priority not in (0, 1, 2, 3, 4):
            violations.append(FieldViolation(field=f"{f}.priority", description="unknown priority"))
        state = r.state or int(S.QUEUED)
        if state not in _INITIAL_VALUES:
            violations.append(
                FieldViolation(
                    field=f"{f}.state", description="a new task must be PENDING, QUEUED or SCHEDULED"
                )
            )
            state = int(S.QUEUED)
        args = _json_text(r.args_json, "[]", f"{f}.args_json", violations)
        kwargs = _json_text(r.kwargs_json, "{}", f"{f}.kwargs_json", violations)
        out.append(
            (
                tid or "",
                r.name,
                args,
                kwargs,
                int(Priority.from_wire(r.priority)) if r.priority in (0, 1, 2, 3, 4) else 3,
                r.queue or "default",
                r.timeout_ms,
                r.max_retries,
                r.request_id,
                parent,
                root,
                json.dumps(dict(r.labels)) if r.labels else "{}",
                TaskState(state).name,
                max(1, r.attempt),
                r.created_at_us,
                r.run_at_us,
                json.dumps(dict(r.trace_headers)) if r.trace_headers else "{}",
            )
        )
    if violations:
        raise errors.invalid(violations)
    return out


# --- appliers (run inside the group-commit transaction) -------------------------
async def apply_insert(
    db: Db, reqs: list[tuple[store_pb2.InsertTasksRequest, list[tuple[Any, ...]]]]
) -> Outcome:
    rows = [row for _, params in reqs for row in params]
    leases = _fast_path_leases(reqs)
    if rows and leases:
        cols = [list(c) for c in zip(*rows, strict=True)]
        plan = [leases.get(row[0], ("", "", 0)) for row in rows]
        cols += [[p[0] for p in plan], [p[1] for p in plan], [p[2] for p in plan]]
        created = await db.fetch("insert_tasks_leasing", *cols)
    elif rows:
        created = await db.fetch("insert_tasks", *[list(c) for c in zip(*rows, strict=True)])
    else:
        created = []
    created_by_id = {r["id"]: r for r in created}
    claimed: set[str] = set()
    replies: list[store_pb2.InsertTasksReply] = []
    events: list[event_pb2.Event] = []
    dups: list[tuple[store_pb2.InsertedTask, str, str]] = []
    for _, params in reqs:
        reply = store_pb2.InsertTasksReply()
        for p in params:
            tid, request_id = p[0], p[8]
            row = created_by_id.get(tid)
            if row is not None and tid not in claimed:
                claimed.add(tid)
                reply.tasks.add(
                    id=tid,
                    state=state_value(row["state"]),
                    created=True,
                    priority=row["priority"],
                    name=row["name"],
                    queue=row["queue"],
                )
                events.append(
                    event(
                        "task.scheduled" if row["state"] == "SCHEDULED" else "task.queued",
                        task_id=tid,
                        state="SCHEDULED" if row["state"] == "SCHEDULED" else "QUEUED",
                        attempt=row["attempt"],
                        name=row["name"],
                        at_us=row["created_at_us"],
                        priority=row["priority"],
                    )
                )
                if row["state"] == "ASSIGNED":  # leased at birth (fast path)
                    rec = record_from_row(row)
                    reply.leased.append(rec)
                    events.append(event_for_record(rec, "task.assigned"))
            else:
                item = reply.tasks.add(id=tid, created=False)
                dups.append((item, tid, request_id))
        replies.append(reply)
    if dups:
        found = await db.fetch(
            "lookup_duplicates",
            list({tid for _, tid, _ in dups}),
            list({rid for _, _, rid in dups if rid}),
        )
        by_id = {r["id"]: r for r in found}
        by_request = {r["request_id"]: r for r in found if r["request_id"]}
        for item, tid, request_id in dups:
            existing = (by_request.get(request_id) if request_id else None) or by_id.get(tid)
            if existing is not None:
                item.id = existing["id"]
                item.state = state_value(existing["state"])  # type: ignore[assignment]
                item.priority = existing["priority"]
                item.name = existing["name"]
                item.queue = existing["queue"]
    return Outcome(replies=list(replies), events=events)


def _fast_path_leases(
    reqs: list[tuple[store_pb2.InsertTasksRequest, list[tuple[Any, ...]]]],
) -> dict[str, tuple[str, str, int]]:
    """task id -> (lease token, pool, lease ms) for the scheduler's fast path."""
    out: dict[str, tuple[str, str, int]] = {}
    for req, _ in reqs:
        if not req.pool_id:
            continue
        for lease in req.leases:
            tid = norm_uuid(lease.task_id)
            if tid is not None and tid not in out:
                out[tid] = (lease.lease_token or ids.new_lease_token(), req.pool_id, req.lease_ms)
    return out


async def apply_lease(db: Db, reqs: list[tuple[store_pb2.LeaseTasksRequest, int]]) -> Outcome:
    t_ids: list[str] = []
    tokens: list[str] = []
    pools: list[str] = []
    lease_ms: list[int] = []
    owner: dict[tuple[str, str], int] = {}
    for i, (req, ms) in enumerate(reqs):
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
    replies = [store_pb2.LeaseTasksReply() for _ in reqs]
    events: list[event_pb2.Event] = []
    if t_ids:
        for row in await db.fetch("lease_tasks", t_ids, tokens, pools, lease_ms, SRC_ASSIGNED):
            rec = record_from_row(row)
            replies[owner[(rec.id, rec.lease_token)]].tasks.append(rec)
            events.append(event_for_record(rec, "task.assigned"))
    return Outcome(replies=list(replies), events=events)


class _Refs:
    """Merged attempt refs of many requests, and who asked for each."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.attempts: list[int] = []
        self.tokens: list[str] = []
        self.owner: dict[tuple[str, int, str], list[int]] = {}
        self.asked: list[int] = []

    def add(self, i: int, ref: task_record_pb2.AttemptRef) -> bool:
        while len(self.asked) <= i:
            self.asked.append(0)
        self.asked[i] += 1
        tid = norm_uuid(ref.task_id)
        if tid is None:
            return False
        self.owner.setdefault((tid, ref.attempt, ref.lease_token), []).append(i)
        self.ids.append(tid)
        self.attempts.append(ref.attempt)
        self.tokens.append(ref.lease_token)
        return True

    def claim(self, tid: str, attempt: int, token: str) -> int | None:
        """The request an applied row belongs to (the first that asked)."""
        owners = self.owner.get((tid, attempt, token))
        return owners.pop(0) if owners else None


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


async def apply_renew(db: Db, reqs: list[tuple[store_pb2.RenewLeasesRequest, int]]) -> Outcome:
    replies = [store_pb2.RenewLeasesReply() for _ in reqs]
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
            rows = await db.fetch("renew_leases", refs.ids, refs.attempts, refs.tokens, ms)
            for row in rows:
                for i in refs.owner.get((row["id"], row["ref_attempt"], row["ref_token"]), []):
                    kept.add((i, row["id"], row["ref_attempt"], row["ref_token"]))
        for i in members:
            for ref in reqs[i][0].refs:
                tid = norm_uuid(ref.task_id)
                if tid is not None and (i, tid, ref.attempt, ref.lease_token) not in kept:
                    replies[i].lost.append(ref.task_id)
    return Outcome(replies=list(replies))


async def apply_rescue(db: Db, reqs: list[store_pb2.RescueRequest]) -> Outcome:
    replies: list[store_pb2.RescueReply] = []
    events: list[event_pb2.Event] = []
    finals: list[task_record_pb2.TaskRecord] = []
    for req in reqs:
        reply = store_pb2.RescueReply()
        limit = req.limit if req.limit > 0 else RESCUE_DEFAULT_LIMIT
        lapsed = await db.fetch("lapsed_leases", limit)
        if lapsed:
            refs = _Refs()
            for r in lapsed:
                refs.ids.append(str(r["id"]))
                refs.attempts.append(r["attempt"])
                refs.tokens.append(r["lease_token"])
            started = [bool(r["started"]) for r in lapsed]
            delays = [max(0, req.retry_delay_ms)] * len(lapsed)
            budgets = [req.default_max_retries] * len(lapsed)
            for _, rec in await _die(db, refs, started, delays, budgets):
                (reply.requeued if rec.state == int(S.QUEUED) else reply.failed).append(rec)
                events.append(event_for_record(rec))
                if rec.state in _FINAL_VALUES:
                    finals.append(rec)
        replies.append(reply)
    return Outcome(replies=list(replies), events=events, finals=finals)


async def apply_cancel(db: Db, reqs: list[store_pb2.CancelTasksRequest]) -> Outcome:
    replies = [store_pb2.CancelTasksReply() for _ in reqs]
    events: list[event_pb2.Event] = []
    finals: list[task_record_pb2.TaskRecord] = []
    by_reason: dict[str, list[int]] = {}
    for i, req in enumerate(reqs):
        by_reason.setdefault(req.reason, []).append(i)
    for reason, members in by_reason.items():
        wanted = sorted({u for i in members for x in reqs[i].ids if (u := norm_uuid(x)) is not None})
        cancelled: dict[str, task_record_pb2.TaskRecord] = {}
        flagged: dict[str, task_record_pb2.TaskRecord] = {}
        current: dict[str, task_record_pb2.TaskRecord] = {}
        if wanted:
            for row in await db.fetch("cancel_now", wanted, SRC_CANCEL_NOW, reason):
                rec = record_from_row(row)
                cancelled[rec.id] = rec
                events.append(event_for_record(rec, "task.cancelled"))
                finals.append(rec)
            rest = [t for t in wanted if t not in cancelled]
            if rest:
                for row in await db.fetch("cancel_flag", rest, reason):
                    rec = record_from_row(row)
                    flagged[rec.id] = rec
                    events.append(event_for_record(rec, "task.cancel_requested"))
                rest = [t for t in rest if t not in flagged]
            if rest:
                for row in await db.fetch("cancel_lookup", rest):
                    rec = record_from_row(row)
                    current[rec.id] = rec
        reported: set[str] = set()
        for i in members:
            reply = replies[i]
            for raw in reqs[i].ids:
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
                    if found.state in _FINAL_VALUES:
                        out.already_final = True
                    # else: moved under us (not cancellable, e.g. PENDING never is): nothing changed
                else:
                    out.not_found = True
                if tid is not None and found is not None:
                    reported.add(tid)
                    reply.tasks.append(found)
    return Outcome(replies=list(replies), events=events, finals=finals)


async def apply_promote(db: Db, reqs: list[store_pb2.PromoteDueRequest]) -> Outcome:
    replies: list[store_pb2.PromoteDueReply] = []
    events: list[event_pb2.Event] = []
    for req in reqs:
        limit = req.limit if req.limit > 0 else PROMOTE_DEFAULT_LIMIT
        reply = store_pb2.PromoteDueReply()
        for row in await db.fetch("promote_due", limit, SRC_PROMOTE):
            reply.tasks.append(queued_ref(row))
            events.append(
                event(
                    "task.queued",
                    task_id=row["id"],
                    state="QUEUED",
                    attempt=row["attempt"],
                    name=row["name"],
                    at_us=row["at_us"],
                    worker_id=row["worker_id"],
                    priority=row["priority"],
                )
            )
        reply.next_due_us = int(await db.fetchval("next_due") or 0)
        replies.append(reply)
    return Outcome(replies=list(replies), events=events)


async def apply_heartbeat(db: Db, reqs: list[store_pb2.HeartbeatRequest]) -> Outcome:
    last: dict[str, store_pb2.HeartbeatRequest] = {}
    for req in reqs:
        if req.pool_id:
            last[req.pool_id] = req
    events: list[event_pb2.Event] = []
    if last:
        hs = list(last.values())
        rows = await db.fetch(
            "upsert_workers",
            [h.pool_id for h in hs],
            [h.server_name for h in hs],
            [h.max_workers for h in hs],
            [h.active_workers for h in hs],
            [h.idle_workers for h in hs],
            [h.running_tasks for h in hs],
            [h.is_running for h in hs],
            [json.dumps(list(h.task_names)) for h in hs],
            [h.state for h in hs],
            [h.rss_bytes for h in hs],
            [h.capacity for h in hs],
        )
        for row in rows:
            events.append(event("worker.heartbeat", worker_id=row["pool_id"], at_us=row["at_us"]))
    return Outcome(replies=[store_pb2.HeartbeatReply() for _ in reqs], events=events)


# --- reads ------------------------------------------------------------------------
class Reads:
    def __init__(self, pool: asyncpg.Pool, cache: ResultCache, stats: Stats) -> None:
        self.pool = pool
        self.cache = cache
        self.stats = stats

    async def get(self, req: store_pb2.GetTasksRequest) -> store_pb2.GetTasksReply:
        found: dict[str, task_record_pb2.TaskRecord] = {}
        misses: list[str] = []
        for raw in req.ids:
            tid = norm_uuid(raw)
            if tid is None or tid in found:
                continue
            rec = self.cache.get(tid)
            if rec is not None:
                found[tid] = rec
            else:
                misses.append(tid)
        if misses:
            self.stats.statements += 1
            for row in await self.pool.fetch(Q["get_tasks"], misses):
                rec = record_from_row(row)
                found[rec.id] = rec
                self.cache.put(rec)
        reply = store_pb2.GetTasksReply()
        seen: set[str] = set()
        for raw in req.ids:
            tid = norm_uuid(raw)
            if tid is not None and tid in found and tid not in seen:
                seen.add(tid)
                reply.tasks.append(found[tid])
        return reply

    async def list(self, req: store_pb2.ListTasksRequest) -> store_pb2.ListTasksReply:
        if req.limit < 0 or req.limit > LIST_MAX_LIMIT:
            raise errors.invalid(
                [FieldViolation(field="page_size", description=f"must be between 1 and {LIST_MAX_LIMIT}")]
            )
        limit = req.limit or LIST_DEFAULT_LIMIT
        c_us: int | None = None
        c_id: str | None = None
        if req.cursor:
            us, cid = decode_cursor(req.cursor, "l1", 2, "page_token")
            c_us, c_id = _int_part(us, "page_token"), _uuid_part(cid, "page_token")
        if any(s not in range(1, 10) for s in req.states):
            raise errors.invalid([FieldViolation(field="states", description="unknown state")])
        if req.priority not in (0, 1, 2, 3, 4):
            raise errors.invalid([FieldViolation(field="priority", description="unknown priority")])
        state_names = [TaskState(s).name for s in req.states] or None
        self.stats.statements += 1
        rows = await self.pool.fetch(
            Q["list_tasks"], state_names, req.name, req.queue, req.priority, c_us, c_id, limit + 1
        )
        reply = store_pb2.ListTasksReply()
        for row in rows[:limit]:
            reply.tasks.append(record_from_row(row))
        if len(rows) > limit:
            last = reply.tasks[-1]
            reply.next_cursor = encode_cursor("l1", last.created_at_us, last.id)
        return reply

    async def load_queued(self, req: store_pb2.LoadQueuedRequest) -> store_pb2.LoadQueuedReply:
        limit = min(req.limit, LOAD_MAX_LIMIT) if req.limit > 0 else LOAD_DEFAULT_LIMIT
        prio: int | None = None
        c_us: int | None = None
        c_id: str | None = None
        if req.cursor:
            p, us, cid = decode_cursor(req.cursor, "q1", 3, "cursor")
            prio, c_us, c_id = _int_part(p, "cursor"), _int_part(us, "cursor"), _uuid_part(cid, "cursor")
        self.stats.statements += 1
        rows = await self.pool.fetch(Q["load_queued"], prio, c_us, c_id, limit + 1)
        reply = store_pb2.LoadQueuedReply()
        for row in rows[:limit]:
            reply.tasks.append(queued_ref(row))
        if len(rows) > limit:
            last = reply.tasks[-1]
            reply.next_cursor = encode_cursor("q1", last.priority, last.created_at_us, last.id)
        return reply

    async def task_names(self, req: store_pb2.TaskNamesRequest) -> store_pb2.TaskNamesReply:
        age = req.max_age_ms if req.max_age_ms > 0 else TASK_NAMES_DEFAULT_AGE_MS
        self.stats.statements += 1
        rows = await self.pool.fetch(Q["task_names"], age)
        return store_pb2.TaskNamesReply(names=[r["name"] for r in rows])


KINDS = envelope_pb2.Kind
