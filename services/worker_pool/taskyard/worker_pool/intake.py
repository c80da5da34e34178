"""Dispatch intake: attempts leased to this pool, from wherever they come.

Two ways in: the store's post-commit stream of attempts leased to this pool (the
fast path) and the PAIR socket the scheduler dials. Both may deliver one
dispatch; the workers drop the second copy. Each batch is routed to the workers,
and the watchdog takes note of attempts dispatched already cancelled.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import pynng

from taskyard.core import contract, dialer, transport
from taskyard.core.config import PoolSettings
from taskyard.core.pair_peers import SchedulerPeers
from taskyard.worker_pool.processes import Workers
from taskyard.worker_pool.state import PoolState
from taskyard.worker_pool.watchdog import Watchdog

log = logging.getLogger("taskyard.worker_pool.manager")  # one logger name for the manager process


class DispatchIntake:
    def __init__(self, settings: PoolSettings, pool: PoolState, workers: Workers, watchdog: Watchdog) -> None:
        self._settings = settings
        self._pool = pool
        self._workers = workers
        self._watchdog = watchdog
        self._leased_stream: transport.Inbox | None = None

    async def receive_pair(self, pair: SchedulerPeers) -> None:
        await self._receive(pair.arecv, b"", "the PAIR socket")

    def open_leased_stream(self) -> None:
        s = self._settings
        self._leased_stream = transport.Inbox(
            # Every store's stream: each publishes only the leases it committed.
            dialer.open_dialer(pynng.Sub0, s.pool_stream_addresses, max_message_bytes=s.max_message_bytes)
        )

    async def receive_leased_stream(self) -> None:
        # The fast path's hop (store -> pool): taken on the loop (transport.Inbox).
        topic = transport.dispatch_topic(self._pool.pool_id)
        inbox = self._leased_stream
        assert inbox is not None, "opened by open_leased_stream()"
        inbox.sock.subscribe(topic)
        await self._receive(inbox.recv, topic, "the leased stream")

    async def _receive(self, recv: Callable[[], Awaitable[bytes]], topic: bytes, where: str) -> None:
        route, cancel_flagged = self._workers.route, self._watchdog.cancel_flagged
        while True:
            try:
                raw = await recv()
            except pynng.Closed:
                return
            try:
                batch = contract.DISPATCH.open(raw[len(topic) :])
            except Exception:
                log.warning("malformed message dropped on %s", where)
                continue
            if batch is None:
                log.warning("a message that is not a dispatch dropped on %s", where)
                continue
            if not batch.tasks:
                continue  # a scheduler's hello (core/pair_peers.py)
            route(batch)
            cancel_flagged(batch)

    def close(self) -> None:
        if self._leased_stream is not None:
            self._leased_stream.close()
