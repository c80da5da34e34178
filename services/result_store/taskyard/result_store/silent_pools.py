"""Pools whose heartbeats stopped: a SIGKILLed pool, or one cut off from every
store, says nothing on its way out, so the store declares it lost (STOPPED, and
``pool.lost`` in the event log) once it has been silent ``pool_lost_after``.

Every store sweeps; each pool is declared once (sql/workers.sql). A store that
has itself not been up and in touch with the database for that long does not
sweep: heartbeats sent to it while it was away failed, and their pools are not lost.
"""

from __future__ import annotations

import logging
import time

from taskyard.bus.v1 import pools_pb2
from taskyard.core import contract, errors
from taskyard.core.clock import Clock

from .appliers import Submit

log = logging.getLogger(__name__)

# Seconds between sweeps, at most (a quarter of ``lost_after`` when shorter);
# pools declared per sweep, at most.
SWEEP_INTERVAL = 5.0
SWEEP_LIMIT = 100
# Seconds between a pool's heartbeats unless it is told otherwise (worker_pool/links.py).
DEFAULT_HEARTBEAT = 5.0

# The store's own write of the sweep, never on the wire.
LOSE_POOLS = contract.STORE_LOSE_POOLS


class SilentPools:
    def __init__(self, submit: Submit, *, lost_after: float, clock: Clock) -> None:
        self._submit = submit
        self.lost_after = lost_after
        self._clock = clock
        # Since when this store has been in touch with the database (monotonic).
        self._in_touch_since = clock.monotonic()
        if lost_after < 3 * DEFAULT_HEARTBEAT:
            log.warning(
                "pools are declared lost after %.1f s of silence: unless their heartbeats are "
                "several times as frequent (every %.0f s by default), live pools will be",
                lost_after,
                DEFAULT_HEARTBEAT,
            )

    async def sweep(self) -> list[str]:
        """Declare the pools silent for ``lost_after``; their ids. Nothing while
        this store has not been in touch for as long itself."""
        if self._clock.monotonic() - self._in_touch_since < self.lost_after:
            return []
        request = pools_pb2.LosePoolsRequest(
            silent_ms=int(self.lost_after * 1000),
            limit=SWEEP_LIMIT,
            # The process's monotonic clock, as the applier's (the injected clock
            # measures the waits for the in-touch time).
            requested_at_us=time.monotonic_ns() // 1000,
            valid_for_us=int(self.interval * 1_000_000),
        )
        try:
            reply = await self._submit(LOSE_POOLS, request, SWEEP_LIMIT)
        except errors.TaskyardError:
            self._in_touch_since = self._clock.monotonic()
            raise
        if reply.late:  # out of touch while it waited: the wait starts again
            self._in_touch_since = self._clock.monotonic()
            return []
        if reply.pool_ids:
            log.warning(
                "declared %d pools lost (no heartbeat for %.0f s): %s",
                len(reply.pool_ids),
                self.lost_after,
                ", ".join(reply.pool_ids),
            )
        return list(reply.pool_ids)

    @property
    def interval(self) -> float:
        return min(SWEEP_INTERVAL, self.lost_after / 4)

    async def run(self) -> None:
        while True:
            await self._clock.sleep(self.interval)
            try:
                await self.sweep()
            except errors.TaskyardError as exc:
                log.debug("sweeping silent pools failed: %s", exc)
            except Exception:  # anything else must not end the sweeps silently
                log.exception("sweeping silent pools failed")
