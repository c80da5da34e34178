"""The dashboard chart's last minutes: where its window begins in the event log
(the search over transaction ids, against a log kept in memory as the store
keeps it: ordered by (xid, id), final below a watermark, read a page after a
cursor), and the pulse that brings them to a page opened after the work."""

from __future__ import annotations

import asyncio
import bisect
import json
import random
import time

import pytest
from google.protobuf import timestamp_pb2
from support.waiting import wait_until_async

from taskyard.bus.v1 import event_log_pb2
from taskyard.core import event_cursor
from taskyard.gateway.dashboard import history, hub
from taskyard.v1 import event_service_pb2 as pub
from taskyard.v1 import task_pb2


class Log:
    """Events at (xid, id, time); ``reads`` counts the store round trips."""

    def __init__(self, rows: list[tuple[int, int, float]], watermark: int) -> None:
        self.rows = sorted(rows)
        self.watermark = watermark
        self.reads = 0

    async def __call__(self, request: event_log_pb2.ReadEventsRequest) -> event_log_pb2.ReadEventsReply:
        self.reads += 1
        if not request.after and not request.oldest:
            return event_log_pb2.ReadEventsReply(cursor=event_cursor.encode(self.watermark, 0))
        after = event_cursor.ORIGIN if request.oldest else event_cursor.decode(request.after)
        start = bisect.bisect_right([(x, i) for x, i, _ in self.rows], after)
        page = [r for r in self.rows[start:] if r[0] < self.watermark][: request.limit or 100]
        return event_log_pb2.ReadEventsReply(events=[self.event(r) for r in page])

    @staticmethod
    def event(row: tuple[int, int, float]) -> pub.Event:
        xid, row_id, when = row
        stamp = timestamp_pb2.Timestamp(seconds=int(when), nanos=int((when % 1) * 1e9))
        return pub.Event(cursor=event_cursor.encode(xid, row_id), time=stamp)


def busy_log(seed: int) -> Log:
    """20 minutes of transactions with gaps in their ids, a few events each."""
    rng = random.Random(seed)
    rows: list[tuple[int, int, float]] = []
    xid, row_id, when = 1_000_000, 0, 1_800_000_000.0
    for _ in range(3000):
        xid += rng.randint(1, 500)  # other transactions wrote no event
        when += rng.uniform(0, 0.8)
        for _ in range(rng.randint(1, 4)):
            row_id += 1
            rows.append((xid, row_id, when))
    return Log(rows, watermark=xid + 1)


@pytest.mark.parametrize("seed", range(5))
async def test_the_window_begins_at_its_first_event(seed: int) -> None:
    log = busy_log(seed)
    since = log.rows[-1][2] - 300
    after = await history.start_after(log, since)
    first = next(r for r in log.rows if r[2] >= since)
    assert after == event_cursor.encode(first[0], first[1] - 1)
    # Read on from there, the first event is the window's first.
    page = await log(event_log_pb2.ReadEventsRequest(after=after, limit=1))
    assert page.events[0].cursor == event_cursor.encode(first[0], first[1])
    assert log.reads <= 2 + 40, log.reads


async def test_an_empty_log_an_old_log_and_a_young_log() -> None:
    assert await history.start_after(Log([], watermark=10), 100.0) == ""
    old = Log([(5, 1, 10.0), (7, 2, 20.0)], watermark=9)
    assert await history.start_after(old, 100.0) == ""  # nothing in the window
    young = Log([(5, 3, 150.0), (7, 4, 160.0)], watermark=9)
    assert await history.start_after(young, 100.0) == event_cursor.encode(5, 2)  # from the oldest


class Summaries:
    """The store's SummarizeEvents: the answers given in turn, then nothing new."""

    def __init__(self, *answers: event_log_pb2.SummarizeEventsReply) -> None:
        self.answers = list(answers)
        self.requests: list[event_log_pb2.SummarizeEventsRequest] = []

    async def __call__(
        self, request: event_log_pb2.SummarizeEventsRequest
    ) -> event_log_pb2.SummarizeEventsReply:
        self.requests.append(request)
        if self.answers:
            return self.answers.pop(0)
        return event_log_pb2.SummarizeEventsReply(cursor=event_cursor.encode(99, 0), caught_up=True)


def finished(at: float, *, caught_up: bool = True) -> event_log_pb2.SummarizeEventsReply:
    return event_log_pb2.SummarizeEventsReply(
        cursor=event_cursor.encode(50, 1),
        caught_up=caught_up,
        events=1,
        finished_states=[task_pb2.TASK_STATE_SUCCESS],
        finished_at_us=[int(at * 1e6)],
        latency_us=[20_000],
    )


async def test_a_page_opened_after_the_work_sees_it_in_the_chart() -> None:
    now = time.time()
    log = Log([(40, 1, now - 30)], watermark=60)
    store = Summaries(finished(now - 30))
    pulses = hub.PulseHub(store, read=log, interval=0.01)
    page = hub.Listener(None)
    pulses._join(page)
    snapshot = await page.next()
    assert snapshot is not None and b'"points":[]' in snapshot  # before the log was read
    data = await asyncio.wait_for(page.next(), 5)
    assert data is not None
    pulse_data = json.loads(data.decode().split("data: ", 1)[1])
    assert [p[1] for p in pulse_data["chart"]["points"]] == [1]
    assert pulse_data["tasks"]["ids"] == [] and not any(pulse_data["changed"].values())
    # The chart's window was read from its first event, then polling goes on after it.
    assert [r.after for r in store.requests[:2]] == [event_cursor.encode(40, 0), event_cursor.encode(50, 1)]
    await pulses.close()


async def test_a_window_too_busy_to_count_leaves_the_chart_to_fill_from_now() -> None:
    now = time.time()
    log = Log([(40, 1, now - 30)], watermark=60)
    busy = [finished(now - 30, caught_up=False) for _ in range(hub.HISTORY_CALLS)]
    store = Summaries(*busy)
    pulses = hub.PulseHub(store, read=log, interval=0.01)
    pulses._join(hub.Listener(None))
    await wait_until_async(lambda: len(store.requests) > hub.HISTORY_CALLS, 5, "polling from now")
    assert store.requests[hub.HISTORY_CALLS].after == ""  # from now
    assert pulses.aggregator.take()["chart"]["points"] == []
    await pulses.close()
