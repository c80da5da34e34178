"""Throttling answers: a task body says "the downstream asked me to come back later".

``raise RetryAfter(2)`` (or ``raise_for_throttle(status, headers)`` with an HTTP
response's status and headers: 429 and 503 become a RetryAfter with the
response's Retry-After) ends the attempt as *throttled*: the task is retried no
sooner than that delay and spends no retry, and the circuit breakers the task
uses count it as a failure (docs/flow-control.md, "Circuit breakers").
"""

from __future__ import annotations

import datetime
import email.utils
import math
from collections.abc import Mapping

from taskyard.v1 import task_pb2

# The statuses that mean "too much, come back later".
THROTTLING_STATUSES = frozenset({429, 503})
# The longest Retry-After honoured (a longer one is cut to it): one day.
MAX_RETRY_AFTER = 86_400.0
# A throttling answer without a usable Retry-After waits this long.
DEFAULT_RETRY_AFTER = 1.0
# The shortest delay a RetryAfter above 0 waits (a shorter one is raised to it):
# a throttled attempt spends no retry, so a task answered "retry after 1 ms"
# would otherwise come back a thousand times a second, each attempt a lease, a
# failure row and a dispatch. 0 keeps its meaning: the task's retry backoff.
MIN_RETRY_AFTER = 0.1


class RetryAfter(Exception):
    """Raised by a task body when a downstream throttles it: the attempt is retried
    after ``seconds`` (0 to 1 day; above 0, at least MIN_RETRY_AFTER; 0: the task's
    retry backoff) and spends none of the task's retries."""

    def __init__(self, seconds: float, reason: str = "") -> None:
        if not math.isfinite(seconds) or not 0 <= seconds <= MAX_RETRY_AFTER:
            raise ValueError(f"RetryAfter seconds must be 0 to {MAX_RETRY_AFTER:g}, got {seconds!r}")
        self.seconds = float(seconds)
        self.reason = reason or f"throttled: retry after {seconds:g}s"
        super().__init__(self.reason)

    @property
    def delay_ms(self) -> int:
        """The delay the attempt reports: 0 (its retry backoff) or at least MIN_RETRY_AFTER."""
        if self.seconds == 0:
            return 0
        return max(round(self.seconds * 1000), round(MIN_RETRY_AFTER * 1000))


def retry_after_seconds(value: str | None, *, now: datetime.datetime | None = None) -> float | None:
    """A Retry-After header's delay: delta-seconds ("120") or an HTTP date, cut to
    0 .. MAX_RETRY_AFTER; None when absent or unreadable."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isdigit():
        return min(float(text), MAX_RETRY_AFTER)
    try:
        at = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=datetime.UTC)
    seconds = (at - (now or datetime.datetime.now(datetime.UTC))).total_seconds()
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def throttle_of(
    status: int, headers: Mapping[str, str] | None = None, *, default: float = DEFAULT_RETRY_AFTER
) -> RetryAfter | None:
    """The RetryAfter an HTTP answer means: one for 429 and 503 (its Retry-After, or
    ``default`` seconds), None for any other status."""
    if status not in THROTTLING_STATUSES:
        return None
    value = None
    for name, v in (headers or {}).items():
        if name.lower() == "retry-after":
            value = v
            break
    seconds = retry_after_seconds(value)
    delay = default if seconds is None else seconds
    return RetryAfter(delay, f"HTTP {status}: retry after {delay:g}s")


def raise_for_throttle(
    status: int, headers: Mapping[str, str] | None = None, *, default: float = DEFAULT_RETRY_AFTER
) -> None:
    """Raise RetryAfter for a 429 or 503 answer (e.g. ``raise_for_throttle(r.status_code,
    r.headers)`` with requests or httpx); any other status returns."""
    exc = throttle_of(status, headers, default=default)
    if exc is not None:
        raise exc


def failure_of(exc: RetryAfter, base: task_pb2.TaskFailure) -> task_pb2.TaskFailure:
    """``base`` (the attempt's failure as any other) marked throttled, with the delay asked."""
    base.type = "RetryAfter"
    base.throttled = True
    base.retry_after.FromMilliseconds(exc.delay_ms)
    return base
