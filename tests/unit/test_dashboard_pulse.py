"""The dashboard's pulse without a gateway: the aggregator's pulses from the
store's summaries (made here as the store makes them; the store's own is
tests/integration/test_event_log_store.py) on an injected clock, a slow page
skipping to the latest pulse, one encoding for every page, tokens judged at each
pulse, and /api/events refusing to follow the whole suite."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from google.protobuf import timestamp_pb2
from support.waiting import wait_until_async

from taskyard.bus.v1 import event_log_pb2
from taskyard.core import errors
from taskyard.gateway import auth
from taskyard.gateway.dashboard import hub, pulse, site, streams
from taskyard.v1 import event_service_pb2 as pub
from taskyard.v1 import task_pb2

S = task_pb2.TaskState
T0 = 1_800_000_000.0  # a bucket boundary: divisible by 10


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def at(seconds: float) -> timestamp_pb2.Timestamp:
    whole = int(seconds)
    return timestamp_pb2.Timestamp(seconds=whole, nanos=round((seconds - whole) * 1e9))


def task_event(
    task_id: str, state: Any, when: float, *, queue: str = "default", name: str = "noop"
) -> pub.Event:
    return pub.Event(
        cursor=f"c-{task_id}-{state}",
        kind=pub.EVENT_KIND_TASK,
        type="task.x",
        time=at(when),
        task_id=task_id,
        task_name=name,
        queue=queue,
        state=state,
        attempt=1,
    )


FINAL = (S.TASK_STATE_SUCCESS, S.TASK_STATE_FAILURE, S.TASK_STATE_CANCELLED)


def response(
    *events: pub.Event, cursor: str = "", created: dict[str, float] | None = None
) -> event_log_pb2.SummarizeEventsReply:
    """What the store's summary of ``events`` is; a task's creation time from
    ``created`` (else its first event here; none: its row is gone)."""
    created = dict(created or {})
    for e in events:
        created.setdefault(e.task_id, e.time.seconds + e.time.nanos / 1e9)
    ids = list(dict.fromkeys(e.task_id for e in events if e.kind == pub.EVENT_KIND_TASK))
    entered = list(
        dict.fromkeys((e.queue, e.task_name, e.state) for e in events if e.kind == pub.EVENT_KIND_TASK)
    )
    finals = [e for e in events if e.kind == pub.EVENT_KIND_TASK and e.state in FINAL]
    at_us = [e.time.seconds * 1_000_000 + e.time.nanos // 1000 for e in finals]
    return event_log_pb2.SummarizeEventsReply(
        cursor=cursor or (events[-1].cursor if events else ""),
        caught_up=True,
        events=len(events),
        task_ids=ids,
        entered=[event_log_pb2.EnteredState(queue=q, task_name=n, state=st) for q, n, st in entered],
        kinds=sorted({e.kind for e in events}),
        schedule_made_task=any(e.kind == pub.EVENT_KIND_SCHEDULE and e.task_id for e in events),
        finished_states=[e.state for e in finals],
        finished_at_us=at_us,
        latency_us=[
            at - round(created[e.task_id] * 1e6) if e.task_id in created else -1
            for e, at in zip(finals, at_us, strict=True)
        ],
    )


def test_a_pulse_counts_finished_tasks_names_the_changed_ones_and_starts_afresh() -> None:
    clock = Clock()
    agg = pulse.Aggregator(clock=clock)
    assert agg.add(
        response(
            task_event("a", S.TASK_STATE_QUEUED, T0 + 1.0),
            task_event("b", S.TASK_STATE_QUEUED, T0 + 1.0, queue="batch", name="add"),
            task_event("a", S.TASK_STATE_SUCCESS, T0 + 1.1),
            task_event("b", S.TASK_STATE_FAILURE, T0 + 1.5, queue="batch", name="add"),
            cursor="c9",
        )
    )
    clock.now = T0 + 2.0
    first = agg.take()
    assert first["cursor"] == "c9" and first["at"] == T0 + 2.0 and first["interval"] == 2.0
    assert first["finished"] == {"SUCCESS": 1, "FAILURE": 1}
    assert first["changed"] == {"queues": True, "pools": False, "schedules": False}
    assert first["tasks"] == {
        "ids": ["a", "b"],
        "entered": [
            ["batch", "add", "FAILURE"],
            ["batch", "add", "QUEUED"],
            ["default", "noop", "QUEUED"],
            ["default", "noop", "SUCCESS"],
        ],
        "more": False,
    }
    [[start, count, median_ms]] = first["chart"]["points"]
    assert (start, count) == (T0, 2)
    # Latencies 100 ms and 500 ms: the median is the lower one, within a bin's width.
    assert median_ms is not None and 90 <= median_ms <= 110

    clock.now = T0 + 2.5
    quiet = agg.take()
    assert quiet["interval"] == 0.5 and quiet["finished"] == {}
    assert quiet["tasks"] == {"ids": [], "entered": [], "more": False}
    assert not any(quiet["changed"].values())
    assert quiet["chart"]["points"] == first["chart"]["points"]  # the chart stays: five minutes


def test_queue_pool_and_schedule_events_say_what_to_fetch_again() -> None:
    agg = pulse.Aggregator(clock=Clock())
    agg.add(response(pub.Event(cursor="1", kind=pub.EVENT_KIND_POOL, type="pool.registered")))
    assert agg.take()["changed"] == {"queues": False, "pools": True, "schedules": False}
    agg.add(response(pub.Event(cursor="2", kind=pub.EVENT_KIND_QUEUE, type="queue.paused")))
    assert agg.take()["changed"] == {"queues": True, "pools": False, "schedules": False}
    agg.add(response(pub.Event(cursor="3", kind=pub.EVENT_KIND_SCHEDULE, type="schedule.paused")))
    assert agg.take()["changed"] == {"queues": False, "pools": False, "schedules": True}
    fired = pub.Event(cursor="4", kind=pub.EVENT_KIND_SCHEDULE, type="schedule.fired", task_id="t")
    agg.add(response(fired))
    assert agg.take()["changed"] == {"queues": True, "pools": False, "schedules": True}
    assert not agg.add(response(cursor="5")) and agg.cursor == "5"  # an idle beat moves the cursor


def test_past_its_caps_a_pulse_says_more() -> None:
    agg = pulse.Aggregator(clock=Clock(), max_ids=3, max_entered=2)
    agg.add(response(*(task_event(str(i), S.TASK_STATE_QUEUED, T0) for i in range(3))))
    tasks = agg.take()["tasks"]
    assert len(tasks["ids"]) == 3 and not tasks["more"]
    agg.add(response(*(task_event(str(i), S.TASK_STATE_QUEUED, T0) for i in range(4))))
    tasks = agg.take()["tasks"]
    assert len(tasks["ids"]) == 3 and tasks["more"]
    names = (task_event(str(i), S.TASK_STATE_QUEUED, T0, name=f"n{i}") for i in range(3))
    agg.add(response(*names))
    tasks = agg.take()["tasks"]
    assert len(tasks["entered"]) == 2 and tasks["more"]


def test_the_chart_keeps_five_minutes_and_times_tasks_from_their_creation() -> None:
    clock = Clock()
    agg = pulse.Aggregator(clock=clock)
    agg.add(
        response(
            *(task_event(t, S.TASK_STATE_SUCCESS, T0 + 2.0) for t in "abc"),
            created={"a": T0 - 100.0, "b": T0, "c": T0},
        )
    )
    [[_, count, median_ms]] = agg.take()["chart"]["points"]
    assert count == 3 and median_ms is not None and 1800 <= median_ms <= 2200  # b and c: 2 s
    gone = response(task_event("d", S.TASK_STATE_CANCELLED, T0 + 60.0))
    del gone.latency_us[:]
    gone.latency_us.append(-1)  # its row was purged: counted, not timed
    agg.add(gone)
    points = agg.take()["chart"]["points"]
    assert [p[:2] for p in points] == [[T0, 3], [T0 + 60, 1]] and points[1][2] is None
    clock.now = T0 + pulse.CHART_BUCKETS * pulse.CHART_BUCKET_SECONDS + 5  # T0's bucket is out
    assert [p[0] for p in agg.take()["chart"]["points"]] == [T0 + 60]
    snap = agg.snapshot()
    assert snap["first"] is True and snap["chart"]["bucketSeconds"] == pulse.CHART_BUCKET_SECONDS


def test_latency_bins_are_ordered_and_cover_their_values() -> None:
    assert pulse.latency_bin(0.0) == 0 and pulse.latency_bin(1e9) == pulse.LATENCY_BINS - 1
    for seconds in (0.0012, 0.05, 0.37, 2.0, 75.0, 4000.0):
        middle = pulse.bin_seconds(pulse.latency_bin(seconds))
        assert abs(middle - seconds) / seconds < 0.1
    bins = [pulse.latency_bin(0.001 * 1.05**i) for i in range(200)]
    assert bins == sorted(bins)


async def test_a_slow_page_gets_the_latest_pulse_and_is_told_it_skipped() -> None:
    listener = hub.Listener(None)
    listener.offer(b"one")
    assert await listener.next() == b"one"
    listener.offer(b"two")
    listener.offer(b"three")
    assert await listener.next() == hub.LAGGED + b"three" and listener.dropped == 1
    listener.offer(b"four")
    listener.end(b"bye")
    assert await listener.next() == b"four"
    assert await listener.next() == b"bye"
    assert await asyncio.wait_for(listener.next(), 1) is None


async def test_a_pulse_is_encoded_once_for_every_page() -> None:
    pulses = hub.PulseHub(FakeStore(), aggregator=pulse.Aggregator(clock=Clock()))
    pages = [hub.Listener(None) for _ in range(3)]
    pulses.listeners.update(pages)
    pulses.aggregator.add(response(task_event("a", S.TASK_STATE_QUEUED, T0), cursor="c1"))
    data = pulses.broadcast(pulses.aggregator.take())
    assert data.startswith(b"event: pulse\nid: c1\ndata: {")
    sent = [await p.next() for p in pages]
    assert all(s is data for s in sent)  # the same bytes object, not three encodings


async def test_api_events_follows_given_tasks_only() -> None:
    app = web.Application()
    app.router.add_get(
        "/api/events",
        streams.Streams(None, None, limit=64, per_client=8).events,  # type: ignore[arg-type]
    )
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        reply = await client.get("/api/events?kinds=EVENT_KIND_TASK")
        assert reply.status == 400 and "api/pulse" in (await reply.json())["message"]


def test_a_pages_token_is_judged_as_a_watch_events_call_would_be(tmp_path: Path) -> None:
    reader, submitter = "rd-" + "r" * 20, "sb-" + "s" * 20
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{reader}  read  viewer\n{submitter}  submit  producer\n")
    authorize = site._watch_authorizer(auth.Authenticator(auth.TokensFile(str(tokens))))
    assert authorize is not None and site._watch_authorizer(None) is None
    assert authorize(f"Bearer {reader}") is None
    missing, wrong, scope = authorize(None), authorize("Bearer " + "x" * 20), authorize(f"Bearer {submitter}")
    assert missing is not None and missing.reason == "TOKEN_MISSING"
    assert wrong is not None and hub.refusal_answer(wrong).status == 401
    assert scope is not None and hub.refusal_answer(scope).status == 403


class FakeStore:
    """The store's SummarizeEvents: each call answers the next summary given
    (then empty ones at the last cursor), or raises an error given in its place."""

    def __init__(self, *answers: event_log_pb2.SummarizeEventsReply | errors.TaskyardError) -> None:
        self.answers = list(answers)
        self.requests: list[event_log_pb2.SummarizeEventsRequest] = []
        self.cursor = "c0"
        self.asked = asyncio.Event()

    async def __call__(
        self, request: event_log_pb2.SummarizeEventsRequest
    ) -> event_log_pb2.SummarizeEventsReply:
        self.requests.append(request)
        self.asked.set()
        if not self.answers:
            return event_log_pb2.SummarizeEventsReply(cursor=self.cursor, caught_up=True)
        answer = self.answers.pop(0)
        if isinstance(answer, errors.TaskyardError):
            raise answer
        self.cursor = answer.cursor or self.cursor
        return answer


async def test_one_polling_for_all_pages_started_with_the_first_and_stopped_after_the_last(
    monkeypatch: Any,
) -> None:
    monkeypatch.setattr(hub, "PULSE_LINGER", 0.05)
    start = event_log_pb2.SummarizeEventsReply(cursor="c0", caught_up=True)
    partial = response(task_event("a", S.TASK_STATE_QUEUED, T0), cursor="c1")
    partial.caught_up = False  # more is waiting: asked again at once
    rest = response(task_event("b", S.TASK_STATE_QUEUED, T0), cursor="c2")
    store = FakeStore(start, partial, rest)
    pulses = hub.PulseHub(store, interval=0.01)
    first, second = hub.Listener("Bearer one"), hub.Listener("Bearer two")
    pulses._join(first)
    pulses._join(second)
    assert pulses.polls_started == 1
    for page in (first, second):
        snapshot = await page.next()
        assert snapshot is not None and b'"first":true' in snapshot
    data = await asyncio.wait_for(first.next(), 2)
    assert data is not None and data.startswith(b"event: pulse\nid: c2\n") and b'"ids":["a","b"]' in data
    # From now (no cursor), then on from each cursor.
    assert [r.after for r in store.requests[:3]] == ["", "c0", "c1"]
    assert store.requests[1].max_task_ids == pulse.MAX_CHANGED_IDS
    polling = pulses._task
    assert polling is not None
    pulses._leave(first)
    pulses._leave(second)
    assert pulses.following  # lingers a moment: a page switching views comes back
    await wait_until_async(lambda: not pulses.following, 5, "the linger to end the polling")
    await asyncio.gather(polling, return_exceptions=True)
    assert polling.cancelled()  # polling stopped: an ended task asks no more
    pulses._join(hub.Listener(None))
    assert pulses.polls_started == 2
    await pulses.close()


async def test_an_expired_cursor_starts_afresh_and_a_revoked_token_ends_its_pages(monkeypatch: Any) -> None:
    expired = errors.TaskyardError(errors.Code.OUT_OF_RANGE, "CURSOR_EXPIRED", "gone")
    store = FakeStore(
        event_log_pb2.SummarizeEventsReply(cursor="c0", caught_up=True),
        expired,
        event_log_pb2.SummarizeEventsReply(cursor="c5", caught_up=True),
    )
    monkeypatch.setattr(hub, "RETRY_FIRST", 0.01)
    revoked: set[str] = set()

    def authorize(authorization: str | None) -> errors.TaskyardError | None:
        if authorization in revoked:
            return errors.TaskyardError(errors.Code.UNAUTHENTICATED, "TOKEN_INVALID", "no longer")
        return None

    pulses = hub.PulseHub(store, authorize=authorize, interval=0.01)
    kept, dropped = hub.Listener("Bearer kept"), hub.Listener("Bearer dropped")
    pulses._join(kept)
    pulses._join(dropped)
    await wait_until_async(lambda: len(store.requests) >= 4, 5, "four summaries asked")
    assert [r.after for r in store.requests[:4]] == ["", "c0", "", "c5"]
    revoked.add("Bearer dropped")
    await wait_until_async(lambda: dropped not in pulses.listeners, 5, "the revoked page to end")
    frames = [await dropped.next(), await dropped.next(), await dropped.next()]
    assert frames[-1] is None and any(f and f.startswith(b"event: error") for f in frames)
    assert kept in pulses.listeners
    await pulses.close()
