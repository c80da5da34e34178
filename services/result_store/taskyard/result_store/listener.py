"""LISTEN on the NOTIFY channel, robustly.

Tasks inserted by anyone but the store (psql, another application) fire
``pg_notify(channel, 'inserted')`` from a statement trigger; each notification
becomes a call of ``on_available`` (coalesced: at most one per ``debounce``
seconds; the store reads what is new, arrivals.py). A notification with any
other payload (an operator's bare NOTIFY after changing rows by hand) is
taken as a (re)connect is: ``on_connected``, which has every QUEUED row read
again. The listen connection is re-established with exponential backoff when
it drops; after every (re)connect ``on_connected`` is called instead (by
default ``on_available``), since notifications sent while we were away are lost. The scheduler's fallback
polling covers any remaining gap.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

from taskyard.core.retry import Backoff

from .database_errors import OUTAGE

log = logging.getLogger(__name__)

# The payload of the insert trigger's NOTIFY (migrations 0022_notify_payload.sql).
INSERTED = "inserted"


class NotifyListener:
    def __init__(
        self,
        dsn: str,
        channel: str,
        on_available: Callable[[], Awaitable[None]],
        *,
        debounce: float = 0.005,
        health_interval: float = 5.0,
        max_backoff: float = 5.0,
        on_connected: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.dsn = dsn
        self.channel = channel
        self.on_available = on_available
        self.on_connected = on_connected or on_available
        self.debounce = debounce
        self.health_interval = health_interval
        self.max_backoff = max_backoff
        self.connected = asyncio.Event()
        self.notifications = 0
        # The last payload heard: one a test sent itself marks where the stream is.
        self.last_payload = ""
        self.reconnects = 0
        self._pending = asyncio.Event()
        # A (re)connect not yet told to on_connected.
        self._fresh = False
        self._conn: asyncpg.Connection | None = None

    def _on_notify(self, conn: Any, pid: int, channel: str, payload: str) -> None:
        self.notifications += 1
        self.last_payload = payload
        if payload != INSERTED:
            self._fresh = True
        self._pending.set()

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self._forward())
            tg.create_task(self._connect_loop())

    async def _forward(self) -> None:
        while True:
            await self._pending.wait()
            await asyncio.sleep(self.debounce)
            self._pending.clear()
            fresh, self._fresh = self._fresh, False
            try:
                await (self.on_connected if fresh else self.on_available)()
            except Exception:
                log.exception("publishing tasks.available failed")

    async def _connect_loop(self) -> None:
        backoff = Backoff(first=min(0.1, self.max_backoff), cap=self.max_backoff)
        first = True
        while True:
            lost = asyncio.Event()
            try:
                conn = await asyncpg.connect(
                    self.dsn, server_settings={"application_name": "taskyard-listen"}
                )
                conn.add_termination_listener(lambda _c, ev=lost: ev.set())
                await conn.add_listener(self.channel, self._on_notify)
            except OUTAGE as exc:
                delay = backoff.next_delay()
                log.warning("LISTEN %s: cannot connect (%s); retrying in %.1fs", self.channel, exc, delay)
                await asyncio.sleep(delay)
                continue
            self._conn = conn
            backoff.reset()
            if not first:
                self.reconnects += 1
                log.info("LISTEN %s: reconnected", self.channel)
            first = False
            self.connected.set()
            self._fresh = True  # anything may have arrived while we were away
            self._pending.set()
            try:
                while not lost.is_set():
                    try:
                        await asyncio.wait_for(lost.wait(), self.health_interval)
                    except TimeoutError:
                        try:
                            await asyncio.wait_for(conn.execute("SELECT 1"), self.health_interval)
                        except OUTAGE as exc:
                            log.warning("LISTEN %s: health check failed (%s)", self.channel, exc)
                            break
            finally:
                self.connected.clear()
                self._conn = None
                conn.terminate()
            log.warning("LISTEN %s: connection lost; reconnecting", self.channel)

    def backend_pid(self) -> int | None:
        return self._conn.get_server_pid() if self._conn is not None else None
