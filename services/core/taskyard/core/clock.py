"""Injected time: services read the clock through this so tests can drive it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Wall-clock seconds since the epoch."""

    def monotonic(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class ManualClock:
    """A clock that moves only when told; sleepers wake when it passes their deadline."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start
        self._mono = 0.0
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def now(self) -> float:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((self._mono + seconds, fut))
        await fut

    def advance(self, seconds: float) -> None:
        self._now += seconds
        self._mono += seconds
        due = [(t, f) for t, f in self._sleepers if t <= self._mono]
        self._sleepers = [(t, f) for t, f in self._sleepers if t > self._mono]
        for _, fut in due:
            if not fut.done():
                fut.set_result(None)


async def sleep_unless(clock: Clock, seconds: float, wake: asyncio.Event) -> None:
    """Sleep ``seconds`` on ``clock``, cut short when ``wake`` is set."""
    sleeper = asyncio.ensure_future(clock.sleep(seconds))
    woken = asyncio.ensure_future(wake.wait())
    try:
        await asyncio.wait({sleeper, woken}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for fut in (sleeper, woken):
            if not fut.done():
                fut.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await fut


def to_us(seconds: float) -> int:
    return int(seconds * 1_000_000)


def from_us(us: int) -> float:
    return us / 1_000_000
