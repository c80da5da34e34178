"""WaitTask support: a SUB socket on the store's committed-event stream feeds a
registry of waiters keyed by task id.

A waiter is registered *before* the task is read from the store, so an event
committed between the read and the wait is not lost. A FAILURE is final only
until a manual retry (RetryTasks: FAILURE -> QUEUED as attempt + 1), which any
gateway may have asked of any store, and whose QUEUED event is not on the result
stream: so no failure is remembered as an outcome, and a waiter that has seen the
task's row at an attempt ignores the outcomes of earlier attempts (a failure's
event may come late, or wait undecoded in the backlog). While nobody waits, batches
are kept undecoded (a bounded backlog) and decoded only when a wait asks what the
stream has shown: at full load almost no batch is ever decoded.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pynng
from cachetools import FIFOCache

from taskyard.bus.v1 import event_pb2, task_record_pb2
from taskyard.core import contract, dialer, states, transport

log = logging.getLogger(__name__)

_FAILURE = int(states.TaskState.FAILURE)
# Outcomes no transition leaves (a retry turns a FAILURE into a new attempt).
_IMMUTABLE = frozenset(int(s) for s in states.IMMUTABLE_STATES)

# Event batches the SUB socket may queue (NNG counts messages).
SUB_BUFFER = 8192


class Waiter:
    """Set when an event shows the task final (or the registry closes)."""

    __slots__ = ("attempt", "closed", "event", "record", "since", "state", "task_id")

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        self.event = asyncio.Event()
        self.state = 0
        # The attempt whose outcome ``state`` is.
        self.attempt = 0
        # The final record, when the event carried it (saves a store read).
        self.record: task_record_pb2.TaskRecord | None = None
        # The attempt the store's row was at, not final (0: not read): outcomes of
        # earlier attempts are failures a retry has re-queued since.
        self.since = 0
        self.closed = False

    def expect(self, attempt: int) -> None:
        """The store's row is at ``attempt`` and not final: forget an outcome of an
        earlier attempt already seen, and take none from now on."""
        self.since = max(self.since, attempt)
        if self.state and self.attempt < self.since and not self.closed:
            self.event.clear()
            self.state = 0
            self.attempt = 0
            self.record = None

    def unconfirmed_failure(self) -> bool:
        """Whether the outcome is a failure of an attempt the wait has not seen in the
        store's row: a retry may have re-queued the task since (its event is not on
        the result stream), so only a read can tell."""
        return self.state == _FAILURE and self.attempt != self.since and not self.closed


# Outcomes remembered, and tasks submitted here still awaiting theirs (bounded FIFOs:
# the earliest remembered is forgotten first, and a look keeps none longer).
# A remembered outcome keeps its record only up to RECENT_RECORD_BYTES (bigger ones
# are read from the store when asked), so the memory stays under ~40 MiB.
RECENT_FINALS = 10_000
RECENT_RECORD_BYTES = 4096
UNFINISHED = 100_000
# Undecoded batches kept while nobody waits (a few hundred ms of results at full load:
# what a wait decodes first, at most). Dropping one forgets: see Waiters._drop_oldest.
BACKLOG_BYTES = 256 * 1024


class Waiters:
    """Waiters by task id, plus what the event stream has shown since it connected:
    the latest outcomes no retry can change (SUCCESS, CANCELLED), and which tasks
    submitted through this gateway have not finished yet. With those, a WaitTask
    for a task submitted here needs no store read before it waits (the read would
    only say "not final yet")."""

    def __init__(
        self,
        *,
        recent_finals: int = RECENT_FINALS,
        unfinished: int = UNFINISHED,
        backlog_bytes: int = BACKLOG_BYTES,
    ) -> None:
        self._by_id: dict[str, set[Waiter]] = {}
        # Both filled by setdefault: a task remembered again (another copy of its
        # final) keeps its place, where an assignment would move it to the end.
        self._finals: FIFOCache[str, event_pb2.Event] = FIFOCache(recent_finals)
        self._unfinished: FIFOCache[str, None] = FIFOCache(unfinished)
        # Moves on whenever events may have been lost (a gap, a dropped backlog
        # batch): a submission answered after that may have had its final lost too.
        self.losses = 0
        # Messages not decoded yet, oldest first.
        self._backlog: collections.deque[bytes] = collections.deque()
        self._backlog_bytes = 0
        self._max_backlog = backlog_bytes
        self.closed = False
        self.batches_seen = 0
        self.batches_decoded = 0
        # Other readers of every decoded batch / of a stream gap (ops: log streams).
        self.taps: list[Callable[[event_pb2.EventBatch], None]] = []
        self.gap_taps: list[Callable[[], None]] = []
        # Whether a tap needs the batches now: while none does and nobody waits,
        # batches wait undecoded (and may be dropped unseen).
        self.tap_wanted: list[Callable[[], bool]] = []

    def submitted(self, task_ids: Iterable[str], *, losses: int) -> None:
        """Tasks this gateway just had committed: not final, until an event says so.
        ``losses``: ``self.losses`` when they were sent; if events were lost since,
        one of them may have been a final of these, so they are not remembered."""
        if losses != self.losses:
            return
        for task_id in task_ids:
            self._unfinished.setdefault(task_id, None)

    def known_unfinished(self, task_id: str) -> bool:
        self._catch_up()
        return task_id in self._unfinished

    def recent_final(self, task_id: str) -> event_pb2.Event | None:
        """The task's SUCCESS or CANCELLED event, if the stream has shown it lately.
        Never a FAILURE: a retry committed since may have made it a new attempt."""
        self._catch_up()
        return self._finals.get(task_id)

    def stream_gap(self) -> None:
        """The event stream dropped: events may have been missed, so trust nothing
        remembered about unfinished tasks (their waiters read the store)."""
        self.losses += 1
        self._unfinished.clear()
        for cb in self.gap_taps:
            cb()

    def __len__(self) -> int:
        return len(self._by_id)

    def register(self, task_id: str) -> Waiter:
        w = Waiter(task_id)
        if self.closed:
            w.closed = True
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
        if self._by_id or any(wanted() for wanted in self.tap_wanted):
            self._catch_up()
            self._decode(raw)
            return
        self._backlog.append(raw)
        self._backlog_bytes += len(raw)
        while self._backlog_bytes > self._max_backlog:
            self._drop_oldest()

    def _catch_up(self) -> None:
        """Decode the backlog, oldest first."""
        backlog = self._backlog
        while backlog:
            raw = backlog.popleft()
            self._backlog_bytes -= len(raw)
            self._decode(raw)

    def _drop_oldest(self) -> None:
        """Drop the oldest undecoded batch. What it said is lost, so forget all it
        could have changed, as after a gap: the remembered outcomes and which tasks
        are unfinished (it may hold their finals, and a submission answered after it
        is not remembered either: ``losses``). Their waits read the store first, as for any other task."""
        self._backlog_bytes -= len(self._backlog.popleft())
        self.losses += 1
        self._finals.clear()
        self._unfinished.clear()

    def _decode(self, raw: bytes) -> None:
        try:
            batch = contract.EVENTS.open(raw)
        except Exception:
            log.warning("malformed event batch dropped")
            return
        if batch is None:
            return
        self.batches_decoded += 1
        for tap in self.taps:
            tap(batch)
        by_id = self._by_id
        for ev in batch.events:
            if ev.state not in states.FINAL_VALUES:
                continue
            self._unfinished.pop(ev.task_id, None)
            if ev.state not in _IMMUTABLE:
                self._finals.pop(ev.task_id, None)
            elif ev.HasField("record") and ev.record.ByteSize() > RECENT_RECORD_BYTES:
                kept = event_pb2.Event()
                kept.CopyFrom(ev)
                kept.ClearField("record")
                self._finals.setdefault(ev.task_id, kept)
            else:
                self._finals.setdefault(ev.task_id, ev)
            group = by_id.get(ev.task_id)
            if group is not None:
                record = ev.record if ev.HasField("record") else None
                for w in group:
                    if ev.attempt < w.since:
                        continue  # a failure re-queued since (see Waiter.since)
                    w.state = ev.state
                    w.attempt = ev.attempt
                    w.record = record
                    w.event.set()

    def close(self) -> None:
        """Wake every waiter (shutdown): each returns what the store says now."""
        self.closed = True
        for group in self._by_id.values():
            for w in group:
                w.closed = True
                w.event.set()


class EventSubscriber:
    """A SUB socket dialing every store's full event stream (each publishes only what
    it committed), subscribed to their results."""

    def __init__(self, address: str | Sequence[str], waiters: Waiters, *, max_message_bytes: int) -> None:
        self.address = address
        self._waiters = waiters
        self._sock: Any = dialer.open_dialer(pynng.Sub0, address, max_message_bytes=max_message_bytes)
        # The result's last hop (store -> gateway): taken on the loop (transport.Inbox).
        self._inbox = transport.Inbox(self._sock)
        # SUB drops what does not fit its buffer: make room for bursts.
        self._sock.recv_buffer_size = SUB_BUFFER
        # Finals and log lines only (transport.RESULT_EVENTS_TOPIC).
        self._sock.subscribe(transport.RESULT_EVENTS_TOPIC)
        loop = asyncio.get_running_loop()
        self._sock.add_post_pipe_remove_cb(
            lambda _pipe: transport.call_from_nng_thread(loop, waiters.stream_gap)
        )

    async def run(self) -> None:
        while True:
            try:
                raw = await self._inbox.recv()
            except pynng.Closed:
                return
            except pynng.NNGException as exc:
                log.debug("event stream: %s", exc)
                continue
            self._waiters.feed(raw[transport.EVENTS_TOPIC_BYTES :])

    def close(self) -> None:
        self._inbox.close()
