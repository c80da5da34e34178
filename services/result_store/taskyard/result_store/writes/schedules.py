"""Periodic schedules: the table, and the claim that fires each due run once.

A run is fired in ONE transaction: lock the due rows (``SKIP LOCKED``), compute
each next run (``taskyard.core.schedule``, from the caller's clock), claim with a
guarded UPDATE (``WHERE next_run_at = <due read>``), then insert the runs'
tasks through the usual insert path (``inserts.apply_insert``). However many
schedulers ask at once, only one claim of a due run matches the guard, and its
task commits with it or not at all. Events are published after COMMIT.

These writes are rare (a few per schedule and period), so they run on their own
connection instead of through the group committer.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NamedTuple, ParamSpec, TypeVar

import asyncpg
from google.protobuf.message import Message

from taskyard.bus.v1 import envelope_pb2, event_pb2, schedule_pb2, task_record_pb2, tasks_pb2, tenants_pb2
from taskyard.core import codec, contract, errors, ids, rpc, tenants
from taskyard.core import limits as flow_rules
from taskyard.core import schedule as timing
from taskyard.core.errors import FieldViolation
from taskyard.v1 import limit_pb2 as pub_limit
from taskyard.v1 import schedule_pb2 as pub

from .. import bus_requests, event_log, scopes
from .. import metrics as store_metrics
from ..appliers import Db, Stats
from ..database_errors import OUTAGE
from ..events import EventPublisher
from ..names import DeclaredNames
from ..queries import bind
from ..write_errors import to_taskyard_error
from . import tenant_checks
from .insert_checks import qualify_names, validate_insert
from .insert_row import InsertRow
from .inserts import apply_insert
from .schedule_rows import (
    already_exists,
    bare_names,
    check,
    decode_token,
    encode_token,
    id_and_name,
    overlap,
    run_record,
    schedule_from_row,
    spec_of,
    template_json,
)

log = logging.getLogger(__name__)

P = ParamSpec("P")
Rp = TypeVar("Rp", bound=Message)

K = envelope_pb2
A = schedule_pb2.ScheduleAction
# The event each change logs (event_log.py).
_CHANGE_EVENTS = {
    A.SCHEDULE_ACTION_PAUSE: "schedule.paused",
    A.SCHEDULE_ACTION_RESUME: "schedule.resumed",
    A.SCHEDULE_ACTION_DELETE: "schedule.deleted",
}
FINAL_STATES = frozenset({"SUCCESS", "FAILURE", "CANCELLED"})
DEFAULT_PAGE = 100
MAX_PAGE = 1000
DEFAULT_FIRE_LIMIT = 100
# A schedule whose timing became unusable (say its zone vanished from tzdata)
# is retried this much later instead of blocking the due index.
BROKEN_RETRY_US = 3600 * 1_000_000
CHANGED = "schedule.changed"


class _Claim(NamedTuple):
    """One due run to claim: its next run, and its task (None: skipped)."""

    schedule_id: str
    due_us: int
    next_us: int
    task_id: str | None


class Schedules:
    def __init__(
        self,
        pool: asyncpg.Pool,
        publisher: EventPublisher,
        stats: Stats,
        *,
        names: DeclaredNames,
        max_payload_bytes: int,
    ) -> None:
        self.pool = pool
        self.publisher = publisher
        self.stats = stats
        self.names = names
        self.max_payload_bytes = max_payload_bytes

    async def _check_template(self, s: pub.Schedule, field: str, *, declared: bool) -> None:
        """A schedule's task meets the rules of a submission (core/validation.py).

        A pool's own declaration names a task it serves; its heartbeat records the
        name, possibly after this, so the name is not looked up then.
        """
        if not declared:
            await self.names.ensure([s.task.name])
        codec.build_records(
            [s.task],
            known_names=None if declared else self.names,
            limits=codec.Limits(max_payload_bytes=self.max_payload_bytes),
            field=f"{field}.task",
            single=True,
            trace_headers={},
        )

    async def _checked(self, records: list[task_record_pb2.TaskRecord], now: int) -> list[InsertRow]:
        """Insert parameters of the runs' records, checked like any insert (insert_checks.py)."""
        await self.names.ensure(r.name for r in records)
        return validate_insert(
            tasks_pb2.InsertTasksRequest(tasks=records),
            known_names=self.names,
            max_payload_bytes=self.max_payload_bytes,
            now_us=now,
        )

    def routes(self) -> list[rpc.Route[Any]]:
        return [
            # The writes are carried out once per database, whichever store a copy
            # of the request reaches (bus_requests.py).
            rpc.serve(contract.STORE_SCHEDULE_SAVE, bus_requests.once(as_bus_errors(self.save))),
            rpc.serve_call(contract.STORE_SCHEDULE_READ, as_bus_errors(self.read)),
            rpc.serve(contract.STORE_SCHEDULE_CHANGE, bus_requests.once(as_bus_errors(self.change))),
            rpc.serve(contract.STORE_SCHEDULE_FIRE, bus_requests.once(as_bus_errors(self.fire))),
        ]

    async def _record(self, conn: asyncpg.Connection, request_id: str, kind: int) -> None:
        if request_id:
            self.stats.statements += 1
            await bus_requests.record_one(conn, request_id, kind)

    async def _keep(self, conn: asyncpg.Connection, request_id: str, reply: Message) -> None:
        """Keep a recorded request's reply in its transaction, for a repeat of it."""
        if request_id:
            self.stats.statements += 1
            await bus_requests.keep_replies(conn, [request_id], [reply])

    async def _changed(self, at_us: int) -> None:
        await self.publisher.publish([event_pb2.Event(type=CHANGED, at_us=at_us)])

    # --- create / declare ---------------------------------------------------------
    async def save(
        self, req: schedule_pb2.SaveSchedulesRequest, request_id: str = ""
    ) -> schedule_pb2.SaveSchedulesReply:
        """``request_id``: the bus request's message id, recorded with a created schedule
        (a pool's declaration is an upsert: a copy of it changes nothing)."""
        now = req.now_us
        if req.declared:
            return await self._declare(req.schedules, now)
        if len(req.schedules) != 1:
            raise errors.invalid(
                [FieldViolation(field="schedules", description="create one schedule at a time")]
            )
        s = req.schedules[0]
        tenant = scopes.owner(req.scope)
        if tenant:
            bare_names(s, tenant)  # qualified again below: the rules know no tenants
        spec = check(s)
        await self._check_template(s, "schedule", declared=False)
        name = tenants.qualify(tenant, s.name)
        sid = ids.new_task_id()
        next_us = dataclasses.replace(spec, anchor_us=now).next_after(now)
        self.stats.statements += 1
        async with self.pool.acquire() as conn, conn.transaction():
            await self._record(conn, request_id, K.KIND_STORE_SCHEDULE_SAVE)
            # A new schedule starts new work: refused for a suspended tenant (tenant_checks.py).
            await tenant_checks.check_owner(conn, tenant)
            row = await conn.fetchrow(
                *bind(
                    "insert_schedule",
                    id=sid,
                    name=name,
                    task=template_json(s),
                    interval_ms=spec.interval_ms,
                    cron=spec.cron,
                    time_zone=s.time_zone,
                    paused=s.paused,
                    overlap=overlap(s),
                    next_us=next_us,
                    now_us=now,
                    tenant=tenant,
                )
            )
            if row is None:
                raise already_exists(name)  # rolls the record back: a resend is judged again
            created = event_log.Entry(
                type="schedule.created", schedule_id=sid, schedule_name=name, tenant=tenant
            )
            await event_log.write(Db(conn, self.stats), (), [created])
            saved = schedule_pb2.SaveSchedulesReply(schedules=[schedule_from_row(row)])
            await self._keep(conn, request_id, saved)
        await self._changed(next_us)
        return saved

    async def _declare(self, items: Any, now: int) -> schedule_pb2.SaveSchedulesReply:
        # One array per column of declare_schedules, in the order the values come below.
        columns = ("ids", "names", "tasks", "intervals_ms", "crons", "time_zones", "overlaps", "next_us")
        cols: dict[str, list[Any]] = {c: [] for c in columns}
        for i, s in enumerate(items):
            spec = check(s, f"schedules[{i}]")
            await self._check_template(s, f"schedules[{i}]", declared=True)
            next_us = dataclasses.replace(spec, anchor_us=now).next_after(now)
            for col, value in zip(
                cols.values(),
                (
                    ids.new_task_id(),
                    s.name,
                    template_json(s),
                    spec.interval_ms,
                    spec.cron,
                    s.time_zone,
                    overlap(s),
                    next_us,
                ),
                strict=True,
            ):
                col.append(value)
        if not cols["ids"]:
            return schedule_pb2.SaveSchedulesReply()
        self.stats.statements += 1
        rows = await self.pool.fetch(*bind("declare_schedules", **cols, now_us=now))
        kept = {r["name"] for r in rows}
        for name in cols["names"]:
            if name not in kept:
                log.warning("declared schedule %r not applied: a user-created schedule has that name", name)
        await self._changed(now)
        return schedule_pb2.SaveSchedulesReply(schedules=[schedule_from_row(r) for r in rows])

    # --- reads ----------------------------------------------------------------------
    async def read(self, req: schedule_pb2.ReadSchedulesRequest) -> schedule_pb2.ReadSchedulesReply:
        self.stats.statements += 1
        if req.id:
            row = await self.pool.fetchrow(
                *bind(
                    "get_schedule", **id_and_name(req.id, scopes.owner(req.scope)), **scopes.params(req.scope)
                )
            )
            if row is None:
                raise errors.not_found("schedule", req.id)
            return schedule_pb2.ReadSchedulesReply(schedules=[schedule_from_row(row)])
        if not 0 <= req.page_size <= MAX_PAGE:
            raise errors.invalid(
                [FieldViolation(field="page_size", description=f"must be between 0 and {MAX_PAGE}")]
            )
        size = req.page_size or DEFAULT_PAGE
        after = decode_token(req.page_token) if req.page_token else None
        rows = await self.pool.fetch(
            *bind("list_schedules", after=after, limit=size + 1, **scopes.params(req.scope))
        )
        reply = schedule_pb2.ReadSchedulesReply(schedules=[schedule_from_row(r) for r in rows[:size]])
        if len(rows) > size:
            reply.next_page_token = encode_token(rows[size - 1]["name"])
        return reply

    # --- pause / resume / delete ------------------------------------------------------
    async def change(
        self, req: schedule_pb2.ChangeScheduleRequest, request_id: str = ""
    ) -> schedule_pb2.ChangeScheduleReply:
        if req.action not in (A.SCHEDULE_ACTION_PAUSE, A.SCHEDULE_ACTION_RESUME, A.SCHEDULE_ACTION_DELETE):
            raise errors.invalid([FieldViolation(field="action", description="unknown action")])
        now = req.now_us
        async with self.pool.acquire() as conn, conn.transaction():
            await self._record(conn, request_id, K.KIND_STORE_SCHEDULE_CHANGE)
            db = Db(conn, self.stats)
            found = await db.fetch(
                "lock_schedule", **id_and_name(req.id, scopes.owner(req.scope)), **scopes.params(req.scope)
            )
            if not found:
                raise errors.not_found("schedule", req.id)
            row = found[0]
            sid = row["id"]
            tenant = row["tenant"]
            if req.action == A.SCHEDULE_ACTION_PAUSE:
                (row,) = await db.fetch("pause_schedule", id=sid, now_us=now)
            elif req.action == A.SCHEDULE_ACTION_RESUME:
                # Runs missed while paused are not fired: the next one counts from now.
                next_us = spec_of(row).next_after(now) if row["paused"] else row["next_run_at_us"]
                (row,) = await db.fetch("resume_schedule", id=sid, next_us=next_us, now_us=now)
            else:
                (row,) = await db.fetch("delete_schedule", id=sid)
            change = event_log.Entry(
                type=_CHANGE_EVENTS[req.action],
                schedule_id=str(sid),
                schedule_name=row["name"],
                tenant=tenant,
            )
            await event_log.write(db, (), [change])
            changed = schedule_pb2.ChangeScheduleReply(schedule=schedule_from_row(row))
            await self._keep(conn, request_id, changed)
        await self._changed(row["next_run_at_us"])
        return changed

    # --- firing ------------------------------------------------------------------------
    async def fire(
        self, req: schedule_pb2.FireSchedulesRequest, request_id: str = ""
    ) -> schedule_pb2.FireSchedulesReply:
        """``request_id``: recorded with a manual run (a trigger); the due runs' claims
        move each schedule's next run, so a copy of that request finds nothing due."""
        now = req.now_us
        if now < 0:
            raise errors.invalid([FieldViolation(field="now_us", description="must not be negative")])
        limit = min(req.limit or DEFAULT_FIRE_LIMIT, 10 * DEFAULT_FIRE_LIMIT)
        reply = schedule_pb2.FireSchedulesReply()
        async with self.pool.acquire() as conn, conn.transaction():
            if req.trigger:
                await self._record(conn, request_id, K.KIND_STORE_SCHEDULE_FIRE)
            db = Db(conn, self.stats)
            if now == 0:  # the database's clock: schedulers' own clocks may disagree
                now = int(await db.fetchval("schedule_clock"))
            reply.now_us = now
            if req.trigger:
                records, claimed = await self._trigger(db, req.trigger, now, req.scope)
            else:
                records, claimed, reply.skipped, reply.more = await self._claim_due(db, now, limit)
            _add_declared(records, req.declared)
            for rec in records:
                if rec.tenant:  # a tenant's run: its names as stored (insert_checks.py)
                    qualify_names(rec)
            outcome = None
            if records:
                insert = tasks_pb2.InsertTasksRequest(tasks=records)
                outcome = await apply_insert(db, [(insert, await self._checked(records, now))])
                inserted = outcome.replies[0]
                assert isinstance(inserted, tasks_pb2.InsertTasksReply)
                by_id = {t.id: t for t in inserted.tasks if t.created}
                runs = [rec for rec in records if rec.id in by_id]
                await db.fetch(
                    "mark_schedule_runs", ids=[r.id for r in runs], schedule_ids=[r.schedule_id for r in runs]
                )
                for rec in runs:
                    rec.state = by_id[rec.id].state
                    reply.tasks.append(by_id[rec.id])
                    reply.records.append(rec)
                names = {s.id: s.name for s in claimed}
                fired = [
                    event_log.Entry(
                        type="schedule.fired",
                        task_id=r.id,
                        task_name=r.name,
                        queue=r.queue,
                        schedule_id=r.schedule_id,
                        schedule_name=names.get(r.schedule_id, ""),
                        attributes={"manual": "true"} if req.trigger else {},
                        tenant=r.tenant,
                    )
                    for r in runs
                ]
                await event_log.write(db, outcome.events, fired)
            reply.next_due_us = await db.fetchval("next_schedule_due") or 0
            reply.schedules.extend(claimed)
            if req.trigger:
                await self._keep(conn, request_id, reply)
        if reply.tasks:
            store_metrics.created(reply.tasks)  # committed: the transaction above is done
        if outcome is not None and outcome.events:
            await self.publisher.publish(outcome.events)
        return reply

    async def _run_or_none(self, row: Any, due_us: int) -> task_record_pb2.TaskRecord | None:
        """The run's record, or None (logged) when it would not be stored: one bad
        template must not hold up the other due schedules."""
        try:
            rec = run_record(row, due_us, manual=False)
            await self._checked([rec], due_us)
        except errors.TaskyardError as exc:
            if exc.code is not errors.Code.INVALID_ARGUMENT:
                raise
            log.error("schedule %s: its task is refused (%s); retrying in an hour", row["name"], exc.message)
            return None
        return rec

    async def _trigger(
        self, db: Db, ident: str, now: int, scope: tenants_pb2.TenantScope
    ) -> tuple[list[task_record_pb2.TaskRecord], list[pub.Schedule]]:
        found = await db.fetch(
            "lock_schedule", **id_and_name(ident, scopes.owner(scope)), **scopes.params(scope)
        )
        if not found:
            raise errors.not_found("schedule", ident)
        rec = run_record(found[0], now, manual=True)
        (row,) = await db.fetch("trigger_schedule", id=found[0]["id"], now_us=now, task_id=rec.id)
        return [rec], [schedule_from_row(row)]

    async def _claim_due(
        self, db: Db, now: int, limit: int
    ) -> tuple[list[task_record_pb2.TaskRecord], list[pub.Schedule], int, bool]:
        due = await db.fetch("due_schedules", now_us=now, limit=limit)
        if not due:
            return [], [], 0, False
        plan: list[_Claim] = []
        records: dict[str, task_record_pb2.TaskRecord] = {}
        # A suspended tenant's runs are skipped, as an overlapping run is: nothing
        # of it is submitted while it is suspended (one read, none for the default tenant).
        held = await tenant_checks.suspended(db, {row["tenant"] for row in due})
        for row in due:
            due_us = row["next_run_at_us"]
            if row["tenant"] in held:
                plan.append(_Claim(row["id"], due_us, spec_of(row).next_after(now), None))
                continue
            try:
                next_us = spec_of(row).next_after(now)
            except timing.ScheduleError as exc:
                log.error(
                    "schedule %s cannot compute its next run (%s); retrying in an hour", row["name"], exc
                )
                plan.append(_Claim(row["id"], due_us, now + BROKEN_RETRY_US, None))
                continue
            busy = row["last_state"] not in FINAL_STATES and row["last_state"] != ""
            if busy and row["overlap"] != pub.OVERLAP_POLICY_ALLOW:
                plan.append(_Claim(row["id"], due_us, next_us, None))  # skipped: the last run is unfinished
                continue
            rec = await self._run_or_none(row, due_us)
            if rec is None:  # its template breaks a rule: no run, retried later
                plan.append(_Claim(row["id"], due_us, now + BROKEN_RETRY_US, None))
                continue
            records[row["id"]] = rec
            plan.append(_Claim(row["id"], due_us, next_us, rec.id))
        claimed = await db.fetch(
            "claim_schedules",
            ids=[p.schedule_id for p in plan],
            due_us=[p.due_us for p in plan],
            next_us=[p.next_us for p in plan],
            task_ids=[p.task_id for p in plan],
            now_us=now,
        )
        won = {r["id"] for r in claimed}
        skipped = sum(1 for p in plan if p.task_id is None and p.schedule_id in won)
        return (
            [rec for sid, rec in records.items() if sid in won],
            [schedule_from_row(r) for r in claimed],
            skipped,
            len(due) >= limit,
        )


def _add_declared(records: list[task_record_pb2.TaskRecord], declared: Sequence[pub_limit.Limit]) -> None:
    """Each run's task gets the limits its name declares, as a submission does
    (the scheduler sends them with the firing: FireSchedulesRequest.declared)."""
    by_name: dict[str, list[pub_limit.Limit]] = {}
    for limit in declared:
        by_name.setdefault(limit.task_name, []).append(limit)
    for rec in records:
        if rec.name in by_name:
            flow_rules.add_declared(rec, by_name[rec.name])


def as_bus_errors(fn: Callable[P, Awaitable[Rp]]) -> Callable[P, Awaitable[Rp]]:
    """``fn`` with database errors turned into the bus's errors (retryable where they are)."""

    @functools.wraps(fn)
    async def handler(*args: P.args, **kwargs: P.kwargs) -> Rp:
        try:
            return await fn(*args, **kwargs)
        except errors.TaskyardError:
            raise
        except OUTAGE as exc:
            raise to_taskyard_error(exc) from exc

    return handler
