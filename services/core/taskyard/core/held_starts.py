"""Start notices held back for their attempt's outcome.

A start notice costs the store a row write of its own; a short attempt's outcome,
which carries the start (the time and the worker: the store applies ASSIGNED ->
final with them), makes it unneeded. So a start is held one to two ticks, and only
the starts of attempts that outlive that go as notices (RUNNING shows for them).
Correctness does not depend on a notice: a death or a release carries its
holder's own started flag.
"""

from __future__ import annotations

from collections.abc import Iterable

from taskyard.bus.v1 import task_record_pb2

Key = tuple[str, int]


class HeldStarts:
    """Start notices waiting for their attempt's outcome, in two generations: a
    start is due at the second ``age`` after it was held, so one to two ticks.
    A tick is ``start_notice_delay`` (settings): RUNNING shows for tasks that run
    longer, and a short one costs the store one write and its result never queues
    behind a notice."""

    def __init__(self) -> None:
        self._young: dict[Key, task_record_pb2.AttemptRef] = {}
        self._old: dict[Key, task_record_pb2.AttemptRef] = {}

    def __bool__(self) -> bool:
        return bool(self._young or self._old)

    def hold(self, refs: Iterable[task_record_pb2.AttemptRef]) -> None:
        young = self._young
        for ref in refs:
            young[(ref.task_id, ref.attempt)] = ref

    def take(self, key: Key) -> task_record_pb2.AttemptRef | None:
        """The held start of ``key``'s attempt (it ended), which is held no more."""
        ref = self._young.pop(key, None)
        old = self._old.pop(key, None)
        return ref if ref is not None else old

    def age(self) -> list[task_record_pb2.AttemptRef]:
        """A tick: the starts held for a whole tick are due (returned), the others get older."""
        due, self._old, self._young = self._old, self._young, {}
        return list(due.values())
