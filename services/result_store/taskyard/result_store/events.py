"""The committed-event streams: PUB sockets, one per audience.

One ``KIND_EVENTS`` envelope (``bus.v1.EventBatch``) per committed group, only
after COMMIT. NNG PUB never blocks: a slow subscriber loses events, never the
store (events are wake-ups; the database is the truth).

NNG filters topics on the subscriber's side: every message on a PUB socket
crosses the pipe of every subscriber and wakes its process, which drops it if
no subscription matches. So each audience has its own socket: the full stream
(``events_listen_address``: gateways, tools), the pools' leases and cancels
(``pool_stream_listen_address``) and the scheduler's share
(``scheduler_stream_listen_address``). Without those addresses (in-process
tests) everything goes out on the one socket, under the same topics.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any, TypeVar

import pynng
from google.protobuf.message import Message

from taskyard.bus.v1 import dispatch_pb2, event_pb2, task_record_pb2
from taskyard.core import contract, roles, transport

log = logging.getLogger(__name__)
M = TypeVar("M", bound=Message)

# Split very large groups so one message stays well under max_message_bytes.
MAX_EVENTS_PER_MESSAGE = 5000


class EventPublisher:
    def __init__(
        self,
        address: str | None,
        *,
        max_message_bytes: int,
        pools_address: str | None = None,
        scheduler_address: str | None = None,
    ) -> None:
        self.address = address
        self._sock: Any = None
        self._pools: Any = None
        self._scheduler: Any = None
        if address:

            def pub(listen: str, audience: str = "") -> Any:
                return transport.open_socket(
                    pynng.Pub0, max_message_bytes=max_message_bytes, listen=listen, audience=audience
                )

            self._sock = pub(address)
            try:
                # The pools' stream under their key (core.seal, for_audience): a pool holds no other.
                self._pools = pub(pools_address, roles.WORKER_POOL) if pools_address else self._sock
                self._scheduler = pub(scheduler_address) if scheduler_address else self._sock
            except BaseException:
                self.close()  # the listeners opened so far (a retry must find them free)
                raise
        self.published_batches = 0
        self.published_events = 0
        # For tests and in-process subscribers: called with every published batch.
        self.listeners: list[Any] = []

    async def publish(self, events: Sequence[event_pb2.Event]) -> None:
        if not events:
            return
        # The scheduler's and the pools' shares, picked in the same pass.
        wanted: list[event_pb2.Event] = []
        cancels: list[event_pb2.Event] = []
        for i in range(0, len(events), MAX_EVENTS_PER_MESSAGE):
            chunk = events[i : i + MAX_EVENTS_PER_MESSAGE]
            if self.listeners:
                batch = event_pb2.EventBatch(events=chunk)
                for cb in self.listeners:
                    cb(batch)
            if self._sock is not None:
                # Results (finals, log lines) apart from the rest: a gateway reads only them.
                # Each part is an EventBatch's bytes, written from each event's own
                # serialization: building the batches would copy every event twice.
                results: list[bytes] = []
                others: list[bytes] = []
                for ev in chunk:
                    (results if transport.is_result_event(ev) else others).append(_batch_entry(ev))
                    kind = ev.type
                    if kind in transport.SCHEDULER_EVENT_TYPES:
                        wanted.append(ev)
                    if kind == "task.cancel_requested":
                        cancels.append(ev)
                for topic, part in (
                    (transport.TASK_EVENTS_TOPIC, others),
                    (transport.RESULT_EVENTS_TOPIC, results),
                ):
                    if not part:
                        continue
                    try:
                        # PUB never waits for subscribers; a non-blocking send cannot hang
                        # (pynng's asend is not reliably cancellable).
                        self._sock.send(topic + contract.EVENTS.encode(b"".join(part)), block=False)
                    except pynng.TryAgain:
                        log.debug("event batch dropped: PUB busy")
                    except pynng.NNGException as exc:
                        log.warning("event publish failed: %s", exc)
            self.published_batches += 1
            self.published_events += len(chunk)
        self.publish_for_scheduler(wanted)
        self._publish_cancels(cancels)

    def publish_for_scheduler(self, wanted: Sequence[event_pb2.Event]) -> None:
        """The few types the scheduler reads (``wanted``), under its own topic
        (latency: the common task.queued/assigned/final batches do not wake it)."""
        if self._scheduler is None:
            return
        for i in range(0, len(wanted), MAX_EVENTS_PER_MESSAGE):
            batch = event_pb2.EventBatch(events=wanted[i : i + MAX_EVENTS_PER_MESSAGE])
            data = contract.EVENTS.encode(batch)
            try:
                self._scheduler.send(transport.SCHEDULER_TOPIC + data, block=False)
            except pynng.NNGException as exc:  # wake-ups: reloads and sweeps repair a loss
                log.debug("scheduler events not published: %s", exc)

    def _publish_cancels(self, cancels: list[event_pb2.Event]) -> None:
        """task.cancel_requested events (``cancels``) again under the running
        pool's own topic, so a pool hears its cancels without reading every event."""
        if self._pools is None:
            return
        by_pool: dict[str, list[event_pb2.Event]] = {}
        for ev in cancels:
            if pool := transport.pool_of_worker(ev.worker_id):
                by_pool.setdefault(pool, []).append(ev)
        for pool_id, evs in by_pool.items():
            data = contract.EVENTS.encode(event_pb2.EventBatch(events=evs))
            try:
                self._pools.send(transport.cancel_topic(pool_id) + data, block=False)
            except pynng.NNGException as exc:  # the pool's next lease renewal carries it too
                log.debug("cancel request not published: %s", exc)

    def publish_message(self, stream: contract.Stream[M, Any], message: M) -> None:
        """Another stream's message on the events topic and the scheduler's (e.g.
        contract.GRAPH_RELEASED); subscribers that want only KIND_EVENTS skip it."""
        if self._sock is None:
            return
        data = stream.encode(message)
        for sock, topic in (
            (self._sock, transport.TASK_EVENTS_TOPIC),
            (self._scheduler, transport.SCHEDULER_TOPIC),
        ):
            try:
                sock.send(topic + data, block=False)
            except pynng.NNGException as exc:  # a wake-up: the sweep and reloads repair a loss
                log.debug("%s not published: %s", type(message).__name__, exc)

    def publish_leased(self, records: Sequence[task_record_pb2.TaskRecord]) -> None:
        """Attempts leased at insert time, to their pool, right after COMMIT: the
        pool can start them without waiting for the scheduler's copy over PAIR
        (which still follows; the pool drops the duplicate)."""
        if self._pools is None or not records:
            return
        by_pool: dict[str, list[task_record_pb2.TaskRecord]] = {}
        for rec in records:
            by_pool.setdefault(rec.pool_id, []).append(rec)
        for pool_id, recs in by_pool.items():
            data = contract.DISPATCH.encode(dispatch_pb2.Dispatch(tasks=recs))
            try:
                self._pools.send(transport.dispatch_topic(pool_id) + data, block=False)
            except pynng.NNGException as exc:  # the PAIR copy still gets there
                log.debug("leased dispatch not published: %s", exc)

    async def tasks_available(self) -> None:
        await self.publish([event_pb2.Event(type="tasks.available", at_us=int(time.time() * 1_000_000))])

    def close(self) -> None:
        for sock in {id(s): s for s in (self._sock, self._pools, self._scheduler) if s is not None}.values():
            sock.close()
        self._sock = self._pools = self._scheduler = None


def _batch_entry(ev: event_pb2.Event) -> bytes:
    """``ev`` as one element of ``EventBatch.events`` (field 1, length-delimited)."""
    data = ev.SerializeToString()
    n = len(data)
    if n < 0x80:
        return bytes((_EVENTS_TAG, n)) + data
    head = bytearray((_EVENTS_TAG,))
    while n >= 0x80:
        head.append((n & 0x7F) | 0x80)
        n >>= 7
    head.append(n)
    return bytes(head) + data


# EventBatch.events: field number 1, wire type 2 (length-delimited).
_EVENTS_TAG = (event_pb2.EventBatch.EVENTS_FIELD_NUMBER << 3) | 2
