"""A request to stop, made by signals: safe for any number of them, at any moment.

A Python signal handler runs in the main thread between two bytecodes, possibly in
the middle of code that holds a lock. ``threading.Event.set`` takes the Event's
lock, so a handler that sets an Event can block forever on a lock its own thread
already holds: a second SIGTERM arriving while the first handler is inside
``set()`` (``make`` forwards the SIGTERM the whole group also got), or any signal
while the main thread is inside ``Event.wait``. Here the handler takes no lock:
it appends to a list and writes one byte to a non-blocking self-pipe, both of
which are safe to re-enter; the waiter sleeps in ``select`` on the pipe.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
from types import FrameType


class StopRequest:
    """Set by ``on_signal`` (or ``request``), waited for with ``wait``."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)

    def on_signal(self, signum: int, _frame: FrameType | None) -> None:
        """The signal handler: no lock, no allocation beyond a list entry."""
        self.request(signum)

    def request(self, signum: int = 0) -> None:
        self.received.append(signum)
        # A full pipe already holds a wake-up; a closed one has nobody waiting.
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._write, b"\0")

    def is_set(self) -> bool:
        return bool(self.received)

    def wait(self, timeout: float) -> bool:
        """Block until a stop is requested or ``timeout`` seconds pass; True when requested."""
        if self.received:
            return True
        with contextlib.suppress(InterruptedError, OSError, ValueError):
            readable, _, _ = select.select([self._read], [], [], max(0.0, timeout))
            if readable:
                with contextlib.suppress(BlockingIOError, OSError):
                    os.read(self._read, 4096)
        return bool(self.received)

    def first_signal(self) -> signal.Signals | None:
        """The first signal received (None when the request came from code)."""
        for signum in self.received:
            if signum:
                return signal.Signals(signum)
        return None

    def close(self) -> None:
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)
