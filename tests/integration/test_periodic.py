"""Firing periodic schedules against a real PostgreSQL with an injected clock:
exactly once with two schedulers (two processes, and two loops in one),
daylight-saving transitions, overlap, catch-up after downtime, triggers."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import asyncpg
import pytest
from google.protobuf.message import Message
from support.waiting import wait_until_async

from taskyard.bus.v1 import envelope_pb2, schedule_pb2
from taskyard.core import contract, errors, rpc
from taskyard.core.clock import ManualClock
from taskyard.core.schedule import to_us
from taskyard.result_store.service import serve
from taskyard.scheduler.lanes import Lanes
from taskyard.scheduler.periodic import Periodic
from taskyard.v1 import schedule_pb2 as pub
from taskyard.v1 import task_pb2

pytestmark = pytest.mark.asyncio
K = envelope_pb2
M = TypeVar("M", bound=Message)
MINUTE = 60_000_000
TESTS_DIR = Path(__file__).resolve().parents[1]


class DirectStore:
    """The store's own handlers, called in process (no NNG): real SQL, real code."""

    def __init__(self, store: Any) -> None:
        self.routes = rpc.route_table(store.routes())

    async def call(self, method: contract.Method[Any, M], request: Any, **_: Any) -> M:
        route = self.routes[method.kind]
        reply = await route.handler(request, envelope_pb2.Envelope())
        assert isinstance(reply, method.reply)
        return reply


def at(*args: int, tz: str = "UTC", fold: int = 0) -> int:
    zone = UTC if tz == "UTC" else ZoneInfo(tz)
    return to_us(datetime(*args, tzinfo=zone, fold=fold))  # type: ignore[arg-type, misc]


def cron(name: str, expr: str, tz: str = "", **kw: Any) -> pub.Schedule:
    # Nothing runs the tasks here, so a run is never final before the next one:
    # overlap ALLOW keeps every run (SKIP has its own test).
    kw.setdefault("overlap", pub.OVERLAP_POLICY_ALLOW)
    return pub.Schedule(name=name, cron=expr, time_zone=tz, task=task_pb2.TaskSpec(name="noop"), **kw)


async def create(store: Any, schedule: pub.Schedule, now_us: int) -> pub.Schedule:
    reply = await store.call(
        contract.STORE_SCHEDULE_SAVE, schedule_pb2.SaveSchedulesRequest(schedules=[schedule], now_us=now_us)
    )
    return reply.schedules[0]


async def get(store: Any, ident: str) -> pub.Schedule:
    reply = await store.call(contract.STORE_SCHEDULE_READ, schedule_pb2.ReadSchedulesRequest(id=ident))
    return reply.schedules[0]


async def runs_of(dsn: str, schedule_id: str) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(dsn)
    try:
        return await conn.fetch(
            "SELECT id::text, request_id, state::text, name FROM tasks"
            " WHERE schedule_id = $1 ORDER BY created_at",
            schedule_id,
        )
    finally:
        await conn.close()


def firer(clock: Any, store: Any) -> Periodic:
    return Periodic(store, lanes=Lanes(), wake=lambda: None, clock=clock)


async def step_both(a: Periodic, b: Periodic, clock: ManualClock, until_us: int, step_s: float) -> int:
    """Advance the clock to ``until_us`` in steps; both schedulers race at each step."""
    fired = 0
    while clock.now() * 1_000_000 < until_us:
        clock.advance(step_s)
        x, y = await asyncio.gather(a.fire_due(), b.fire_due())
        fired += x + y
    return fired


@pytest.fixture
async def store(result_store: Any) -> AsyncIterator[DirectStore]:
    yield DirectStore(result_store)


async def test_every_minute_with_two_schedulers_fires_exactly_five_runs(
    store: DirectStore, database_url: str
) -> None:
    t0 = at(2024, 5, 1, 12, 0, 30)
    clock = ManualClock(start=t0 / 1e6)
    s = await create(store, cron("every-minute", "*/1 * * * *"), t0)
    a, b = firer(clock, store), firer(clock, store)
    assert await step_both(a, b, clock, t0 + 5 * MINUTE, 7.0) == 5
    rows = await runs_of(database_url, s.id)
    assert len(rows) == 5
    assert len({r["request_id"] for r in rows}) == 5
    got = await get(store, "every-minute")
    assert got.times_run == 5 and got.last_task_id == rows[-1]["id"]
    assert got.next_run_at.ToMicroseconds() == at(2024, 5, 1, 12, 6)
    # The due heap's top is cached by each scheduler.
    assert a.next_due_us == b.next_due_us == at(2024, 5, 1, 12, 6)


async def test_two_scheduler_processes_fire_each_run_once(store_settings: Any, database_url: str) -> None:
    stop = asyncio.Event()
    served = asyncio.create_task(serve(store_settings, stop))
    req = rpc.Requester(store_settings.store_address, max_message_bytes=16 << 20, timeout=10)
    procs: list[asyncio.subprocess.Process] = []
    try:

        async def answers() -> bool:
            try:
                await req.call(contract.STORE_SCHEDULE_READ, schedule_pb2.ReadSchedulesRequest(), timeout=0.5)
            except errors.TaskyardError:
                return False
            return True

        await wait_until_async(answers, 10, "the store to answer")
        t0 = at(2024, 11, 3, 5, 57, 30)  # 01:57:30 EDT, just before New York falls back
        s = await create(req, cron("ny-minute", "*/1 * * * *", "America/New_York"), t0)
        env = {**os.environ, "PYTHONPATH": str(TESTS_DIR)}
        for _ in range(2):
            procs.append(
                await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "support.firer",
                    store_settings.store_address,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    env=env,
                    cwd=TESTS_DIR,
                )
            )

        async def line(p: asyncio.subprocess.Process) -> str:
            assert p.stdout is not None
            return (await asyncio.wait_for(p.stdout.readline(), 15)).decode().strip()

        assert [await line(p) for p in procs] == ["ready", "ready"]
        fired = 0
        now = t0
        while now < t0 + 5 * MINUTE:
            now += 5_000_000
            for p in procs:  # both get the same instant at once, then race
                assert p.stdin is not None
                p.stdin.write(f"{now}\n".encode())
            fired += sum([int(await line(p)) for p in procs])
        assert fired == 5
        rows = await runs_of(database_url, s.id)
        assert len(rows) == 5
        assert (await get(req, s.id)).times_run == 5
    finally:
        for p in procs:
            if p.stdin is not None:
                p.stdin.close()
            try:
                await asyncio.wait_for(p.wait(), 5)
            except TimeoutError:
                p.kill()
                await p.wait()
        req.close()
        stop.set()
        await asyncio.wait_for(served, 10)


@pytest.mark.parametrize(
    ("start", "end"),
    [
        # Paris springs forward on 2024-03-31 (02:00 -> 03:00): 02:30 runs at 03:00 CEST.
        ((2024, 3, 31, 0, 0), (2024, 3, 31, 5, 0)),
        # Paris falls back on 2024-10-27 (03:00 -> 02:00): 02:30 happens twice, runs once.
        ((2024, 10, 27, 0, 0), (2024, 10, 27, 5, 0)),
    ],
)
async def test_dst_change_neither_skips_nor_doubles_a_run(
    store: DirectStore, database_url: str, start: tuple[int, ...], end: tuple[int, ...]
) -> None:
    t0 = at(*start, tz="Europe/Paris")
    clock = ManualClock(start=t0 / 1e6)
    s = await create(store, cron("nightly", "30 2 * * *", "Europe/Paris"), t0)
    a, b = firer(clock, store), firer(clock, store)
    assert await step_both(a, b, clock, at(*end, tz="Europe/Paris"), 120.0) == 1
    assert len(await runs_of(database_url, s.id)) == 1
    assert (await get(store, s.id)).times_run == 1


async def test_every_minute_through_fall_back_counts_real_minutes(
    store: DirectStore, database_url: str
) -> None:
    t0 = at(2024, 10, 27, 2, 57, 30, tz="Europe/Paris")  # 00:57:30Z, in the last CEST minutes
    clock = ManualClock(start=t0 / 1e6)
    s = await create(store, cron("paris-minute", "* * * * *", "Europe/Paris"), t0)
    a, b = firer(clock, store), firer(clock, store)
    assert await step_both(a, b, clock, t0 + 5 * MINUTE, 11.0) == 5
    assert len(await runs_of(database_url, s.id)) == 5


async def test_overlap_skip_by_default_and_allow(store: DirectStore, database_url: str) -> None:
    t0 = at(2024, 5, 1, 12)
    clock = ManualClock(start=t0 / 1e6)
    every = pub.Schedule(name="skip", task=task_pb2.TaskSpec(name="noop"))
    every.interval.FromSeconds(10)
    skip = await create(store, every, t0)
    every.name, every.overlap = "allow", pub.OVERLAP_POLICY_ALLOW
    allow = await create(store, every, t0)
    p = firer(clock, store)
    for _ in range(3):  # nobody runs the tasks: each run is still QUEUED at the next
        clock.advance(10)
        await p.fire_due()
    got_skip, got_allow = await get(store, skip.id), await get(store, allow.id)
    assert (got_skip.times_run, got_skip.times_skipped) == (1, 2)
    assert (got_allow.times_run, got_allow.times_skipped) == (3, 0)
    assert len(await runs_of(database_url, skip.id)) == 1
    # Once the run is final, the next due run fires again.
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("UPDATE tasks SET state = 'CANCELLED' WHERE schedule_id = $1", skip.id)
    finally:
        await conn.close()
    clock.advance(10)
    await p.fire_due()
    assert (await get(store, skip.id)).times_run == 2


async def test_missed_runs_after_downtime_fire_once(store: DirectStore, database_url: str) -> None:
    t0 = at(2024, 5, 1, 12, 0, 30)
    clock = ManualClock(start=t0 / 1e6)
    s = await create(store, cron("catch-up", "* * * * *"), t0)
    clock.advance(3600)  # an hour without any scheduler
    assert await firer(clock, store).fire_due() == 1
    got = await get(store, s.id)
    assert got.times_run == 1
    assert got.next_run_at.ToMicroseconds() == at(2024, 5, 1, 13, 1)


async def test_trigger_fires_now_and_counts(store: DirectStore, database_url: str) -> None:
    t0 = at(2024, 5, 1, 12)
    clock = ManualClock(start=t0 / 1e6)
    s = await create(store, cron("manual", "0 0 1 1 *", paused=True), t0)
    lanes = Lanes()
    p = Periodic(store, lanes=lanes, wake=lambda: None, clock=clock)
    (route,) = p.routes()
    reply = await route.handler(schedule_pb2.FireSchedulesRequest(trigger="manual"), envelope_pb2.Envelope())
    assert isinstance(reply, schedule_pb2.FireSchedulesReply)
    (task,) = reply.records
    assert task.schedule_id == s.id and task.name == "noop"
    assert task.id in lanes  # enqueued like a submission
    (run,) = await runs_of(database_url, s.id)
    assert run["id"] == task.id and run["state"] == "QUEUED"
    got = reply.schedules[0]
    assert got.times_run == 1 and got.paused and got.last_task_id == task.id
    with pytest.raises(errors.TaskyardError) as info:
        await route.handler(schedule_pb2.FireSchedulesRequest(trigger="nope"), envelope_pb2.Envelope())
    assert info.value.code.name == "NOT_FOUND"


async def test_loop_wakes_at_the_due_time_and_on_changes(store: DirectStore, database_url: str) -> None:
    t0 = at(2024, 5, 1, 12)
    clock = ManualClock(start=t0 / 1e6)
    lanes = Lanes()
    p = Periodic(store, lanes=lanes, wake=lambda: None, clock=clock, refresh_interval=30)
    loop = asyncio.create_task(p.run())

    async def until(pred: Any) -> None:
        await wait_until_async(pred, 5, "the periodic loop")

    try:
        await until(lambda: clock._sleepers)  # idle: nothing to fire
        s = await create(store, cron("loop", "* * * * *"), int(clock.now() * 1_000_000))
        p.changed.set()  # what the store's schedule.changed event does
        await until(lambda: p.next_due_us == at(2024, 5, 1, 12, 1))
        clock.advance(59)
        # Asleep on the clock again (after a refresh it may have woken for): it had its chance to fire.
        await until(lambda: clock._sleepers)
        assert p.runs_fired == 0
        clock.advance(1)
        await until(lambda: p.runs_fired == 1)
        assert len(lanes) == 1
        assert len(await runs_of(database_url, s.id)) == 1
    finally:
        loop.cancel()
        with pytest.raises(asyncio.CancelledError):
            await loop


class RecordingStore:
    """The store's handlers, with each FireSchedulesRequest kept as sent."""

    def __init__(self, store: DirectStore) -> None:
        self.store = store
        self.fired: list[schedule_pb2.FireSchedulesRequest] = []

    async def call(self, method: contract.Method[Any, M], request: Any, **kw: Any) -> M:
        if isinstance(request, schedule_pb2.FireSchedulesRequest):
            self.fired.append(schedule_pb2.FireSchedulesRequest.FromString(request.SerializeToString()))
        return await self.store.call(method, request, **kw)


async def test_without_an_injected_clock_runs_fire_by_the_database_clock(
    store: DirectStore, database_url: str
) -> None:
    """What a leading scheduler does: it sends no time, the store fires by now() and
    says so, and the wait for the next run is measured from the database's time."""

    async def database_now_us() -> int:
        conn = await asyncpg.connect(database_url)
        try:
            return int(await conn.fetchval("SELECT ty_us(now())"))
        finally:
            await conn.close()

    before = await database_now_us()
    s = await create(store, cron("db-clock", "* * * * *"), before - 5 * MINUTE)  # due long ago
    later = await create(store, cron("db-clock-later", "0 0 1 1 *"), before)  # not due for months
    recording = RecordingStore(store)
    p = Periodic(recording, lanes=Lanes(), wake=lambda: None, refresh_interval=3600)
    assert await p.fire_due() == 1  # one run for the missed ones (catch-up fires once)
    after = await database_now_us()
    assert [r.now_us for r in recording.fired] == [0]
    assert len(await runs_of(database_url, s.id)) == 1 and not await runs_of(database_url, later.id)
    fired_by = p._fired_at_us
    assert before <= fired_by <= after
    # The next run: the minute after the database's time, waited for from that time.
    assert p.next_due_us == (fired_by // MINUTE + 1) * MINUTE
    assert p._delay() == pytest.approx((p.next_due_us - fired_by) / 1e6)
