"""Whether this result-store can serve: it commits, and its clock agrees with the
database's.

A store that answers while its database does not (frozen, failed over to a
standby in recovery, out of WAL space) makes every write wait for its deadline;
its probes must say so within seconds, and the gateways' with them (a gateway is
ready while a store is: gateway/server.py). So the check is a commit on the
writer's pool (sql/readiness.sql), bounded by ``CHECK_TIMEOUT`` on this side (a
frozen server enforces no statement timeout of its own).

The same round trip reads the database's clock. A store whose clock is off by
more than the seal's window refuses every bus message it receives as stale (the
window is judged by the receiver's clock against the sender's stamp), while
looking healthy: it says so in one line and is not ready until the clocks agree
again. Request deadlines do not compare clocks (rpc.arrived_late), so the seal's
window is the one bound.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from taskyard.core import health
from taskyard.core.clock import Clock

from .queries import bind

log = logging.getLogger(__name__)

# Seconds a check may take before it counts as failed.
CHECK_TIMEOUT = 1.5
# Seconds between checks (health.follow: two failures in a row make the store
# unready, so a frozen database shows within about 2 * CHECK_TIMEOUT + INTERVAL).
INTERVAL = 1.0


class ClockDisagrees(health.NotReady):
    pass


class Readiness:
    """The check (``check``) and its last verdict (``ready``, kept by ``follow``)."""

    def __init__(self, pool: Any, *, clock: Clock, tolerance: float, timeout: float = CHECK_TIMEOUT) -> None:
        self._pool = pool
        self._clock = clock
        self.tolerance = tolerance
        self._timeout = timeout
        self.ready = True
        self.skew = 0.0  # seconds this store's clock is ahead of the database's
        # The last reading's verdict on the clocks alone: while false, requests carried
        # out once per database are refused (bus_requests.refused_while_clock_off).
        self.clock_agrees = True

    async def check(self) -> None:
        """Returns once the database committed; raises otherwise (or when the clocks disagree)."""
        before = self._clock.now()
        async with asyncio.timeout(self._timeout):
            row = await self._pool.fetchrow(*bind("readiness_check"), timeout=self._timeout)
        after = self._clock.now()
        self.skew = (before + after) / 2 - float(row["db_now"])
        self.clock_agrees = abs(self.skew) <= self.tolerance
        if not self.clock_agrees:
            raise ClockDisagrees(
                f"this result-store's clock is {self.skew:+.1f} s off the database's "
                f"(more than {self.tolerance:g} s, the seal's window: its bus messages "
                "would be refused as stale); fix the clock (NTP)"
            )

    def set(self, ready: bool) -> None:
        self.ready = ready

    async def follow(self, stop: asyncio.Event) -> None:
        """Keep ``ready`` (and the process's readiness, health.py) until ``stop``."""
        await health.follow(
            self.check,
            "the database",
            stop,
            interval=INTERVAL,
            check_timeout=self._timeout + 0.5,
            on_change=self.set,
        )
