"""WatchEvents in the gateway without a cluster: the cursor codec, filters, the
ring, and streams over a fake store log (injected clock)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable

import pytest
from support.waiting import wait_until_async

from taskyard.bus.v1 import event_log_pb2
from taskyard.core import errors, event_cursor
from taskyard.core.clock import ManualClock
from taskyard.gateway import event_wire
from taskyard.gateway.event_filter import EventFilter
from taskyard.gateway.event_ring import CACHED_FILTERS, Ring, Segment
from taskyard.gateway.event_stream import EventStream, Interrupted, LogHealth, StreamLimits, TooSlow
from taskyard.gateway.event_tail import EventTail
from taskyard.v1 import event_service_pb2 as pub
from taskyard.v1 import task_pb2

LIMITS = StreamLimits(page=3, idle_interval=10.0, poll_interval=0.2)


def test_cursors_round_trip_and_sort_in_log_order() -> None:
    positions = [(0, 0), (1, 5), (1, 6), (2, 1), (2**40, 2**33)]
    cursors = [event_cursor.encode(*p) for p in positions]
    assert [event_cursor.decode(c) for c in cursors] == positions
    assert sorted(cursors) == cursors
    for bad in ("", "xyz", cursors[1][:-1], cursors[1].upper() + "0"):
        with pytest.raises(ValueError):
            event_cursor.decode(bad)


def ev(n: int, **fields: object) -> pub.Event:
    fields.setdefault("kind", pub.EVENT_KIND_TASK)
    fields.setdefault("type", "task.queued")
    return pub.Event(cursor=event_cursor.encode(1, n), **fields)  # type: ignore[arg-type]


def test_filters_need_every_set_filter_and_any_value_of_one() -> None:
    done = ev(1, queue="q", task_name="add", state=task_pb2.TASK_STATE_SUCCESS, task_id="t", root_id="r")
    paused = ev(2, kind=pub.EVENT_KIND_QUEUE, type="queue.paused", queue="q")
    assert EventFilter().everything and EventFilter().matches(done)
    f = EventFilter.of(pub.WatchEventsRequest(queues=["q", "z"], states=[task_pb2.TASK_STATE_SUCCESS]))
    assert f.matches(done) and not f.matches(paused)  # a state filter passes task events only
    assert EventFilter.of(pub.WatchEventsRequest(queues=["q"])).matches(paused)
    assert not EventFilter.of(pub.WatchEventsRequest(kinds=[pub.EVENT_KIND_POOL])).matches(done)
    assert EventFilter.of(pub.WatchEventsRequest(root_ids=["r"], task_names=["add"])).matches(done)
    assert not EventFilter.of(pub.WatchEventsRequest(task_ids=["other"])).matches(done)


def segment_of(events: list[pub.Event]) -> Segment:
    return Segment(events, [e.cursor for e in events], event_cursor.encode(1, 0), events[-1].cursor)


def test_a_segments_index_picks_what_the_filter_matches() -> None:
    rng = random.Random(7)
    kinds = [pub.EVENT_KIND_TASK, pub.EVENT_KIND_QUEUE, pub.EVENT_KIND_POOL]
    states = [task_pb2.TASK_STATE_QUEUED, task_pb2.TASK_STATE_SUCCESS, task_pb2.TASK_STATE_FAILURE]
    events = [
        ev(
            i,
            kind=rng.choice(kinds),
            queue=rng.choice(["", "a", "b"]),
            task_name=rng.choice(["", "add", "noop"]),
            state=rng.choice(states),
            task_id=f"t{rng.randrange(8)}",
            root_id=f"t{rng.randrange(3)}",
        )
        for i in range(1, 301)
    ]
    seg = segment_of(events)
    requests = [
        pub.WatchEventsRequest(queues=["a"]),
        pub.WatchEventsRequest(queues=["a", "b"], states=[task_pb2.TASK_STATE_SUCCESS]),
        pub.WatchEventsRequest(kinds=[pub.EVENT_KIND_QUEUE], queues=["b"]),
        pub.WatchEventsRequest(states=[task_pb2.TASK_STATE_FAILURE], root_ids=["t1", "t2"]),
        pub.WatchEventsRequest(task_ids=["t3"], task_names=["add"]),
        pub.WatchEventsRequest(queues=["nobody"]),
    ]
    for req in requests:
        f = EventFilter.of(req)
        assert seg.picks(f) == [i for i, e in enumerate(events) if f.matches(e)], req
        middle = events[149].cursor
        data = seg.response_for(f, middle)
        want = [e for e in events[150:] if f.matches(e)]
        if want:
            assert data is not None
            assert pub.WatchEventsResponse.FromString(data) == pub.WatchEventsResponse(
                events=want, cursor=seg.end
            )
        else:
            assert data is None


def test_streams_with_the_same_filter_share_a_segments_response() -> None:
    seg = segment_of([ev(i, queue="even" if i % 2 == 0 else "odd") for i in range(1, 6)])
    one = EventFilter.of(pub.WatchEventsRequest(queues=["even"]))
    other = EventFilter.of(pub.WatchEventsRequest(queues=["even"]))
    first = seg.response_for(one, seg.start)
    assert first is not None and seg.response_for(other, seg.start) is first
    assert [e.cursor for e in pub.WatchEventsResponse.FromString(first).events] == [
        event_cursor.encode(1, 2),
        event_cursor.encode(1, 4),
    ]
    assert seg.response_for(EventFilter.of(pub.WatchEventsRequest(queues=["none"])), seg.start) is None


def test_a_segment_keeps_the_picks_of_a_bounded_number_of_filters() -> None:
    """Streams with filters of their own (a task id each): past CACHED_FILTERS, a
    segment answers them all the same, keeping only the most recently used."""
    seg = segment_of([ev(i, task_id=f"t{i % 50}") for i in range(1, 101)])
    filters = [EventFilter.of(pub.WatchEventsRequest(task_ids=[f"t{n}"])) for n in range(50)]
    for n, f in enumerate(filters):
        data = seg.response_for(f, seg.start)
        assert data is not None
        got = [e.task_id for e in pub.WatchEventsResponse.FromString(data).events]
        assert got == [f"t{n}", f"t{n}"]
        assert seg.picks(f) == [i - 1 for i in range(1, 101) if i % 50 == n]
    assert len(seg._picks) == len(seg._picked) == CACHED_FILTERS
    # The most recently used are kept: a filter many streams share stays.
    shared = filters[0]
    for f in filters[1:]:
        seg.response_for(shared, seg.start)
        seg.response_for(f, seg.start)
    assert shared in seg._picked  # its response, made once, serves every stream


def test_hand_written_responses_parse_as_the_message() -> None:
    events = [ev(1, task_id="a"), ev(2, attributes={"k": "v" * 300})]
    data = event_wire.response([event_wire.entry(e) for e in events], "c")
    assert pub.WatchEventsResponse.FromString(data) == pub.WatchEventsResponse(events=events, cursor="c")


class Log:
    """The store's log: events 1..n (cursor (1, i)), read a page at a time."""

    def __init__(self) -> None:
        self.events: list[pub.Event] = []
        self.reads = 0

    @property
    def end(self) -> str:
        return event_cursor.encode(1, len(self.events))

    async def read(self, req: event_log_pb2.ReadEventsRequest) -> event_log_pb2.ReadEventsReply:
        self.reads += 1
        if not req.after and not req.oldest:
            return event_log_pb2.ReadEventsReply(cursor=self.end)
        after = "" if req.oldest else req.after
        page = [e for e in self.events if e.cursor > after][: req.limit]
        full = len(page) == req.limit
        return event_log_pb2.ReadEventsReply(events=page, cursor=page[-1].cursor if full else self.end)

    def add(self, n: int, ring: Ring | None = None) -> None:
        start = len(self.events) + 1
        new = [ev(i, task_id=f"t{i}", queue="even" if i % 2 == 0 else "odd") for i in range(start, start + n)]
        self.events.extend(new)
        if ring is not None:
            ring.append(new, self.end)


async def take(it: AsyncIterator[bytes], n: int) -> list[pub.WatchEventsResponse]:
    return [pub.WatchEventsResponse.FromString(await asyncio.wait_for(it.__anext__(), 5)) for _ in range(n)]


@pytest.mark.asyncio
async def test_a_stream_behind_the_ring_replays_from_the_store_then_follows_the_ring() -> None:
    log, ring, clock = Log(), Ring(4), ManualClock()
    ring.reset(log.end)
    log.add(10, ring)  # the ring keeps only the last segment (10 events, one read)
    log.add(2, ring)
    assert ring.floor == event_cursor.encode(1, 10)
    stream = EventStream(
        pub.WatchEventsRequest(start=pub.WATCH_START_OLDEST),
        ring=ring,
        read_store=log.read,
        clock=clock,
        limits=LIMITS,
    )
    it = stream.responses()
    got = await take(it, 4)  # pages of 3 from the store, the last one past the ring's floor
    events = [e for r in got for e in r.events]
    assert [e.task_id for e in events] == [f"t{i}" for i in range(1, 13)]
    assert got[-1].cursor == log.end
    log.add(1, ring)
    (more,) = await take(it, 1)
    assert [e.task_id for e in more.events] == ["t13"]


@pytest.mark.asyncio
async def test_filtered_events_move_the_cursor_and_an_idle_stream_says_where_it_is() -> None:
    log, ring, clock = Log(), Ring(100), ManualClock()
    ring.reset(log.end)
    stream = EventStream(
        pub.WatchEventsRequest(queues=["even"]), ring=ring, read_store=log.read, clock=clock, limits=LIMITS
    )
    it = stream.responses()
    (start,) = await take(it, 1)  # now: where the log ends
    assert not start.events and start.cursor == log.end
    log.add(3, ring)  # t1 odd, t2 even, t3 odd
    (resp,) = await take(it, 1)
    assert [e.task_id for e in resp.events] == ["t2"]
    log.add(1, ring)  # t4 even; then t5 odd alone: nothing to send
    (resp,) = await take(it, 1)
    log.add(1, ring)
    pending = asyncio.ensure_future(it.__anext__())
    for _ in range(5):
        await asyncio.sleep(0)
    assert not pending.done()
    clock.advance(LIMITS.idle_interval)
    idle = pub.WatchEventsResponse.FromString(await asyncio.wait_for(pending, 5))
    assert not idle.events and idle.cursor == log.end  # past t5, which it filtered out


@pytest.mark.asyncio
async def test_a_stream_that_falls_out_of_the_ring_while_sending_is_cut_off() -> None:
    log, ring, clock = Log(), Ring(4), ManualClock()
    ring.reset(log.end)
    stream = EventStream(pub.WatchEventsRequest(), ring=ring, read_store=log.read, clock=clock, limits=LIMITS)
    it = stream.responses()
    await take(it, 1)  # where it begins
    log.add(2, ring)
    (first,) = await take(it, 1)  # handed to gRPC; the client is slow to take it
    log.add(3, ring)
    log.add(3, ring)  # the ring drops the segment the stream was sending
    with pytest.raises(TooSlow) as slow:
        await it.__anext__()
    assert slow.value.cursor == first.cursor == first.events[-1].cursor


@pytest.mark.asyncio
async def test_a_bad_cursor_is_invalid() -> None:
    ring = Ring(4)
    stream = EventStream(
        pub.WatchEventsRequest(after="nope"),
        ring=ring,
        read_store=Log().read,
        clock=ManualClock(),
        limits=LIMITS,
    )
    with pytest.raises(errors.TaskyardError) as bad:
        await stream.responses().__anext__()
    assert bad.value.code is errors.Code.INVALID_ARGUMENT


@pytest.mark.asyncio
async def test_a_waiting_stream_ends_with_its_cursor_when_the_gateway_stops() -> None:
    log, ring, clock, health = Log(), Ring(100), ManualClock(), LogHealth()
    ring.reset(log.end)
    stream = EventStream(
        pub.WatchEventsRequest(), ring=ring, read_store=log.read, clock=clock, limits=LIMITS, health=health
    )
    it = stream.responses()
    await take(it, 1)
    log.add(2, ring)
    (got,) = await take(it, 1)
    pending = asyncio.ensure_future(it.__anext__())  # waiting for events
    for _ in range(5):
        await asyncio.sleep(0)
    assert not pending.done()
    health.closing = True
    ring.interrupt()
    with pytest.raises(Interrupted) as ended:
        await asyncio.wait_for(pending, 5)
    assert ended.value.error.reason == "GATEWAY_STOPPING" and ended.value.cursor == got.cursor


async def ticks(clock: ManualClock, done: Callable[[], bool], step: float = 0.05) -> None:
    """The clock advanced a step at a time, the loop run between steps, until ``done``."""
    for _ in range(1000):
        if done():
            return
        clock.advance(step)
        for _ in range(3):
            await asyncio.sleep(0)
    raise AssertionError("not done after 1000 steps of the clock")


@pytest.mark.asyncio
async def test_a_log_unreadable_past_the_outage_limit_ends_the_streams_with_their_cursor() -> None:
    log, ring, clock, health = Log(), Ring(100), ManualClock(), LogHealth()
    down = False

    async def read(req: event_log_pb2.ReadEventsRequest) -> event_log_pb2.ReadEventsReply:
        if down:
            raise errors.TaskyardError(errors.Code.UNAVAILABLE, "STORE_UNAVAILABLE", "no store")
        return await log.read(req)

    tail = EventTail(ring, read, page=3, poll_interval=0.2, clock=clock, health=health, outage=LIMITS.outage)
    stream = EventStream(
        pub.WatchEventsRequest(), ring=ring, read_store=read, clock=clock, limits=LIMITS, health=health
    )
    with tail.watching():
        tailing = asyncio.ensure_future(tail.run())
        try:
            await wait_until_async(lambda: ring.ready, 5, "the tail to start the ring")
            it = stream.responses()
            (start,) = await take(it, 1)
            pending = asyncio.ensure_future(it.__anext__())
            down = True
            await ticks(clock, lambda: health.failing_since is not None)  # the outage begins
            assert not pending.done()  # a short outage is not the clients' business
            began = clock.monotonic()
            await ticks(clock, pending.done)  # the tail keeps polling, and failing
            assert clock.monotonic() - began >= LIMITS.outage - 0.5
            with pytest.raises(Interrupted) as ended:
                await pending
            assert ended.value.error.reason == "EVENT_LOG_UNAVAILABLE"
            assert ended.value.error.code is errors.Code.UNAVAILABLE and ended.value.cursor == start.cursor
            down = False
            await ticks(clock, lambda: health.failing_since is None)  # readable again
        finally:
            tailing.cancel()
