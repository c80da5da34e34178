"""Retry policy: exponential backoff with full jitter and a cap.

delay(attempt) = min(cap, base * factor ** (attempt - 1)) * uniform(1 - jitter, 1)
where ``attempt`` is the attempt that just failed (1 for the first run).
"""

from __future__ import annotations

import dataclasses
import random


@dataclasses.dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    base_seconds: float = 1.0
    factor: float = 2.0
    cap_seconds: float = 300.0
    jitter: float = 0.2

    def ceiling(self, attempt: int) -> float:
        """The delay before jitter."""
        try:
            raw = self.base_seconds * self.factor ** max(0, attempt - 1)
        except OverflowError:  # max_retries is user input: any attempt number gets the cap
            return self.cap_seconds
        return min(self.cap_seconds, raw)

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        r = (rng or random).random()
        return self.ceiling(attempt) * (1.0 - self.jitter * r)
