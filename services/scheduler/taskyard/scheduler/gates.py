"""Gates: the queued tasks a limit holds back, out of their lanes until it has room.

A task that admission refuses waits at its gate (the limit's bucket), so the
lanes go on serving every other key: no head-of-line blocking. When the gate
opens (a concurrency unit released, a rate bucket's next admission time
reached, the limit changed or deleted), its oldest tasks go back to their
lanes at the place they had, fairness keys in turn (as many per turn as the
key's weight), so a key that flooded a shared limit does not starve the others
there either.
"""

from __future__ import annotations

import heapq
from collections import deque

from taskyard.scheduler.admission import Gate
from taskyard.scheduler.lanes import Lanes, Ref

# Float slack for comparing computed times with the clock's.
_EPS = 1e-9
# (arrival number, task, when it began to wait here)
_Waiting = tuple[int, Ref, float]


class _Queue:
    __slots__ = ("keys", "ring", "size")

    def __init__(self) -> None:
        self.keys: dict[str, deque[_Waiting]] = {}
        self.ring: deque[str] = deque()
        self.size = 0


class Gates:
    def __init__(self, lanes: Lanes) -> None:
        self._lanes = lanes
        self._queues: dict[Gate, _Queue] = {}
        self._where: dict[str, Gate] = {}
        # Rate gates' next look, soonest first; a gate appears at most once in
        # _scheduled (a stale heap entry is skipped).
        self._due: list[tuple[float, Gate]] = []
        self._scheduled: dict[Gate, float] = {}

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, task_id: str) -> bool:
        return task_id in self._where

    def hold(self, gate: Gate, seq: int, ref: Ref, now: float, *, at: float | None = None) -> None:
        """Keep ``ref`` (taken from its lane at arrival number ``seq``) at ``gate``;
        ``at``: when a rate gate is worth a look again."""
        queue = self._queues.get(gate)
        if queue is None:
            queue = self._queues[gate] = _Queue()
        fifo = queue.keys.get(ref.key)
        if fifo is None:
            fifo = queue.keys[ref.key] = deque()
            queue.ring.append(ref.key)
        item = (seq, ref, now)
        if not fifo or fifo[-1][0] < seq:
            fifo.append(item)
        elif fifo[0][0] > seq:
            fifo.appendleft(item)
        else:
            fifo.insert(next(i for i, other in enumerate(fifo) if other[0] > seq), item)
        queue.size += 1
        self._where[ref.id] = gate
        self._lanes.gated.add(ref.id)
        if at is not None:
            self.schedule(gate, at)

    def schedule(self, gate: Gate, at: float) -> None:
        current = self._scheduled.get(gate)
        if current is None or at < current:
            self._scheduled[gate] = at
            heapq.heappush(self._due, (at, gate))

    def open(self, gate: Gate, n: int) -> int:
        """Send up to ``n`` of the tasks waiting at ``gate`` back to their lanes, the
        oldest of each fairness key, keys in turn; returns how many went."""
        queue = self._queues.get(gate)
        if queue is None or n <= 0:
            return 0
        sent = 0
        weights = self._lanes.weights
        while queue.ring and sent < n:
            key = queue.ring[0]
            fifo = queue.keys[key]
            take = min(weights.get(key, 1), n - sent, len(fifo))
            for _ in range(take):
                seq, ref, _since = fifo.popleft()
                self._release(ref)
                self._lanes.restore(seq, ref)
            sent += take
            queue.size -= take
            if fifo:
                queue.ring.rotate(-1)
            else:
                queue.ring.popleft()
                del queue.keys[key]
        if not queue.size:
            del self._queues[gate]
            self._scheduled.pop(gate, None)
        return sent

    def open_limits(self, names: set[str]) -> int:
        """Everything waiting at the gates of these limits (changed or deleted)."""
        return sum(self.open(gate, 1 << 30) for gate in [g for g in self._queues if g[0] in names])

    def due(self, now: float) -> list[Gate]:
        """The scheduled gates whose time has come (each once)."""
        out: list[Gate] = []
        now += _EPS  # a time computed as the clock's own, give or take a rounding
        while self._due and self._due[0][0] <= now:
            at, gate = heapq.heappop(self._due)
            if self._scheduled.get(gate) == at:
                del self._scheduled[gate]
                if gate in self._queues:
                    out.append(gate)
        return out

    def next_due(self) -> float | None:
        while self._due and self._scheduled.get(self._due[0][1]) != self._due[0][0]:
            heapq.heappop(self._due)  # stale
        return self._due[0][0] if self._due else None

    def waiting(self, gate: Gate) -> int:
        queue = self._queues.get(gate)
        return queue.size if queue is not None else 0

    def waiting_by_key(self, limit: str) -> dict[str, int]:
        """Tasks waiting at each bucket of ``limit``."""
        return {gate[1]: q.size for gate, q in self._queues.items() if gate[0] == limit}

    def where(self, task_id: str) -> tuple[Gate, float] | None:
        """The gate a task waits at, and since when."""
        gate = self._where.get(task_id)
        if gate is None:
            return None
        for fifo in self._queues[gate].keys.values():
            for _seq, ref, since in fifo:
                if ref.id == task_id:
                    return gate, since
        return gate, 0.0

    def drop(self, task_id: str) -> bool:
        """Forget a waiting task (cancelled); a scan of its gate, as cancels are rare."""
        gate = self._where.get(task_id)
        if gate is None:
            return False
        queue = self._queues[gate]
        for key, fifo in queue.keys.items():
            for item in fifo:
                if item[1].id == task_id:
                    fifo.remove(item)
                    queue.size -= 1
                    self._release(item[1])
                    if not fifo:
                        del queue.keys[key]
                        queue.ring.remove(key)
                    if not queue.size:
                        del self._queues[gate]
                        self._scheduled.pop(gate, None)
                    return True
        return False

    def _release(self, ref: Ref) -> None:
        del self._where[ref.id]
        self._lanes.gated.discard(ref.id)
