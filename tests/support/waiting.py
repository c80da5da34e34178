"""Wait for a condition, never for a fixed time.

A fixed sleep is too long where the condition comes at once and too short on a
busy machine. These poll ``predicate`` until it returns something truthy and
return that value; on timeout they fail naming what they waited for and the last
value seen::

    pid = wait_until(lambda: cluster.worker_pids(), 10, "a worker process")
    await wait_until_async(lambda: len(gateway.waiters) == 1, 5, "the wait to register")

``what`` may be a callable, called only on timeout (say to add ``cluster.logs_tail()``).
``predicate`` is called with no arguments; it is typed ``Callable[..., ...]`` so that a
lambda may bind a loop variable as a default (``lambda t=t: ...``).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

T = TypeVar("T")

# Long enough not to busy a shared 2-core machine, short next to what tests wait for.
INTERVAL = 0.05
# In-process conditions (an event loop's own state) come quickly: poll them finer.
ASYNC_INTERVAL = 0.01


def _timed_out(timeout: float, what: str | Callable[[], str], last: object) -> AssertionError:
    described = what() if callable(what) else what
    message = f"timed out after {timeout:g}s waiting for {described}"
    if last is not None and not isinstance(last, bool):
        shown = repr(last)
        message += f" (last seen: {shown[:500]}{'...' if len(shown) > 500 else ''})"
    return AssertionError(message)


def wait_until(
    predicate: Callable[..., T | None],
    timeout: float,
    what: str | Callable[[], str],
    interval: float = INTERVAL,
) -> T:
    """``predicate()``'s first truthy value, polled every ``interval`` for ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise _timed_out(timeout, what, value)
        time.sleep(interval)


@overload
async def wait_until_async(
    predicate: Callable[..., Awaitable[T | None]],
    timeout: float,  # noqa: ASYNC109
    what: str | Callable[[], str],
    interval: float = ASYNC_INTERVAL,
) -> T: ...


@overload
async def wait_until_async(
    predicate: Callable[..., T | None],
    timeout: float,  # noqa: ASYNC109
    what: str | Callable[[], str],
    interval: float = ASYNC_INTERVAL,
) -> T: ...


async def wait_until_async(
    predicate: Callable[..., Any],
    # Not asyncio.timeout(): the failure must say what was awaited, and the last value.
    timeout: float,  # noqa: ASYNC109
    what: str | Callable[[], str],
    interval: float = ASYNC_INTERVAL,
) -> Any:
    """As ``wait_until``, yielding to the event loop between polls; ``predicate`` may
    be a plain function or a coroutine function."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise _timed_out(timeout, what, value)
        await asyncio.sleep(interval)


def through_outage(call: Callable[[], T], timeout: float = 60.0) -> T:
    """``call()``'s answer, retried while it fails UNAVAILABLE or DEADLINE_EXCEEDED (the
    database coming back after a crash or restart)."""
    import grpc

    from taskyard.client import TaskyardError

    def answered() -> tuple[T] | None:
        try:
            return (call(),)
        except TaskyardError as exc:
            if exc.code not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise
            return None

    (value,) = wait_until(answered, timeout, "an answer other than UNAVAILABLE", interval=0.2)
    return value
