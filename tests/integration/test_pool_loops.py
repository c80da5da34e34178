"""A worker pool whose loop dies does not go on half-alive: the pool stops as a signal
would stop it (its workers stopped, what it holds handed back) and its run ends with
LoopEnded naming the loop, for the process to exit and be restarted."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from taskyard.core.background import LoopEnded
from taskyard.core.config import Settings
from taskyard.core.states import WorkerState
from taskyard.worker_pool.manager import Manager
from taskyard.worker_pool.watchdog import Watchdog

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


async def test_a_watchdog_that_dies_stops_the_pool(ipc_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def dies(self: Watchdog) -> None:
        raise RuntimeError("a bug in the watchdog")

    monkeypatch.setattr(Watchdog, "run", dies)
    settings = Settings().replace(
        transport="ipc",
        ipc_dir=str(ipc_dir),
        workers=1,
        task_modules=("taskyard.examples",),
        request_timeout=1.0,
        shutdown_timeout=5.0,
    )
    manager = Manager(settings, pool_id="pool-l")
    stop = asyncio.Event()
    with pytest.raises(
        LoopEnded, match=r"worker-pool: watchdog failed: RuntimeError\('a bug in the watchdog'\)"
    ):
        await manager.run(stop)
    assert stop.is_set()  # stopped as a signal would
    assert manager.pool.state is WorkerState.STOPPED
    assert not manager.workers.live()
