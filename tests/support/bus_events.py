"""A subscriber to a result-store's events PUB, for tests that read what it publishes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection

import pynng

from taskyard.bus.v1 import envelope_pb2, event_pb2
from taskyard.core import contract, transport

RECHECK_MS = 100


class Subscriber:
    """The store's events (EVENTS_TOPIC), decoded; ``connected`` before the first
    publish awaited, since a PUB drops what no connected SUB hears.

    Waits are on signals: the SUB's pipe callback for ``connected``, each message (or
    RECHECK_MS without one) for ``until``; ``within`` only bounds how long a test waits
    before it fails."""

    def __init__(self, address: str) -> None:
        self._loop = asyncio.get_running_loop()
        self._connected = asyncio.Event()
        # A receive gives up after RECHECK_MS: a condition may also read what the test
        # sets itself (a burst it finished), which no message announces.
        self.sock = transport.open_socket(pynng.Sub0, max_message_bytes=16 << 20, recv_timeout=RECHECK_MS)
        self.sock.add_post_pipe_connect_cb(
            lambda _pipe: transport.call_from_nng_thread(self._loop, self._connected.set)
        )
        self.sock.subscribe(transport.EVENTS_TOPIC)
        self.sock.dial(address, block=False)
        self.events: list[event_pb2.Event] = []
        # As published: one batch per commit.
        self.batches: list[list[event_pb2.Event]] = []
        # Envelopes of the other kinds on the topic (e.g. contract.GRAPH_RELEASED), as received.
        self.others: list[envelope_pb2.Envelope] = []

    async def connected(self, within: float = 5.0) -> None:
        try:
            await asyncio.wait_for(self._connected.wait(), within)
        except TimeoutError:
            raise AssertionError(f"the SUB did not connect within {within:g}s") from None

    async def wait_for(self, pred: Callable[[event_pb2.Event], bool], within: float = 5.0) -> event_pb2.Event:
        found: list[event_pb2.Event] = []

        def matched() -> bool:
            found[:] = [e for e in self.events if pred(e)][:1]
            return bool(found)

        try:
            await asyncio.wait_for(self._receive_until(matched), within)
        except TimeoutError:
            raise AssertionError(f"no matching event; got {[e.type for e in self.events]}") from None
        return found[0]

    def released(self) -> list[str]:
        """The task ids of every GRAPH_RELEASED received (refs the lanes push), in order."""
        return [
            t.id
            for env in self.others
            if (released := contract.GRAPH_RELEASED.read(env)) is not None
            for t in released.tasks
        ]

    async def wait_for_released(self, task_ids: Collection[str], within: float = 5.0) -> None:
        """Until every one of ``task_ids`` was in a GRAPH_RELEASED."""
        wanted = set(task_ids)
        await self.until(lambda: wanted <= set(self.released()), within, f"{len(wanted)} tasks released")

    async def until(self, cond: Callable[[], bool], within: float = 5.0, what: str = "the condition") -> None:
        """Receive until ``cond()`` (which reads ``events``, ``others``...) holds."""
        try:
            await asyncio.wait_for(self._receive_until(cond), within)
        except TimeoutError:
            raise AssertionError(
                f"not seen: {what}; got {[e.type for e in self.events]}, {len(self.others)} others"
            ) from None

    async def _receive_until(self, cond: Callable[[], bool]) -> None:
        me = asyncio.current_task()
        assert me is not None
        while not cond():
            await self._receive()
            # pynng's receive swallows a cancel that lands as its message arrives (it
            # returns the message): the timeout's cancel is still pending, honour it.
            if me.cancelling():
                raise asyncio.CancelledError

    async def _receive(self) -> None:
        try:
            raw = await self.sock.arecv()
        except pynng.Timeout:
            return
        env = transport.decode(raw[transport.EVENTS_TOPIC_BYTES :])
        events = contract.EVENTS.read(env)
        if events is None:
            self.others.append(env)
            return
        batch = list(events.events)
        self.batches.append(batch)
        self.events.extend(batch)

    def batch_of(self, pred: Callable[[event_pb2.Event], bool]) -> list[str]:
        """The types of the first batch with a matching event."""
        return next([e.type for e in batch] for batch in self.batches if any(pred(e) for e in batch))

    def close(self) -> None:
        self.sock.close()
