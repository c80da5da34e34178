"""A worker death's backoff is the task's own @task(retry_...) policy, not the pool's
default: a real pool process against the fake scheduler/store."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support.fake_scheduler import FakeScheduler, PoolProcess, make_record, pool_settings, short_ipc_dir

pytestmark = pytest.mark.timeout(60)

TESTS_DIR = str(Path(__file__).resolve().parents[1])  # where support.tasks lives


async def test_a_death_uses_the_tasks_own_backoff() -> None:
    ipc = short_ipc_dir()
    # The pool default would give at most 0.5 s; the task's own policy says 30 s.
    settings = pool_settings(
        ipc,
        workers=1,
        task_modules=("taskyard.examples", "support.tasks"),
        retry_base_seconds=0.1,
        retry_cap_seconds=0.5,
    )
    fake = await FakeScheduler(settings).start()
    path = os.pathsep.join(p for p in (TESTS_DIR, os.environ.get("PYTHONPATH", "")) if p)
    proc = await PoolProcess(settings, extra_env={"PYTHONPATH": path}).start()
    try:
        await fake.wait_registered()
        own, default = await fake.dispatch(make_record("crash_with_own_backoff"), make_record("crash"))
        await fake.log.wait(lambda log: own.id in log.died and default.id in log.died, within=20)
        assert fake.log.died[own.id].started
        assert fake.log.died[own.id].retry_delay_ms == 30_000
        assert 0 < fake.log.died[default.id].retry_delay_ms <= 500
    finally:
        await proc.stop()
        await fake.close()
        print(proc.output())
        shutil.rmtree(ipc, ignore_errors=True)
