"""The manager's leases: renewal of every attempt it holds, and cancel requests.

The scheduler renews leases through its surveys too; the pool renews its own as
well (``Settings.renew_interval``, lease ``Settings.lease_seconds``) so a pool
cut off from the scheduler but not from the store keeps what it runs, and so
the renewal reply can carry the cancel requests of its attempts
(``RenewLeasesReply.cancel_requested``): the store also publishes them on the
pool's cancel topic right after COMMIT, but NNG may drop that.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pynng

from taskyard.bus.v1 import leases_pb2
from taskyard.core import contract, dialer, errors, rpc, transport
from taskyard.core.config import PoolSettings
from taskyard.worker_pool.processes import Workers
from taskyard.worker_pool.state import PoolState
from taskyard.worker_pool.watchdog import Watchdog

log = logging.getLogger("taskyard.worker_pool.manager")  # one logger name for the manager process


class Renewals:
    """Renews what ``workers`` hold; cancel requests go to the ``watchdog``, which
    enforces their deadline."""

    def __init__(self, settings: PoolSettings, pool: PoolState, workers: Workers, watchdog: Watchdog) -> None:
        self._settings = settings
        self._pool = pool
        self._workers = workers
        self._watchdog = watchdog
        # The store's per-pool stream of cancel requests.
        self._cancel_stream: Any = None

    async def run(self) -> None:
        s = self._settings
        req = rpc.Requester(s.store_addresses, max_message_bytes=s.max_message_bytes, timeout=4.0)
        try:
            while True:
                await asyncio.sleep(s.renew_interval)
                await self.renew_once(req)
        finally:
            req.close()

    async def renew_once(self, req: rpc.Requester) -> leases_pb2.RenewLeasesReply | None:
        refs = self._workers.held_refs()
        if not refs:
            return None
        msg = leases_pb2.RenewLeasesRequest(refs=refs, lease_ms=int(self._settings.lease_seconds * 1000))
        watch = self._pool.contact.watch_request("lease renewal")
        try:
            reply = await req.call(contract.STORE_RENEW, msg)
        except errors.TaskyardError as exc:
            log.debug("lease renewal failed: %s", exc.message)
            self._pool.contact.failed("lease renewal", exc.message)
            return None
        finally:
            watch.cancel()
        if reply.lost:
            # Mostly attempts whose outcome the store accepted while this renewal was on
            # its way; an attempt truly superseded has its outcome refused when it reports.
            log.debug("%d held attempts no longer current at renewal", len(reply.lost))
        if reply.cancel_requested:
            self._watchdog.cancel_attempts(reply.cancel_requested)
        return reply

    async def receive_cancels(self) -> None:
        s = self._settings
        topic = transport.cancel_topic(self._pool.pool_id)
        # Every store's stream: each publishes only the cancels it committed.
        self._cancel_stream = dialer.open_dialer(
            pynng.Sub0, s.pool_stream_addresses, max_message_bytes=s.max_message_bytes
        )
        self._cancel_stream.subscribe(topic)
        while True:
            try:
                raw = await self._cancel_stream.arecv()
            except pynng.Closed:
                return
            try:
                batch = contract.EVENTS.open(raw[len(topic) :])
            except Exception:
                log.warning("malformed message dropped on the cancel stream")
                continue
            if batch is not None:
                self._watchdog.cancel_attempts(
                    e.task_id for e in batch.events if e.type == "task.cancel_requested"
                )

    def close(self) -> None:
        if self._cancel_stream is not None:
            self._cancel_stream.close()
