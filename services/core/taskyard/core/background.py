"""The tasks a component runs beside its requests, held in one supervised set.

Two kinds:

- **loops** (``start``): what the component is made of, running until it closes (the
  store's committer, the gateway's event reader). A loop that ends before ``close``,
  by an exception or by returning, leaves the component half-alive: it would answer
  and never commit. So its end is logged with its name at once and sets ``failed``,
  which the service's main waits on beside its stop signal and turns into an exit
  with an error, for its supervisor (the kubelet, ``taskyard dev``) to restart it.
- **errands** (``spawn``): short jobs started per message (a batch sent, a copy
  dispatched). Each is held until it ends (the event loop keeps only a weak
  reference to a task: an unheld one may be collected mid-flight), and a failure is
  logged when it happens instead of "exception was never retrieved" at exit.

``close`` cancels all of them and waits, with ``lifecycle.end_tasks``' repeated
cancels (pynng's receives can swallow one).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Iterator
from typing import Any

from taskyard.core import lifecycle

log = logging.getLogger(__name__)

# Seconds ``close`` waits for its tasks to end after their cancel.
CLOSE_LIMIT = 5.0


class Background:
    """The loops and errands of one component; ``owner`` names it in what is logged."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self._loops: set[asyncio.Task[Any]] = set()
        self._errands: set[asyncio.Task[Any]] = set()
        self._closing = False
        # Set when a loop ended before close: ``failure`` says which and how.
        self.failed = asyncio.Event()
        self.failure = ""

    def start(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        """Run a loop of the component until ``close``; its earlier end is a failure."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._loops.add(task)
        task.add_done_callback(self._loop_ended)
        return task

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str | None = None) -> asyncio.Task[Any]:
        """Run an errand, held until it ends; a failure is logged."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._errands.add(task)
        task.add_done_callback(self._errand_ended)
        return task

    def __len__(self) -> int:
        return len(self._loops) + len(self._errands)

    def __iter__(self) -> Iterator[asyncio.Task[Any]]:
        """The tasks running now, loops first."""
        return iter([*self._loops, *self._errands])

    @property
    def errands(self) -> int:
        return len(self._errands)

    async def drain(self) -> None:
        """Until every errand started so far, and those they start, has ended."""
        while self._errands:
            await asyncio.gather(*list(self._errands), return_exceptions=True)

    def cancel(self) -> None:
        """Cancel every task without waiting (a synchronous close; the tasks end as the
        loop runs them)."""
        self._closing = True
        for task in self._loops | self._errands:
            task.cancel()

    def stopping(self) -> None:
        """From now on a loop may end: the component is closing what they read."""
        self._closing = True

    async def close(self, limit: float = CLOSE_LIMIT) -> None:
        """Cancel every task and wait for them to end (at most ``limit`` seconds)."""
        self._closing = True
        await lifecycle.end_tasks(self._loops | self._errands, limit)

    def _loop_ended(self, task: asyncio.Task[Any]) -> None:
        self._loops.discard(task)
        if self._closing or task.cancelled():
            if task.cancelled() and not self._closing:
                self._fail(task, "was cancelled")
            return
        exc = task.exception()
        if exc is None:
            self._fail(task, "returned")
        else:
            self._fail(task, f"failed: {exc!r}", exc)

    def _fail(self, task: asyncio.Task[Any], how: str, exc: BaseException | None = None) -> None:
        what = f"{self.owner}: {task.get_name()} {how} while the service runs"
        log.critical("%s", what, exc_info=exc)
        if not self.failed.is_set():
            self.failure = what
            self.failed.set()

    def _errand_ended(self, task: asyncio.Task[Any]) -> None:
        self._errands.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None and not self._closing:
            log.error("%s: %s failed", self.owner, task.get_name(), exc_info=exc)


class LoopEnded(RuntimeError):
    """A loop of a service ended while it ran: the process exits with this error."""


async def until_stopped(stop: asyncio.Event, *sets: Background) -> None:
    """Returns when ``stop`` is set; raises ``LoopEnded`` when a loop of ``sets`` ends
    first (the caller's ``finally`` still stops the service in order)."""
    waits = [asyncio.ensure_future(stop.wait()), *(asyncio.ensure_future(b.failed.wait()) for b in sets)]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()
    if not stop.is_set():
        raise LoopEnded(next(b.failure for b in sets if b.failed.is_set()))
