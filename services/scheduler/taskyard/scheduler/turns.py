"""Deficit round robin at two levels, the lanes' way of sharing a lane fairly.

The tenants with tasks waiting in a lane take turns in a ring: each turn a tenant
may take as many tasks as its weight (default 1). Those are taken from its own
ring of fairness keys, each key as many as its weight (default 1) per turn of its
own. A turn the pool's batch cut short goes on at the next take; a tenant or key
with nothing the pool runs saves no credit.

The tenants' ring is kept per served set (the task names and tenants a pool
serves: ``Turns``), so a pool serving some tenants neither moves another pool's
turns nor is moved by them, and holds only the tenants that may have something
it runs: a take costs the same whatever the number of tenants whose tasks it
cannot run. Within a key, one FIFO per task name, oldest first across names by
arrival number. A gate (gates.py) keeps its waiting tasks the same way.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from taskyard.scheduler.lanes import Item, Ref


class Key:
    """One fairness key's waiting tasks in one lane."""

    __slots__ = ("fifos", "size", "weight_key")

    def __init__(self, weight_key: tuple[str, str]) -> None:
        self.fifos: dict[str, deque[Item]] = {}
        self.size = 0
        # Its weight's key in Lanes.weights: (its tenant, the key as the tenant names it).
        self.weight_key = weight_key


class TenantQueue:
    """One tenant's waiting tasks in one lane: its keys (in arrival order)."""

    __slots__ = ("keys", "size")

    def __init__(self) -> None:
        self.keys: dict[str, Key] = {}
        self.size = 0


class Ring:
    """A deficit round robin's ring: its members in serving order (the head has the
    turn) and the tasks the head may still take in its turn (0: its turn begins)."""

    __slots__ = ("credit", "members", "order")

    def __init__(self, members: Iterable[str] = ()) -> None:
        self.order: deque[str] = deque(members)
        self.members: set[str] = set(self.order)
        self.credit = 0

    def join(self, member: str) -> None:
        if member not in self.members:
            self.members.add(member)
            self.order.append(member)

    def leave(self) -> str:
        """The head leaves (and its turn ends)."""
        member = self.order.popleft()
        self.members.discard(member)
        self.credit = 0
        return member


# At most this many served sets' round robins kept per lane; past it they are all
# forgotten and made again as pools take (each remade by one pass of the tenants).
MAX_TURNS = 64
# A served set: the task names a pool runs (None: every name, a gate's) and the
# tenants it serves (None: every tenant).
Served = tuple[frozenset[str] | None, frozenset[str] | None]


class Turns:
    """One served set's deficit round robin over a lane's tenants and, in each
    tenant's turn, over its keys, kept across takes: the pools that run the same
    names for the same tenants share it, and a pool serving others has its own, so
    no pool's takes move another's turn.

    Its rings hold the tenants (and keys) that may have something it runs; one
    found with nothing leaves its ring, and comes back when such a task arrives
    (``add``), so a take never walks past the same idle tenant or key twice."""

    __slots__ = ("keys", "names", "ring", "tenants")

    def __init__(self, names: frozenset[str] | None, tenants: frozenset[str] | None) -> None:
        self.names = names
        self.tenants = tenants
        self.ring = Ring()
        # The keys' ring of each tenant in ``ring`` (made at its first turn).
        self.keys: dict[str, Ring] = {}


class Lane:
    __slots__ = ("every", "names", "tenants", "turns", "watch")

    def __init__(self) -> None:
        # The tenants with waiting tasks (in arrival order).
        self.tenants: dict[str, TenantQueue] = {}
        # Waiting tasks by name, all tenants together: a pool that runs none of them
        # passes the lane without visiting a tenant, and a take stops once it has all
        # there is for its pool instead of going round every tenant again.
        self.names: dict[str, int] = {}
        # Each served set's round robin, and the ones to tell of a task arriving by
        # its name (``every``: those that run every name).
        self.turns: dict[Served, Turns] = {}
        self.watch: dict[str, list[Turns]] = {}
        self.every: list[Turns] = []


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


def add(lane: Lane, seq: int, ref: Ref) -> None:
    """``ref`` into its tenant's key in ``lane`` at arrival number ``seq``; the served
    sets that run it and had let its tenant go take it back in their rings."""
    tenant = ref.tenant
    tq = lane.tenants.get(tenant)
    if tq is None:
        tq = lane.tenants[tenant] = TenantQueue()
    kq = tq.keys.get(ref.key)
    if kq is None:
        kq = tq.keys[ref.key] = Key((tenant, ref.key))
    fifo = kq.fifos.get(ref.name)
    if fifo is None:
        kq.fifos[ref.name] = deque([(seq, ref)])
    elif fifo[-1][0] < seq:
        fifo.append((seq, ref))
    else:
        insert(fifo, (seq, ref))
    kq.size += 1
    tq.size += 1
    lane.names[ref.name] = lane.names.get(ref.name, 0) + 1
    for group in (lane.watch.get(ref.name), lane.every):
        if group:
            for turns in group:
                if turns.tenants is not None and tenant not in turns.tenants:
                    continue
                if tenant not in turns.ring.members:
                    # Out of the ring: nothing else of its runs in this set.
                    turns.ring.join(tenant)
                    turns.keys[tenant] = Ring((ref.key,))
                else:
                    keys = turns.keys.get(tenant)
                    if keys is not None:
                        keys.join(ref.key)


def remove(lane: Lane, ref: Ref) -> bool:
    """Take ``ref`` out of ``lane`` (cancelled); a scan of its FIFO, as cancels are rare."""
    tq = lane.tenants.get(ref.tenant)
    kq = tq.keys.get(ref.key) if tq is not None else None
    fifo = kq.fifos.get(ref.name) if kq is not None else None
    if tq is None or kq is None or fifo is None:
        return False
    for item in fifo:
        if item[1].id == ref.id:
            fifo.remove(item)
            kq.size -= 1
            tq.size -= 1
            uncount(lane, ref.name, 1)
            if not fifo:
                del kq.fifos[ref.name]
            if not kq.size:
                forget_key(tq, ref.key)
            if not tq.size:
                forget_tenant(lane, ref.tenant)
            return True
    return False


def served(lane: Lane, names: frozenset[str] | None, tenants: frozenset[str] | None) -> Turns:
    """The round robin of the pools that run ``names`` for ``tenants`` in ``lane``,
    made at its first take with every tenant it serves (one pass)."""
    turns = lane.turns.get((names, tenants))
    if turns is not None:
        return turns
    if len(lane.turns) >= MAX_TURNS:
        lane.turns.clear()
        lane.watch.clear()
        lane.every.clear()
    turns = lane.turns[(names, tenants)] = Turns(names, tenants)
    turns.ring = Ring(t for t in lane.tenants if tenants is None or t in tenants)
    if names is None:
        lane.every.append(turns)
    else:
        for name in names:
            lane.watch.setdefault(name, []).append(turns)
    return turns


def take_turns(
    lane: Lane,
    turns: Turns,
    limit: int,
    out: list[Ref],
    seqs: list[int] | None,
    tenant_weights: dict[str, int],
    key_weights: dict[tuple[str, str], int],
) -> None:
    """Up to ``limit`` tasks in ``out`` (which may hold some already): deficit round
    robin over the tenants of ``turns``, each turn as many tasks as the tenant's
    weight, taken from its keys in turn. A turn the limit cut short goes on at the
    next take; a tenant with nothing more this served set runs leaves its ring
    (and its turn: no credit saved up)."""
    ring, names = turns.ring, turns.names
    order = ring.order
    while order and len(out) < limit:
        tenant = order[0]
        tq = lane.tenants.get(tenant)
        if tq is None:  # emptied meanwhile (taken by another served set, cancelled, parked)
            ring.leave()
            turns.keys.pop(tenant, None)
            continue
        keys = turns.keys.get(tenant)
        if keys is None:
            keys = turns.keys[tenant] = Ring(tq.keys)
        if len(order) == 1:  # alone in the ring: all there is to take is its
            ring.credit = 0
            want = limit - len(out)
            got = take_keys(lane, tq, keys, names, want, out, seqs, key_weights)
        else:
            if ring.credit <= 0:
                ring.credit = max(1, tenant_weights.get(tenant, 1))
            want = min(ring.credit, limit - len(out))
            got = take_keys(lane, tq, keys, names, want, out, seqs, key_weights)
            ring.credit -= got
        if not tq.size:
            del lane.tenants[tenant]
        if got < want or not tq.size:
            ring.leave()
            turns.keys.pop(tenant, None)
        elif ring.credit <= 0:
            order.rotate(-1)
        # else: the limit cut its turn short; it goes on at the next take


def take_keys(
    lane: Lane,
    tq: TenantQueue,
    keys: Ring,
    names: frozenset[str] | None,
    limit: int,
    out: list[Ref],
    seqs: list[int] | None,
    key_weights: dict[tuple[str, str], int],
) -> int:
    """Up to ``limit`` of one tenant's tasks: deficit round robin over its keys in
    ``keys`` (a served set's ring of them); a key with nothing more the set runs
    leaves the ring."""
    start = len(out)
    end = start + limit
    order = keys.order
    while order and len(out) < end:
        key = order[0]
        kq = tq.keys.get(key)
        if kq is None:  # emptied meanwhile
            keys.leave()
            continue
        if len(order) == 1:  # alone in the ring: all there is to take is its
            keys.credit = 0
            want = end - len(out)
            got = take_key(lane, kq, names, want, out, seqs)
        else:
            if keys.credit <= 0:
                keys.credit = max(1, key_weights.get(kq.weight_key, 1))
            want = min(keys.credit, end - len(out))
            got = take_key(lane, kq, names, want, out, seqs)
            keys.credit -= got
        tq.size -= got
        if not kq.size:
            del tq.keys[key]
        if got < want or not kq.size:
            keys.leave()
        elif keys.credit <= 0:
            order.rotate(-1)
        # else: the limit cut its turn short; it goes on at the next take
    return len(out) - start


def take_key(
    lane: Lane, kq: Key, names: frozenset[str] | None, limit: int, out: list[Ref], seqs: list[int] | None
) -> int:
    """Up to ``limit`` of one key's tasks that ``names`` holds (None: any), oldest first."""
    fifos = kq.fifos
    if names is None:
        candidates = [(n, q) for n, q in fifos.items() if q]
    elif len(names) < len(fifos):
        candidates = [(n, fifos[n]) for n in names if fifos.get(n)]
    else:
        candidates = [(n, q) for n, q in fifos.items() if q and n in names]
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
    # The served sets' rings let it go when they come to it.
    del tq.keys[key]


def forget_tenant(lane: Lane, tenant: str) -> None:
    # The served sets' rings let it go when they come to it.
    del lane.tenants[tenant]
