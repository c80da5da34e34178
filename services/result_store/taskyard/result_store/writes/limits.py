"""Flow control's store side: named limits, fairness weights, their version, and
the leased attempts that use limits (tables of migrations/0015_flow.sql,
statements of sql/flow.sql).

The leading scheduler polls ``read`` (STORE_LIMITS) with the version it holds:
while nothing changed that is one one-row read. Every change (``change``,
STORE_LIMIT_CHANGE) runs in one transaction: it locks the version row (so
changes are serialized and the caps are counted under the lock), checks the
request with core/limits.py, writes the rows, its event in the durable log
(type ``limit.*``, EVENT_KIND_LIMIT, Event.attributes) and the next version,
and publishes the same event on the bus after COMMIT. A refused change stores
nothing. Changes are rare and their refusals part of normal use (a name taken,
a limit in use), so like schedules they run on their own connection rather
than in the group commit, where a refusal would make its drain's other
requests run again one by one.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import asyncpg

from taskyard.bus.v1 import envelope_pb2, event_pb2, flow_pb2, tenants_pb2
from taskyard.core import contract, errors, roles, rpc, tenants
from taskyard.core import limits as rules
from taskyard.core import validation as core_validation
from taskyard.core.errors import FieldViolation
from taskyard.core.validation import quote
from taskyard.v1 import limit_pb2

from .. import bus_requests, event_log, scopes
from ..appliers import Db, Stats
from ..events import EventPublisher
from ..queries import bind
from .schedules import as_bus_errors

log = logging.getLogger(__name__)
K = envelope_pb2
Op = flow_pb2.LimitOp
# Breaker changes logged per request, and the changes there are.
MAX_BREAKER_CHANGES = 1000
BREAKER_CHANGES = frozenset({"opened", "closed"})
# Attempts per page of STORE_LEASED_FLOW.
LEASED_DEFAULT_LIMIT = 1000
LEASED_MAX_LIMIT = 10_000
# Tenants a STORE_LEASED_FLOW request may name (as many as there may be tenants).
MAX_LEASED_TENANTS = 10_000
# Below every task id: the first page of STORE_LEASED_FLOW.
_FIRST_ID = "00000000-0000-0000-0000-000000000000"
# Error reasons (ErrorInfo.reason at the edge).
LIMIT_EXISTS = "LIMIT_EXISTS"
LIMIT_IN_USE = "LIMIT_IN_USE"
LIMIT_NOT_DECLARED = "LIMIT_NOT_DECLARED"
TOO_MANY_LIMITS = "TOO_MANY_LIMITS"
TOO_MANY_WEIGHTS = "TOO_MANY_WEIGHTS"
_KINDS = {"rate": "rate", "concurrency": "concurrency"}


# --- checks (the in-memory store runs them too) --------------------------------------
def stored_spec(limit: limit_pb2.Limit) -> bytes:
    """What flow_limits.spec keeps of a limit: its definition, without the output
    fields (usage; created_at and updated_at are columns)."""
    spec = limit_pb2.Limit()
    spec.CopyFrom(limit)
    for field in ("usage", "created_at", "updated_at"):
        spec.ClearField(field)
    return spec.SerializeToString(deterministic=True)


def check_change(req: flow_pb2.ChangeLimitRequest) -> None:
    """Refuse a malformed change before anything is read (INVALID_ARGUMENT with
    field violations, core/limits.py's rules)."""
    found: list[FieldViolation] = []
    if req.op in (Op.LIMIT_OP_CREATE, Op.LIMIT_OP_UPDATE):
        found += rules.limit_violations(req.limit, "limit")
    elif req.op == Op.LIMIT_OP_DELETE:
        if not req.name:
            found.append(FieldViolation(field="name", description="must not be empty"))
    elif req.op == Op.LIMIT_OP_DECLARE:
        found += declared_violations(req.declared)
    elif req.op == Op.LIMIT_OP_SET_WEIGHT:
        found += rules.weight_violations(req.weight, "weight")
    else:
        found.append(FieldViolation(field="op", description=f"unknown limit operation {int(req.op)}"))
    if found:
        raise core_validation.invalid(found)


def declared_violations(declared: Any) -> list[FieldViolation]:
    """A pool's declared limits: each a valid limit named as its task declares it
    (core/limits.declared_name), each name once, at most MAX_LIMITS."""
    if len(declared) > rules.MAX_LIMITS:
        return [FieldViolation(field="declared", description=f"at most {rules.MAX_LIMITS} limits")]
    out: list[FieldViolation] = []
    seen: set[str] = set()
    for i, limit in enumerate(declared):
        path = f"declared[{i}]"
        out += rules.limit_violations(limit, path)
        kind = limit.WhichOneof("kind")
        if not limit.task_name:
            out.append(
                FieldViolation(field=f"{path}.task_name", description="a declared limit names its task")
            )
        elif kind is not None and limit.name != rules.declared_name(limit.task_name, _KINDS[kind]):
            want = rules.declared_name(limit.task_name, _KINDS[kind])
            out.append(
                FieldViolation(field=f"{path}.name", description=f"a declared limit is named {quote(want)}")
            )
        if limit.name in seen:
            out.append(FieldViolation(field=f"{path}.name", description=f"{quote(limit.name)} twice"))
        seen.add(limit.name)
    return out


def check_leased(req: flow_pb2.LeasedFlowRequest) -> tuple[int, str]:
    """The page size and the id to start after of a STORE_LEASED_FLOW request."""
    from ..uuids import norm_uuid

    if len(req.tenants) > MAX_LEASED_TENANTS:
        raise core_validation.invalid(
            [
                FieldViolation(
                    field="tenants",
                    description=f"at most {MAX_LEASED_TENANTS} tenants, got {len(req.tenants)}",
                )
            ]
        )
    if not 0 <= req.limit <= LEASED_MAX_LIMIT:
        raise core_validation.invalid(
            [FieldViolation(field="limit", description=f"must be 1 to {LEASED_MAX_LIMIT}, got {req.limit}")]
        )
    after = _FIRST_ID
    if req.after_id:
        found = norm_uuid(req.after_id)
        if found is None:
            raise core_validation.invalid([FieldViolation(field="after_id", description="must be a task id")])
        after = found
    return req.limit or LEASED_DEFAULT_LIMIT, after


def already_exists(name: str) -> errors.TaskyardError:
    return errors.TaskyardError(
        errors.Code.ALREADY_EXISTS, LIMIT_EXISTS, f"a limit named {quote(name)} already exists"
    )


def not_found(name: str) -> errors.TaskyardError:
    return errors.TaskyardError(errors.Code.NOT_FOUND, "LIMIT_NOT_FOUND", f"no limit named {quote(name)}")


def in_use(name: str, tasks: int, schedules: int) -> errors.TaskyardError:
    return errors.TaskyardError(
        errors.Code.FAILED_PRECONDITION,
        LIMIT_IN_USE,
        f"limit {quote(name)} is in use: {tasks} task(s) not finished yet and {schedules} "
        "schedule(s) whose task template names it; delete it with force to release the tasks (they "
        "then run without it; the schedules keep its name, and their runs are not held by it "
        "until a limit of that name exists again), or change the schedules first",
    )


def released(name: str, tasks: int, schedules: int) -> str:
    """What a forced delete says it left behind (logged)."""
    return (
        f"limit {quote(name)} deleted with force: {tasks} task(s) not finished yet released (they run "
        f"without it); {schedules} schedule(s) keep its name in their task template (their runs are "
        "not held by it until a limit of that name exists again)"
    )


def user_made(names: list[str]) -> errors.TaskyardError:
    shown = ", ".join(quote(n) for n in names[:5])
    return errors.TaskyardError(
        errors.Code.FAILED_PRECONDITION,
        LIMIT_NOT_DECLARED,
        f"limits created or changed by a user hold these declared names, and a declaration "
        f"does not overwrite them: {shown} (delete or rename them, or drop the declaration)",
    )


def too_many_limits() -> errors.TaskyardError:
    return errors.TaskyardError(
        errors.Code.RESOURCE_EXHAUSTED,
        TOO_MANY_LIMITS,
        f"at most {rules.MAX_LIMITS} limits are kept; delete some first",
    )


def too_many_weights() -> errors.TaskyardError:
    return errors.TaskyardError(
        errors.Code.RESOURCE_EXHAUSTED,
        TOO_MANY_WEIGHTS,
        f"at most {rules.MAX_WEIGHTS} fairness weights are kept; set some back to 0 (removed) first",
    )


def limit_of(spec: bytes, created_us: int, updated_us: int) -> limit_pb2.Limit:
    limit = limit_pb2.Limit.FromString(spec)
    limit.created_at.FromMicroseconds(created_us)
    limit.updated_at.FromMicroseconds(updated_us)
    return limit


def _row_limit(row: Mapping[str, Any]) -> limit_pb2.Limit:
    return limit_of(row["spec"], row["created_us"], row["updated_us"])


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class _Changed:
    """What one change did: its reply, and the events it logs (none: nothing changed)."""

    reply: flow_pb2.ChangeLimitReply
    events: list[event_log.Entry]
    # Logged once committed: what a forced delete left behind.
    warning: str = ""


class Limits:
    """The STORE_LIMITS, STORE_LIMIT_CHANGE and STORE_LEASED_FLOW routes."""

    def __init__(self, pool: asyncpg.Pool, publisher: EventPublisher, stats: Stats) -> None:
        self.pool = pool
        self.publisher = publisher
        self.stats = stats

    def routes(self) -> list[rpc.Route[Any]]:
        return [
            rpc.serve_call(contract.STORE_LIMITS, as_bus_errors(self.read)),
            # Carried out once per database, whichever store a copy reaches (bus_requests.py).
            rpc.serve(contract.STORE_LIMIT_CHANGE, bus_requests.once(as_bus_errors(self.change))),
            rpc.serve_call(contract.STORE_LEASED_FLOW, as_bus_errors(self.leased)),
            rpc.serve_call(contract.STORE_BREAKER_EVENTS, as_bus_errors(self.breaker_events)),
        ]

    # --- reads ------------------------------------------------------------------------
    async def read(self, req: flow_pb2.ReadLimitsRequest) -> flow_pb2.ReadLimitsReply:
        # The scope's tenant's limits and weights; the scheduler's admission needs
        # every tenant's (it acts for no caller).
        where = scopes.params(scopes.ALL if rpc.sender_role() == roles.SCHEDULER else req.scope)
        self.stats.statements += 1
        version = await self.pool.fetchval(*bind("flow_version"))
        if version == req.known_version:
            return flow_pb2.ReadLimitsReply(version=version, unchanged=True)
        # The version, limits and weights of one snapshot.
        async with self.pool.acquire() as conn, conn.transaction(isolation="repeatable_read", readonly=True):
            self.stats.statements += 3
            version = await conn.fetchval(*bind("flow_version"))
            limits = await conn.fetch(*bind("list_limits", **where))
            weights = await conn.fetch(*bind("list_weights", **where))
        reply = flow_pb2.ReadLimitsReply(version=version, unchanged=version == req.known_version)
        if not reply.unchanged:
            reply.limits.extend(_row_limit(r) for r in limits)
            reply.weights.extend(
                limit_pb2.KeyWeight(key=r["key"], weight=r["weight"], tenant=r["tenant"]) for r in weights
            )
        return reply

    async def leased(self, req: flow_pb2.LeasedFlowRequest) -> flow_pb2.LeasedFlowReply:
        limit, after = check_leased(req)
        self.stats.statements += 1
        if req.tenants:
            query = bind("leased_flow_tenants", after_id=after, limit=limit, tenants=list(req.tenants))
        else:
            query = bind("leased_flow", after_id=after, limit=limit)
        rows = await self.pool.fetch(*query)
        reply = flow_pb2.LeasedFlowReply()
        for row in rows:
            item = reply.attempts.add(
                task_id=row["id"],
                attempt=row["attempt"],
                lease_token=row["lease_token"],
                tenant=row["tenant"],
            )
            if row["flow"] is not None:  # a quota's attempt may use no limit
                item.flow.ParseFromString(row["flow"])
        if len(rows) == limit:
            reply.next_after_id = rows[-1]["id"]
        return reply

    async def breaker_events(self, req: flow_pb2.BreakerEventsRequest) -> flow_pb2.BreakerEventsReply:
        """Log the leading scheduler's breaker opens and closes (WatchEvents), only
        from the leader now: a deposed one's term is refused, as its refunds are."""
        if req.term <= 0:
            raise errors.invalid(
                [FieldViolation(field="term", description="must be the scheduler's term (1 or more)")]
            )
        entries = [
            _breaker_entry(c) for c in req.changes[:MAX_BREAKER_CHANGES] if c.change in BREAKER_CHANGES
        ]
        async with self.pool.acquire() as conn, conn.transaction():
            db = Db(conn, self.stats)
            # The leader's row share-locked until COMMIT: a takeover waits for these events.
            if await db.fetchval("leader_term_now") != req.term:
                raise errors.TaskyardError(
                    errors.Code.FAILED_PRECONDITION,
                    "NOT_LEADER",
                    f"term {req.term} is not the leading scheduler's: its breaker events are refused",
                )
            if entries:
                await event_log.write(db, (), entries)
        if entries:
            await self._publish(entries)
        return flow_pb2.BreakerEventsReply(logged=len(entries))

    # --- changes ----------------------------------------------------------------------
    async def change(
        self, req: flow_pb2.ChangeLimitRequest, request_id: str = ""
    ) -> flow_pb2.ChangeLimitReply:
        """``request_id``: the bus request's message id, recorded with the change.

        A tenant's limits and weights are its own: the names a request gives are
        checked as the tenant knows them and stored qualified (core/tenants.py);
        another tenant's are never reached (scopes.py), and answer as missing ones."""
        owner = scopes.owner(req.scope)
        _names(req, functools.partial(tenants.strip, owner))
        check_change(req)
        _names(req, functools.partial(tenants.qualify, owner))
        async with self.pool.acquire() as conn, conn.transaction():
            db = Db(conn, self.stats)
            if request_id:
                self.stats.statements += 1
                await bus_requests.record_one(conn, request_id, K.KIND_STORE_LIMIT_CHANGE)
            version = int(await db.fetchval("lock_flow_version"))
            done = await self._apply(db, req)
            if owner:
                done = dataclasses.replace(
                    done, events=[dataclasses.replace(e, tenant=owner) for e in done.events]
                )
            if done.events:
                version = int(await db.fetchval("bump_flow_version"))
                await event_log.write(db, (), done.events)
            done.reply.version = version
            if request_id:
                self.stats.statements += 1
                await bus_requests.keep_replies(conn, [request_id], [done.reply])
        if done.warning:
            log.warning("%s", done.warning)
        await self._publish(done.events)
        return done.reply

    async def _apply(self, db: Db, req: flow_pb2.ChangeLimitRequest) -> _Changed:
        op = req.op
        if op == Op.LIMIT_OP_CREATE:
            return await self._create(db, req.limit, scopes.owner(req.scope))
        if op == Op.LIMIT_OP_UPDATE:
            rows = await db.fetch(
                "update_limit", name=req.limit.name, spec=stored_spec(req.limit), **scopes.params(req.scope)
            )
            if not rows:
                raise not_found(req.limit.name)
            return _Changed(
                reply=flow_pb2.ChangeLimitReply(limit=_row_limit(rows[0])),
                events=[_entry("limit.updated", limit=req.limit.name)],
            )
        if op == Op.LIMIT_OP_DELETE:
            return await self._delete(db, req.name, force=req.force, scope=req.scope)
        if op == Op.LIMIT_OP_DECLARE:
            return await self._declare(db, list(req.declared))
        return await self._set_weight(db, req.weight, scopes.owner(req.scope))

    async def _create(self, db: Db, limit: limit_pb2.Limit, owner: str) -> _Changed:
        if int(await db.fetchval("count_limits", owner=owner)) >= rules.MAX_LIMITS:
            raise too_many_limits()
        rows = await db.fetch("insert_limit", name=limit.name, spec=stored_spec(limit), owner=owner)
        if not rows:
            raise already_exists(limit.name)
        return _Changed(
            reply=flow_pb2.ChangeLimitReply(limit=_row_limit(rows[0])),
            events=[_entry("limit.created", limit=limit.name)],
        )

    async def _delete(self, db: Db, name: str, *, force: bool, scope: tenants_pb2.TenantScope) -> _Changed:
        where = scopes.params(scope)
        (users,) = await db.fetch("limit_users", name=name)
        tasks, schedules = int(users["tasks"]), int(users["schedules"])
        if (tasks or schedules) and not force:
            if await db.fetch("lookup_limits", names=[name], **where):
                raise in_use(name, tasks, schedules)
            raise not_found(name)
        if not await db.fetch("delete_limit", name=name, **where):
            raise not_found(name)
        attributes = {"limit": name}
        if tasks:
            attributes["tasks_released"] = str(tasks)
        if schedules:
            # The reply counts tasks only (DeleteLimitResponse.tasks_released): the
            # schedules are said in the event and the log.
            attributes["schedules_using"] = str(schedules)
        return _Changed(
            reply=flow_pb2.ChangeLimitReply(tasks_released=tasks),
            events=[event_log.Entry(type="limit.deleted", attributes=attributes)],
            warning=released(name, tasks, schedules) if tasks or schedules else "",
        )

    async def _declare(self, db: Db, declared: list[limit_pb2.Limit]) -> _Changed:
        if not declared:
            return _Changed(reply=flow_pb2.ChangeLimitReply(), events=[])
        specs = {limit.name: stored_spec(limit) for limit in declared}
        held = await db.fetch("lookup_limits", names=list(specs), **scopes.params(scopes.ALL))
        # A user's limit of the same definition is not overwritten by this either: no conflict.
        taken = sorted(r["name"] for r in held if not r["declared"] and r["spec"] != specs[r["name"]])
        if taken:
            raise user_made(taken)
        new = len(specs) - len(held)
        # A pool's declared limits are the default tenant's (declare_limits).
        if new and int(await db.fetchval("count_limits", owner="")) + new > rules.MAX_LIMITS:
            raise too_many_limits()
        rows = await db.fetch("declare_limits", names=list(specs), specs=list(specs.values()))
        return _Changed(
            reply=flow_pb2.ChangeLimitReply(),
            events=[_entry("limit.declared", limit=r["name"]) for r in sorted(rows, key=lambda r: r["name"])],
        )

    async def _set_weight(self, db: Db, weight: limit_pb2.KeyWeight, owner: str) -> _Changed:
        reply = flow_pb2.ChangeLimitReply(weight=weight)
        reply.weight.tenant = owner
        event = event_log.Entry(
            type="limit.weight", attributes={"key": weight.key, "weight": str(weight.weight)}
        )
        if weight.weight == 0:  # removed: the key is back to weight 1
            gone = await db.fetch("delete_weight", key=weight.key, owner=owner)
            return _Changed(reply=reply, events=[event] if gone else [])
        (count,) = await db.fetch("weights_held", key=weight.key, owner=owner)
        if not count["held"] and count["n"] >= rules.MAX_WEIGHTS:
            raise too_many_weights()
        changed = await db.fetch("set_weight", key=weight.key, weight=weight.weight, owner=owner)
        return _Changed(reply=reply, events=[event] if changed else [])

    async def _publish(self, entries: list[event_log.Entry]) -> None:
        """The committed change's events on the bus, with their attributes."""
        if entries:
            at_us = time.time_ns() // 1000
            await self.publisher.publish(
                [event_pb2.Event(type=e.type, at_us=at_us, attributes=dict(e.attributes)) for e in entries]
            )


def _names(req: flow_pb2.ChangeLimitRequest, rename: Callable[[str], str]) -> None:
    """The names a change gives (a limit's, a weight's key) passed through ``rename``."""
    if req.op in (Op.LIMIT_OP_CREATE, Op.LIMIT_OP_UPDATE):
        req.limit.name = rename(req.limit.name)
    elif req.op == Op.LIMIT_OP_DELETE:
        req.name = rename(req.name)
    elif req.op == Op.LIMIT_OP_SET_WEIGHT:
        req.weight.key = rename(req.weight.key)


def _breaker_entry(change: flow_pb2.BreakerChange) -> event_log.Entry:
    attributes = {"limit": change.limit[: rules.MAX_TASK_NAME_CHARS], "key": _key(change.key)}
    if change.change == "opened":
        attributes["failures"] = str(change.failures)
        if change.next_probe_at_us:
            at = datetime.datetime.fromtimestamp(change.next_probe_at_us / 1e6, datetime.UTC)
            attributes["next_probe_at"] = at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return event_log.Entry(type=f"breaker.{change.change}", attributes=attributes)


def _key(key: str) -> str:
    return key.encode()[: rules.MAX_KEY_BYTES].decode(errors="ignore").replace("\x00", "")


def _entry(type_: str, *, limit: str) -> event_log.Entry:
    return event_log.Entry(type=type_, attributes={"limit": limit})
