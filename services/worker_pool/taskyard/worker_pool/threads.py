"""The threads a worker runs sync task bodies on (its stand-in for a ThreadPoolExecutor).

A sync body must not block the event loop, so it runs on a thread. Through a
ThreadPoolExecutor the hand-off costs more than a short body: a
``concurrent.futures`` Future (with its Condition) per call, an asyncio future
chained to it, one thread woken per call and one wake-up of the loop per
finished call. Here:

- Jobs wait in one deque. A thread that takes a job while others still wait
  makes sure one more thread is looking for work (a parked one woken, or a new
  one started, up to ``max_threads``): every waiting job gets a thread as soon as
  one is free, as with the executor, yet a burst of short bodies is run by the
  threads already awake instead of waking one thread per job.
- A thread with nothing to do parks on its own lock; the most recently parked
  is woken first.
- Finished jobs go back to the loop in batches: one ``call_soon_threadsafe``
  per batch, not per job.

``shutdown`` is the executor's: no new jobs; waiting ones still run unless
``cancel``; threads end once nothing waits (a stuck body keeps its thread).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import threading
from collections.abc import Callable
from typing import Any

_PENDING, _RUNNING, _DONE, _CANCELLED = 0, 1, 2, 3
_numbers = itertools.count()


class Job:
    """One call on a thread. ``future`` (loop side) gets its result, unless the
    awaiting side cancelled it; ``done()`` says whether the body still runs or waits."""

    __slots__ = ("error", "fn", "future", "state", "value", "watchers")

    def __init__(self, fn: Callable[[], Any], future: asyncio.Future[Any]) -> None:
        self.fn = fn
        self.future = future
        self.state = _PENDING
        self.value: Any = None
        self.error: BaseException | None = None
        # Loop-side futures told when the body has ended, whatever became of ``future``.
        self.watchers: list[asyncio.Future[None]] | None = None

    def done(self) -> bool:
        return self.state >= _DONE

    def ended(self) -> asyncio.Future[None]:
        """A future (loop side) done once the body has returned or raised, or was
        cancelled before it started."""
        fut: asyncio.Future[None] = self.future.get_loop().create_future()
        if self.done():
            fut.set_result(None)
        else:
            if self.watchers is None:
                self.watchers = []
            self.watchers.append(fut)
        return fut


class SyncThreads:
    def __init__(self, max_threads: int, name: str = "taskyard-task") -> None:
        self.max_threads = max(1, max_threads)
        self._name = name
        self._lock = threading.Lock()
        self._jobs: collections.deque[Job] = collections.deque()
        self._parked: list[threading.Lock] = []
        self._threads = 0
        # Threads awake and not in a body: while jobs wait, at least one (if the
        # thread limit allows), so a body that blocks never holds up the next job.
        self._searching = 0
        self._closed = False
        self._finished: list[Job] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def threads(self) -> int:
        return self._threads

    def submit(self, fn: Callable[[], Any]) -> Job:
        """Queue ``fn`` (from the event loop's thread); await ``job.future`` for its result."""
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        job = Job(fn, loop.create_future())
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new work after shutdown")
            self._jobs.append(job)
            start = self._searching == 0 and self._wake_locked()
        if start:
            try:
                self._start()
            except BaseException:
                self.cancel(job)  # failed here: its body must not run later unawaited
                raise
        return job

    def cancel(self, job: Job) -> bool:
        """Drop a job whose body has not started (True); one already running runs on."""
        with self._lock:
            if job.state != _PENDING:
                return False
            job.state = _CANCELLED
        job.future.cancel()
        self._tell_watchers(job)
        return True

    def shutdown(self, cancel: bool = False) -> None:
        with self._lock:
            self._closed = True
            dropped: list[Job] = []
            if cancel:
                while self._jobs:
                    job = self._jobs.popleft()
                    if job.state == _PENDING:
                        job.state = _CANCELLED
                        dropped.append(job)
            parked, self._parked = self._parked, []
            self._searching += len(parked)
        for wake in parked:
            wake.release()
        if dropped:
            self._on_loop(self._cancelled, dropped)

    # ------------------------------------------------------------ threads
    def _wake_locked(self) -> bool:
        """Under the lock: one more thread looks for work. True = start a new one
        (after the lock is released)."""
        if self._parked:
            self._searching += 1
            self._parked.pop().release()
            return False
        if self._threads < self.max_threads:
            self._searching += 1
            self._threads += 1
            return True
        return False

    def _start(self) -> None:
        t = threading.Thread(target=self._work, name=f"{self._name}_{next(_numbers)}", daemon=True)
        try:
            t.start()
        except BaseException:
            with self._lock:
                self._threads -= 1
                self._searching -= 1
            raise

    def _work(self) -> None:
        wake = threading.Lock()
        wake.acquire()
        lock = self._lock
        jobs = self._jobs
        while True:
            job: Job | None = None
            start = False
            with lock:
                while jobs:
                    job = jobs.popleft()
                    if job.state == _PENDING:
                        break
                    job = None  # cancelled while it waited
                if job is None:
                    self._searching -= 1
                    if self._closed:
                        self._threads -= 1
                        return
                    self._parked.append(wake)
                else:
                    job.state = _RUNNING
                    self._searching -= 1
                    if jobs and self._searching == 0:
                        start = self._wake_locked()
            if job is None:
                wake.acquire()  # whoever releases it counted this thread as searching
                continue
            if start:
                # No thread to spare: the waiting jobs go to the next free one.
                with contextlib.suppress(RuntimeError):
                    self._start()
            try:
                job.value = job.fn()
            except BaseException as exc:  # the awaiting side judges it, as with an executor
                job.error = exc
            job.fn = _spent
            with lock:
                job.state = _DONE
                self._searching += 1
                self._finished.append(job)
                first = len(self._finished) == 1
            if first:
                self._on_loop(self._deliver)

    def _on_loop(self, callback: Callable[..., None], *args: Any) -> None:
        loop = self._loop
        if loop is None:
            return
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody awaits these any more
            loop.call_soon_threadsafe(callback, *args)

    # ------------------------------------------------------------ loop side
    def _deliver(self) -> None:
        with self._lock:
            finished, self._finished = self._finished, []
        for job in finished:
            fut = job.future
            if not fut.done():
                error = job.error
                if error is None:
                    fut.set_result(job.value)
                elif isinstance(error, StopIteration):
                    # A future refuses StopIteration (TypeError), which would end this
                    # loop and strand the rest of the batch; asyncio's executor path
                    # turns it into RuntimeError too.
                    fut.set_exception(RuntimeError(f"the task raised StopIteration: {error!r}"))
                else:
                    fut.set_exception(error)
            job.value = job.error = None
            if job.watchers:
                self._tell_watchers(job)

    def _cancelled(self, jobs: list[Job]) -> None:
        for job in jobs:
            job.future.cancel()
            self._tell_watchers(job)

    @staticmethod
    def _tell_watchers(job: Job) -> None:
        watchers, job.watchers = job.watchers, None
        for w in watchers or ():
            if not w.done():
                w.set_result(None)


def _spent() -> None:
    """A finished job's callable: the body's arguments are not kept alive by it."""
