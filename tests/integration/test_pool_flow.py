"""A real pool (manager + spawned workers) against the fake scheduler: registration,
dispatch, results, failures, concurrency, timeouts, heartbeats, surveys."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator
from typing import Any

import pytest
from support.fake_scheduler import FakeScheduler, PoolProcess, make_record, pool_settings, short_ipc_dir
from support.waiting import wait_until_async

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def pool() -> AsyncIterator[tuple[FakeScheduler, PoolProcess]]:
    ipc = short_ipc_dir()
    settings = pool_settings(ipc)
    fake = await FakeScheduler(settings).start()
    proc = await PoolProcess(settings).start()
    try:
        await fake.wait_registered()
        yield fake, proc
    finally:
        rc = await proc.stop()
        await fake.close()
        print(proc.output())
        shutil.rmtree(ipc, ignore_errors=True)
    assert rc == 0, proc.output()


def result(c: Any) -> Any:
    assert c.success, c.failure
    return json.loads(c.result_json)


async def test_register_then_add(pool: tuple[FakeScheduler, PoolProcess]) -> None:
    fake, proc = pool
    reg = fake.registrations[0]
    assert reg.pool_id == proc.pool_id
    assert reg.capacity == 4
    examples = {"add", "async_add", "sleep", "busy", "fail", "crash", "flaky", "echo", "noop"}
    assert examples <= set(reg.task_names)
    assert reg.pair_address.startswith("ipc://")
    (rec,) = await fake.dispatch(make_record("add", 2, 3))
    c = await fake.log.completion(rec.id)
    assert c.success and c.result_json == b"5"
    assert c.ref.attempt == 1 and c.ref.lease_token == rec.lease_token
    assert c.ref.worker_id.startswith(proc.pool_id)
    # A task this short costs no start notice: the outcome carries its start time.
    assert 0 < c.started_at_us <= c.ref.at_us
    assert rec.id not in fake.log.started
    await fake.log.wait(lambda log: log.free_slots == 4)
    # Logged right after the RegisterReply, so long before this round trip ends.
    assert "worker-pool ready" in proc.output()


async def test_sync_and_async_tasks(pool: tuple[FakeScheduler, PoolProcess]) -> None:
    fake, _ = pool
    recs = await fake.dispatch(
        make_record("add", 1.5, 2),
        make_record("async_add", 20, 22),
        make_record("echo", 1, "x", flag=True),
        make_record("noop"),
    )
    got = [result(await fake.log.completion(r.id)) for r in recs]
    assert got == [3.5, 42, {"args": [1, "x"], "kwargs": {"flag": True}}, None]


async def test_exception_reports_type_message_traceback(pool: tuple[FakeScheduler, PoolProcess]) -> None:
    fake, _ = pool
    (rec,) = await fake.dispatch(make_record("fail", "boom", attempt=2))
    c = await fake.log.completion(rec.id)
    assert not c.success and c.retryable
    assert c.failure.type == "ValueError"
    assert c.failure.message == "boom"
    assert c.failure.attempt == 2
    assert "Traceback" in c.failure.traceback and "raise ValueError(message)" in c.failure.traceback


async def test_unknown_task_is_not_retryable(pool: tuple[FakeScheduler, PoolProcess]) -> None:
    fake, _ = pool
    (rec,) = await fake.dispatch(make_record("no_such_task"))
    c = await fake.log.completion(rec.id)
    assert not c.success and not c.retryable and c.failure.type == "NotRegistered"


async def test_concurrency_limit(pool: tuple[FakeScheduler, PoolProcess]) -> None:
    fake, _ = pool
    long = [make_record("sleep", 30) for _ in range(4)]
    await fake.dispatch(*long)
    await fake.log.wait(lambda log: all(r.id in log.started for r in long))
    reply = await fake.survey_until(lambda r: len(r.running) == 4)
    assert reply.free_slots == 0 and reply.capacity == 4 and reply.state == "RUNNING"
    # Two per worker: the least-loaded worker gets each one.
    per_worker: dict[str, int] = {}
    for ref in fake.log.started.values():
        per_worker[ref.worker_id] = per_worker.get(ref.worker_id, 0) + 1
    assert sorted(per_worker.values()) == [2, 2]
    # Over capacity: released at once, not started, no attempt burned.
    (extra,) = await fake.dispatch(make_record("sleep", 30))
    await fake.log.wait(lambda log: extra.id in log.released)
    assert not fake.log.released[extra.id].resume_requested
    assert extra.id not in fake.log.started


async def test_async_timeout(pool: tuple[FakeScheduler, PoolProcess]) -> None:
    fake, _ = pool
    # The task sleeps 30 s: an outcome within 10 is its timeout's.
    (rec,) = await fake.dispatch(make_record("sleep", 30, timeout_ms=300))
    c = await fake.log.completion(rec.id, within=10)
    assert not c.success and c.retryable and c.failure.type == "TimeoutError"
    assert "0.3s" in c.failure.message


async def test_sync_timeout_reported_at_the_deadline(pool: tuple[FakeScheduler, PoolProcess]) -> None:
    fake, _ = pool
    body_seconds = 3
    (rec,) = await fake.dispatch(make_record("busy", body_seconds, timeout_ms=300))
    c = await fake.log.completion(rec.id, within=10)
    assert c.failure.type == "TimeoutError"
    # Reported at its timeout, while the abandoned body still spins: the attempt's own
    # stamps (the pool's clock) span the timeout, not the body.
    assert 300_000 <= c.ref.at_us - c.started_at_us < body_seconds * 1_000_000, c
    # The worker still serves sync work (a fresh executor, not behind the abandoned thread).
    (nxt,) = await fake.dispatch(make_record("add", 1, 1))
    assert result(await fake.log.completion(nxt.id, within=2)) == 2


async def test_heartbeat_and_survey(pool: tuple[FakeScheduler, PoolProcess]) -> None:
    fake, proc = pool
    await asyncio.wait_for(fake.heartbeat_seen.wait(), 10)
    # The first beat (STARTING) goes before registration; the loop's follow once RUNNING.
    assert fake.heartbeats[0].state == "STARTING"

    async def running_beat() -> None:
        while fake.heartbeats[-1].state != "RUNNING":
            fake.heartbeat_seen.clear()
            await fake.heartbeat_seen.wait()

    await asyncio.wait_for(running_beat(), 10)
    hb = fake.heartbeats[-1]
    assert hb.pool_id == proc.pool_id and hb.capacity == 4 and hb.max_workers == 2 and hb.state == "RUNNING"
    assert hb.rss_bytes > 0 and "add" in hb.task_names
    reply = await fake.survey_until(lambda r: r.pool_id == proc.pool_id)
    assert reply.free_slots == 4 and len(reply.worker_pids) == 2
    assert reply.pair_address == fake.registrations[-1].pair_address


async def test_new_scheduler_id_triggers_registration(pool: tuple[FakeScheduler, PoolProcess]) -> None:
    fake, _ = pool
    before = len(fake.registrations)
    fake.scheduler_id = "fake-scheduler-2"
    await fake.survey(0.5)

    async def registered() -> bool:
        if len(fake.registrations) > before:
            return True
        await fake.survey(0.2)  # each survey names the new scheduler id
        return False

    await wait_until_async(registered, 10, "the pool to register with the new scheduler")


async def test_a_longer_task_gets_a_start_notice_before_its_outcome(
    pool: tuple[FakeScheduler, PoolProcess],
) -> None:
    fake, _ = pool
    (rec,) = await fake.dispatch(make_record("sleep", 0.5))
    await fake.log.wait(lambda log: rec.id in log.started, within=5)
    started = fake.log.started[rec.id]
    assert started.lease_token == rec.lease_token and started.attempt == 1
    assert rec.id not in fake.log.completed, "the start notice came only after the outcome"
    c = await fake.log.completion(rec.id)
    assert c.success and c.started_at_us == started.at_us
