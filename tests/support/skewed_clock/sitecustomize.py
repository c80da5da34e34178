"""A wall clock off by TASKYARD_TEST_CLOCK_OFFSET seconds, for the process that finds this
directory first on its PYTHONPATH (and every process it spawns: worker processes
inherit the environment). Python imports ``sitecustomize`` at start-up, before any
of the service's modules, so ``time.time``/``time.time_ns`` and everything read
through them (the services' Clock, the bus seal's send time, log stamps) are off as
a host's clock would be; the monotonic clock is left alone, as NTP leaves it."""

from __future__ import annotations

import os
import time

_OFFSET = float(os.environ.get("TASKYARD_TEST_CLOCK_OFFSET") or 0.0)

if _OFFSET:
    _time, _time_ns = time.time, time.time_ns
    _offset_ns = int(_OFFSET * 1e9)
    time.time = lambda: _time() + _OFFSET
    time.time_ns = lambda: _time_ns() + _offset_ns
