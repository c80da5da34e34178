"""Workers forked from the pool's template (real processes): the template, a child
of the manager, is every worker's parent; a forked worker runs tasks, is replaced
from the template when it dies, honours a cancel request; and a dead template is
started again, its orphans killed and their attempts reported."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import psutil
import pytest
from support.fake_scheduler import FakeScheduler, PoolProcess, make_record, pool_settings, short_ipc_dir

from taskyard.bus.v1 import task_record_pb2
from taskyard.core import lifecycle
from taskyard.v1 import task_pb2
from taskyard.worker_pool import launcher

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(launcher.start_method() != launcher.FORKSERVER, reason="no pidfds: spawned workers"),
]

Pool = tuple[FakeScheduler, PoolProcess]


@pytest.fixture
async def pool() -> AsyncIterator[Pool]:
    ipc = short_ipc_dir()
    # A cancelled body gets a short grace before its asyncio cancellation.
    settings = pool_settings(ipc, shutdown_timeout=3.0, cancel_grace=0.2)
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


def template_of(manager: int) -> psutil.Process | None:
    """The manager's child that serves forks (multiprocessing's forkserver)."""
    for child in psutil.Process(manager).children():
        try:
            if "forkserver" in " ".join(child.cmdline()) and child.status() != psutil.STATUS_ZOMBIE:
                return child
        except psutil.NoSuchProcess:
            continue
    return None


def parents(pids: list[int]) -> set[int]:
    return {psutil.Process(pid).ppid() for pid in pids}


def pid_of(worker_id: str) -> int:
    return int(worker_id.rsplit(":", 1)[1])


async def started_on(fake: FakeScheduler, record: task_record_pb2.TaskRecord) -> int:
    await fake.log.wait(lambda log: record.id in log.started)
    return pid_of(fake.log.started[record.id].worker_id)


async def test_workers_are_forks_of_the_template_and_run_tasks(pool: Pool) -> None:
    fake, proc = pool
    reply = await fake.survey_until(lambda r: len(r.worker_pids) == 2)
    template = template_of(proc.pid)
    assert template is not None, "no template under the manager"
    assert parents(list(reply.worker_pids)) == {template.pid}
    # The template has no thread of its own to lose in a fork.
    assert template.num_threads() == 1
    records = await fake.dispatch(*[make_record("add", i, 1) for i in range(4)])
    ran_on = set()
    for i, r in enumerate(records):
        c = await fake.log.completion(r.id)
        assert c.success and json.loads(c.result_json) == i + 1, c.failure
        ran_on.add(pid_of(c.ref.worker_id))
    assert ran_on <= set(reply.worker_pids)


async def test_a_killed_forked_worker_is_replaced_from_the_template(pool: Pool) -> None:
    fake, proc = pool
    before = await fake.survey_until(lambda r: len(r.worker_pids) == 2)
    template = template_of(proc.pid)
    assert template is not None
    (victim,) = await fake.dispatch(make_record("sleep", 30))
    pid = await started_on(fake, victim)
    os.kill(pid, signal.SIGKILL)
    await fake.log.wait(lambda log: victim.id in log.died)
    death = fake.log.died[victim.id]
    assert death.started and death.ref.lease_token == victim.lease_token
    after = await fake.survey_until(lambda r: len(r.worker_pids) == 2 and pid not in r.worker_pids)
    assert parents(list(after.worker_pids)) == {template.pid}
    (replacement,) = set(after.worker_pids) - set(before.worker_pids)
    records = await fake.dispatch(*[make_record("sleep", 0.05) for _ in range(4)])
    ran_on = set()
    for r in records:
        c = await fake.log.completion(r.id)
        assert c.success, c.failure
        ran_on.add(pid_of(c.ref.worker_id))
    assert replacement in ran_on


async def test_a_forked_worker_honours_a_cancel_request(pool: Pool) -> None:
    fake, _ = pool
    await fake.survey_until(lambda r: len(r.worker_pids) == 2)
    (record,) = await fake.dispatch(make_record("sleep", 60))
    await started_on(fake, record)
    flagged = task_record_pb2.TaskRecord()
    flagged.CopyFrom(record)
    flagged.cancel_requested = True  # the store's cancel of a dispatched attempt
    await fake.dispatch(flagged)
    c = await fake.log.completion(record.id, within=30)
    assert not c.success and c.failure.type == "Cancelled"
    assert c.cancel_step == task_pb2.CANCEL_STEP_ASYNCIO


async def test_a_dead_template_is_started_again(pool: Pool) -> None:
    fake, proc = pool
    before = await fake.survey_until(lambda r: len(r.worker_pids) == 2)
    template = template_of(proc.pid)
    assert template is not None
    # A worker spinning the CPU in a sync body (its loop keeps turning, its body does not stop).
    (busy,) = await fake.dispatch(make_record("busy", 60))
    await started_on(fake, busy)
    orphans = [psutil.Process(pid) for pid in before.worker_pids]
    template.kill()
    # The manager hears of the template's death as its workers' end: their attempts
    # are reported, and the orphans (still running) are killed by their pidfds.
    await fake.log.wait(lambda log: busy.id in log.died, within=30)
    _, alive = await asyncio.to_thread(psutil.wait_procs, orphans, timeout=20)
    assert not alive, f"orphaned workers of the dead template: {alive}"
    after = await fake.survey_until(
        lambda r: len(r.worker_pids) == 2 and not set(r.worker_pids) & set(before.worker_pids), within=30
    )
    fresh = template_of(proc.pid)
    assert fresh is not None and fresh.pid != template.pid
    assert parents(list(after.worker_pids)) == {fresh.pid}
    records = await fake.dispatch(*[make_record("add", 1, 2) for _ in range(4)])
    for r in records:
        assert (await fake.log.completion(r.id)).success


async def test_forked_workers_draw_their_own_retry_jitter(pool: Pool) -> None:
    fake, _ = pool
    await fake.survey_until(lambda r: len(r.worker_pids) == 2)
    # A tenth attempt's backoff is capped at 300 s, less up to 20 % jitter: 60,000
    # possible milliseconds. Two workers sharing the template's random state would
    # draw the same two delays; workers seeded on their own never do (p ~ 1e-9).
    records = await fake.dispatch(*[make_record("fail", "on purpose", attempt=10) for _ in range(4)])
    drawn: dict[int, set[int]] = {}
    for r in records:
        c = await fake.log.completion(r.id)
        assert not c.success and c.retryable, c.failure
        drawn.setdefault(pid_of(c.ref.worker_id), set()).add(c.retry_delay_ms)
    assert len(drawn) == 2, f"the four attempts ran on {sorted(drawn)}"
    first, second = drawn.values()
    assert first != second


def blocked_signals(pid: int) -> set[signal.Signals]:
    """The signals process ``pid`` holds blocked, from its /proc status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigBlk:"):
            mask = int(line.split()[1], 16)
            return {s for s in signal.Signals if mask & (1 << (s - 1))}
    raise AssertionError(f"no SigBlk in /proc/{pid}/status")


async def test_a_pool_started_holding_its_stop_signals_passes_none_on_to_its_workers() -> None:
    """A launcher holds a service's stop signals until its handler waits
    (lifecycle.stop_signals_held), and the template is forked before that: the
    processes a task body starts must still hear a SIGTERM."""
    ipc = short_ipc_dir()
    settings = pool_settings(ipc)
    fake = await FakeScheduler(settings).start()
    with lifecycle.stop_signals_held():
        proc = await PoolProcess(settings).start()
    try:
        await fake.wait_registered()
        reply = await fake.survey_until(lambda r: len(r.worker_pids) == 2)
        template = template_of(proc.pid)
        assert template is not None
        for pid in [template.pid, *reply.worker_pids]:
            assert not blocked_signals(pid) & {signal.SIGTERM, signal.SIGINT}, pid
    finally:
        await proc.stop()
        await fake.close()
        shutil.rmtree(ipc, ignore_errors=True)
