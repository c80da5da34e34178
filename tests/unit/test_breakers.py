"""Circuit breakers: the state machine with an injected clock (scheduler/breakers.py),
then through the scheduler's admission hooks (tests/support/admission.py)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from support.admission import Clock, Harness, breaker

from taskyard.bus.v1 import flow_pb2
from taskyard.core import limits
from taskyard.scheduler import breakers as breakers_module
from taskyard.scheduler.breakers import CLOSED, HALF_OPEN, OPEN, UNBOUNDED, Breakers
from taskyard.v1 import limit_pb2, task_service_pb2

GATE = ("payments", "payments-api")


def _breakers(
    failures: int = 3,
    window_ms: int = 10_000,
    cool_down_ms: int = 2_000,
    *,
    probes: int = 0,
    min_attempts: int = 0,
) -> tuple[Breakers, Clock]:
    clock = Clock()
    out = Breakers(clock)
    out.set_specs(
        {
            "payments": breaker(
                "payments", failures, window_ms, cool_down_ms, probes=probes, min_attempts=min_attempts
            ).breaker
        }
    )
    return out, clock


def _attempt(b: Breakers, n: int, *, gate: tuple[str, str] = GATE) -> tuple[str, str]:
    admitted, probe, _at = b.check(gate)
    assert admitted
    b.admitted(f"t{n}", f"tok{n}", [(gate, probe)])
    return f"t{n}", f"tok{n}"


def _fail(b: Breakers, n: int, *, failed: bool = True) -> list[tuple[str, str]]:
    return b.outcome(f"t{n}", f"tok{n}", failed=failed)


def test_it_opens_when_the_window_holds_the_threshold_of_failures() -> None:
    b, clock = _breakers(failures=3, window_ms=10_000)
    for n in range(4):
        _attempt(b, n)
    assert _fail(b, 0) == [] and _fail(b, 1, failed=False) == [] and _fail(b, 2) == []
    assert b.state(GATE) == CLOSED
    assert _fail(b, 3) == [GATE]
    assert b.state(GATE) == OPEN
    assert b.check(GATE) == (False, False, clock.now + 2.0)
    assert [(c.change, c.failures, c.probe_at) for c in b.changes] == [("opened", 3, clock.now + 2.0)]
    assert b.opened["payments"] == 1


def test_failures_older_than_the_window_do_not_count() -> None:
    b, clock = _breakers(failures=2, window_ms=1_000)
    _attempt(b, 0)
    _attempt(b, 1)
    _fail(b, 0)
    clock.now += 1.5
    assert _fail(b, 1) == []
    assert b.state(GATE) == CLOSED


def test_min_attempts_keeps_it_closed_on_too_few_outcomes() -> None:
    b, _clock = _breakers(failures=1, min_attempts=3)
    for n in range(3):
        _attempt(b, n)
    assert _fail(b, 0) == [] and _fail(b, 1) == []
    assert _fail(b, 2) == [GATE]


def test_after_the_cool_down_it_admits_its_probes_and_a_success_closes_it() -> None:
    b, clock = _breakers(failures=1, cool_down_ms=2_000, probes=2)
    _attempt(b, 0)
    _fail(b, 0)
    assert b.room(GATE) == 0 and b.next_probe(GATE) == clock.now + 2.0
    clock.now += 2.0
    assert b.state(GATE) == HALF_OPEN and b.room(GATE) == 2 and b.next_probe(GATE) is None
    _attempt(b, 1)
    _attempt(b, 2)
    assert b.check(GATE) == (False, False, None)  # both probes out: decided by their outcomes
    assert _fail(b, 1, failed=False) == [GATE]
    assert b.state(GATE) == CLOSED and b.room(GATE) == UNBOUNDED
    assert [c.change for c in b.changes] == ["opened", "closed"]
    # The other probe's failure counts as any outcome of a closed breaker: 1 opens it.
    assert _fail(b, 2) == [GATE]
    assert b.state(GATE) == OPEN


def test_a_failed_probe_opens_it_again_for_another_cool_down() -> None:
    b, clock = _breakers(failures=1, cool_down_ms=2_000)
    _attempt(b, 0)
    _fail(b, 0)
    clock.now += 2.5
    _attempt(b, 1)
    clock.now += 1.0
    assert _fail(b, 1) == [GATE]
    assert b.state(GATE) == OPEN and b.next_probe(GATE) == clock.now + 2.0
    assert [c.change for c in b.changes] == ["opened"]  # still the same outage


def test_outcomes_of_attempts_admitted_before_it_opened_are_ignored_while_open() -> None:
    b, clock = _breakers(failures=1)
    for n in range(3):
        _attempt(b, n)
    _fail(b, 0)
    assert _fail(b, 1, failed=False) == []
    clock.now += 2.0
    _attempt(b, 3)  # the probe
    assert _fail(b, 2) == []  # in flight since before: not the probe
    assert b.state(GATE) == HALF_OPEN and b.room(GATE) == 0


def test_a_probe_that_ends_without_an_outcome_frees_its_place() -> None:
    b, clock = _breakers(failures=1)
    _attempt(b, 0)
    _fail(b, 0)
    clock.now += 2.0
    _attempt(b, 1)
    assert b.room(GATE) == 0
    assert b.forget("t1", "tok1") == [GATE]  # its worker died, its lease lapsed
    assert b.room(GATE) == 1
    _attempt(b, 2)
    b.confirm("t2", "tok2", clock.now)
    # A lost notice: the store no longer has it leased, and its lease was known before the read.
    assert b.resync([], before=clock.now + 0.1) == [GATE]
    assert b.room(GATE) == 1
    _attempt(b, 3)
    b.confirm("t3", "tok3", clock.now)
    assert b.resync([("t3", "tok3")], before=clock.now + 0.1) == []  # still leased: kept
    assert b.room(GATE) == 0


def test_keys_have_breakers_of_their_own_and_a_gone_limit_forgets_them() -> None:
    b, _clock = _breakers(failures=1)
    other = ("payments", "other-api")
    _attempt(b, 0)
    _fail(b, 0)
    assert b.state(GATE) == OPEN and b.state(other) == CLOSED
    assert b.check(other) == (True, False, None)
    assert b.not_closed("payments") == {"payments-api": OPEN}
    b.set_specs({})
    assert b.state(GATE) == CLOSED


def test_closed_breakers_with_a_quiet_window_are_pruned() -> None:
    b, clock = _breakers(failures=5, window_ms=1_000)
    _attempt(b, 0)
    _fail(b, 0)
    assert b.prune() == 0
    clock.now += 1.5
    assert b.prune() == 1


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        (limit_pb2.CircuitBreaker(failure_threshold=0), "limit.breaker.failure_threshold"),
        (
            limit_pb2.CircuitBreaker(failure_threshold=1, half_open_probes=1001),
            "limit.breaker.half_open_probes",
        ),
        (limit_pb2.CircuitBreaker(failure_threshold=1, min_attempts=-1), "limit.breaker.min_attempts"),
    ],
)
def test_a_bad_breaker_is_refused_by_field(spec: limit_pb2.CircuitBreaker, field: str) -> None:
    violations = limits.limit_violations(limit_pb2.Limit(name="b", breaker=spec))
    assert [v.field for v in violations] == [field]


def test_a_breaker_duration_out_of_range_is_refused() -> None:
    spec = limit_pb2.Limit(name="b", breaker=limit_pb2.CircuitBreaker(failure_threshold=1))
    spec.breaker.cool_down.FromSeconds(2 * 86_400)
    assert [v.field for v in limits.limit_violations(spec)] == ["limit.breaker.cool_down"]
    assert limits.parse_breaker("5/30s").window.seconds == 30
    with pytest.raises(ValueError, match="failures/window"):
        limits.parse_breaker("five")


# --- through the scheduler's admission --------------------------------------------------------
def test_an_open_breaker_holds_its_key_while_every_other_key_flows() -> None:
    h = Harness(breaker("payments", 2, 10_000, 2_000))
    h.load()
    for n in range(2):
        h.submit(f"a{n}", ("payments", "a", 1), key="a")
    assert sorted(h.dispatch(10)) == ["a0", "a1"]
    h.end("a0", failed=True)
    h.end("a1", failed=True)  # the second failure in the window: open
    for n in range(2, 5):
        h.submit(f"a{n}", ("payments", "a", 1), key="a")
    for n in range(3):
        h.submit(f"b{n}", ("payments", "b", 1), key="b")
    assert sorted(h.dispatch(10)) == ["b0", "b1", "b2"]
    assert len(h.flow.gates) == 3

    request = flow_pb2.FlowGatesRequest(task_ids=["a2"], limits=["payments"])
    reply = asyncio.run(h.flow.on_gates(request, cast(Any, None)))
    gate = reply.gates[0]
    assert gate.reason == task_service_pb2.WAIT_REASON_BREAKER_OPEN
    assert (gate.gate.limit, gate.gate.key) == ("payments", "a")
    assert gate.gate.HasField("next_admission_at")
    assert reply.usage["payments"].units_in_use == 1  # one key not closed

    h.tick(1.0)
    assert h.dispatch(10) == []  # cooling down
    h.tick(1.0)
    assert h.dispatch(10) == ["a2"]  # half-open: one probe
    h.tick(0.5)
    assert h.dispatch(10) == []  # the others wait for its outcome
    h.end("a2", failed=False)
    assert sorted(h.dispatch(10)) == ["a3", "a4"]  # closed: all of them


def test_a_failed_probe_holds_the_key_for_another_cool_down() -> None:
    h = Harness(breaker("payments", 1, 10_000, 2_000))
    h.load()
    h.submit("a0", ("payments", "a", 1))
    h.submit("a1", ("payments", "a", 1))
    assert h.dispatch(1) == ["a0"]
    h.end("a0", failed=True)
    assert h.dispatch(10) == []
    h.tick(2.0)
    assert h.dispatch(10) == ["a1"]
    h.end("a1", failed=True)
    h.submit("a2", ("payments", "a", 1))
    h.tick(1.9)
    assert h.dispatch(10) == []
    h.tick(0.1)
    assert h.dispatch(10) == ["a2"]


def test_the_opens_and_closes_go_to_the_store_as_events() -> None:
    h = Harness(breaker("payments", 1, 10_000, 1_000))
    h.load()
    h.submit("a0", ("payments", "a", 1))
    h.submit("a1", ("payments", "a", 1))
    h.dispatch(1)
    h.end("a0", failed=True)
    h.tick(1.0)
    assert h.dispatch(1) == ["a1"]
    h.end("a1", failed=False)

    assert h.flow.breaker_news.is_set()
    h.flow.term = 5
    asyncio.run(h.flow.flush_breaker_events())
    assert h.store.breaker_event_terms == [5]  # fenced by the leader's term in the store
    assert [(c.limit, c.key, c.change) for c in h.store.breaker_events] == [
        ("payments", "a", "opened"),
        ("payments", "a", "closed"),
    ]
    assert h.store.breaker_events[0].failures == 1 and h.store.breaker_events[0].next_probe_at_us > 0


def test_metrics_count_opens_and_closes_and_list_the_breakers_not_closed() -> None:
    from prometheus_client import CollectorRegistry, generate_latest

    from taskyard.scheduler.metrics import BreakerState

    b, clock = _breakers(failures=1, cool_down_ms=1_000)
    registry = CollectorRegistry()
    registry.register(BreakerState(b.figures))
    _attempt(b, 0)
    _fail(b, 0)
    text = generate_latest(registry).decode()
    assert 'taskyard_breaker_opened_total{limit="payments"} 1.0' in text
    assert 'taskyard_breaker_state{key="payments-api",limit="payments",state="open"} 1.0' in text
    clock.now += 1.0
    _attempt(b, 1)
    _fail(b, 1, failed=False)
    text = generate_latest(registry).decode()
    assert 'taskyard_breaker_closed_total{limit="payments"} 1.0' in text
    assert 'taskyard_breakers_not_closed{limit="payments"} 0.0' in text
    assert "taskyard_breaker_state{" not in text


def test_a_new_cool_down_applies_to_an_open_breaker_from_when_it_opened() -> None:
    b, clock = _breakers(failures=1, cool_down_ms=30_000)
    _attempt(b, 0)
    _fail(b, 0)
    opened = clock.now
    clock.now += 1.0
    b.set_specs({"payments": breaker("payments", 1, 10_000, 500).breaker})
    assert b.state(GATE) == HALF_OPEN  # 0.5 s after it opened: past
    b.set_specs({"payments": breaker("payments", 1, 10_000, 5_000).breaker})
    assert b.state(GATE) == OPEN and b.next_probe(GATE) == opened + 5.0


def test_a_probe_whose_lease_is_in_flight_during_a_resync_keeps_its_place() -> None:
    b, clock = _breakers(failures=1, cool_down_ms=1_000)
    _attempt(b, 0)
    _fail(b, 0)
    clock.now += 2.0
    _attempt(b, 1)  # the probe: admitted, its lease not confirmed yet
    assert b.room(GATE) == 0
    clock.now += 0.001
    # The resync's read of the leased attempts began before the probe's lease committed.
    assert b.resync([], before=clock.now) == []
    assert b.room(GATE) == 0 and b.check(GATE) == (False, False, None)  # no second probe
    b.confirm("t1", "tok1", clock.now)
    assert b.resync([("t1", "tok1")], before=clock.now + 0.1) == []
    assert _fail(b, 1, failed=False) == [GATE]  # its success is heard: closed
    assert b.state(GATE) == CLOSED


def test_admission_confirms_a_breakers_attempt_with_its_lease() -> None:
    h = Harness(breaker("payments", 1, 10_000, 1_000))
    h.load()
    h.submit("a0", ("payments", "a", 1))
    h.submit("a1", ("payments", "a", 1))
    h.dispatch(1)
    h.end("a0", failed=True)
    h.tick(1.0)
    assert h.dispatch(1) == ["a1"]  # the probe, confirmed by its lease
    breakers = h.flow.admission.breakers
    ((task_id, token),) = [a for a in breakers._attempts if a[0] == "a1"]
    breakers.confirm(task_id, token, float("inf"))  # no-op: an earlier confirmation stands
    assert breakers._attempts[(task_id, token)].at < float("inf")


def test_a_breakers_memory_is_buckets_and_the_failures_it_may_refund() -> None:
    b, clock = _breakers(failures=1_000_000, window_ms=60_000)
    for n in range(20_000):
        _attempt(b, n)
        b.outcome(f"t{n}", f"tok{n}", failed=n % 100 == 0, attempt=1)
        clock.now += 0.01  # 200 s: the window passes three times
    buckets, failures = b.memory()
    assert buckets <= breakers_module.BUCKETS + 1
    # Only the last window's failures: 60 s at one failure a second.
    assert 55 <= failures <= 61


def test_failures_remembered_per_key_are_bounded_and_the_rest_still_count(monkeypatch: Any) -> None:
    monkeypatch.setattr(breakers_module, "MAX_FAILURES_KEPT", 5)
    b, _clock = _breakers(failures=8, window_ms=60_000)
    for n in range(8):
        _attempt(b, n)
    for n in range(7):
        b.outcome(f"t{n}", f"tok{n}", failed=True, attempt=1)
    assert b.memory() == (1, 5)
    assert b.outcome("t7", "tok7", failed=True, attempt=1) == [GATE]  # all 8 counted: opens
    # The 5 newest failures are refunded (the one that opened it among them); older ones stay charged.
    assert sorted(r.task_id for r in b.refunds) == ["t3", "t4", "t5", "t6", "t7"]
    assert b.memory() == (0, 0)


def test_keys_with_state_are_bounded(monkeypatch: Any) -> None:
    monkeypatch.setattr(breakers_module, "MAX_KEYS", 3)
    b, clock = _breakers(failures=5, window_ms=1_000)
    for n in range(4):
        _attempt(b, n, gate=("payments", f"k{n}"))
        _fail(b, n)
    assert len(b.not_closed("payments")) == 0 and b.untracked == 1
    clock.now += 1.5  # their windows are quiet: a new key takes a pruned one's place
    _attempt(b, 9, gate=("payments", "k9"))
    _fail(b, 9)
    assert b.untracked == 1 and b.memory()[0] == 1
