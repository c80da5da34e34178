"""Service lifecycle: logging, signals, and a stop event every service waits on."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys


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
