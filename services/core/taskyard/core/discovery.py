"""BUS discovery: a hub that relays announcements, and peers that announce and listen.

NNG's BUS delivers only to directly connected peers (A-B-C: C never sees A),
so the discovery address is a hub that re-sends every announcement to all its
peers. Membership is also recorded in PostgreSQL heartbeats; the BUS is the
fast path, never the only source of truth.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable, Sequence

import pynng

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core import contract, dialer, roles, transport

log = logging.getLogger(__name__)

MAX_ANNOUNCEMENT_BYTES = 1024 * 1024


class Hub:
    """Listens on the discovery address and relays each announcement to every peer."""

    def __init__(self, address: str) -> None:
        self.address = address
        # Relayed to every peer, pools included: under the pools' key, the one they hold.
        self._sock = transport.open_socket(
            pynng.Bus0, max_message_bytes=MAX_ANNOUNCEMENT_BYTES, listen=address, audience=roles.WORKER_POOL
        )

    async def run(self) -> None:
        while True:
            try:
                msg = await self._sock.arecv()
                # Not asend: pynng's asend is not reliably cancellable, and a relay caught
                # in one when the hub closes would never end. A BUS send does not wait for
                # peers anyway; a full buffer drops this announcement (the next one comes).
                self._sock.send(msg, block=False)
            except pynng.Closed:
                return
            except pynng.NNGException as exc:  # TryAgain (buffer full) included
                log.debug("hub relay: %s", exc)

    def close(self) -> None:
        self._sock.close()


@dataclasses.dataclass
class Member:
    announcement: dispatch_pb2.Announcement
    seen_at: float


def _report_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.error("discovery: announcing stopped", exc_info=exc)


class Peer:
    """Dials the hub (at every scheduler's address: the one running it answers),
    announces itself every ``interval`` seconds and records what others announce."""

    def __init__(
        self,
        address: str | Sequence[str],
        announcement: Callable[[], dispatch_pb2.Announcement],
        *,
        interval: float = 2.0,
        listen_only: bool = False,
    ) -> None:
        self.addresses = dialer.address_list(address)
        self.address = self.addresses[0]
        self.interval = interval
        self._announcement = announcement
        self._listen_only = listen_only
        self._sock = dialer.open_dialer(pynng.Bus0, self.addresses, max_message_bytes=MAX_ANNOUNCEMENT_BYTES)
        self.members: dict[str, Member] = {}
        self.changed = asyncio.Event()

    async def run(self) -> None:
        # The receive loop runs in this task itself, not in a TaskGroup's child: a
        # TaskGroup passes only the first cancel on to its children, and pynng's
        # receive may swallow that one (lifecycle.end_tasks cancels again for this).
        announcing = None if self._listen_only else asyncio.create_task(self._announce())
        if announcing is not None:
            announcing.add_done_callback(_report_failure)
        try:
            await self._receive()
        finally:
            if announcing is not None:
                announcing.cancel()

    async def announce_now(self) -> None:
        ann = self._announcement()
        ann.sent_at_ms = int(time.time() * 1000)
        try:
            # Non-blocking, as the hub's relay: a periodic announcement is dropped, not
            # awaited, when the socket cannot take it now.
            self._sock.send(contract.ANNOUNCE.encode(ann), block=False)
        except pynng.NNGException as exc:
            log.debug("announce: %s", exc)

    async def _announce(self) -> None:
        while True:
            await self.announce_now()
            await asyncio.sleep(self.interval)

    async def _receive(self) -> None:
        own = "" if self._listen_only else self._announcement().instance_id
        while True:
            try:
                raw = await self._sock.arecv()
            except pynng.Closed:
                return
            try:
                ann = contract.ANNOUNCE.open(raw)
            except Exception:  # a malformed peer must not stop discovery
                ann = None
            if ann is None:
                log.warning("malformed announcement dropped")
                continue
            if ann.instance_id == own:
                continue
            fresh = ann.instance_id not in self.members
            self.members[ann.instance_id] = Member(ann, time.monotonic())
            if fresh:
                self.changed.set()

    def alive(self, service: str, max_age: float) -> list[dispatch_pb2.Announcement]:
        cutoff = time.monotonic() - max_age
        return [
            m.announcement
            for m in self.members.values()
            if m.seen_at >= cutoff and m.announcement.service == service
        ]

    def close(self) -> None:
        self._sock.close()
