"""Which interrupted streams continue by themselves, and the wait before each try.

An event watch and a log follow end for reasons that are not the caller's: the
gateway stops (``GATEWAY_STOPPING``), its connection drops or the store is
unreadable (``UNAVAILABLE``), or the caller read too slowly (``CONSUMER_TOO_SLOW``).
They open the stream again where they were, after a wait that doubles (with
jitter) from ``RESUME_FIRST`` up to ``RESUME_MAX`` and starts over once the
stream delivers again. Every other error is raised.
"""

from __future__ import annotations

import random

import grpc

from taskyard.client._errors import TaskyardError

RESUME_FIRST = 0.1
RESUME_MAX = 5.0


def resumable(err: TaskyardError) -> bool:
    """Whether a stream that ended with ``err`` continues where it was."""
    if err.code is grpc.StatusCode.UNAVAILABLE:
        return True
    return err.code is grpc.StatusCode.RESOURCE_EXHAUSTED and err.reason == "CONSUMER_TOO_SLOW"


class Backoff:
    """The waits between tries: doubled, with jitter, until ``reset``."""

    def __init__(self) -> None:
        self._delay = RESUME_FIRST

    def reset(self) -> None:
        """The stream delivered: the next interruption waits the least again."""
        self._delay = RESUME_FIRST

    def next(self) -> float:
        """Seconds to wait before the next try."""
        delay, self._delay = self._delay, min(self._delay * 2, RESUME_MAX)
        # Full jitter's upper half: many clients cut by one gateway's stop spread out.
        return delay * random.uniform(0.5, 1.0)
