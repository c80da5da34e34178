"""Four strictly ordered priority lanes of task references, shared fairly by
tenant, then by key.

Inside a lane, tasks wait per tenant (``Ref.tenant``; ``""``, the default tenant,
is a tenant like the others), then per fairness key of that tenant
(``TaskSpec.fairness_key``; empty is a key too), FIFO inside a key. Both levels
are served by deficit round robin: each turn a tenant may take as many tasks as
its weight (TenantService; default 1), and those go to its keys in turn, each as
many as the key's weight (LimitService.SetKeyWeight; default 1). A tenant that
floods with many keys therefore delays another tenant's task by at most one turn
of the tenants' ring, and a key that floods delays its own tenant's other keys by
at most one turn of that tenant's ring. The rings are kept per served set (the
task names and tenants of a pool, turns.py): a pool's takes move its own turns
only, and pass a tenant or key with nothing it runs once, so a take costs the same
whatever the number of tenants.

Within a key, one FIFO per task name lets a pool that serves only some names find
its work without scanning past tasks it cannot run; a global sequence number keeps
arrival order across names. A suspended tenant's tasks and a paused queue's are
parked out of the lanes until resumed.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable
from typing import NamedTuple

from taskyard.core.priority import LANES, Priority
from taskyard.scheduler.turns import (
    Lane,
    add,
    forget_key,
    forget_tenant,
    remove,
    served,
    take_turns,
    uncount,
)

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
    # Its fairness key ("" for a task that names none), within its tenant.
    key: str = ""
    # The limits it takes units of at admission (scheduler/admission.py).
    uses: tuple[Use, ...] = ()
    # Its tenant ("" the default tenant).
    tenant: str = ""


class Lanes:
    def __init__(self) -> None:
        self._lanes: dict[Priority, Lane] = {p: Lane() for p in LANES}
        # Every waiting task (its lane, tenant and fairness key: where ExplainTask finds it).
        self._ids: dict[str, Ref] = {}
        self._seq = itertools.count()
        # Fairness weights (LimitService.SetKeyWeight) by (tenant, key as the tenant
        # names it): the default tenant's key "acme/x" is not acme's "x"; absent: 1.
        self.weights: dict[tuple[str, str], int] = {}
        # Tenants' weights (TenantService); absent: 1.
        self.tenant_weights: dict[str, int] = {}
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
        # Suspended tenants (scheduler/tenants.py): parked as a paused queue's are.
        self.suspended: set[str] = set()
        self._suspended: dict[str, dict[str, Ref]] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, task_id: str) -> bool:
        return task_id in self._ids

    def get(self, task_id: str) -> Ref | None:
        """A task waiting in a lane."""
        return self._ids.get(task_id)

    def push(self, ref: Ref) -> bool:
        """Append a task; False if it is already waiting."""
        return self.restore(next(self._seq), ref)

    def restore(self, seq: int, ref: Ref) -> bool:
        """Put a task back in its lane at arrival number ``seq`` (one taken and held
        at a gate goes back to the place it had); False if it is already waiting."""
        task_id = ref.id
        if task_id in self._ids or task_id in self.gated:
            return False
        if self.suspended and ref.tenant in self.suspended:
            held = self._suspended.setdefault(ref.tenant, {})
            if task_id in held:
                return False
            held[task_id] = ref
            return True
        if ref.queue in self.paused:
            parked = self._parked.setdefault(ref.queue, {})
            if task_id in parked:
                return False
            parked[task_id] = ref
            return True
        self._ids[task_id] = ref
        add(self._lanes[ref.priority], seq, ref)
        return True

    def push_all(self, refs: Iterable[Ref]) -> int:
        return sum(1 for ref in refs if self.push(ref))

    def _park_where(self, parked: dict[str, Ref], test: str, *, by_tenant: bool) -> int:
        """Move every waiting task whose queue (or tenant) is ``test`` into ``parked``,
        in arrival order; returns how many moved."""
        found: list[Item] = []
        for lane in self._lanes.values():
            for tenant, tq in list(lane.tenants.items()):
                if by_tenant and tenant != test:
                    continue
                for key, kq in list(tq.keys.items()):
                    for name in list(kq.fifos):
                        keep: deque[Item] = deque()
                        for item in kq.fifos[name]:
                            if by_tenant or item[1].queue == test:
                                found.append(item)
                                del self._ids[item[1].id]
                                kq.size -= 1
                                tq.size -= 1
                                uncount(lane, name, 1)
                            else:
                                keep.append(item)
                        if keep:
                            kq.fifos[name] = keep
                        else:
                            del kq.fifos[name]
                    if not kq.size:
                        forget_key(tq, key)
                if not tq.size:
                    forget_tenant(lane, tenant)
        found.sort(key=lambda item: item[0])
        for _seq, ref in found:
            parked[ref.id] = ref
        return len(found)

    def pause(self, queue: str) -> int:
        """Park every waiting task of ``queue`` and the ones that come later; returns how many moved."""
        self.paused.add(queue)
        self.pause_epoch += 1
        return self._park_where(self._parked.setdefault(queue, {}), queue, by_tenant=False)

    def resume(self, queue: str) -> int:
        """Back to the lanes, in the order they were parked; returns how many."""
        self.paused.discard(queue)
        self.pause_epoch += 1
        return self.push_all(self._parked.pop(queue, {}).values())

    def parked(self, queue: str) -> int:
        return len(self._parked.get(queue, {}))

    def suspend(self, tenant: str) -> int:
        """Park every waiting task of ``tenant`` and the ones that come later (its
        tenant is suspended); returns how many moved."""
        self.suspended.add(tenant)
        return self._park_where(self._suspended.setdefault(tenant, {}), tenant, by_tenant=True)

    def unsuspend(self, tenant: str) -> int:
        """The tenant resumed: its tasks back to the lanes, in the order they were
        parked (a paused queue's stay parked there); returns how many."""
        self.suspended.discard(tenant)
        return self.push_all(self._suspended.pop(tenant, {}).values())

    def held_by_suspension(self, task_id: str) -> bool:
        """Whether ``task_id`` waits parked under a suspended tenant (a scan of the
        suspended tenants: ExplainTask's, not the dispatcher's)."""
        return any(task_id in held for held in self._suspended.values())

    def drop(self, task_id: str, priority: Priority, name: str) -> bool:
        """Remove a waiting task (cancelled): from its lane, or from where it is parked
        (under its suspended tenant, or its paused queue), so it is not held until a
        resume only to be refused at its lease."""
        ref = self._ids.get(task_id)
        if ref is None:
            for held in (*self._suspended.values(), *self._parked.values()):
                if held.pop(task_id, None) is not None:
                    return True
            return False
        if not remove(self._lanes[priority], ref):
            return False
        del self._ids[task_id]
        return True

    def waiting_tenants(self) -> dict[str, int]:
        """The tenants with tasks waiting in a lane, and how many each."""
        found: dict[str, int] = {}
        for lane in self._lanes.values():
            for tenant, tq in lane.tenants.items():
                found[tenant] = found.get(tenant, 0) + tq.size
        return found

    def take_few(
        self, names: frozenset[str], tenants: Iterable[str], limit: int, seqs: list[int] | None = None
    ) -> list[Ref]:
        """Up to ``limit`` tasks of ``tenants`` (each with only a few waiting: for the
        held slots, headroom.py), most urgent lane first, oldest first within a
        tenant; never past a more urgent lane where other tasks still wait. A scan of
        those tenants' queues, which are short. ``seqs`` as for ``take``."""
        out: list[Ref] = []
        for priority in LANES:
            lane = self._lanes[priority]
            if not lane.tenants:
                continue
            for tenant in tenants:
                tq = lane.tenants.get(tenant)
                if tq is None or len(out) >= limit:
                    continue
                items = sorted(
                    item
                    for kq in tq.keys.values()
                    for name, fifo in kq.fifos.items()
                    if name in names
                    for item in fifo
                )
                for seq, ref in items[: limit - len(out)]:
                    remove(lane, ref)
                    del self._ids[ref.id]
                    out.append(ref)
                    if seqs is not None:
                        seqs.append(seq)
            if len(out) >= limit or any(name in lane.names for name in names):
                break  # what still waits here for this pool goes before any less urgent task
        return out

    def serves_next(self, priority: Priority, tenant: str) -> bool:
        """Whether a task of ``tenant`` at ``priority`` arriving now would be the
        lanes' next of its tenant: nothing waits in a more urgent lane, and nothing of
        its tenant waits at all (in its lane, the tenant comes round in the next turn
        of the tenants' ring). Such a task may take a held slot at its insert
        (headroom.py)."""
        lanes = self._lanes
        for p in LANES:
            lane = lanes[p]
            if p < priority and lane.tenants:
                return False
            if tenant in lane.tenants:
                return False
        return True

    def depth(self, priority: Priority) -> int:
        return sum(tq.size for tq in self._lanes[priority].tenants.values())

    def standing(self, task_id: str) -> tuple[str, int, int] | None:
        """Where a waiting task stands in its lane: its fairness key, the tasks of that
        key ahead of it, and its tenant's other keys waiting in the lane, each with a
        turn before it can come round again; a scan of its key: ExplainTask's, not the
        dispatcher's. Other tenants waiting are not counted: whether another tenant has
        work is nothing a tenant may learn."""
        ref = self._ids.get(task_id)
        if ref is None:
            return None
        lane = self._lanes[ref.priority]
        tq = lane.tenants[ref.tenant]
        kq = tq.keys[ref.key]
        found = [s for s, r in kq.fifos[ref.name] if r.id == task_id]
        ahead = sum(1 for fifo in kq.fifos.values() for s, _ in fifo if s < found[0]) if found else 0
        return ref.key, ahead, len(tq.keys) - 1

    def take(
        self,
        names: frozenset[str],
        limit: int,
        seqs: list[int] | None = None,
        tenants: frozenset[str] | None = None,
    ) -> list[Ref]:
        """Up to ``limit`` tasks this pool can run: CRITICAL first; inside a lane the
        tenants in turn, each as many as its weight, its keys in turn within that;
        oldest first within a key. ``tenants``: the tenants the pool serves (None:
        every one). ``seqs``, when given, receives each task's arrival number (to
        ``restore`` it)."""
        out: list[Ref] = []
        for priority in LANES:
            if len(out) >= limit:
                break
            lane = self._lanes[priority]
            if not lane.tenants:
                continue
            counts = lane.names
            runnable = (
                sum(counts.get(n, 0) for n in names)
                if len(names) < len(counts)
                else sum(c for n, c in counts.items() if n in names)
            )
            if not runnable:
                continue
            want = min(limit, len(out) + runnable)
            turns = served(lane, names, tenants)
            take_turns(lane, turns, want, out, seqs, self.tenant_weights, self.weights)
        ids = self._ids
        for ref in out:
            del ids[ref.id]
        return out
