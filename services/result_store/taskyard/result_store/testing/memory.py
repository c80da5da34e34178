"""An in-memory result-store: the task lifecycle of the bus contract, in dicts.

``MemoryStore`` is an ``rpc.Caller``: a component under test reaches it with
``await store.call(contract.X, request)`` exactly as it reaches the real store
over NNG, and tests/integration/test_store_contract.py runs one suite against
both, so the two answer alike. Requests and replies go through their wire
encoding, so neither side can hold on to the other's messages. Time comes from
an injected clock (``core.clock``): what the real store reads from PostgreSQL's
clock (leases, lapses, due rows, key windows, live pools) is read from it.

Implemented, with the real store's semantics (its statements in sql/tasks.sql,
the same insert checks through ``writes.insert_checks.validate_insert``, the same
transition table): InsertTasks (request id and idempotency key de-duplication,
SCHEDULED tasks, queues, priorities, parents and roots, the scheduler's fast-path
leases), GetTasks, ListTasks, LeaseTasks, Report (started, succeeded, failed with
a retry or for good, stopped by a cancel, released, died; fenced on attempt and
lease token, late outcomes noted), RenewLeases, Rescue, CancelTasks (queued and
running tasks, and their descendants), LoadQueued, PromoteDue, Heartbeat,
TaskNames, and flow control's ReadLimits, ChangeLimit and LeasedFlow (tasks carry
their FlowControl through every read; limits.py).

Not faked, each answered with UNIMPLEMENTED:
- dependencies: an insert of a PENDING task or one with ``depends_on`` (their
  release and cascade is the graph resolver's, after each commit), TaskTree;
- events: nothing is published (no PUB socket, no post-commit messages);
- queue pauses, schedules, logs, servers, counters, reconciliation, failures of
  each attempt, explain facts, the scheduler's due heap: every method of the
  contract not named above.
Hop stamps of sampled tasks are not kept.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, TypeVar, Unpack

from google.protobuf.message import Message

from taskyard.bus.v1 import flow_pb2, lanes_pb2, leases_pb2, pools_pb2, tasks_pb2
from taskyard.core import contract, errors, ids, rpc
from taskyard.core.clock import Clock, SystemClock, to_us
from taskyard.core.config import StoreSettings
from taskyard.core.errors import FieldViolation
from taskyard.core.states import TaskState
from taskyard.v1 import task_pb2

from ..cursors import _int_part, _uuid_part, decode_cursor, encode_cursor
from ..records import record_queued_ref
from ..transitions import SRC_ASSIGNED, SRC_PROMOTE
from ..uuids import norm_uuid
from ..writes.insert_checks import validate_insert
from .cancels import apply_cancel
from .inserts import apply_insert
from .limits import FlowTables
from .reports import Death, apply_report, die
from .rows import DUE_STATES, LEASED, Row, Tasks, move
from .tenants import TenantTable

S = TaskState
Rq = TypeVar("Rq", bound=Message)
Rp = TypeVar("Rp", bound=Message)

# The real store's limits (reads/tasks.py, writes/leases.py, writes/promotions.py).
LIST_DEFAULT_LIMIT = 100
LIST_MAX_LIMIT = 1000
LOAD_DEFAULT_LIMIT = 1000
LOAD_MAX_LIMIT = 10_000
RESCUE_DEFAULT_LIMIT = 1000
PROMOTE_DEFAULT_LIMIT = 1000
# A pool in these states gets no new lease (it may stop listening before the dispatch
# arrives; STOPPED: it stopped, or was declared lost and not heard from since).
DRAINING_STATES = frozenset({"DRAINING", "STOPPING", "STOPPED"})


def unimplemented(what: str) -> errors.TaskyardError:
    """What the fake answers for a method it does not fake (core.errors has no constructor for it)."""
    return errors.TaskyardError(
        errors.Code.UNIMPLEMENTED, "UNIMPLEMENTED", f"{what}: not implemented by the in-memory store"
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Beat:
    """A pool's last heartbeat, and when it came (the store's clock)."""

    request: pools_pb2.HeartbeatRequest
    at_us: int


class MemoryStore:
    """The result-store's task lifecycle in memory, reached as an ``rpc.Caller``."""

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        settings: StoreSettings | None = None,
        task_names: Iterable[str] = (),
    ) -> None:
        """``task_names``: names declared as if a pool had declared them."""
        self.clock: Clock = clock or SystemClock()
        self.settings = settings or StoreSettings()
        self.tasks = Tasks()
        self._names: set[str] = set(task_names)
        self._pools: dict[str, _Beat] = {}
        self.flow = FlowTables()
        self.tenants = TenantTable(self.clock)
        self._handlers: dict[int, Callable[[Any], Message]] = {
            contract.STORE_INSERT.kind: self._insert,
            contract.STORE_GET.kind: self._get,
            contract.STORE_LIST.kind: self._list,
            contract.STORE_LEASE.kind: self._lease,
            contract.STORE_REPORT.kind: self._report,
            contract.STORE_RENEW.kind: self._renew,
            contract.STORE_RESCUE.kind: self._rescue,
            contract.STORE_CANCEL.kind: self._cancel,
            contract.STORE_LOAD_QUEUED.kind: self._load_queued,
            contract.STORE_PROMOTE_DUE.kind: self._promote_due,
            contract.STORE_HEARTBEAT.kind: self._heartbeat,
            contract.STORE_TASK_NAMES.kind: self._task_names,
            contract.STORE_LIMITS.kind: self.flow.read,
            contract.STORE_LIMIT_CHANGE.kind: self._change_limit,
            contract.STORE_LEASED_FLOW.kind: self._leased_flow,
            contract.STORE_TENANTS.kind: self.tenants.read,
            contract.STORE_TENANT_CHANGE.kind: self.tenants.change,
        }

    async def call_raw(
        self,
        method: contract.Method[Rq, Any],
        request: Rq | bytes,
        **options: Unpack[rpc.CallOptions],
    ) -> bytes:
        reply: Message = await self.call(method, request)
        return reply.SerializeToString()

    async def call(
        self,
        method: contract.Method[Rq, Rp],
        request: Rq | bytes,
        **options: Unpack[rpc.CallOptions],
    ) -> Rp:
        handler = self._handlers.get(method.kind)
        if handler is None or contract.METHODS.get(method.kind) is not method:
            raise unimplemented(str(method))
        # Through the wire encoding, as over NNG: no message is shared with the caller.
        data = request if isinstance(request, bytes) else request.SerializeToString()
        reply = handler(method.request.FromString(data))
        return method.reply.FromString(reply.SerializeToString())

    def _now_us(self) -> int:
        return to_us(self.clock.now())

    def _lease_ms(self, value: int) -> int:
        return value if value > 0 else int(self.settings.lease_seconds * 1000)

    def _draining(self) -> set[str]:
        return {pool for pool, beat in self._pools.items() if beat.request.state in DRAINING_STATES}

    # --- tasks in and out --------------------------------------------------------------
    def _insert(self, req: tasks_pb2.InsertTasksRequest) -> tasks_pb2.InsertTasksReply:
        most = self.settings.max_batch * 10
        if len(req.tasks) > most:
            raise errors.invalid(
                [FieldViolation(field="tasks", description=f"at most {most} tasks per request")]
            )
        now = self._now_us()
        rows = validate_insert(
            req, known_names=self._names, max_payload_bytes=self.settings.max_payload_bytes, now_us=now
        )
        if any(row.has_dependencies or row.state == S.PENDING.name for row in rows):
            raise unimplemented("InsertTasks of a task with dependencies (PENDING)")
        if not rows:
            return tasks_pb2.InsertTasksReply()
        return apply_insert(self.tasks, req, rows, now_us=now, draining=self._draining())

    def _get(self, req: tasks_pb2.GetTasksRequest) -> tasks_pb2.GetTasksReply:
        reply = tasks_pb2.GetTasksReply()
        seen: set[str] = set()
        for raw in req.ids:
            tid = norm_uuid(raw)
            row = self.tasks.get(tid)
            if tid is not None and row is not None and tid not in seen:
                seen.add(tid)
                reply.tasks.append(row.copy())
        return reply

    def _list(self, req: tasks_pb2.ListTasksRequest) -> tasks_pb2.ListTasksReply:
        if req.limit < 0 or req.limit > LIST_MAX_LIMIT:
            raise errors.invalid(
                [FieldViolation(field="page_size", description=f"must be between 1 and {LIST_MAX_LIMIT}")]
            )
        after: tuple[int, str] | None = None
        if req.cursor:
            us, cid = decode_cursor(req.cursor, "l1", 2, "page_token")
            after = (_int_part(us, "page_token"), _uuid_part(cid, "page_token"))
        if any(s not in range(1, 10) for s in req.states):
            raise errors.invalid([FieldViolation(field="states", description="unknown state")])
        if req.priority not in (0, 1, 2, 3, 4):
            raise errors.invalid([FieldViolation(field="priority", description="unknown priority")])
        wanted = set(req.states)

        def listed(row: Row) -> bool:
            rec = row.rec
            return (
                (not wanted or rec.state in wanted)
                and (not req.name or rec.name == req.name)
                and (not req.queue or rec.queue == req.queue)
                and (not req.priority or rec.priority == req.priority)
                and (after is None or (rec.created_at_us, rec.id) < after)
            )

        newest = sorted(filter(listed, self.tasks), key=lambda r: (r.rec.created_at_us, r.id), reverse=True)
        limit = req.limit or LIST_DEFAULT_LIMIT
        reply = tasks_pb2.ListTasksReply(tasks=[row.copy() for row in newest[:limit]])
        if len(newest) > limit:
            last = reply.tasks[-1]
            reply.next_cursor = encode_cursor("l1", last.created_at_us, last.id)
        return reply

    def _load_queued(self, req: lanes_pb2.LoadQueuedRequest) -> lanes_pb2.LoadQueuedReply:
        limit = min(req.limit, LOAD_MAX_LIMIT) if req.limit > 0 else LOAD_DEFAULT_LIMIT
        after: tuple[int, int, str] | None = None
        if req.cursor:
            p, us, cid = decode_cursor(req.cursor, "q1", 3, "cursor")
            after = (_int_part(p, "cursor"), _int_part(us, "cursor"), _uuid_part(cid, "cursor"))

        def order(row: Row) -> tuple[int, int, str]:
            return (row.rec.priority, row.rec.created_at_us, row.id)

        queued = sorted(
            (r for r in self.tasks if r.state is S.QUEUED and (after is None or order(r) > after)), key=order
        )
        reply = lanes_pb2.LoadQueuedReply(tasks=[record_queued_ref(row.rec) for row in queued[:limit]])
        if len(queued) > limit:
            last = reply.tasks[-1]
            reply.next_cursor = encode_cursor("q1", last.priority, last.created_at_us, last.id)
        return reply

    # --- leases -----------------------------------------------------------------------
    def _lease(self, req: leases_pb2.LeaseTasksRequest) -> leases_pb2.LeaseTasksReply:
        reply = leases_pb2.LeaseTasksReply()
        if not req.leases or req.pool_id in self._draining():
            return reply
        now = self._now_us()
        expires = now + self._lease_ms(req.lease_ms) * 1000
        for lease in req.leases:
            row = self.tasks.get(norm_uuid(lease.task_id))
            if row is None or row.state not in SRC_ASSIGNED:
                continue
            move(row, S.ASSIGNED, now)
            row.rec.lease_token = lease.lease_token or ids.new_lease_token()
            row.rec.pool_id = req.pool_id
            row.rec.worker_id = ""
            row.lease_expires_us = expires
            reply.tasks.append(row.copy())
        return reply

    def _renew(self, req: leases_pb2.RenewLeasesRequest) -> leases_pb2.RenewLeasesReply:
        reply = leases_pb2.RenewLeasesReply()
        if not req.refs:
            return reply
        expires = self._now_us() + self._lease_ms(req.lease_ms) * 1000
        for ref in req.refs:
            row = self.tasks.get(norm_uuid(ref.task_id))
            if row is None or not row.holds(ref) or row.state not in LEASED:
                reply.lost.append(ref.task_id)
                continue
            row.lease_expires_us = expires
            if row.rec.cancel_requested:
                reply.cancel_requested.append(row.id)
        return reply

    def _rescue(self, req: leases_pb2.RescueRequest) -> leases_pb2.RescueReply:
        now = self._now_us()
        limit = req.limit if req.limit > 0 else RESCUE_DEFAULT_LIMIT
        max_rescues = req.max_rescues if req.max_rescues > 0 else self.settings.max_rescues
        lapsed = sorted(
            (r for r in self.tasks if r.state in LEASED and 0 < r.lease_expires_us < now),
            key=lambda r: r.lease_expires_us,
        )[:limit]
        reply = leases_pb2.RescueReply()
        for row in lapsed:
            death = Death(
                started=row.state is S.RUNNING,
                delay_ms=max(0, req.retry_delay_ms),
                max_retries=req.default_max_retries,
                max_rescues=max_rescues,
                # As the store's rescue: a lapsed pool never said it had not started.
                cancel_step=task_pb2.CANCEL_STEP_KILL,
            )
            if die(row, death, now):
                (reply.requeued if row.state is S.QUEUED else reply.failed).append(row.copy())
        return reply

    # --- outcomes and cancels -----------------------------------------------------------
    def _report(self, req: leases_pb2.ReportRequest) -> leases_pb2.ReportReply:
        if not (req.started or req.completed or req.released or req.died):
            return leases_pb2.ReportReply()
        return apply_report(self.tasks, req, self._now_us())

    def _cancel(self, req: tasks_pb2.CancelTasksRequest) -> tasks_pb2.CancelTasksReply:
        if not req.ids:
            return tasks_pb2.CancelTasksReply()
        return apply_cancel(self.tasks, req, self._now_us())

    def _promote_due(self, req: lanes_pb2.PromoteDueRequest) -> lanes_pb2.PromoteDueReply:
        now = self._now_us()
        limit = req.limit if req.limit > 0 else PROMOTE_DEFAULT_LIMIT
        due = sorted(
            (r for r in self.tasks if r.state in DUE_STATES and 0 < r.rec.run_at_us <= now),
            key=lambda r: r.rec.run_at_us,
        )[:limit]
        reply = lanes_pb2.PromoteDueReply()
        for row in due:
            if row.state in SRC_PROMOTE:
                move(row, S.QUEUED, now)
                reply.tasks.append(record_queued_ref(row.rec))
        waiting = [r.rec.run_at_us for r in self.tasks if r.state in DUE_STATES and r.rec.run_at_us]
        reply.next_due_us = min(waiting, default=0)
        return reply

    # --- flow control ----------------------------------------------------------------------
    def _change_limit(self, req: flow_pb2.ChangeLimitRequest) -> flow_pb2.ChangeLimitReply:
        return self.flow.change(req, tasks=self.tasks, now_us=self._now_us())

    def _leased_flow(self, req: flow_pb2.LeasedFlowRequest) -> flow_pb2.LeasedFlowReply:
        return self.flow.leased(req, self.tasks)

    # --- pools ---------------------------------------------------------------------------
    def _heartbeat(self, req: pools_pb2.HeartbeatRequest) -> pools_pb2.HeartbeatReply:
        if not req.pool_id:
            raise errors.invalid([FieldViolation(field="pool_id", description="must not be empty")])
        self._pools[req.pool_id] = _Beat(request=req, at_us=self._now_us())
        # Declared names are kept for good: submittable while no pool serves them.
        self._names.update(n for n in req.task_names if n)
        return pools_pb2.HeartbeatReply()

    def _task_names(self, req: pools_pb2.TaskNamesRequest) -> pools_pb2.TaskNamesReply:
        if req.max_age_ms <= 0:  # what may be submitted: every name ever declared
            return pools_pb2.TaskNamesReply(names=sorted(self._names))
        since = self._now_us() - req.max_age_ms * 1000
        live = {
            name
            for beat in self._pools.values()
            if beat.at_us > since and beat.request.is_running
            for name in beat.request.task_names
        }
        return pools_pb2.TaskNamesReply(names=sorted(live))
