"""Which failed attempts a circuit breaker refunds (scheduler/breakers.py), with an
injected clock, and how the leader sends them to the store (scheduler/flow.py):
the failures in the window that opens it and every failure while it is open or
half-open are the outage's; the others are charged as always."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from google.protobuf.message import Message
from support.admission import Clock, Store, breaker

from taskyard.bus.v1 import flow_pb2
from taskyard.core import contract, errors, limits
from taskyard.scheduler import flow as flow_module
from taskyard.scheduler.breakers import OPEN, Breakers, Refund
from taskyard.scheduler.flow import Flow
from taskyard.scheduler.lanes import Lanes
from taskyard.v1 import limit_pb2

GATE = ("payments", "payments-api")
OTHER = ("payments", "ledger-api")


def _breakers(
    failures: int = 3, window_ms: int = 10_000, cool_down_ms: int = 2_000
) -> tuple[Breakers, Clock]:
    clock = Clock()
    out = Breakers(clock)
    out.set_specs({"payments": breaker("payments", failures, window_ms, cool_down_ms).breaker})
    return out, clock


def _admit(b: Breakers, task: str, attempt: int, *gates: tuple[str, str]) -> str:
    token = f"{task}/{attempt}"
    checked = []
    for gate in gates or (GATE,):
        admitted, probe, _at = b.check(gate)
        assert admitted
        checked.append((gate, probe))
    b.admitted(task, token, checked)
    return token


def _end(b: Breakers, task: str, attempt: int, *, failed: bool = True) -> list[tuple[str, str]]:
    return b.outcome(task, f"{task}/{attempt}", failed=failed, attempt=attempt)


def _refunded(b: Breakers) -> list[tuple[str, int, float]]:
    out = [(r.task_id, r.attempt, r.probe_at) for r in b.refunds]
    b.refunds.clear()
    return out


def test_the_failures_that_open_it_are_refunded_and_the_ones_before_its_window_are_not() -> None:
    b, clock = _breakers(failures=3, window_ms=10_000, cool_down_ms=2_000)
    _admit(b, "old", 1)
    _end(b, "old", 1)
    clock.now += 11.0  # out of the window by the time it opens
    for task in ("a", "b", "ok", "c"):
        _admit(b, task, 1)
    _end(b, "a", 1)
    _end(b, "ok", 1, failed=False)
    _end(b, "b", 1)
    # Two failures do not open it: charged for now, refunded if it opens within the window.
    assert _refunded(b) == []
    clock.now += 1.0
    assert _end(b, "c", 1) == [GATE]
    probe_at = clock.now + 2.0
    assert sorted(_refunded(b)) == [("a", 1, probe_at), ("b", 1, probe_at), ("c", 1, probe_at)]


def test_every_failure_while_it_is_open_or_half_open_is_refunded_a_failed_probe_too() -> None:
    b, clock = _breakers(failures=1, cool_down_ms=2_000)
    _admit(b, "a", 1)
    _admit(b, "late", 1)  # admitted before it opened, ends while it is open
    _admit(b, "late-ok", 1)
    _end(b, "a", 1)
    opened_until = clock.now + 2.0
    assert _refunded(b) == [("a", 1, opened_until)]
    clock.now += 0.5
    assert _end(b, "late", 1) == []  # not counted: it tells of the outage it knows
    _end(b, "late-ok", 1, failed=False)
    assert _refunded(b) == [("late", 1, opened_until)]

    clock.now = opened_until  # half-open: a probe
    _admit(b, "a", 2)
    assert _end(b, "a", 2) == [GATE]  # the failed probe opens it again
    assert _refunded(b) == [("a", 2, clock.now + 2.0)]

    clock.now += 2.0
    _admit(b, "a", 3)
    assert _end(b, "a", 3, failed=False) == [GATE]  # closed
    _admit(b, "after", 1)
    _end(b, "after", 1)
    # Closed again, with a threshold of one: this failure opens it anew, and is refunded for that.
    assert _refunded(b) == [("after", 1, clock.now + 2.0)]


def test_a_failure_of_a_closed_breaker_that_stays_closed_is_charged() -> None:
    b, _clock = _breakers(failures=3)
    _admit(b, "a", 1)
    _end(b, "a", 1)
    _admit(b, "a", 2)
    _end(b, "a", 2, failed=False)
    assert b.refunds == []


def test_an_attempt_is_refunded_once_whatever_breakers_it_went_through_and_never_without_its_number() -> None:
    b, clock = _breakers(failures=1)
    _admit(b, "both", 1, GATE, OTHER)
    _admit(b, "x", 1, GATE, OTHER)
    assert sorted(_end(b, "both", 1)) == sorted([GATE, OTHER])
    assert _refunded(b) == [("both", 1, clock.now + 2.0)]
    clock.now += 0.1
    # An outcome whose attempt number is unknown is never refunded.
    assert b.outcome("x", "x/1", failed=True) == []
    assert b.refunds == []


def test_refunds_past_the_cap_are_dropped_and_counted() -> None:
    b, _clock = _breakers(failures=1)
    b.MAX_REFUNDS = 2
    for task in ("a", "b", "c"):
        _admit(b, task, 1)
    for task in ("a", "b", "c"):
        _end(b, task, 1)
    assert [r.task_id for r in b.refunds] == ["a", "b"] and b.refunds_dropped == 1


class RefundStore(Store):
    """The store's side of refunds: records each request; ``pending`` attempts are
    answered pending once; ``refuse`` makes it answer with that error."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[flow_pb2.BreakerRefundsRequest] = []
        self.pending: set[tuple[str, int]] = set()
        self.refuse: errors.TaskyardError | None = None

    async def call(self, method: contract.Method[Any, Any], request: Message) -> Message:
        if method is not contract.STORE_BREAKER_REFUNDS:
            return await super().call(method, request)
        assert isinstance(request, flow_pb2.BreakerRefundsRequest)
        self.requests.append(request)
        if self.refuse is not None:
            raise self.refuse
        reply = flow_pb2.BreakerRefundsReply()
        for r in request.refunds:
            if (r.task_id, r.attempt) in self.pending:
                self.pending.discard((r.task_id, r.attempt))
                reply.pending.append(r)
            else:
                reply.refunded += 1
        return reply


def _flow(store: RefundStore, clock: Clock) -> Flow:
    return Flow(Lanes(), cast(Any, store), wake=lambda: None, clock=clock, wall=lambda: 5000.0, term=4)


def test_the_leader_sends_its_refunds_fenced_by_its_term_in_batches() -> None:
    store, clock = RefundStore(), Clock()
    flow = _flow(store, clock)
    n = flow_module.REFUND_BATCH + 1
    flow.admission.breakers.refunds = [
        Refund(task_id=f"t{i}", attempt=1, probe_at=clock.now + 2.0) for i in range(n)
    ]
    assert asyncio.run(flow.flush_breaker_refunds()) is False
    assert [len(r.refunds) for r in store.requests] == [flow_module.REFUND_BATCH, 1]
    assert {r.term for r in store.requests} == {4}
    first = store.requests[0].refunds[0]
    # The probe time in the store's terms: wall clock microseconds.
    assert (first.task_id, first.attempt, first.next_probe_at_us) == ("t0", 1, 5002_000_000)
    assert flow.admission.breakers.refunds == []


def test_a_refund_the_store_cannot_make_yet_is_sent_again_until_its_patience_runs_out() -> None:
    store, clock = RefundStore(), Clock()
    flow = _flow(store, clock)
    store.pending = {("t0", 1)}
    flow.admission.breakers.refunds = [Refund(task_id="t0", attempt=1, probe_at=clock.now)]
    assert asyncio.run(flow.flush_breaker_refunds()) is True
    assert asyncio.run(flow.flush_breaker_refunds()) is False  # its failure was written meanwhile
    assert [[(r.task_id, r.attempt) for r in q.refunds] for q in store.requests] == [[("t0", 1)], [("t0", 1)]]

    store.pending = {("t1", 1)}
    flow.admission.breakers.refunds = [Refund(task_id="t1", attempt=1, probe_at=clock.now)]
    assert asyncio.run(flow.flush_breaker_refunds()) is True
    clock.now += flow_module.REFUND_PATIENCE
    store.pending = {("t1", 1)}
    assert asyncio.run(flow.flush_breaker_refunds()) is False  # given up: its report was lost


def test_a_store_out_of_reach_keeps_them_and_a_new_leaders_term_drops_them() -> None:
    store, clock = RefundStore(), Clock()
    flow = _flow(store, clock)
    store.refuse = errors.unavailable("the store is restarting")
    flow.admission.breakers.refunds = [Refund(task_id="t0", attempt=1, probe_at=clock.now)]
    assert asyncio.run(flow.flush_breaker_refunds()) is True
    clock.now += flow_module.REFUND_PATIENCE + 1  # patience counts from when it answers again
    store.refuse = None
    assert asyncio.run(flow.flush_breaker_refunds()) is False
    assert [len(q.refunds) for q in store.requests] == [1, 1] and store.requests[-1].refunds[
        0
    ].task_id == "t0"

    store.refuse = errors.TaskyardError(errors.Code.FAILED_PRECONDITION, "NOT_LEADER", "term 4 is over")
    flow.admission.breakers.refunds = [Refund(task_id="t1", attempt=1, probe_at=clock.now)]
    assert asyncio.run(flow.flush_breaker_refunds()) is False
    store.refuse = None
    assert asyncio.run(flow.flush_breaker_refunds()) is False
    assert [q.refunds[0].task_id for q in store.requests[2:]] == ["t1"]


def test_an_outcome_that_decides_a_refund_wakes_the_sender() -> None:
    store, clock = RefundStore(), Clock()
    flow = _flow(store, clock)
    flow.admission.breakers.set_specs({"payments": breaker("payments", 1, 10_000, 1_000).breaker})
    flow.admission.breakers.admitted("a", "tok", [(GATE, False)])
    flow.outcome("a", "tok", failed=True, attempt=1)
    assert flow.refund_news.is_set()
    assert [(r.task_id, r.attempt) for r in flow.admission.breakers.refunds] == [("a", 1)]


def _bounded(*, max_refunds: int = 0, max_outage_ms: int = 0) -> tuple[Breakers, Clock]:
    """A breaker opened by 2 failures in 10 s, a probe every second."""
    b, clock = _breakers(failures=2, window_ms=10_000, cool_down_ms=1_000)
    spec = breaker("payments", 2, 10_000, 1_000).breaker
    spec.max_refunds_per_task = max_refunds
    if max_outage_ms:
        spec.max_outage.FromMilliseconds(max_outage_ms)
    b.set_specs({"payments": spec})
    return b, clock


def _probe_until_charged(b: Breakers, clock: Clock, task: str, *, first: int) -> int:
    """Fail ``task``'s probes, one per cool-down, until one is charged; returns its attempt."""
    for attempt in range(first, first + 1000):
        admitted, _probe, at = b.check(GATE)
        if not admitted:
            assert at is not None
            clock.now = at
        _admit(b, task, attempt)
        _end(b, task, attempt)
        if not [r for r in _refunded(b) if r[0] == task]:
            return attempt
    raise AssertionError(f"{task}'s failures were refunded a thousand times")


def test_a_task_whose_own_code_fails_is_refunded_at_most_max_refunds_per_task_times() -> None:
    b, clock = _bounded()
    _admit(b, "other", 1)
    _end(b, "other", 1)
    _admit(b, "bug", 1)
    _end(b, "bug", 1)  # opens it: both refunded
    assert sorted(r[0] for r in _refunded(b)) == ["bug", "other"]
    # Every later failed probe of "bug" is refunded until its 20th refund, then charged:
    # its retries are spent as always and it ends a dead letter.
    charged = _probe_until_charged(b, clock, "bug", first=2)
    assert charged == limits.DEFAULT_MAX_REFUNDS_PER_TASK + 1
    assert b.refunds_refused == 1
    # Another task of the same outage still has its own refunds.
    clock.now = b.check(GATE)[2] or clock.now
    _admit(b, "other", 2)
    _end(b, "other", 2)
    assert [r[:2] for r in _refunded(b)] == [("other", 2)]


def test_max_refunds_per_task_is_the_breakers_own_number() -> None:
    b, clock = _bounded(max_refunds=3)
    _admit(b, "a", 1)
    _admit(b, "bug", 1)
    _end(b, "a", 1)
    _end(b, "bug", 1)
    _refunded(b)
    assert _probe_until_charged(b, clock, "bug", first=2) == 4  # attempts 1, 2, 3 refunded


def test_past_max_outage_a_failed_probe_is_charged_and_a_new_outage_refunds_again() -> None:
    b, clock = _bounded(max_refunds=10_000, max_outage_ms=5_000)
    opened = clock.now
    _admit(b, "a", 1)
    _admit(b, "b", 1)
    _end(b, "a", 1)
    _end(b, "b", 1)
    assert len(_refunded(b)) == 2
    charged = _probe_until_charged(b, clock, "a", first=2)
    # Failed probes re-open it every second; the outage's clock runs from when it opened.
    assert clock.now - opened >= 5.0 and charged == 6
    assert b.state(GATE) == OPEN
    clock.now = b.check(GATE)[2] or clock.now
    _admit(b, "a", charged + 1)
    assert _end(b, "a", charged + 1, failed=False) == [GATE]  # recovered: closed
    _admit(b, "c", 1)
    _admit(b, "d", 1)
    _end(b, "c", 1)
    _end(b, "d", 1)  # a new outage: refunded again
    assert sorted(r[0] for r in _refunded(b)) == ["c", "d"]


def test_bad_refund_bounds_are_refused_by_field() -> None:
    spec = limit_pb2.CircuitBreaker(failure_threshold=1, max_refunds_per_task=10_001)
    spec.max_outage.FromMilliseconds(0)
    fields = sorted(v.field for v in limits.breaker_violations(spec, "limit.breaker"))
    assert fields == ["limit.breaker.max_outage", "limit.breaker.max_refunds_per_task"]
