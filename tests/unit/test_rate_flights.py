"""A rate bucket and the lease requests in flight on it (scheduler/flights.py): the
limit holds where the attempts arrive, at the store's commit, however long the
store takes to answer (driven through the scheduler's hooks with a manual clock)."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.admission import Harness, rate

from taskyard.scheduler import flights

# 20 a second, a burst of 20: one unit every 50 ms.
RATE, BURST = 20, 20
INTERVAL = 1 / RATE


@dataclasses.dataclass
class Request:
    """A lease request sent to the store and not answered yet."""

    sent: float
    leases: list[tuple[str, str]]


def _harness(tasks: int) -> Harness:
    h = Harness(rate("api", RATE, 1000, burst=BURST))
    h.load()
    h.clock.now += 10  # long after the term began: the bucket is full
    for i in range(tasks):
        h.submit(f"t{i}", ("api", "", 1))
    return h


def _send(h: Harness, slots: int) -> Request:
    """One pool's lease request, sent now and not answered yet."""
    return Request(h.clock.now, h.lease(slots))


def test_a_bucket_admits_no_other_request_while_one_is_in_flight() -> None:
    h = _harness(40)
    first = _send(h, 5)
    assert len(first.leases) == 5
    assert h.flow.admission.room(("api", "")) == BURST - 5  # the limit has room...
    assert _send(h, 5).leases == []  # ...but the store has not answered the first request
    h.flow.confirm(first.leases)
    h.tick(0)
    assert len(_send(h, 5).leases) == 5


def test_one_request_takes_the_bucket_up_to_its_burst_over_several_takes() -> None:
    h = _harness(40)
    assert len(_send(h, 100).leases) == BURST


def test_a_late_answer_counts_the_request_from_the_answer() -> None:
    """The store stalls for a second with a full burst in flight: the next units go
    out a burst's worth of time after the answer, not at once."""
    h = _harness(60)
    first = _send(h, 100)
    assert len(first.leases) == BURST
    h.tick(1.0)  # the bucket would be full again by the clock alone
    assert _send(h, 100).leases == []
    h.flow.confirm(first.leases)
    h.tick(0)
    assert _send(h, 100).leases == []
    h.tick(INTERVAL)
    assert len(_send(h, 100).leases) == 1


def test_the_answer_sends_back_the_tasks_its_flight_held() -> None:
    h = _harness(4)
    first = _send(h, 2)
    assert _send(h, 2).leases == []  # the other two wait at the gate now
    assert not h.lanes
    wakes = h.wakes
    h.flow.confirm(first.leases)
    assert h.wakes == wakes + 1
    assert len(h.lanes) == 2


def test_a_refused_lease_ends_its_flight() -> None:
    h = _harness(10)
    first = _send(h, 1)
    ((task_id, token),) = first.leases
    h.flow.release(task_id, token)  # the store refused it (cancelled meanwhile)
    h.tick(0)
    assert len(_send(h, 1).leases) == 1


def test_a_request_never_answered_stops_holding_its_bucket() -> None:
    h = _harness(10)
    _send(h, 1)  # its errand ended with the term's dispatcher, say
    h.tick(flights.PATIENCE - 1)
    assert _send(h, 1).leases == []
    h.tick(1)
    assert len(_send(h, 1).leases) == 1


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    actions=st.lists(
        st.tuples(
            st.sampled_from(["send", "answer", "advance"]),
            st.integers(1, 30),
            # Where in its flight the store commits an answered request's leases.
            st.floats(0, 1),
        ),
        max_size=120,
    )
)
def test_no_window_of_recorded_leases_holds_more_than_the_rate_and_the_burst(
    actions: list[tuple[str, int, float]],
) -> None:
    """Requests from several pools, answered in any order after any stall: the
    instants the database records the leases (anywhere between a request's sending
    and its answer) never hold more than the burst plus the rate in any window."""
    h = _harness(400)
    flying: list[Request] = []
    recorded: list[float] = []
    for kind, amount, where in actions:
        if kind == "send":
            request = _send(h, amount)
            if request.leases:
                flying.append(request)
        elif kind == "answer" and flying:
            request = flying.pop(amount % len(flying))
            recorded += [request.sent + (h.clock.now - request.sent) * where] * len(request.leases)
            h.flow.confirm(request.leases)
        elif kind == "advance":
            h.tick(amount / 20)
    # k leases from the i-th to the j-th recorded need k <= BURST + span / INTERVAL:
    # with v = index - instant / INTERVAL, no v may exceed an earlier one by BURST - 1.
    recorded.sort()
    lowest = float("inf")
    for index, instant in enumerate(recorded):
        v = index - instant / INTERVAL
        lowest = min(lowest, v)
        assert v - lowest <= BURST - 1 + 1e-6, f"more than {BURST} + the rate up to {instant:.3f}"
