"""A new leader loads its lanes once more after its first load (Scheduler._reload_after):
a submission through its deposed predecessor may have committed after that load."""

from __future__ import annotations

import asyncio

from taskyard.core import errors
from taskyard.scheduler.service import Scheduler


class _Maintenance:
    def __init__(self, fail: bool = False) -> None:
        self.reloads = 0
        self.fail = fail
        self.reload_requested = asyncio.Event()

    async def reload(self) -> int:
        self.reloads += 1
        if self.fail:
            raise errors.unavailable("the store is out of reach")
        return 3


def _scheduler(maintenance: _Maintenance) -> Scheduler:
    sched = Scheduler.__new__(Scheduler)
    sched.term = 2
    sched.maintenance = maintenance  # type: ignore[assignment]
    return sched


async def test_the_lanes_are_loaded_again_after_the_delay() -> None:
    maintenance = _Maintenance()
    await _scheduler(maintenance)._reload_after(0.01)
    assert maintenance.reloads == 1 and not maintenance.reload_requested.is_set()


async def test_a_failed_load_is_left_to_the_maintenance_loop() -> None:
    maintenance = _Maintenance(fail=True)
    await _scheduler(maintenance)._reload_after(0.01)
    assert maintenance.reloads == 1 and maintenance.reload_requested.is_set()
