"""Flow control in the in-memory store (``memory.MemoryStore``): limits,
weights and their version as ``limits.Limits`` keeps them in flow_limits,
flow_weights and flow_version, with the same checks and refusals. No event is
logged or published (the fake has neither)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from taskyard.bus.v1 import flow_pb2
from taskyard.core import limits as rules
from taskyard.core.states import TaskState
from taskyard.v1 import limit_pb2

from ..writes.limits import (
    already_exists,
    check_change,
    check_leased,
    in_use,
    limit_of,
    not_found,
    stored_spec,
    too_many_limits,
    too_many_weights,
    user_made,
)
from .rows import LEASED, Row

Op = flow_pb2.LimitOp


@dataclasses.dataclass(slots=True)
class _Stored:
    """A flow_limits row."""

    spec: bytes
    declared: bool
    created_us: int
    updated_us: int

    def limit(self) -> limit_pb2.Limit:
        return limit_of(self.spec, self.created_us, self.updated_us)


class FlowTables:
    """flow_limits, flow_weights and flow_version, in dicts."""

    def __init__(self) -> None:
        self.limits: dict[str, _Stored] = {}
        self.weights: dict[str, int] = {}
        self.version = 0

    def read(self, req: flow_pb2.ReadLimitsRequest) -> flow_pb2.ReadLimitsReply:
        if req.known_version == self.version:
            return flow_pb2.ReadLimitsReply(version=self.version, unchanged=True)
        return flow_pb2.ReadLimitsReply(
            version=self.version,
            limits=[self.limits[name].limit() for name in sorted(self.limits)],
            weights=[limit_pb2.KeyWeight(key=k, weight=self.weights[k]) for k in sorted(self.weights)],
        )

    def change(
        self, req: flow_pb2.ChangeLimitRequest, *, tasks: Iterable[Row], now_us: int
    ) -> flow_pb2.ChangeLimitReply:
        check_change(req)
        reply, changed = self._apply(req, tasks, now_us)
        if changed:
            self.version += 1
        reply.version = self.version
        return reply

    def _apply(
        self, req: flow_pb2.ChangeLimitRequest, tasks: Iterable[Row], now_us: int
    ) -> tuple[flow_pb2.ChangeLimitReply, bool]:
        op = req.op
        if op == Op.LIMIT_OP_CREATE:
            name = req.limit.name
            if len(self.limits) >= rules.MAX_LIMITS:
                raise too_many_limits()
            if name in self.limits:
                raise already_exists(name)
            self.limits[name] = _Stored(stored_spec(req.limit), False, now_us, now_us)
            return flow_pb2.ChangeLimitReply(limit=self.limits[name].limit()), True
        if op == Op.LIMIT_OP_UPDATE:
            found = self.limits.get(req.limit.name)
            if found is None:
                raise not_found(req.limit.name)
            found.spec, found.declared, found.updated_us = stored_spec(req.limit), False, now_us
            return flow_pb2.ChangeLimitReply(limit=found.limit()), True
        if op == Op.LIMIT_OP_DELETE:
            users = sum(1 for row in tasks if _uses(row, req.name))
            if req.name not in self.limits:
                raise not_found(req.name)
            if users and not req.force:
                # The fake keeps no schedules (they are UNIMPLEMENTED here): none use it.
                raise in_use(req.name, users, 0)
            del self.limits[req.name]
            return flow_pb2.ChangeLimitReply(tasks_released=users), True
        if op == Op.LIMIT_OP_DECLARE:
            return flow_pb2.ChangeLimitReply(), self._declare(list(req.declared), now_us)
        weight = req.weight
        if weight.weight == 0:
            return flow_pb2.ChangeLimitReply(weight=weight), self.weights.pop(weight.key, None) is not None
        if weight.key not in self.weights and len(self.weights) >= rules.MAX_WEIGHTS:
            raise too_many_weights()
        changed = self.weights.get(weight.key) != weight.weight
        self.weights[weight.key] = weight.weight
        return flow_pb2.ChangeLimitReply(weight=weight), changed

    def _declare(self, declared: list[limit_pb2.Limit], now_us: int) -> bool:
        specs = {limit.name: stored_spec(limit) for limit in declared}
        held = {name: self.limits[name] for name in specs if name in self.limits}
        taken = sorted(n for n, s in held.items() if not s.declared and s.spec != specs[n])
        if taken:
            raise user_made(taken)
        if len(self.limits) + len(specs) - len(held) > rules.MAX_LIMITS:
            raise too_many_limits()
        changed = False
        for name, spec in specs.items():
            found = held.get(name)
            if found is None:
                self.limits[name] = _Stored(spec, True, now_us, now_us)
                changed = True
            elif found.declared and found.spec != spec:
                found.spec, found.updated_us = spec, now_us
                changed = True
        return changed

    def leased(self, req: flow_pb2.LeasedFlowRequest, tasks: Iterable[Row]) -> flow_pb2.LeasedFlowReply:
        limit, after = check_leased(req)
        rows = sorted(
            (r for r in tasks if r.state in LEASED and r.rec.flow.uses and r.id > after), key=lambda r: r.id
        )[:limit]
        reply = flow_pb2.LeasedFlowReply()
        for row in rows:
            item = reply.attempts.add(
                task_id=row.id, attempt=row.rec.attempt, lease_token=row.rec.lease_token
            )
            item.flow.CopyFrom(row.rec.flow)
        if len(rows) == limit:
            reply.next_after_id = rows[-1].id
        return reply


def _uses(row: Row, name: str) -> bool:
    """Whether a task not final uses limit ``name`` (sql/flow.sql limit_users)."""
    return not TaskState(row.rec.state).is_final and any(u.limit == name for u in row.rec.flow.uses)
