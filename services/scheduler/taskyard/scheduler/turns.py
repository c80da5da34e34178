"""Deficit round robin at two levels, the lanes' way of sharing a lane fairly.

The tenants with tasks waiting in a lane take turns in a ring: each turn a tenant
may take as many tasks as its weight (default 1). Those are taken from its own
ring of fairness keys, each key as many as its weight (default 1) per turn of its
own. A turn the pool's batch cut short goes on at the next take; a tenant or key
with nothing the pool runs saves no credit. Only tenants and keys with waiting
tasks are in a ring, so a take costs the same whatever their number. Within a key,
one FIFO per task name, oldest first across names by arrival number.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from taskyard.scheduler.lanes import Item, Ref


class Key:
    """One fairness key's waiting tasks in one lane."""

    __slots__ = ("deficit", "fifos", "size", "turn", "weight_key")

    def __init__(self, weight_key: str) -> None:
        self.fifos: dict[str, deque[Item]] = {}
        self.size = 0
        # Deficit round robin: tasks it may still take in its current turn.
        self.deficit = 0
        self.turn = False
        # Its weight's key in Lanes.weights: the tenant's qualified key.
        self.weight_key = weight_key


class TenantQueue:
    """One tenant's waiting tasks in one lane: its keys and their ring."""

    __slots__ = ("deficit", "keys", "ring", "size", "turn")

    def __init__(self) -> None:
        self.keys: dict[str, Key] = {}
        # The keys with waiting tasks, in serving order (the head has the turn).
        self.ring: deque[str] = deque()
        self.size = 0
        self.deficit = 0
        self.turn = False


class Lane:
    __slots__ = ("names", "ring", "tenants")

    def __init__(self) -> None:
        self.tenants: dict[str, TenantQueue] = {}
        # The tenants with waiting tasks, in serving order (the head has the turn).
        self.ring: deque[str] = deque()
        # Waiting tasks by name, all tenants together: a pool that runs none of them
        # passes the lane without visiting a tenant, and a take stops once it has all
        # there is for its pool instead of going round every tenant again.
        self.names: dict[str, int] = {}


def uncount(lane: Lane, name: str, n: int) -> None:
    left = lane.names[name] - n
    if left:
        lane.names[name] = left
    else:
        del lane.names[name]


def insert(fifo: deque[Item], item: Item) -> None:
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


def take_turns(
    lane: Lane,
    tenants: frozenset[str] | None,
    names: frozenset[str],
    limit: int,
    out: list[Ref],
    seqs: list[int] | None,
    tenant_weights: dict[str, int],
    key_weights: dict[str, int],
) -> None:
    """Up to ``limit`` tasks in ``out`` (which may hold some already): deficit round
    robin over the lane's tenants (None: every one), each turn's tasks taken from
    the tenant's keys in turn."""
    ring, weights = lane.ring, tenant_weights
    idle = 0  # tenants in a row that had nothing this pool runs
    while ring and len(out) < limit and idle < len(ring):
        tenant = ring[0]
        tq = lane.tenants[tenant]
        if tenants is not None and tenant not in tenants:
            ring.rotate(-1)
            idle += 1
            continue
        if not tq.turn:
            tq.turn = True
            tq.deficit += weights.get(tenant, 1)
        want = min(tq.deficit, limit - len(out))
        got = take_keys(lane, tq, names, want, out, seqs, key_weights)
        tq.deficit -= got
        if not tq.size:  # at the ring's head: no scan to drop it
            ring.popleft()
            del lane.tenants[tenant]
            idle = 0
            continue
        if got < want or tq.deficit <= 0:
            if got < want:  # nothing more this pool can run: no credit saved up
                tq.deficit = 0
            tq.turn = False
            ring.rotate(-1)
            idle = idle + 1 if got == 0 else 0
        # else: the limit cut its turn short; it goes on at the next take()


def take_served(
    lane: Lane,
    tenants: frozenset[str],
    names: frozenset[str],
    limit: int,
    out: list[Ref],
    seqs: list[int] | None,
    tenant_weights: dict[str, int],
    key_weights: dict[str, int],
    turn: int,
) -> None:
    """A pool that serves fewer tenants than wait in the lane: its tenants in turn
    (each as many as its weight a round), without going round the others; the
    ``turn``-th take begins with the next of them, so none is always first."""
    served = [(t, lane.tenants[t]) for t in sorted(tenants) if t in lane.tenants]
    if len(served) > 1:
        start = turn % len(served)
        served = served[start:] + served[:start]
    weights = tenant_weights
    while served and len(out) < limit:
        before = len(out)
        for tenant, tq in served:
            if len(out) >= limit:
                break
            take_keys(lane, tq, names, min(weights.get(tenant, 1), limit - len(out)), out, seqs, key_weights)
            if not tq.size:
                forget_tenant(lane, tenant)
        served = [(t, tq) for t, tq in served if tq.size]
        if len(out) == before:
            break


def take_keys(
    lane: Lane,
    tq: TenantQueue,
    names: frozenset[str],
    limit: int,
    out: list[Ref],
    seqs: list[int] | None,
    key_weights: dict[str, int],
) -> int:
    """Up to ``limit`` of one tenant's tasks: deficit round robin over its keys."""
    start = len(out)
    if len(tq.keys) == 1:
        key, kq = next(iter(tq.keys.items()))
        got = take_key(lane, kq, names, limit, out, seqs)
        tq.size -= got
        if not kq.size:
            forget_key(tq, key)
        return got
    ring, weights = tq.ring, key_weights
    end = start + limit
    idle = 0  # keys in a row that had nothing this pool runs
    while ring and len(out) < end and idle < len(ring):
        key = ring[0]
        kq = tq.keys[key]
        if not kq.turn:
            kq.turn = True
            kq.deficit += weights.get(kq.weight_key, 1)
        want = min(kq.deficit, end - len(out))
        got = take_key(lane, kq, names, want, out, seqs)
        kq.deficit -= got
        tq.size -= got
        if not kq.size:  # at the ring's head: no scan to drop it
            ring.popleft()
            del tq.keys[key]
            idle = 0
            continue
        if got < want or kq.deficit <= 0:
            if got < want:  # nothing more this pool can run: no credit saved up
                kq.deficit = 0
            kq.turn = False
            ring.rotate(-1)
            idle = idle + 1 if got == 0 else 0
        # else: the limit cut its turn short; it goes on at the next take()
    return len(out) - start


def take_key(
    lane: Lane, kq: Key, names: frozenset[str], limit: int, out: list[Ref], seqs: list[int] | None
) -> int:
    """Up to ``limit`` of one key's tasks that ``names`` holds, oldest first."""
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
            uncount(lane, name, len(out) - before)
            break
        name, fifo = min(candidates, key=lambda c: c[1][0][0])
        seq, ref = fifo.popleft()
        out.append(ref)
        if seqs is not None:
            seqs.append(seq)
        uncount(lane, name, 1)
        if not fifo:  # by identity: == would compare the deques' contents
            candidates = [c for c in candidates if c[1] is not fifo]
    for name in [n for n, q in fifos.items() if not q]:
        del fifos[name]
    got = len(out) - start
    kq.size -= got
    return got


def forget_key(tq: TenantQueue, key: str) -> None:
    del tq.keys[key]
    if key in tq.ring:
        tq.ring.remove(key)


def forget_tenant(lane: Lane, tenant: str) -> None:
    del lane.tenants[tenant]
    if tenant in lane.ring:
        lane.ring.remove(tenant)
