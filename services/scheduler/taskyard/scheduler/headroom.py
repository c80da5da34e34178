"""Headroom: slots of each pool held for the tenants that have nothing waiting.

Fair share in the lanes (lanes.py) decides whose task goes into a slot that frees,
but a tenant that submits one task now and then still finds every slot taken by a
flooding tenant's tasks, and waits for the next slot to free (long tasks free
theirs seconds apart) and for the next lease round to reach it. So while a tenant
that submitted within ``WINDOW`` seconds has at most ``FEW`` tasks waiting in the
lanes and another tenant submits or waits too, the lanes leave ``SHARE`` of each
pool's slots free (at least one) for such tenants: a submitted task whose tenant
has nothing waiting, with nothing more urgent waiting, takes one at its insert
(the scheduler's fast path, dispatcher.py: it is leased by the statement that
writes it), and the lanes give the others to the tasks of tenants with at most
``FEW`` waiting (``few``), so a trickle that missed its insert's lease is not
left behind a flood's backlog either.

Nothing is held with one tenant (every suite that does not use tenants), nor
while every tenant that submits has more than ``FEW`` waiting: then the lanes'
turns share every slot.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

# Seconds a tenant counts as submitting after its last submit.
WINDOW = 10.0
# The part of a pool's slots held while tenants contend (at least one slot).
SHARE = 1 / 16
# A tenant with at most this many tasks waiting may take the held slots.
FEW = 16
# Seconds the answer to "held or not" is kept: the dispatcher asks for every pool
# on every round, the answer reads every recent submitter.
REFRESH = 0.05


def _nobody() -> Mapping[str, int]:
    return {}


class Headroom:
    def __init__(
        self,
        *,
        waiting: Callable[[], Mapping[str, int]] = _nobody,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # The tenants with tasks waiting in the lanes, and how many (Lanes.waiting_tenants).
        self._waiting = waiting
        self._clock = clock
        # tenant -> the clock's time of its last submit, oldest first.
        self._seen: dict[str, float] = {}
        self._contended = False
        self._checked_at = float("-inf")
        # The tenants with tasks waiting, at most FEW each, as last read.
        self.few: frozenset[str] = frozenset()

    def submitted(self, tenant: str) -> None:
        """A tenant's tasks were just written."""
        seen = self._seen
        seen.pop(tenant, None)
        seen[tenant] = self._clock()
        if len(seen) > 1:
            self._checked_at = float("-inf")  # a second tenant may have just come

    def contended(self) -> bool:
        """Whether a tenant that submitted within the window has at most ``FEW``
        tasks waiting while another tenant submits or waits too."""
        now = self._clock()
        if now - self._checked_at < REFRESH:
            return self._contended
        self._checked_at = now
        seen = self._seen
        for tenant, at in list(seen.items()):  # oldest first: past the window, forgotten
            if now - at < WINDOW:
                break
            del seen[tenant]
        if not seen:
            self._contended, self.few = False, frozenset()
            return False
        waiting = self._waiting()
        self.few = frozenset(t for t, n in waiting.items() if n <= FEW)
        light = any(waiting.get(tenant, 0) <= FEW for tenant in seen)
        self._contended = light and len(seen.keys() | waiting.keys()) > 1
        return self._contended

    def ends_at(self) -> float | None:
        """While slots are held: when the oldest recent submitter's window ends (the
        clock's time), at which the dispatcher asks again."""
        if not self.contended():
            return None
        # Not before the answer may change (an entry just past its window is
        # forgotten at the next refresh).
        return max(next(iter(self._seen.values())) + WINDOW, self._checked_at + REFRESH)

    def held(self, capacity: int) -> int:
        """Slots of a pool of ``capacity`` the lanes leave free now."""
        if capacity <= 1 or not self.contended():
            return 0
        return max(1, int(capacity * SHARE))
