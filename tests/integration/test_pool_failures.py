"""Worker deaths, manager drain on SIGTERM, and orphan-free manager death (real processes)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from collections.abc import AsyncIterator

import psutil
import pytest
from support.fake_scheduler import FakeScheduler, PoolProcess, make_record, pool_settings, short_ipc_dir

pytestmark = pytest.mark.timeout(60)

Pool = tuple[FakeScheduler, PoolProcess]


@pytest.fixture
async def pool() -> AsyncIterator[Pool]:
    ipc = short_ipc_dir()
    settings = pool_settings(ipc, shutdown_timeout=3.0)
    fake = await FakeScheduler(settings).start()
    proc = await PoolProcess(settings).start()
    try:
        await fake.wait_registered()
        yield fake, proc
    finally:
        await proc.stop()
        await fake.close()
        print(proc.output())
        shutil.rmtree(ipc, ignore_errors=True)


def pid_of(worker_id: str) -> int:
    return int(worker_id.rsplit(":", 1)[1])


async def test_sigkill_worker_reports_death_and_respawns(pool: Pool) -> None:
    fake, proc = pool
    before = await fake.survey_until(lambda r: len(r.worker_pids) == 2)
    (victim,) = await fake.dispatch(make_record("sleep", 30))
    await fake.log.wait(lambda log: victim.id in log.started)
    pid = pid_of(fake.log.started[victim.id].worker_id)
    assert pid in before.worker_pids
    os.kill(pid, signal.SIGKILL)
    # Its task sleeps 30 s: a death heard at all is the kill's.
    await fake.log.wait(lambda log: victim.id in log.died, within=5)
    death = fake.log.died[victim.id]
    assert death.started and death.ref.lease_token == victim.lease_token and death.ref.attempt == 1
    # Respawned: two live workers again, the dead one replaced.
    after = await fake.survey_until(
        lambda r: len(r.worker_pids) == 2 and pid not in r.worker_pids and r.free_slots == 4
    )
    assert not after.running
    # And the pool still serves work, on both workers.
    recs = await fake.dispatch(*[make_record("sleep", 0.2) for _ in range(4)])
    for r in recs:
        c = await fake.log.completion(r.id)
        assert c.success, c.failure
    assert {pid_of(fake.log.started[r.id].worker_id) for r in recs} == set(after.worker_pids)
    assert "died" in proc.output()


async def test_crashing_task_is_a_started_death(pool: Pool) -> None:
    fake, _ = pool
    bystander, crasher = await fake.dispatch(make_record("sleep", 0.5), make_record("crash"))
    await fake.log.wait(lambda log: crasher.id in log.died)
    assert fake.log.died[crasher.id].started
    # The other worker was not affected.
    assert (await fake.log.completion(bystander.id)).success


async def test_sigterm_releases_and_exits_cleanly(pool: Pool) -> None:
    fake, proc = pool
    reply = await fake.survey_until(lambda r: len(r.worker_pids) == 2)
    running = await fake.dispatch(make_record("sleep", 30), make_record("busy", 30), make_record("sleep", 30))
    await fake.log.wait(lambda log: all(r.id in log.started for r in running))
    proc.signal(signal.SIGTERM)
    # Its tasks run 30 s: an exit at all means it released them, not waited for them.
    assert await proc.wait(within=10) == 0
    await fake.log.wait(lambda log: all(r.id in log.released for r in running), within=5)
    for r in running:
        rel = fake.log.released[r.id]
        assert rel.resume_requested and rel.ref.lease_token == r.lease_token
        assert r.id not in fake.log.died and r.id not in fake.log.completed
    # The drain was announced: no free slot from then on.
    assert fake.log.free_slots == 0
    workers = [p for p in (_proc(pid) for pid in reply.worker_pids) if p is not None]
    _, alive = await asyncio.to_thread(psutil.wait_procs, workers, timeout=3)
    assert not alive
    assert "worker-pool stopped" in proc.output()


async def test_manager_sigkill_leaves_no_orphans(pool: Pool) -> None:
    fake, proc = pool
    reply = await fake.survey_until(lambda r: len(r.worker_pids) == 2)
    # One worker busy in an async sleep, one spinning the CPU in a sync task.
    await fake.dispatch(make_record("sleep", 60), make_record("busy", 60))
    await fake.log.wait(lambda log: len(log.started) == 2)
    procs = [p for p in (_proc(pid) for pid in reply.worker_pids) if p is not None]
    assert len(procs) == 2
    proc.signal(signal.SIGKILL)
    await proc.wait(within=5)
    _, alive = await asyncio.to_thread(psutil.wait_procs, procs, timeout=5)
    assert not alive, f"orphaned workers: {alive}"


def _proc(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.NoSuchProcess:
        return None
