"""Retry policy: exponential backoff with jitter and a cap.

The delay before the next attempt, after attempt ``n`` failed (``n`` = 1 for the
first run)::

    ceiling(n) = min(cap, base * factor ** (n - 1))
    delay(n)   = ceiling(n) * (1 - jitter * U),  U ~ uniform[0, 1)

so ``delay(n)`` lies in ``(ceiling(n) * (1 - jitter), ceiling(n)]``: jitter only
ever shortens a delay, never pushes it past the cap. Defaults: base 1 s
(``TASKYARD_RETRY_BASE_SECONDS``), factor 2, cap 300 s
(``TASKYARD_RETRY_CAP_SECONDS``), jitter 0.2 (``TASKYARD_RETRY_JITTER``); a task
overrides them with ``@task(retry_backoff=, retry_backoff_max=, retry_jitter=)``.
``U`` comes from an injectable ``random.Random`` so tests are deterministic.

A task may also ask for a retry itself by raising ``Retry(delay=..., reason=...)``
(counted against its budget like any failure), and declare exception types that
are never retried (``@task(dont_retry=(ValueError, "mylib.Fatal"))``).

``Backoff`` is the services' own pause between tries of a call to another
service (a report to the store, a registration): decorrelated jitter, capped,
reset when a call works.
"""

from __future__ import annotations

import dataclasses
import math
import random
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from taskyard.core.config import RetrySettings

FACTOR = 2.0


class Retry(Exception):
    """Raised by a task body to be retried after ``delay`` seconds (None: the policy's backoff).

    The attempt counts as failed (type ``Retry``, message ``reason``), so it uses
    up the task's retry budget; once that is spent the task ends FAILURE.
    """

    def __init__(self, delay: float | None = None, reason: str = "") -> None:
        if delay is not None and (not math.isfinite(delay) or delay < 0):
            raise ValueError(f"Retry delay must be a finite number >= 0, got {delay!r}")
        self.delay = delay
        self.reason = reason or (f"retry requested in {delay:g}s" if delay is not None else "retry requested")
        super().__init__(self.reason)


@dataclasses.dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    base_seconds: float = 1.0
    factor: float = FACTOR
    cap_seconds: float = 300.0
    jitter: float = 0.2

    @classmethod
    def from_settings(cls, settings: RetrySettings) -> RetryPolicy:
        """The deployment default (TASKYARD_RETRY_BASE_SECONDS / _CAP_SECONDS / _JITTER)."""
        return cls(
            base_seconds=settings.retry_base_seconds,
            cap_seconds=settings.retry_cap_seconds,
            jitter=settings.retry_jitter,
        )

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

    def bounds(self, attempt: int) -> tuple[float, float]:
        """The interval every ``delay(attempt)`` falls in (lower bound exclusive when jitter > 0)."""
        top = self.ceiling(attempt)
        return top * (1.0 - self.jitter), top


@dataclasses.dataclass(frozen=True, kw_only=True)
class RetryOptions:
    """A task's own retry options (``@task(...)``); None = the deployment default."""

    backoff: float | None = None
    backoff_max: float | None = None
    jitter: float | None = None
    # Exception classes, or names matched against the exception's class and its
    # bases (``"ValueError"`` or ``"package.module.ClassName"``).
    dont_retry: tuple[type[BaseException] | str, ...] = ()

    def __post_init__(self) -> None:
        if self.backoff is not None and not (math.isfinite(self.backoff) and self.backoff >= 0):
            raise ValueError("retry_backoff must be a finite number of seconds >= 0")
        if self.backoff_max is not None and not (math.isfinite(self.backoff_max) and self.backoff_max >= 0):
            raise ValueError("retry_backoff_max must be a finite number of seconds >= 0")
        if self.jitter is not None and not 0.0 <= self.jitter <= 1.0:
            raise ValueError("retry_jitter must be between 0 and 1")
        for item in self.dont_retry:
            ok = (isinstance(item, str) and item) or (
                isinstance(item, type) and issubclass(item, BaseException)
            )
            if not ok:
                raise TypeError(f"dont_retry takes exception classes or their names, got {item!r}")

    @property
    def is_default(self) -> bool:
        return self == RetryOptions()

    def policy(self, default: RetryPolicy) -> RetryPolicy:
        """``default`` with this task's overrides."""
        return dataclasses.replace(
            default,
            base_seconds=default.base_seconds if self.backoff is None else self.backoff,
            cap_seconds=default.cap_seconds if self.backoff_max is None else self.backoff_max,
            jitter=default.jitter if self.jitter is None else self.jitter,
        )

    def retries(self, exc: BaseException) -> bool:
        """False when ``exc`` is one of the task's ``dont_retry`` types."""
        if not self.dont_retry:
            return True
        mro = type(exc).__mro__
        names = {c.__name__ for c in mro} | {f"{c.__module__}.{c.__qualname__}" for c in mro}
        for item in self.dont_retry:
            if isinstance(item, str):
                if item in names:
                    return False
            elif isinstance(exc, item):
                return False
        return True


# Retry(delay=0) still travels as a delay: the pool treats 0 as "none chosen yet".
MIN_DELAY_MS = 1


def delay_ms(
    exc: BaseException | None,
    attempt: int,
    options: RetryOptions | None,
    default: RetryPolicy,
    rng: random.Random | None = None,
) -> int:
    """Milliseconds before the attempt after ``attempt``: a ``Retry``'s own delay, else the policy's."""
    if isinstance(exc, Retry) and exc.delay is not None:
        seconds = exc.delay
    else:
        policy = options.policy(default) if options is not None else default
        seconds = policy.delay(attempt, rng)
    return max(MIN_DELAY_MS, round(seconds * 1000))


# A small helper, not stamina: most loops here are long-running pumps that pause
# between rounds, log the pause and reset on success, not single calls that raise.
@dataclasses.dataclass(kw_only=True)
class Backoff:
    """The pause after each failed try of a call, until one works.

    Decorrelated jitter: each pause is drawn from ``[first, 3 * previous]`` (the
    first from ``[first, 3 * first]``) and capped, so services that lost the same
    peer at once do not all come back in step, and the pauses still grow roughly
    threefold. ``reset()`` after a call that worked starts again from ``first``.
    """

    first: float = 0.05
    cap: float = 2.0
    rng: random.Random | None = None
    failures: int = dataclasses.field(default=0, init=False)
    _last: float = dataclasses.field(default=0.0, init=False, repr=False)

    def __post_init__(self) -> None:
        if not (math.isfinite(self.first) and 0 < self.first <= self.cap and math.isfinite(self.cap)):
            raise ValueError(f"Backoff needs 0 < first <= cap, got first={self.first!r} cap={self.cap!r}")

    def next_delay(self) -> float:
        """Counts a failed try; the seconds to pause before the next."""
        self.failures += 1
        previous = self._last or self.first
        self._last = min(self.cap, (self.rng or random).uniform(self.first, previous * 3))
        return self._last

    def reset(self) -> None:
        """A try worked: the next failure pauses from ``first`` again."""
        self.failures = 0
        self._last = 0.0
