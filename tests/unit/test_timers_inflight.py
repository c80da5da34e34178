"""The due heap keeps entries added while a store request is out ."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from taskyard.core.clock import ManualClock, to_us
from taskyard.scheduler.lanes import Ref
from taskyard.scheduler.timers import DueTimers

pytestmark = pytest.mark.asyncio


class RacyDb:
    """A store whose reply is computed before ``meanwhile`` runs (a row committed
    after the query), like a task.retrying event arriving during the request."""

    def __init__(self) -> None:
        self.meanwhile: Callable[[], None] | None = None

    def _race(self) -> None:
        if self.meanwhile is not None:
            fn, self.meanwhile = self.meanwhile, None
            fn()

    async def load_due(self, window_ms: int) -> tuple[list[tuple[str, int]], bool]:
        self._race()
        return [], False

    async def promote_due(self) -> tuple[list[Ref], int]:
        self._race()
        return [], 0


def make() -> tuple[DueTimers, RacyDb, ManualClock]:
    clock = ManualClock()
    db = RacyDb()
    return DueTimers(source=db, on_due=lambda refs: None, clock=clock), db, clock


async def test_promote_keeps_an_entry_added_while_the_request_was_out() -> None:
    timers, db, clock = make()
    due = to_us(clock.now()) - 1

    def late() -> None:  # committed after the query ran
        timers.add("late", due)

    db.meanwhile = late
    await timers.promote()
    assert "late" in timers and timers.next_us == due  # promoted on the next round


async def test_reload_keeps_an_entry_added_while_the_request_was_out() -> None:
    timers, db, clock = make()
    at = to_us(clock.now()) + 5_000_000

    def new() -> None:
        timers.add("new", at)

    db.meanwhile = new
    await timers.reload()
    assert "new" in timers and timers.next_us == at


async def test_promote_still_drops_entries_that_were_there_before() -> None:
    timers, _db, clock = make()
    timers.add("old", to_us(clock.now()) - 1)
    await timers.promote()
    assert "old" not in timers
