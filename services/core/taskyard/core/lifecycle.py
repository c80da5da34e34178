"""Service lifecycle: logging, signals, and a stop event every service waits on."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def setup_logging(service: str, level: str = "INFO") -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format=f"%(asctime)s {service}[%(process)d] %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


def stop_event_on_signals(*signals: signal.Signals) -> asyncio.Event:
    """An event set by SIGTERM/SIGINT (or the given signals) in the running loop."""
    loop = asyncio.get_running_loop()
    event = asyncio.Event()
    for sig in signals or (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, event.set)
    return event


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run a process's main coroutine, on uvloop unless TASKYARD_EVENT_LOOP=asyncio.

    Every hop of a task is a wake-up of some event loop; uvloop makes each one
    cheaper, which is most of what latency is made of here.
    """
    if os.environ.get("TASKYARD_EVENT_LOOP", "uvloop") != "asyncio":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.run(main)
    return asyncio.run(main)
