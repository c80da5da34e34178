"""Whether the pool's requests reach a result-store: its contact with the custody.

A pool can reach the scheduler and not the store (a one-sided partition). Work
the scheduler still hands it then runs, but its start, outcome and renewals
reach no store: the lease lapses, the task is handed out again, and the body has
run for nothing. So the pool watches its own requests to the stores (heartbeats,
reports, renewals): from the first that fails, or that has gone unanswered for a
quarter of the lease (``patience``: past it, leases may lapse before the outcome
lands), it is *cut off*, and says so to the scheduler in every survey answer and
slot notice (``cut_off``), which dispatches nothing more to it. Only an answered
heartbeat ends it: a store that answers one has also recorded the pool as running
again (a store that declared it lost registers it anew), so leases to it are taken
again. A heartbeat goes at once when the pool is cut off, so a store that was only
slow clears it within one round trip.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

log = logging.getLogger("taskyard.worker_pool.manager")  # one logger name for the manager process


class StoreContact:
    def __init__(self, *, patience: float, on_change: Callable[[], None] | None = None) -> None:
        self.cut_off = False
        self.patience = patience
        # Told when ``cut_off`` flips, so the scheduler hears it in a slot notice
        # at once rather than at its next survey.
        self._on_change = on_change
        # Set when cut off: the heartbeat loop beats now (links.py).
        self.beat_now = asyncio.Event()

    def watch_request(self, what: str) -> asyncio.TimerHandle:
        """Call around a request to the stores; cancel the handle when it is answered
        (or failed). Unanswered for ``patience`` seconds, the pool is cut off."""
        return asyncio.get_running_loop().call_later(
            self.patience, self.failed, what, f"no answer within {self.patience:.1f} s"
        )

    def watch(self, on_change: Callable[[], None]) -> None:
        self._on_change = on_change

    def failed(self, what: str, why: str) -> None:
        """A request to the stores failed (after its own retries, if any)."""
        if self.cut_off:
            return
        self.cut_off = True
        self.beat_now.set()
        log.warning("cut off from the result-store (%s failed: %s): taking no new work", what, why)
        if self._on_change is not None:
            self._on_change()

    def heard(self) -> None:
        """A store answered a heartbeat."""
        if not self.cut_off:
            return
        self.cut_off = False
        log.warning("heard by the result-store again: taking work")
        if self._on_change is not None:
            self._on_change()
