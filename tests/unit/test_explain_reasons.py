"""ExplainTask's reasons and messages (gateway/explain.py) from records and store facts."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import timestamp_pb2

from taskyard.bus.v1 import flow_pb2, task_record_pb2, tasks_pb2
from taskyard.core import contract, errors
from taskyard.core.clock import ManualClock, to_us
from taskyard.core.states import TaskState
from taskyard.core.validation import QUOTE_CHARS
from taskyard.gateway.explain import SHOWN_HOLDERS, Explainer
from taskyard.scheduler import admission
from taskyard.v1 import limit_pb2, task_pb2
from taskyard.v1 import task_service_pb2 as R

TID = "0190f0c2-0000-7000-8000-000000000001"


class FakeStore:
    def __init__(
        self,
        facts: tasks_pb2.ExplainFactsReply | None = None,
        failures: tasks_pb2.GetFailuresReply | None = None,
    ) -> None:
        self.facts = facts or tasks_pb2.ExplainFactsReply(found=True)
        self.failures = failures or tasks_pb2.GetFailuresReply()
        self.kinds: list[int] = []
        self.requests: list[Any] = []

    async def call(self, method: contract.Method[Any, Any], request: Any, **_: Any) -> Any:
        self.kinds.append(method.kind)
        self.requests.append(request)
        if method is contract.STORE_FAILURES:
            return self.failures
        assert method is contract.STORE_EXPLAIN
        return self.facts


def _rec(state: TaskState, **kw: Any) -> task_record_pb2.TaskRecord:
    return task_record_pb2.TaskRecord(id=TID, name="add", queue="default", state=int(state), attempt=1, **kw)  # type: ignore[arg-type]


async def _explain(rec: task_record_pb2.TaskRecord, store: FakeStore | None = None) -> R.ExplainTaskResponse:
    store = store or FakeStore()
    return await Explainer(store, clock=CLOCK).explain(rec)


CLOCK = ManualClock(start=1_800_000_000.0)


async def test_eta() -> None:
    out = await _explain(_rec(TaskState.SCHEDULED, run_at_us=to_us(CLOCK.now() + 41)))
    assert out.reason == R.WAIT_REASON_ETA
    assert out.message == "waiting for its ETA (in 41 s)"
    assert out.until.ToMicroseconds() == to_us(CLOCK.now() + 41)


async def test_retry_delay_names_the_failure() -> None:
    rec = _rec(
        TaskState.RETRYING,
        run_at_us=to_us(CLOCK.now() + 180),
        failure=task_pb2.TaskFailure(type="RuntimeError", message="boom", attempt=1),
    )
    rec.attempt = 2
    out = await _explain(rec)
    assert out.reason == R.WAIT_REASON_RETRY_DELAY
    assert out.message == "attempt 1 failed after RuntimeError: boom; attempt 2 is due in 3 min"


@pytest.mark.parametrize(
    ("state", "reason", "text"),
    [
        (TaskState.RUNNING, R.WAIT_REASON_RUNNING, "attempt 1 is running"),
        (TaskState.ASSIGNED, R.WAIT_REASON_RUNNING, "about to start"),
        (TaskState.SUCCESS, R.WAIT_REASON_FINAL, "succeeded at attempt 1"),
        (TaskState.CANCELLED, R.WAIT_REASON_FINAL, "cancelled"),
        (TaskState.FAILURE, R.WAIT_REASON_FINAL, "failed for good"),
    ],
)
async def test_states_that_need_no_store_read(state: TaskState, reason: int, text: str) -> None:
    store = FakeStore()
    out = await _explain(_rec(state), store)
    assert out.reason == reason and text in out.message
    assert store.kinds == []


async def test_a_final_task_tells_its_uncounted_runs() -> None:
    rec = _rec(TaskState.SUCCESS, uncharged_attempts=1, late_reports=2, late_attempt=2)
    rec.attempt = 3
    out = await _explain(rec)
    assert out.message == (
        "it succeeded at attempt 3 (1 attempt not charged to its retries; "
        "2 late outcomes refused, the last of attempt 2)"
    )
    assert out.task.uncharged_attempts == 1 and out.task.late_reports == 2 and out.task.late_attempt == 2


async def test_failed_attempts_a_circuit_breaker_refunded_are_told() -> None:
    rec = _rec(
        TaskState.RETRYING,
        uncharged_attempts=2,
        run_at_us=to_us(CLOCK.now() + 5),
        failure=task_pb2.TaskFailure(type="ConnectionError", message="refused", attempt=2),
    )
    rec.attempt = 3
    # The store counts them (a throttled task has thousands of failures): no failure is read.
    failures = tasks_pb2.GetFailuresReply(tasks=[tasks_pb2.TaskFailures(task_id=TID, earlier=2, refunded=2)])
    store = FakeStore(failures=failures)
    out = await _explain(rec, store)
    assert out.reason == R.WAIT_REASON_RETRY_DELAY
    assert out.message.endswith("; 2 failed attempts refunded by a circuit breaker (an outage's failures)")
    assert store.kinds == [contract.STORE_FAILURES.kind]
    assert [(list(r.task_ids), r.counts_only) for r in store.requests] == [([TID], True)]
    # No uncharged attempt, no read of its failures.
    store = FakeStore(failures=failures)
    rec.uncharged_attempts = 0
    assert "circuit breaker" not in (await _explain(rec, store)).message and store.kinds == []


async def test_dependencies() -> None:
    ids = [f"0190f0c2-0000-7000-8000-00000000000{i}" for i in range(2, 7)]
    out = await _explain(
        _rec(TaskState.PENDING), FakeStore(tasks_pb2.ExplainFactsReply(found=True, waiting_on=ids))
    )
    assert out.reason == R.WAIT_REASON_DEPENDENCY
    assert list(out.waiting_on) == ids
    assert out.message.startswith("waiting for 5 dependencies to succeed: ") and out.message.endswith(
        "and 2 more"
    )


@pytest.mark.parametrize(
    ("facts", "reason", "text"),
    [
        (
            dict(queue_paused=True, pools=1, capacity=4),
            R.WAIT_REASON_QUEUE_PAUSED,
            "queue 'default' is paused",
        ),
        (dict(pools=0), R.WAIT_REASON_NO_POOL, "no live worker pool serves 'add'"),
        (
            dict(pools=2, capacity=8, running=8, depth_ahead=12),
            R.WAIT_REASON_SLOTS_BUSY,
            "all 8 slots of the 2 pools serving 'add' are busy; 12 tasks ahead of it",
        ),
        (dict(pools=1, capacity=4, running=1, depth_ahead=0), R.WAIT_REASON_DISPATCHING, "3 slots free"),
    ],
)
async def test_queued(facts: dict[str, Any], reason: int, text: str) -> None:
    out = await _explain(_rec(TaskState.QUEUED), FakeStore(tasks_pb2.ExplainFactsReply(found=True, **facts)))
    assert out.reason == reason
    assert text in out.message
    assert out.lane_depth_ahead == facts.get("depth_ahead", 0)


class FakeScheduler:
    """A leader's FLOW_GATES answer (or none: ``reply`` None times out)."""

    def __init__(self, reply: flow_pb2.FlowGatesReply | None) -> None:
        self.reply = reply
        self.requests: list[flow_pb2.FlowGatesRequest] = []

    async def call(self, method: contract.Method[Any, Any], request: Any, **options: Any) -> Any:
        assert method is contract.FLOW_GATES and options["timeout"] <= 1.0
        self.requests.append(request)
        if self.reply is None:
            raise errors.deadline("no reply within 0.5 s")
        return self.reply


def _gated(reason: int, **gate: Any) -> flow_pb2.FlowGatesReply:
    return flow_pb2.FlowGatesReply(
        gates=[flow_pb2.TaskGate(task_id=TID, reason=reason, gate=limit_pb2.FlowGate(**gate))]  # type: ignore[arg-type]
    )


SLOTS_BUSY = tasks_pb2.ExplainFactsReply(found=True, pools=1, capacity=2, running=2, depth_ahead=4)
SOON = timestamp_pb2.Timestamp()
SOON.FromMicroseconds(to_us(CLOCK.now() + 0.4))


@pytest.mark.parametrize(
    ("reply", "reason", "text"),
    [
        (
            _gated(R.WAIT_REASON_RATE_LIMITED, limit="api", key="customer:42", next_admission_at=SOON),
            R.WAIT_REASON_RATE_LIMITED,
            "held by rate limit 'api' (key 'customer:42'): next admission in 0.4 s",
        ),
        (
            _gated(R.WAIT_REASON_RATE_LIMITED, limit="api", next_admission_at=SOON),
            R.WAIT_REASON_RATE_LIMITED,
            "held by rate limit 'api': next admission in 0.4 s",
        ),
        (
            _gated(
                R.WAIT_REASON_CONCURRENCY_FULL,
                limit="per-customer",
                key="customer:42",
                holder_ids=["a", "b", "c"],
            ),
            R.WAIT_REASON_CONCURRENCY_FULL,
            "concurrency limit 'per-customer' is full for key 'customer:42': held by 3 tasks (a, b, c)",
        ),
        (
            _gated(R.WAIT_REASON_CONCURRENCY_FULL, limit="all", holder_ids=list("abcde")),
            R.WAIT_REASON_CONCURRENCY_FULL,
            "concurrency limit 'all' is full: held by 5 tasks (a, b, c and 2 more)",
        ),
        (
            # As many ids as the scheduler sends at most: there may be more holders.
            _gated(
                R.WAIT_REASON_CONCURRENCY_FULL,
                limit="all",
                holder_ids=[f"id-{i}" for i in range(SHOWN_HOLDERS)],
            ),
            R.WAIT_REASON_CONCURRENCY_FULL,
            "concurrency limit 'all' is full: held by tasks id-0, id-1, id-2 and others",
        ),
        (
            _gated(R.WAIT_REASON_RATE_LIMITED, limit='it\'s "x"', key="a b\n"),
            R.WAIT_REASON_RATE_LIMITED,
            "held by rate limit 'it\\'s \"x\"' (key 'a b\\n'): next admission soon",
        ),
        (
            _gated(R.WAIT_REASON_CONCURRENCY_FULL, limit="L" * 200, key="k" * 256),
            R.WAIT_REASON_CONCURRENCY_FULL,
            f"concurrency limit '{'L' * QUOTE_CHARS}…' is full for key '{'k' * QUOTE_CHARS}…'",
        ),
        (
            _gated(R.WAIT_REASON_FAIR_SHARE, key="tenant-a", position=2, keys_ahead=5),
            R.WAIT_REASON_FAIR_SHARE,
            "fair share: 2 tasks of key 'tenant-a' ahead of it, 5 other keys waiting",
        ),
        (
            _gated(R.WAIT_REASON_TENANT_QUOTA, limit="tenant.concurrency", key="acme", holder_ids=["a", "b"]),
            R.WAIT_REASON_TENANT_QUOTA,
            "the concurrency quota of tenant 'acme' is full: held by 2 tasks (a, b)",
        ),
        (
            _gated(R.WAIT_REASON_TENANT_QUOTA, limit="tenant.rate", key="acme", next_admission_at=SOON),
            R.WAIT_REASON_TENANT_QUOTA,
            "the rate quota of tenant 'acme' is spent: next admission in 0.4 s",
        ),
        (
            _gated(R.WAIT_REASON_TENANT_SUSPENDED),
            R.WAIT_REASON_TENANT_SUSPENDED,
            "its tenant is suspended; it runs once the tenant is resumed",
        ),
        (
            # A pool serves the name (the store's facts), none its tenant (the leader's word).
            _gated(R.WAIT_REASON_NO_POOL),
            R.WAIT_REASON_NO_POOL,
            "no live worker pool serves 'add' for its tenant; it waits until one starts",
        ),
    ],
)
async def test_a_gate_from_the_scheduler_wins(reply: flow_pb2.FlowGatesReply, reason: int, text: str) -> None:
    scheduler = FakeScheduler(reply)
    out = await Explainer(FakeStore(SLOTS_BUSY), flow_lane=scheduler, clock=CLOCK).explain(
        _rec(TaskState.QUEUED)
    )
    assert (out.reason, out.message) == (reason, text)
    assert out.gate == reply.gates[0].gate
    assert out.lane_depth_ahead == 4
    assert [list(r.task_ids) for r in scheduler.requests] == [[TID]]


@pytest.mark.parametrize(
    "reply",
    [
        None,  # no answer in time
        flow_pb2.FlowGatesReply(),  # not in its lanes
        _gated(R.WAIT_REASON_UNSPECIFIED),
        flow_pb2.FlowGatesReply(gates=[flow_pb2.TaskGate(task_id="other", reason=R.WAIT_REASON_FAIR_SHARE)]),
    ],
)
async def test_without_a_gate_the_explanation_is_the_stores(reply: flow_pb2.FlowGatesReply | None) -> None:
    out = await Explainer(FakeStore(SLOTS_BUSY), flow_lane=FakeScheduler(reply), clock=CLOCK).explain(
        _rec(TaskState.QUEUED)
    )
    assert out.reason == R.WAIT_REASON_SLOTS_BUSY and "busy; 4 tasks ahead of it" in out.message
    assert not out.HasField("gate")


async def test_only_a_queued_task_asks_the_scheduler() -> None:
    scheduler = FakeScheduler(_gated(R.WAIT_REASON_FAIR_SHARE, key="k"))
    for state in (TaskState.RUNNING, TaskState.PENDING, TaskState.SCHEDULED, TaskState.SUCCESS):
        await Explainer(FakeStore(), flow_lane=scheduler, clock=CLOCK).explain(_rec(state))
    assert scheduler.requests == []


def test_the_holders_shown_are_as_many_as_the_scheduler_sends() -> None:
    assert SHOWN_HOLDERS == admission.SHOWN_HOLDERS
