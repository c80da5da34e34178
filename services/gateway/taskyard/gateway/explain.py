"""ExplainTask: why a task is not running yet, in one reason and one sentence.

The state decides most of it (final, running, SCHEDULED until its ETA, RETRYING
until its backoff ends). For PENDING and QUEUED tasks one store read
(``ExplainFactsRequest``) supplies the rest: unfinished dependencies, its queue's
pause flag, the live pools that serve its name with their capacity and load,
and how many QUEUED tasks those pools will take before it. A QUEUED task held
by flow control is explained by the leading scheduler, which alone knows its
gate (FLOW_GATES, flow_gates.py): when it answers with one, the gate wins.

Also GetTask's list of failed attempts (``GetFailuresRequest``).
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Sequence
from typing import TypeVar

from google.protobuf.message import Message

from taskyard.bus.v1 import flow_pb2, task_record_pb2, tasks_pb2
from taskyard.core import codec, contract, errors, rpc, tenants
from taskyard.core.clock import Clock, SystemClock, from_us
from taskyard.core.states import TaskState
from taskyard.gateway import flow_gates
from taskyard.v1 import limit_pb2, task_service_pb2

M = TypeVar("M", bound=Message)
S = TaskState
R = task_service_pb2

# Ids listed in a message; the response's waiting_on has them all.
SHOWN_IDS = 3
# The most holders the scheduler names for a full concurrency limit (its
# admission.SHOWN_HOLDERS): that many ids may stand for more holders.
SHOWN_HOLDERS = 10
# The reasons of a gate (what the scheduler may answer; anything else: no gate).
GATE_REASONS = frozenset(
    {
        R.WAIT_REASON_RATE_LIMITED,
        R.WAIT_REASON_CONCURRENCY_FULL,
        R.WAIT_REASON_FAIR_SHARE,
        R.WAIT_REASON_BREAKER_OPEN,
        # Tenants (the leader's word: scheduler/flow.py).
        R.WAIT_REASON_TENANT_QUOTA,
        R.WAIT_REASON_TENANT_SUSPENDED,
        R.WAIT_REASON_NO_POOL,
    }
)


def _in(seconds: float) -> str:
    """A short human duration: "in 41 s", "in 3 min", "now"."""
    if seconds < 0.5:
        return "now"
    if seconds < 120:
        return f"in {seconds:.0f} s"
    if seconds < 7200:
        return f"in {seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"in {seconds / 3600:.1f} h"
    return f"in {seconds / 86400:.1f} days"


def _ids(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:SHOWN_IDS])
    return shown + (f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else "")


def _holders(ids: Sequence[str]) -> str:
    """Who holds a full concurrency limit: the count when the scheduler named them
    all, else only that there are more than the ids it sent."""
    if not ids:
        return ""
    if len(ids) >= SHOWN_HOLDERS:
        return f": held by tasks {', '.join(ids[:SHOWN_IDS])} and others"
    return f": held by {_plural(len(ids), 'task')} ({_ids(ids)})"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


class Explainer:
    def __init__(
        self, store: rpc.Caller, *, flow_lane: rpc.Caller | None = None, clock: Clock | None = None
    ) -> None:
        self._store = store
        self._flow_lane = flow_lane
        self._clock = clock or SystemClock()

    async def failures(self, task_id: str, *, counts_only: bool = False) -> tasks_pb2.TaskFailures:
        """Its last failed attempts (at most 100, the store's bound) and how many came
        before; with ``counts_only`` just the counts."""
        reply = await self._store.call(
            contract.STORE_FAILURES, tasks_pb2.GetFailuresRequest(task_ids=[task_id], counts_only=counts_only)
        )
        for t in reply.tasks:
            if t.task_id == task_id:
                return t
        return tasks_pb2.TaskFailures(task_id=task_id)

    async def _facts(self, task_id: str) -> tasks_pb2.ExplainFactsReply:
        return await self._store.call(contract.STORE_EXPLAIN, tasks_pb2.ExplainFactsRequest(task_id=task_id))

    async def _gate(self, task_id: str) -> flow_pb2.TaskGate | None:
        """The flow gate that holds the task on the leader, if it says one does."""
        if self._flow_lane is None:
            return None
        reply = await flow_gates.ask(self._flow_lane, task_ids=[task_id])
        if reply is None:
            return None
        for gate in reply.gates:
            if gate.task_id == task_id and gate.reason in GATE_REASONS:
                return gate
        return None

    async def explain(self, rec: task_record_pb2.TaskRecord) -> task_service_pb2.ExplainTaskResponse:
        out = R.ExplainTaskResponse(task=codec.record_to_task(rec, with_payload=False))
        state = TaskState(rec.state)
        if state.is_final:
            out.reason = R.WAIT_REASON_FINAL
            out.message = _final_message(rec) + _executions(rec)
        elif state in (S.ASSIGNED, S.RUNNING):
            out.reason = R.WAIT_REASON_RUNNING
            where = f" on {rec.worker_id}" if rec.worker_id else ""
            out.message = (
                f"attempt {rec.attempt} is running{where}"
                if state is S.RUNNING
                else f"attempt {rec.attempt} is leased to pool {rec.pool_id or '?'} and about to start"
            )
            if rec.cancel_requested:
                out.message += "; a cancel was requested"
        elif state in (S.SCHEDULED, S.RETRYING):
            self._timed(rec, state, out)
        elif state is S.PENDING:
            facts = await self._facts(rec.id)
            out.waiting_on.extend(facts.waiting_on)
            out.reason = R.WAIT_REASON_DEPENDENCY
            if facts.waiting_on:
                n = len(facts.waiting_on)
                deps = "dependency" if n == 1 else "dependencies"
                out.message = f"waiting for {n} {deps} to succeed: {_ids(list(facts.waiting_on))}"
            else:
                out.message = "its dependencies have succeeded; it is about to be queued"
        else:
            facts, gate = await asyncio.gather(self._facts(rec.id), self._gate(rec.id))
            self._queued(rec, facts, out)
            if gate is not None:
                out.reason = gate.reason
                out.gate.CopyFrom(gate.gate)
                # As the task's tenant knows the limit ("tenant.*" quotas are no one's).
                out.gate.limit = tenants.strip(rec.tenant, gate.gate.limit)
                out.message = self._gated(gate.reason, out.gate)
                if gate.reason == R.WAIT_REASON_NO_POOL:
                    out.message = (
                        f"no live worker pool serves {rec.name!r} for its tenant; it waits until one starts"
                    )
        if state not in (S.SCHEDULED, S.RETRYING) and eta_had_passed(rec):
            out.message += (
                f"; its ETA ({_instant(rec.run_at_us)}) had passed at submission: it was queued at once"
            )
        out.message += await self._refunds(rec)
        return out

    async def _refunds(self, rec: task_record_pb2.TaskRecord) -> str:
        """Its failed attempts a circuit breaker refunded (an outage's: TaskFailure.refunded),
        read only for a task with uncharged attempts: counted by the store, not from
        its failures (a throttled task has thousands)."""
        if not rec.uncharged_attempts:
            return ""
        try:
            refunded = (await self.failures(rec.id, counts_only=True)).refunded
        except errors.TaskyardError:
            return ""  # the rest of the answer stands without it
        if not refunded:
            return ""
        return f"; {_plural(refunded, 'failed attempt')} refunded by a circuit breaker (an outage's failures)"

    def _timed(
        self, rec: task_record_pb2.TaskRecord, state: TaskState, out: task_service_pb2.ExplainTaskResponse
    ) -> None:
        when = _in(from_us(rec.run_at_us) - self._clock.now()) if rec.run_at_us else "soon"
        if rec.run_at_us:
            out.until.FromMicroseconds(rec.run_at_us)
        if state is S.SCHEDULED:
            out.reason = R.WAIT_REASON_ETA
            out.message = f"waiting for its ETA ({when})"
            return
        out.reason = R.WAIT_REASON_RETRY_DELAY
        failed = ""
        if rec.HasField("failure") and rec.failure.type:
            failed = f" after {rec.failure.type}"
            if rec.failure.message:
                failed += f": {codec.quote(rec.failure.message)[1:-1]}"
        out.message = f"attempt {rec.attempt - 1} failed{failed}; attempt {rec.attempt} is due {when}"

    def _queued(
        self,
        rec: task_record_pb2.TaskRecord,
        facts: tasks_pb2.ExplainFactsReply,
        out: task_service_pb2.ExplainTaskResponse,
    ) -> None:
        out.lane_depth_ahead = facts.depth_ahead
        ahead = f"{_plural(facts.depth_ahead, 'task')} ahead of it"
        if facts.queue_paused:
            out.reason = R.WAIT_REASON_QUEUE_PAUSED
            queue = tenants.strip(rec.tenant, rec.queue)
            out.message = f"queue {queue!r} is paused; it runs once the queue is resumed"
        elif facts.pools == 0:
            out.reason = R.WAIT_REASON_NO_POOL
            out.message = f"no live worker pool serves {rec.name!r}; it waits until one starts"
        elif facts.running >= facts.capacity:
            out.reason = R.WAIT_REASON_SLOTS_BUSY
            out.message = (
                f"all {_plural(facts.capacity, 'slot')} of the {_plural(facts.pools, 'pool')} serving "
                f"{rec.name!r} are busy; {ahead}"
            )
        else:
            out.reason = R.WAIT_REASON_DISPATCHING
            free = facts.capacity - facts.running
            out.message = f"{_plural(free, 'slot')} free; about to be dispatched ({ahead})"

    def _gated(self, reason: int, gate: limit_pb2.FlowGate) -> str:
        # Names and keys are the user's: quoted and bounded, as in every error message.
        limit = codec.quote(gate.limit)
        if reason == R.WAIT_REASON_RATE_LIMITED:
            key = f" (key {codec.quote(gate.key)})" if gate.key else ""
            when = "soon"
            if gate.HasField("next_admission_at"):
                seconds = max(0.0, gate.next_admission_at.ToMicroseconds() / 1e6 - self._clock.now())
                when = f"in {seconds:.1f} s"
            return f"held by rate limit {limit}{key}: next admission {when}"
        if reason == R.WAIT_REASON_BREAKER_OPEN:
            key = f" for key {codec.quote(gate.key)}" if gate.key else ""
            if gate.HasField("next_admission_at"):
                seconds = max(0.0, gate.next_admission_at.ToMicroseconds() / 1e6 - self._clock.now())
                return f"circuit breaker {limit} is open{key}: next probe in {seconds:.1f} s"
            return f"circuit breaker {limit} is half-open{key}: waiting for its probe's outcome"
        if reason == R.WAIT_REASON_CONCURRENCY_FULL:
            key = f" for key {codec.quote(gate.key)}" if gate.key else ""
            return f"concurrency limit {limit} is full{key}" + _holders(list(gate.holder_ids))
        if reason == R.WAIT_REASON_TENANT_SUSPENDED:
            return "its tenant is suspended; it runs once the tenant is resumed"
        if reason == R.WAIT_REASON_TENANT_QUOTA:
            tenant = codec.quote(gate.key)
            if gate.HasField("next_admission_at"):
                seconds = max(0.0, gate.next_admission_at.ToMicroseconds() / 1e6 - self._clock.now())
                return f"the rate quota of tenant {tenant} is spent: next admission in {seconds:.1f} s"
            return f"the concurrency quota of tenant {tenant} is full" + _holders(list(gate.holder_ids))
        return (
            f"fair share: {_plural(gate.position, 'task')} of key {codec.quote(gate.key)} ahead of it, "
            f"{_plural(gate.keys_ahead, 'other key')} waiting"
        )


def _executions(rec: task_record_pb2.TaskRecord) -> str:
    """Runs the attempt number alone does not tell: re-runs that spent no retry,
    and refused late outcomes (of superseded attempts, or of a run a cancel ended
    as not started): their bodies ran too."""
    notes = []
    if rec.uncharged_attempts:
        notes.append(f"{_plural(rec.uncharged_attempts, 'attempt')} not charged to its retries")
    if rec.late_reports:
        notes.append(
            f"{_plural(rec.late_reports, 'late outcome')} refused, the last of attempt {rec.late_attempt}"
        )
    return f" ({'; '.join(notes)})" if notes else ""


def eta_had_passed(rec: task_record_pb2.TaskRecord) -> bool:
    """Whether ``rec`` was submitted with an ETA (or countdown) already passed: its
    run_at is that time, no later than its acceptance (core/eta.py)."""
    return rec.run_at_us != 0 and rec.created_at_us != 0 and rec.run_at_us <= rec.created_at_us


def _instant(us: int) -> str:
    seconds = us // 1_000_000
    try:
        return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return f"{seconds} s since 1970"


def _final_message(rec: task_record_pb2.TaskRecord) -> str:
    state = TaskState(rec.state)
    if state is S.SUCCESS:
        return f"it succeeded at attempt {rec.attempt}"
    if state is S.CANCELLED:
        return "it was cancelled" + (f": {rec.cancel_reason}" if rec.cancel_reason else "")
    what = f"{rec.failure.type}: {rec.failure.message}" if rec.HasField("failure") else "a failure"
    return f"it failed for good at attempt {rec.attempt} ({what})"
