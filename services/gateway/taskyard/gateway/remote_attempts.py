"""The attempts a remote worker holds, and the fencing of what it says about them.

A worker on the public stream names an attempt by task id, attempt number and
lease token (``AttemptRef``); only the gateway's current lease of that attempt
counts, as only the current lease counts on the bus. The table is pure: the
stream (remote_pool.py) turns its answers into bus reports and stream messages.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from cachetools import FIFOCache

from taskyard.bus.v1 import task_record_pb2
from taskyard.worker.v1 import worker_service_pb2 as wpb

# Attempts that ended (outcome, revoke, timeout) remembered, so that a second copy of
# their dispatch (the fast path's stream and the scheduler's PAIR may both deliver
# one) is dropped, and a late outcome is recognised as late rather than unknown.
ENDED_MEMORY = 4096

Key = tuple[str, int]


@dataclasses.dataclass(slots=True, kw_only=True)
class Held:
    """One attempt handed to the worker."""

    record: task_record_pb2.TaskRecord
    started_at_us: int = 0
    # A cancel request was passed on (Cancel sent); the revoke follows at its deadline.
    cancelling: bool = False

    @property
    def key(self) -> Key:
        return (self.record.id, self.record.attempt)

    @property
    def started(self) -> bool:
        return self.started_at_us > 0


class HeldAttempts:
    """What the worker holds, at most ``slots`` at once, by (task id, attempt)."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self._held: dict[Key, Held] = {}
        # Ended attempts -> their lease token: a late word about one is answered Refused.
        # The earliest ended is forgotten first: a late word about one keeps it no longer.
        self._ended: FIFOCache[Key, str] = FIFOCache(ENDED_MEMORY)

    def __len__(self) -> int:
        return len(self._held)

    def __iter__(self) -> Iterator[Held]:
        return iter(list(self._held.values()))

    @property
    def free(self) -> int:
        return max(0, self.slots - len(self._held))

    def seen(self, record: task_record_pb2.TaskRecord) -> bool:
        """Held or ended already: a second copy of a dispatch."""
        key = (record.id, record.attempt)
        return key in self._held or key in self._ended

    def hold(self, record: task_record_pb2.TaskRecord) -> Held:
        held = Held(record=record)
        self._held[held.key] = held
        return held

    def find(self, ref: wpb.AttemptRef) -> Held | None:
        """The held attempt ``ref`` names, only when its lease token is the current one."""
        held = self._held.get((ref.task_id, ref.attempt))
        if held is None or held.record.lease_token != ref.lease_token:
            return None
        return held

    def by_task(self, task_id: str) -> Held | None:
        for held in self._held.values():
            if held.record.id == task_id:
                return held
        return None

    def end(self, held: Held) -> None:
        """The attempt is over for this stream (reported, revoked or timed out)."""
        if self._held.pop(held.key, None) is None:
            return
        self._ended[held.key] = held.record.lease_token

    def ended(self, ref: wpb.AttemptRef) -> bool:
        """``ref`` names an attempt this stream held once, with its lease token."""
        return self._ended.get((ref.task_id, ref.attempt)) == ref.lease_token

    def take_all(self) -> list[Held]:
        """Everything still held, which the stream gives up (it broke or closed)."""
        held = list(self._held.values())
        for h in held:
            self.end(h)
        return held

    def refs(self, worker_id: str) -> list[task_record_pb2.AttemptRef]:
        return [bus_ref(h, worker_id) for h in self._held.values()]


def bus_ref(held: Held, worker_id: str) -> task_record_pb2.AttemptRef:
    rec = held.record
    return task_record_pb2.AttemptRef(
        task_id=rec.id,
        attempt=rec.attempt,
        lease_token=rec.lease_token,
        at_us=held.started_at_us,
        worker_id=worker_id,
    )


def public_ref(record: task_record_pb2.TaskRecord) -> wpb.AttemptRef:
    return wpb.AttemptRef(task_id=record.id, attempt=record.attempt, lease_token=record.lease_token)
