"""Gates: the queued tasks a limit holds back, out of their lanes until it has room.

A task that admission refuses waits at its gate (the limit's bucket), so the
lanes go on serving every other key: no head-of-line blocking. When the gate
opens (a concurrency unit released, a rate bucket's next admission time
reached, the limit changed or deleted), its oldest tasks go back to their
lanes at the place they had, fairness keys in turn (as many per turn as the
key's weight), so a key that flooded a shared limit does not starve the others
there either. A key is a tenant's (two tenants' keys of one name are two keys).
"""

from __future__ import annotations

import heapq
from collections import deque

from taskyard.core import tenants
from taskyard.core.priority import LANES, Priority
from taskyard.scheduler.admission import Gate
from taskyard.scheduler.lanes import Lanes, Ref

# Float slack for comparing computed times with the clock's.
_EPS = 1e-9
# (arrival number, task, when it began to wait here)
_Waiting = tuple[int, Ref, float]
# A fairness key of a tenant: (tenant, key).
_Key = tuple[str, str]


class _Queue:
    """One gate's waiting tasks: by priority (highest first, as the lanes), then
    fairness keys in turn, FIFO inside a key."""

    __slots__ = ("keys", "rings", "size")

    def __init__(self) -> None:
        self.keys: dict[tuple[Priority, _Key], deque[_Waiting]] = {}
        self.rings: dict[Priority, deque[_Key]] = {}
        self.size = 0


class Gates:
    def __init__(self, lanes: Lanes) -> None:
        self._lanes = lanes
        self._queues: dict[Gate, _Queue] = {}
        # The gates of each limit (its usage and explanations read them, not all gates).
        self._by_limit: dict[str, set[Gate]] = {}
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
            self._by_limit.setdefault(gate[0], set()).add(gate)
        key = (ref.tenant, ref.key)
        fifo = queue.keys.get((ref.priority, key))
        if fifo is None:
            fifo = queue.keys[(ref.priority, key)] = deque()
            queue.rings.setdefault(ref.priority, deque()).append(key)
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

    def open(self, gate: Gate, n: int) -> list[str]:
        """Send up to ``n`` of the tasks waiting at ``gate`` back to their lanes: the
        highest priority first, then the oldest of each fairness key, keys in turn;
        returns their ids."""
        queue = self._queues.get(gate)
        if queue is None or n <= 0:
            return []
        sent: list[str] = []
        weights = self._lanes.weights
        for priority in LANES:
            ring = queue.rings.get(priority)
            while ring and len(sent) < n:
                key = ring[0]
                fifo = queue.keys[(priority, key)]
                take = min(weights.get(tenants.qualify(*key), 1), n - len(sent), len(fifo))
                for _ in range(take):
                    seq, ref, _since = fifo.popleft()
                    self._release(ref)
                    self._lanes.restore(seq, ref)
                    sent.append(ref.id)
                queue.size -= take
                if fifo:
                    ring.rotate(-1)
                else:
                    ring.popleft()
                    del queue.keys[(priority, key)]
            if ring is not None and not ring:
                del queue.rings[priority]
            if len(sent) >= n:
                break
        if not queue.size:
            self._forget(gate)
        return sent

    def open_limits(self, names: set[str]) -> int:
        """Everything waiting at the gates of these limits (changed or deleted)."""
        gates = [g for name in names for g in self._by_limit.get(name, ())]
        return sum(len(self.open(gate, 1 << 30)) for gate in gates)

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
        return {gate[1]: self._queues[gate].size for gate in self._by_limit.get(limit, ())}

    def gates(self) -> list[Gate]:
        """Every gate with tasks waiting."""
        return list(self._queues)

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

    def tenant_of(self, task_id: str) -> str | None:
        """The tenant of a task waiting at a gate (a scan of its gate: ExplainTask's)."""
        gate = self._where.get(task_id)
        if gate is None:
            return None
        for fifo in self._queues[gate].keys.values():
            for _seq, ref, _since in fifo:
                if ref.id == task_id:
                    return ref.tenant
        return None

    def drop(self, task_id: str) -> bool:
        """Forget a waiting task (cancelled); a scan of its gate, as cancels are rare."""
        gate = self._where.get(task_id)
        if gate is None:
            return False
        queue = self._queues[gate]
        for (priority, key), fifo in queue.keys.items():
            for item in fifo:
                if item[1].id == task_id:
                    fifo.remove(item)
                    queue.size -= 1
                    self._release(item[1])
                    if not fifo:
                        del queue.keys[(priority, key)]
                        ring = queue.rings[priority]
                        ring.remove(key)
                        if not ring:
                            del queue.rings[priority]
                    if not queue.size:
                        self._forget(gate)
                    return True
        return False

    def _forget(self, gate: Gate) -> None:
        del self._queues[gate]
        self._scheduled.pop(gate, None)
        limit_gates = self._by_limit[gate[0]]
        limit_gates.discard(gate)
        if not limit_gates:
            del self._by_limit[gate[0]]

    def _release(self, ref: Ref) -> None:
        del self._where[ref.id]
        self._lanes.gated.discard(ref.id)
