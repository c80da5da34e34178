"""What ``/livez`` and ``/readyz`` answer, on every service's ops port (ops.py), for
probes such as the kubelet's (the gateway's gRPC health says the same over gRPC).

Asked from the ops port's threads, so a busy event loop still gets its answer: live
means the process's event loop ran a callback within ``LIVENESS_TIMEOUT`` seconds
(a wedged loop, stuck in a blocking call, is not live: restart it); ready means
live and the service has said so (``mark_ready``, when it logs that it is ready; a
standby scheduler is ready: it is the spare; ``follow`` for one whose readiness
tracks a dependency, the result-store's database). A stop signal withdraws
readiness at once (lifecycle.py): a draining service takes no new work. No token:
the answers say only up or down, and a probe cannot send one without writing it
into the pod spec.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

# Seconds the event loop has to run a no-op callback before the process is not live.
LIVENESS_TIMEOUT = 5.0
# ``follow``: seconds between checks of the dependency, and how many failures in
# a row make the service unready (one slow answer is not an outage).
FOLLOW_INTERVAL = 2.0
FOLLOW_FAILURES = 2

_loop: asyncio.AbstractEventLoop | None = None
_ready = threading.Event()


def attach_loop(loop: asyncio.AbstractEventLoop | None) -> None:
    """The event loop whose responsiveness is liveness (lifecycle.run attaches it)."""
    global _loop
    _loop = loop


def mark_ready(ready: bool = True) -> None:
    if ready:
        _ready.set()
    else:
        _ready.clear()


def ready() -> bool:
    return _ready.is_set()


class NotReady(Exception):
    """A ``follow`` check's failure that is not the dependency's silence: its
    message is the whole reason, logged as it is."""


async def follow(
    check: Callable[[], Awaitable[object]],
    what: str,
    stop: asyncio.Event,
    *,
    interval: float | None = None,
    failures: int | None = None,
    check_timeout: float | None = None,
    on_change: Callable[[bool], None] | None = None,
) -> None:
    """Ready while ``check`` answers (within ``check_timeout``, ``interval`` unless given),
    until ``stop``: unready after ``failures`` in a row, ready again at the next
    answer; ``on_change`` hears each change. The service marks itself ready first;
    this only keeps it honest."""
    interval = FOLLOW_INTERVAL if interval is None else interval
    failures = FOLLOW_FAILURES if failures is None else failures
    timeout = interval if check_timeout is None else check_timeout
    failed = 0
    while not stop.is_set():
        try:
            await asyncio.wait_for(check(), timeout)
        except Exception as exc:  # any failure of the dependency is the same: not ready
            failed += 1
            if failed == failures and not stop.is_set():
                if isinstance(exc, NotReady):
                    log.warning("not ready: %s", exc)
                else:
                    log.warning("not ready: %s does not answer (%s)", what, str(exc) or type(exc).__name__)
                mark_ready(False)
                if on_change is not None:
                    on_change(False)
        else:
            if failed >= failures and not stop.is_set():
                log.info("ready again: %s answers", what)
                mark_ready()
                if on_change is not None:
                    on_change(True)
            failed = 0
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval)


def live(timeout: float | None = None) -> bool:
    """Whether the attached event loop runs a callback within ``timeout`` seconds
    (``LIVENESS_TIMEOUT`` unless given)."""
    timeout = LIVENESS_TIMEOUT if timeout is None else timeout
    loop = _loop
    if loop is None or loop.is_closed():
        return False
    ran = threading.Event()
    try:
        loop.call_soon_threadsafe(ran.set)
    except RuntimeError:  # the loop closed meanwhile
        return False
    return ran.wait(timeout)
