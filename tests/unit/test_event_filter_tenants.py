"""WatchEvents for a tenant: its own events only, never the suite's or the tenants'
changes, found alike by a filter's check and by a ring segment's index."""

from __future__ import annotations

from taskyard.gateway.event_filter import EventFilter
from taskyard.gateway.event_ring import Segment
from taskyard.gateway.event_service import strip_names
from taskyard.v1 import event_service_pb2 as pub

K = pub


def _events() -> list[pub.Event]:
    made = [
        pub.Event(kind=K.EVENT_KIND_TASK, tenant="acme", queue="acme/reports", task_id="a1"),
        pub.Event(kind=K.EVENT_KIND_TASK, tenant="beta", queue="beta/reports", task_id="b1"),
        pub.Event(kind=K.EVENT_KIND_TASK, tenant="", queue="reports", task_id="d1"),
        pub.Event(kind=K.EVENT_KIND_POOL, tenant="", pool_id="p1"),
        pub.Event(kind=K.EVENT_KIND_WORKER, tenant="", worker_id="w1"),
        pub.Event(kind=K.EVENT_KIND_TENANT, tenant="acme", attributes={"tenant": "acme"}),
        pub.Event(kind=K.EVENT_KIND_LIMIT, tenant="acme", attributes={"limit": "acme/api"}),
        pub.Event(kind=K.EVENT_KIND_SCHEDULE, tenant="beta", schedule_name="beta/nightly"),
    ]
    for i, e in enumerate(made):
        e.cursor = f"{i:04d}"
        strip_names(e)
    return made


def _seen(f: EventFilter, events: list[pub.Event]) -> list[int]:
    checked = [i for i, e in enumerate(events) if f.matches(e)]
    segment = Segment(events, [e.cursor for e in events], "", events[-1].cursor)
    assert segment.picks(f) == checked  # the index and the check agree
    return checked


def test_a_tenants_stream_carries_its_own_events_by_the_names_it_knows() -> None:
    events = _events()
    assert [e.queue for e in events[:3]] == ["reports"] * 3
    assert events[6].attributes["limit"] == "api" and events[7].schedule_name == "nightly"
    assert events[5].attributes["tenant"] == "acme"  # a value that only looks like a name stays
    acme = EventFilter.of(pub.WatchEventsRequest(), "acme")
    assert not acme.everything
    assert _seen(acme, events) == [0, 6]
    assert _seen(EventFilter.of(pub.WatchEventsRequest(), "beta"), events) == [1, 7]
    # The default tenant's (an operator acting as it): its tasks, not the suite's events.
    assert _seen(EventFilter.of(pub.WatchEventsRequest(), ""), events) == [2]
    # Its filters within its own: queue "reports" is its own queue only.
    assert _seen(EventFilter.of(pub.WatchEventsRequest(queues=["reports"]), "acme"), events) == [0]
    # Asking for operators' kinds only gives nothing, not everything.
    only_pools = pub.WatchEventsRequest(kinds=[K.EVENT_KIND_POOL, K.EVENT_KIND_TENANT])
    assert _seen(EventFilter.of(only_pools, "acme"), events) == []
    # An operator over every tenant sees them all.
    operator = EventFilter.of(pub.WatchEventsRequest())
    assert operator.everything and _seen(operator, events) == list(range(8))
