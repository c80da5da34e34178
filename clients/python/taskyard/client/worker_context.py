"""What a task body sees of its attempt (``AttemptContext``), and the errors it raises to
say how its failure is retried (``Fatal``, ``RetryAfter``).

A body runs on the worker's event loop (``async def``) or in a thread of its own (a plain
``def``); the context's methods work from either.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from taskyard.client._types import JSON

# Levels a log line may have (shown as the line's type by GetTaskLogs).
LOG_LEVELS = frozenset({"debug", "info", "warning", "error", "critical"})


class Fatal(Exception):
    """Raised by a task body: its attempt fails and the task is not retried, whatever
    retries it has left. The failure's type is the exception's class name (``Fatal``, or a
    subclass's)."""


class RetryAfter(Exception):
    """Raised by a task body: the attempt fails, retryable, and the next one waits
    ``seconds`` instead of the suite's backoff. ``raise RetryAfter(30) from err`` reports
    ``err``'s type and message as the failure."""

    def __init__(self, seconds: float | datetime.timedelta, message: str = "") -> None:
        delay = seconds.total_seconds() if isinstance(seconds, datetime.timedelta) else float(seconds)
        if not delay >= 0:
            raise ValueError(f"RetryAfter needs a non-negative delay, got {seconds!r}")
        super().__init__(message or f"retry after {delay:g} s")
        self.seconds = delay


class CancelSignal:
    """Set when the attempt must stop: its task was cancelled, its lease revoked, its
    timeout reached, or the stream that leased it broke. ``is_set()`` from anywhere,
    ``await wait()`` in an async body, ``wait_blocking(timeout)`` in a sync one."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._event = asyncio.Event()
        self._flag = threading.Event()
        # Why: "cancelled", "revoked", "timeout", "abandoned"; "" while not set.
        self.reason = ""

    def is_set(self) -> bool:
        return self._flag.is_set()

    async def wait(self) -> bool:
        await self._event.wait()
        return True

    def wait_blocking(self, timeout: float | None = None) -> bool:
        """For a sync body: True once set, False when ``timeout`` (seconds) passed first."""
        return self._flag.wait(timeout)

    def set(self, reason: str) -> None:
        """On the worker's loop only."""
        if not self._flag.is_set():
            self.reason = reason
            self._flag.set()
            self._event.set()


@dataclasses.dataclass(frozen=True, kw_only=True)
class TaskDeclaration:
    """A registered function's declaration, sent in Hello (``@worker.task(...)``)."""

    name: str
    timeout: datetime.timedelta | None = None
    max_retries: int | None = None
    rate_limit: str = ""
    concurrency: int = 0
    limit_key: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class AttemptContext:
    """The first argument of every task body: which attempt runs, and its ways out.

    ``log`` and ``progress`` are sent to the gateway as the body goes (visible through
    GetTask, StreamTaskLogs and WatchEvents); ``submit_child`` submits a task whose parent
    is this one (``submit_child_blocking`` from a sync body)."""

    task_id: str
    name: str
    attempt: int
    labels: Mapping[str, str]
    parent_id: str
    root_id: str
    queue: str
    tenant: str
    retries_left: int
    deadline: datetime.datetime | None
    cancelled: CancelSignal
    _log: Callable[[str, str], None] = dataclasses.field(repr=False)
    _progress: Callable[[float, str], None] = dataclasses.field(repr=False)
    _submit: Callable[..., Awaitable[str]] = dataclasses.field(repr=False)
    _loop: asyncio.AbstractEventLoop = dataclasses.field(repr=False)

    def log(self, message: str, level: str = "info") -> None:
        if level not in LOG_LEVELS:
            raise ValueError(f"log level must be one of {sorted(LOG_LEVELS)}, got {level!r}")
        self._on_loop(self._log, level, str(message))

    def progress(self, fraction: float, message: str = "") -> None:
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"progress is a fraction from 0.0 to 1.0, got {fraction!r}")
        self._on_loop(self._progress, float(fraction), message)

    async def submit_child(self, name: str, *args: JSON, **options: Any) -> str:
        """Submit ``name(*args, **kwargs)`` with this task as its parent; returns its id.
        Keyword arguments are ``AsyncClient.submit``'s (``priority``, ``queue``, ... and
        the task's own)."""
        return await self._submit(name, *args, parent_id=self.task_id, **options)

    def submit_child_blocking(self, name: str, *args: JSON, **options: Any) -> str:
        """``submit_child`` from a sync body (its thread waits for the answer)."""
        call = self._submit(name, *args, parent_id=self.task_id, **options)
        return asyncio.run_coroutine_threadsafe(call, self._loop).result()  # type: ignore[arg-type]

    def _on_loop(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            fn(*args)
        else:  # a sync body's thread
            with contextlib.suppress(RuntimeError):  # the worker is gone: nobody to tell
                self._loop.call_soon_threadsafe(fn, *args)
