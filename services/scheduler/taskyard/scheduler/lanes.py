"""Four strictly ordered priority lanes of task references, shared fairly by key.

Inside a lane, tasks wait per fairness key (``TaskSpec.fairness_key``; empty is
a key too), FIFO inside a key, and the keys are served by deficit round robin:
each turn a key may take as many tasks as its weight (default 1), so a flood
from one key delays another key's task by at most one turn of the ring. Within
a key, one FIFO per task name lets a pool that serves only some names find its
work without scanning past tasks it cannot run; a global sequence number keeps
arrival order across names.
"""
# Length: the lane structure and its one take() loop belong together.

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable
from typing import NamedTuple

from taskyard.core.priority import LANES, Priority

# A limit a task takes units of: (limit name, key, units).
Use = tuple[str, str, int]
# A waiting task with its arrival number.
Item = tuple[int, "Ref"]


class Ref(NamedTuple):
    """A waiting task. A named tuple, not a frozen dataclass: one is made for
    every task that passes through, and a frozen dataclass's ``__init__`` costs
    about four times as much (it sets each field through ``object.__setattr__``)."""

    id: str
    name: str
    priority: Priority
    queue: str = "default"
    # Its fairness key ("" for a task that names none).
    key: str = ""
    # The limits it takes units of at admission (scheduler/admission.py).
    uses: tuple[Use, ...] = ()


class _Key:
    """One fairness key's waiting tasks in one lane."""

    __slots__ = ("deficit", "fifos", "size", "turn")

    def __init__(self) -> None:
        self.fifos: dict[str, deque[Item]] = {}
        self.size = 0
        # Deficit round robin: tasks it may still take in its current turn.
        self.deficit = 0
        self.turn = False


class _Lane:
    __slots__ = ("keys", "names", "ring")

    def __init__(self) -> None:
        self.keys: dict[str, _Key] = {}
        # The keys with waiting tasks, in serving order (the head has the turn).
        self.ring: deque[str] = deque()
        # Waiting tasks by name, all keys together: a pool that runs none of them
        # passes the lane without visiting a key, and a take stops once it has all
        # there is for its pool instead of going round every key again.
        self.names: dict[str, int] = {}


def _uncount(lane: _Lane, name: str, n: int) -> None:
    left = lane.names[name] - n
    if left:
        lane.names[name] = left
    else:
        del lane.names[name]


def _insert(fifo: deque[Item], item: Item) -> None:
    """``item`` into ``fifo`` in arrival order (a task coming back from a gate is
    usually older than every task behind it: appended left)."""
    seq = item[0]
    if not fifo or fifo[-1][0] < seq:
        fifo.append(item)
    elif fifo[0][0] > seq:
        fifo.appendleft(item)
    else:
        at = next(i for i, other in enumerate(fifo) if other[0] > seq)
        fifo.insert(at, item)


class Lanes:
    def __init__(self) -> None:
        self._lanes: dict[Priority, _Lane] = {p: _Lane() for p in LANES}
        # Every waiting task (its lane and fairness key: where ExplainTask finds it).
        self._ids: dict[str, Ref] = {}
        self._seq = itertools.count()
        # Fairness weights by key (LimitService.SetKeyWeight); absent: 1.
        self.weights: dict[str, int] = {}
        # Tasks waiting at a flow-control gate (scheduler/gates.py): not in a lane,
        # but a reload must not enqueue them a second time.
        self.gated: set[str] = set()
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
        return self.restore(next(self._seq), ref)

    def restore(self, seq: int, ref: Ref) -> bool:
        """Put a task back in its lane at arrival number ``seq`` (one taken and held
        at a gate goes back to the place it had); False if it is already waiting."""
        task_id = ref.id
        if task_id in self._ids or task_id in self.gated:
            return False
        if ref.queue in self.paused:
            parked = self._parked.setdefault(ref.queue, {})
            if task_id in parked:
                return False
            parked[task_id] = ref
            return True
        self._ids[task_id] = ref
        lane = self._lanes[ref.priority]
        kq = lane.keys.get(ref.key)
        if kq is None:
            kq = lane.keys[ref.key] = _Key()
            lane.ring.append(ref.key)
        fifo = kq.fifos.get(ref.name)
        if fifo is None:
            kq.fifos[ref.name] = deque([(seq, ref)])
        elif fifo[-1][0] < seq:
            fifo.append((seq, ref))
        else:
            _insert(fifo, (seq, ref))
        kq.size += 1
        lane.names[ref.name] = lane.names.get(ref.name, 0) + 1
        return True

    def push_all(self, refs: Iterable[Ref]) -> int:
        return sum(1 for ref in refs if self.push(ref))

    def pause(self, queue: str) -> int:
        """Park every waiting task of ``queue`` and the ones that come later; returns how many moved."""
        self.paused.add(queue)
        self.pause_epoch += 1
        moved = 0
        parked = self._parked.setdefault(queue, {})
        for lane in self._lanes.values():
            for key, kq in list(lane.keys.items()):
                for name in list(kq.fifos):
                    keep: deque[Item] = deque()
                    for item in kq.fifos[name]:
                        if item[1].queue == queue:
                            parked[item[1].id] = item[1]
                            del self._ids[item[1].id]
                            kq.size -= 1
                            _uncount(lane, name, 1)
                            moved += 1
                        else:
                            keep.append(item)
                    if keep:
                        kq.fifos[name] = keep
                    else:
                        del kq.fifos[name]
                if not kq.size:
                    self._forget(lane, key)
        return moved

    def resume(self, queue: str) -> int:
        """Back to the lanes, in the order they were parked; returns how many."""
        self.paused.discard(queue)
        self.pause_epoch += 1
        return self.push_all(self._parked.pop(queue, {}).values())

    def parked(self, queue: str) -> int:
        return len(self._parked.get(queue, {}))

    def drop(self, task_id: str, priority: Priority, name: str) -> bool:
        """Remove a waiting task (cancelled); a scan of its FIFOs, as cancels are rare."""
        if task_id not in self._ids:
            return False
        lane = self._lanes[priority]
        for key, kq in lane.keys.items():
            fifo = kq.fifos.get(name)
            if fifo is None:
                continue
            for item in fifo:
                if item[1].id == task_id:
                    fifo.remove(item)
                    del self._ids[task_id]
                    kq.size -= 1
                    _uncount(lane, name, 1)
                    if not fifo:
                        del kq.fifos[name]
                    if not kq.size:
                        self._forget(lane, key)
                    return True
        return False

    def depth(self, priority: Priority) -> int:
        return sum(kq.size for kq in self._lanes[priority].keys.values())

    def standing(self, task_id: str) -> tuple[str, int, int] | None:
        """Where a waiting task stands in its lane: its fairness key, the tasks of that
        key ahead of it, and the other keys with tasks waiting in the lane (a scan of
        its key: ExplainTask's, not the dispatcher's)."""
        ref = self._ids.get(task_id)
        if ref is None:
            return None
        lane = self._lanes[ref.priority]
        kq = lane.keys[ref.key]
        found = [s for s, r in kq.fifos[ref.name] if r.id == task_id]
        ahead = sum(1 for fifo in kq.fifos.values() for s, _ in fifo if s < found[0]) if found else 0
        return ref.key, ahead, len(lane.keys) - 1

    def take(self, names: frozenset[str], limit: int, seqs: list[int] | None = None) -> list[Ref]:
        """Up to ``limit`` tasks this pool can run: CRITICAL first; inside a lane the
        keys in turn, each as many as its weight; oldest first within a key.
        ``seqs``, when given, receives each task's arrival number (to ``restore`` it)."""
        out: list[Ref] = []
        for priority in LANES:
            if len(out) >= limit:
                break
            lane = self._lanes[priority]
            if not lane.keys:
                continue
            counts = lane.names
            runnable = (
                sum(counts.get(n, 0) for n in names)
                if len(names) < len(counts)
                else sum(c for n, c in counts.items() if n in names)
            )
            if not runnable:
                continue
            if len(lane.keys) == 1:
                key, kq = next(iter(lane.keys.items()))
                self._take_key(lane, kq, names, limit - len(out), out, seqs)
                if not kq.size:
                    self._forget(lane, key)
                continue
            self._take_turns(lane, names, min(limit, len(out) + runnable), out, seqs)
        ids = self._ids
        for ref in out:
            del ids[ref.id]
        return out

    def _take_turns(
        self, lane: _Lane, names: frozenset[str], limit: int, out: list[Ref], seqs: list[int] | None
    ) -> None:
        ring, weights = lane.ring, self.weights
        idle = 0  # keys in a row that had nothing this pool runs
        while ring and len(out) < limit and idle < len(ring):
            key = ring[0]
            kq = lane.keys[key]
            if not kq.turn:
                kq.turn = True
                kq.deficit += weights.get(key, 1)
            want = min(kq.deficit, limit - len(out))
            got = self._take_key(lane, kq, names, want, out, seqs)
            kq.deficit -= got
            if not kq.size:  # at the ring's head: no scan to drop it
                ring.popleft()
                del lane.keys[key]
                idle = 0
                continue
            if got < want or kq.deficit <= 0:
                if got < want:  # nothing more this pool can run: no credit saved up
                    kq.deficit = 0
                kq.turn = False
                ring.rotate(-1)
                idle = idle + 1 if got == 0 else 0
            # else: the limit cut its turn short; it goes on at the next take()

    @staticmethod
    def _take_key(
        lane: _Lane, kq: _Key, names: frozenset[str], limit: int, out: list[Ref], seqs: list[int] | None
    ) -> int:
        fifos = kq.fifos
        candidates = (
            [(n, fifos[n]) for n in names if fifos.get(n)]
            if len(names) < len(fifos)
            else [(n, q) for n, q in fifos.items() if q and n in names]
        )
        start = len(out)
        end = start + limit
        while candidates and len(out) < end:
            if len(candidates) == 1:
                name, fifo = candidates[0]
                before = len(out)
                while fifo and len(out) < end:
                    seq, ref = fifo.popleft()
                    out.append(ref)
                    if seqs is not None:
                        seqs.append(seq)
                _uncount(lane, name, len(out) - before)
                break
            name, fifo = min(candidates, key=lambda c: c[1][0][0])
            seq, ref = fifo.popleft()
            out.append(ref)
            if seqs is not None:
                seqs.append(seq)
            _uncount(lane, name, 1)
            if not fifo:  # by identity: == would compare the deques' contents
                candidates = [c for c in candidates if c[1] is not fifo]
        for name in [n for n, q in fifos.items() if not q]:
            del fifos[name]
        got = len(out) - start
        kq.size -= got
        return got

    @staticmethod
    def _forget(lane: _Lane, key: str) -> None:
        del lane.keys[key]
        if key in lane.ring:
            lane.ring.remove(key)
