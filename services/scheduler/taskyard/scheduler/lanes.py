"""Four strictly ordered priority lanes of task references.

Each lane keeps one FIFO per task name, so a pool that serves only some names
finds its work without scanning past tasks it cannot run; a global sequence
number keeps arrival order across names within a lane.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable
from typing import NamedTuple

from taskyard.core.priority import LANES, Priority


class Ref(NamedTuple):
    """A waiting task. A named tuple, not a frozen dataclass: one is made for
    every task that passes through, and a frozen dataclass's ``__init__`` costs
    about four times as much (it sets each field through ``object.__setattr__``)."""

    id: str
    name: str
    priority: Priority
    queue: str = "default"


class Lanes:
    def __init__(self) -> None:
        self._fifos: dict[Priority, dict[str, deque[tuple[int, Ref]]]] = {p: {} for p in LANES}
        self._ids: set[str] = set()
        self._seq = itertools.count()
        # Paused queues (see pauses.py): their tasks wait here, parked in
        # arrival order, invisible to take() and to len() until the queue resumes.
        self.paused: set[str] = set()
        self._parked: dict[str, dict[str, Ref]] = {}
        # Bumped by every pause/resume, so a reconcile whose store read raced an
        # event can tell (pauses.load) and leave the newer event's word standing.
        self.pause_epoch = 0

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, task_id: str) -> bool:
        return task_id in self._ids

    def push(self, ref: Ref) -> bool:
        """Append a task; False if it is already waiting."""
        if ref.id in self._ids:
            return False
        if ref.queue in self.paused:
            parked = self._parked.setdefault(ref.queue, {})
            if ref.id in parked:
                return False
            parked[ref.id] = ref
            return True
        self._ids.add(ref.id)
        self._fifos[ref.priority].setdefault(ref.name, deque()).append((next(self._seq), ref))
        return True

    def push_all(self, refs: Iterable[Ref]) -> int:
        return sum(1 for ref in refs if self.push(ref))

    def pause(self, queue: str) -> int:
        """Park every waiting task of ``queue`` and the ones that come later; returns how many moved."""
        self.paused.add(queue)
        self.pause_epoch += 1
        moved = 0
        parked = self._parked.setdefault(queue, {})
        for fifos in self._fifos.values():
            for name in list(fifos):
                keep: deque[tuple[int, Ref]] = deque()
                for item in fifos[name]:
                    if item[1].queue == queue:
                        parked[item[1].id] = item[1]
                        self._ids.discard(item[1].id)
                        moved += 1
                    else:
                        keep.append(item)
                if keep:
                    fifos[name] = keep
                else:
                    del fifos[name]
        return moved

    def resume(self, queue: str) -> int:
        """Back to the lanes, in the order they were parked; returns how many."""
        self.paused.discard(queue)
        self.pause_epoch += 1
        return self.push_all(self._parked.pop(queue, {}).values())

    def parked(self, queue: str) -> int:
        return len(self._parked.get(queue, {}))

    def drop(self, task_id: str, priority: Priority, name: str) -> bool:
        """Remove a waiting task (cancelled); a scan of its FIFO, as cancels are rare."""
        if task_id not in self._ids:
            return False
        fifo = self._fifos[priority].get(name)
        if fifo is None:
            return False
        for item in fifo:
            if item[1].id == task_id:
                fifo.remove(item)
                self._ids.discard(task_id)
                if not fifo:
                    del self._fifos[priority][name]
                return True
        return False

    def depth(self, priority: Priority) -> int:
        return sum(len(q) for q in self._fifos[priority].values())

    def take(self, names: frozenset[str], limit: int) -> list[Ref]:
        """Up to ``limit`` tasks this pool can run, CRITICAL first, oldest first within a lane."""
        out: list[Ref] = []
        for priority in LANES:
            if len(out) >= limit:
                break
            fifos = self._fifos[priority]
            candidates = (
                [fifos[n] for n in names if fifos.get(n)]
                if len(names) < len(fifos)
                else [q for n, q in fifos.items() if q and n in names]
            )
            while candidates and len(out) < limit:
                if len(candidates) == 1:
                    fifo = candidates[0]
                    while fifo and len(out) < limit:
                        out.append(fifo.popleft()[1])
                    break
                fifo = min(candidates, key=lambda q: q[0][0])
                out.append(fifo.popleft()[1])
                if not fifo:
                    candidates.remove(fifo)
            for name in [n for n, q in fifos.items() if not q]:
                del fifos[name]
        for ref in out:
            self._ids.discard(ref.id)
        return out
