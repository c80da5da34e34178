"""Inserts that wait on another transaction's key, set aside from the writer.

A task's request_id and live idempotency key are unique (the tasks table's
unique indexes). An application that calls ``taskyard_submit`` (migration 0017)
inside its own transaction holds the key's index entry until that transaction
ends, and an insert of the same key made meanwhile waits for it: the store's
whole drain would wait, and every write queued behind it, for as long as the
application keeps its transaction open. (Freeing an expired idempotency key
locks the old task's row the same way.)

So a drain that holds a keyed insert (a request_id or an idempotency key) runs
with ``SET LOCAL lock_timeout`` (``LOCK_TIMEOUT_MS``). When the lock is not had
in that time (SQLSTATE 55P03) the drain runs again without its keyed inserts,
and those are set aside here: retried one at a time by a loop of their own, on
a connection of their own, each try waiting ``RETRY_LOCK_TIMEOUT_MS`` at most,
with growing pauses in between, until the other transaction ends. Committed,
the insert is answered with that task (as any repeated key); rolled back, the
insert goes in. Past ``BOUND`` seconds the caller gets ABORTED
(``REQUEST_IN_FLIGHT``), which it retries.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import heapq
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Generic, Protocol, TypeVar

from google.protobuf.message import Message

from taskyard.core import errors

log = logging.getLogger(__name__)

# How long a drain with keyed inserts waits for a lock before it sets them
# aside: what a short application transaction takes, and what the writer loses
# at most to one that stays open.
LOCK_TIMEOUT_MS = 200
# How long each later try of a set-aside insert waits (it holds only its own connection).
RETRY_LOCK_TIMEOUT_MS = 100
# The pause after the first try of a set-aside insert, doubled each try up to MAX_PAUSE.
FIRST_PAUSE = 0.02
MAX_PAUSE = 0.5
# Seconds after it was set aside that a keyed insert stops waiting: ABORTED,
# REQUEST_IN_FLIGHT. The store takes half its request timeout if that is less
# (store.py): the caller, a hop away, must get this answer before its own timeout.
BOUND = 5.0
# ErrorInfo reason of that error.
REQUEST_IN_FLIGHT = "REQUEST_IN_FLIGHT"
# SQLSTATE lock_not_available.
LOCK_NOT_AVAILABLE = "55P03"


def lock_timeout(ms: int) -> str:
    """The statement that bounds the lock waits of the current transaction."""
    return f"SET LOCAL lock_timeout = {int(ms)}"


def in_flight(bound: float) -> errors.TaskyardError:
    return errors.TaskyardError(
        errors.Code.ABORTED,
        REQUEST_IN_FLIGHT,
        "another transaction holds this task's request_id or idempotency key and did not end "
        f"within {bound:g} s; retry (a retry is answered with its task once it commits)",
    )


class KeyBusy(Exception):
    """A drain with keyed inserts did not get a lock in its ``lock_timeout``."""


class _Waiter(Protocol):
    @property
    def future(self) -> asyncio.Future[Message]: ...


W = TypeVar("W", bound=_Waiter)


@dataclasses.dataclass
class _Wait(Generic[W]):
    item: W
    deadline: float
    tries: int = 0


class KeyWaits(Generic[W]):
    """The set-aside keyed inserts and the loop that tries them again.

    ``attempt`` runs one of them in a transaction of its own (waiting
    ``RETRY_LOCK_TIMEOUT_MS`` at most) and settles its future, or hands it back
    to ``set_aside`` when the lock is still held."""

    def __init__(self, attempt: Callable[[W], Awaitable[None]], *, bound: float = BOUND) -> None:
        self._attempt = attempt
        self.bound = bound
        self._waits: dict[int, _Wait[W]] = {}
        self._due: list[tuple[float, int, int]] = []
        self._seq = itertools.count()
        self._wake = asyncio.Event()

    @property
    def waiting(self) -> int:
        """Inserts set aside and not yet answered."""
        return len(self._waits)

    def set_aside(self, item: W) -> None:
        """Try ``item`` again later, or fail it REQUEST_IN_FLIGHT once past the bound."""
        now = asyncio.get_running_loop().time()
        wait = self._waits.get(id(item))
        if wait is None:
            wait = self._waits[id(item)] = _Wait(item, now + self.bound)
            log.info(
                "a keyed insert waits on another transaction's key; set aside for %g s at most", self.bound
            )
        if now >= wait.deadline:
            del self._waits[id(item)]
            if not item.future.done():
                item.future.set_exception(in_flight(self.bound))
            return
        pause = min(MAX_PAUSE, FIRST_PAUSE * 2.0**wait.tries, wait.deadline - now)
        wait.tries += 1
        heapq.heappush(self._due, (now + pause, next(self._seq), id(item)))
        self._wake.set()

    async def run(self) -> None:
        """Try the set-aside inserts as they come due, one at a time; runs until cancelled."""
        loop = asyncio.get_running_loop()
        try:
            while True:
                if not self._due:
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                due, _, key = self._due[0]
                if due > loop.time():
                    self._wake.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), due - loop.time())
                    continue
                heapq.heappop(self._due)
                wait = self._waits.get(key)
                if wait is None or wait.item.future.done():
                    self._waits.pop(key, None)
                    continue
                await self._attempt(wait.item)
                if wait.item.future.done():  # answered, or failed for good; else set aside again
                    self._waits.pop(key, None)
        finally:
            for wait in self._waits.values():
                if not wait.item.future.done():
                    wait.item.future.set_exception(errors.unavailable("result-store is stopping"))
            self._waits.clear()
            self._due.clear()
