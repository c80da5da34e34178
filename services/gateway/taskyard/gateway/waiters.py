"""WaitTask support: a SUB socket on the store's committed-event stream feeds a
registry of waiters keyed by task id.

A waiter is registered *before* the task is read from the store, so an event
committed between the read and the wait is not lost. Event batches are only
decoded while someone waits, and only ids with waiters are looked up.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pynng

from taskyard.bus.v1 import envelope_pb2, event_pb2, task_record_pb2
from taskyard.core import transport
from taskyard.v1 import task_pb2

log = logging.getLogger(__name__)

FINAL_STATES = frozenset(
    {task_pb2.TASK_STATE_SUCCESS, task_pb2.TASK_STATE_FAILURE, task_pb2.TASK_STATE_CANCELLED}
)


class Waiter:
    """Set when an event shows the task final (or the registry closes)."""

    __slots__ = ("event", "record", "state", "task_id")

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        self.event = asyncio.Event()
        self.state = 0
        # The final record, when the event carried it (saves a store read).
        self.record: task_record_pb2.TaskRecord | None = None


class Waiters:
    def __init__(self) -> None:
        self._by_id: dict[str, set[Waiter]] = {}
        self.closed = False
        self.batches_seen = 0
        self.batches_decoded = 0

    def __len__(self) -> int:
        return len(self._by_id)

    def register(self, task_id: str) -> Waiter:
        w = Waiter(task_id)
        if self.closed:
            w.event.set()
        self._by_id.setdefault(task_id, set()).add(w)
        return w

    def unregister(self, w: Waiter) -> None:
        group = self._by_id.get(w.task_id)
        if group is not None:
            group.discard(w)
            if not group:
                del self._by_id[w.task_id]

    def feed(self, raw: bytes) -> None:
        """One message from the event stream."""
        self.batches_seen += 1
        if not self._by_id:
            return
        try:
            env = transport.decode(raw)
            if env.kind != envelope_pb2.KIND_EVENTS:
                return
            batch = transport.unpack(env, event_pb2.EventBatch)
        except Exception:
            log.warning("malformed event batch dropped")
            return
        self.batches_decoded += 1
        by_id = self._by_id
        for ev in batch.events:
            group = by_id.get(ev.task_id)
            if group is not None and ev.state in FINAL_STATES:
                record = ev.record if ev.HasField("record") else None
                for w in group:
                    w.state = ev.state
                    w.record = record
                    w.event.set()

    def close(self) -> None:
        """Wake every waiter (shutdown): each returns what the store says now."""
        self.closed = True
        for group in self._by_id.values():
            for w in group:
                w.event.set()


class EventSubscriber:
    """A SUB socket dialing the store's PUB, subscribed to everything."""

    def __init__(self, address: str, waiters: Waiters, *, max_message_bytes: int) -> None:
        self.address = address
        self._waiters = waiters
        self._sock: Any = transport.open_socket(pynng.Sub0, max_message_bytes=max_message_bytes, dial=address)
        self._sock.subscribe(b"")

    async def run(self) -> None:
        while True:
            try:
                raw = await self._sock.arecv()
            except pynng.Closed:
                return
            except pynng.NNGException as exc:
                log.debug("event stream: %s", exc)
                continue
            self._waiters.feed(raw)

    def close(self) -> None:
        self._sock.close()
