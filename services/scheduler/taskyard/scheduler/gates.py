"""Gates: the queued tasks a limit holds back, out of their lanes until it has room.

A task that admission refuses waits at its gate (the limit's bucket), so the
lanes go on serving every other key: no head-of-line blocking. When the gate
opens (a concurrency unit released, a rate bucket's next admission time
reached, the limit changed or deleted), its oldest tasks go back to their
lanes at the place they had, shared as a lane is (turns.py): tenants in turn
(as many per turn as the tenant's weight), then that tenant's fairness keys in
turn (as many as the key's weight), so neither a tenant nor a key that flooded a
limit every tenant shares (one a task's function declares) starves the others
there. A key is a tenant's (two tenants' keys of one name are two keys).
"""

from __future__ import annotations

import heapq

from taskyard.core.priority import LANES, Priority
from taskyard.scheduler import turns
from taskyard.scheduler.admission import Gate
from taskyard.scheduler.lanes import Lanes, Ref

# Float slack for comparing computed times with the clock's.
_EPS = 1e-9


class _Queue:
    """One gate's waiting tasks: by priority (highest first, as the lanes), then
    tenants in turn, their keys in turn, FIFO inside a key."""

    __slots__ = ("lanes", "waiting")

    def __init__(self) -> None:
        self.lanes: dict[Priority, turns.Lane] = {}
        # Every task waiting here, with when it began to.
        self.waiting: dict[str, tuple[Ref, float]] = {}

    @property
    def size(self) -> int:
        return len(self.waiting)


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
        lane = queue.lanes.get(ref.priority)
        if lane is None:
            lane = queue.lanes[ref.priority] = turns.Lane()
        turns.add(lane, seq, ref)
        queue.waiting[ref.id] = (ref, now)
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
        highest priority first, then tenants in turn and each tenant's keys in turn
        (by their weights, the lanes' own), the oldest of a key first; returns their ids."""
        queue = self._queues.get(gate)
        if queue is None or n <= 0:
            return []
        refs: list[Ref] = []
        seqs: list[int] = []
        lanes = self._lanes
        for priority in LANES:
            lane = queue.lanes.get(priority)
            if lane is None:
                continue
            turns.take_turns(
                lane, turns.served(lane, None, None), n, refs, seqs, lanes.tenant_weights, lanes.weights
            )
            if not lane.tenants:
                del queue.lanes[priority]
            if len(refs) >= n:
                break
        for seq, ref in zip(seqs, refs, strict=True):
            del queue.waiting[ref.id]
            self._release(ref)
            lanes.restore(seq, ref)
        if not queue.size:
            self._forget(gate)
        return [ref.id for ref in refs]

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
        return gate, self._queues[gate].waiting[task_id][1]

    def tenant_of(self, task_id: str) -> str | None:
        """The tenant of a task waiting at a gate."""
        gate = self._where.get(task_id)
        if gate is None:
            return None
        return self._queues[gate].waiting[task_id][0].tenant

    def drop(self, task_id: str) -> bool:
        """Forget a waiting task (cancelled); a scan of its FIFO, as cancels are rare."""
        gate = self._where.get(task_id)
        if gate is None:
            return False
        queue = self._queues[gate]
        ref = queue.waiting.pop(task_id)[0]
        lane = queue.lanes[ref.priority]
        turns.remove(lane, ref)
        if not lane.tenants:
            del queue.lanes[ref.priority]
        self._release(ref)
        if not queue.size:
            self._forget(gate)
        return True

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
