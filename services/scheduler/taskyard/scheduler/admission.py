"""Admission: whether a queued task may be leased now, by the limits it uses.

The lanes pick candidates (priority lane, then fair share); here each candidate
takes the units of every limit it uses, all or none, circuit breakers checked
first (scheduler/breakers.py), then rate limits, then concurrency limits. A
refusal names its gate: the limit and bucket that said no (scheduler/gates.py
holds the task there until the gate opens).

- Rate: GCRA. A bucket admits ``n`` units at ``now`` when its theoretical
  arrival time after them, ``max(tat, now) + n*T`` (T = period/units), is at
  most ``burst*T`` ahead of ``now``; so any window of length W admits at most
  ``burst + W/T`` units. A limit seen in a term's first read of the limits
  starts every bucket empty (as if its burst had just been spent): what a
  deposed leader admitted just before the takeover is unknown, and this way no
  window around it admits more than the limit allows. A bucket has one lease
  batch in flight at most, and its clock restarts from the store's answer
  (flights.py): the limit holds where the attempts arrive, however long the
  store took to commit them.
- Concurrency: units held per bucket, from admission until the attempt ends
  (``release``); a new leader counts the leased attempts first (``resync``).

A use of a limit this scheduler does not know waits for its next read of the
limits (the limit may be that new); still unknown then (deleted with force), the
use is ignored. All times are the injected clock's seconds.

A tenant's quota (TenantService) is two more limits keyed by the tenant,
``tenant.concurrency`` and ``tenant.rate``, each tenant's with its own numbers
(``set_quotas``): every task of the tenant uses them, taken with its other limits,
all or none, and a quota's concurrency units are held and given back as a
concurrency limit's are. A tenant without a quota costs one dict lookup a task.

A limit a task's name declares (``<task>.rate``, ...) is the pool's, for every
tenant's tasks of that name, but each tenant's use of it is counted in buckets of
its own (``bucket_of``: ``tenant/key``, ``tenant/`` for a global one): one tenant's
tasks never hold or spend another's units, nor appear among its holders. A tenant's
own limits are stored qualified (``tenant/name``) and the default tenant's are used
by its own tasks only, so a bare name a tenant's task uses is a declared one.
"""
# Length: the two kinds of limit, their holders and the usage figures are one state.

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence

from taskyard.core import limits as rules
from taskyard.core import tenants as tenant_names
from taskyard.scheduler import flights as flight_rules
from taskyard.scheduler.breakers import Breakers
from taskyard.scheduler.flights import Flights
from taskyard.scheduler.lanes import Ref, Use
from taskyard.v1 import limit_pb2

# A limit's bucket: (limit name, key); the key is "" for a global limit.
Gate = tuple[str, str]
# The gate of tasks that arrive before the limits were first read.
CATALOG = ("", "")
# Float slack for GCRA comparisons.
_EPS = 1e-9
# Busiest keys listed per limit (LimitUsage.busiest_keys, metrics).
TOP_KEYS = 10
# Holder ids listed in a CONCURRENCY_FULL gate.
SHOWN_HOLDERS = 10
# A tenant's quota as flow-control limits, keyed by the tenant (gates and ExplainTask name them).
QUOTA_CONCURRENCY = "tenant.concurrency"
QUOTA_RATE = "tenant.rate"
QUOTAS = frozenset({QUOTA_CONCURRENCY, QUOTA_RATE})
# A leased attempt as the store has it: (task id, lease token, uses, tenant).
Leased = tuple[str, str, Sequence[Use], str]


@dataclasses.dataclass(slots=True)
class _Limit:
    spec: limit_pb2.Limit
    per_key: bool
    # Rate: seconds per unit, and the burst; concurrency: max_units in burst.
    interval: float
    burst: int
    is_rate: bool
    is_breaker: bool
    # Rate: a bucket's theoretical arrival time, and the earliest one a bucket
    # starts with (the term's start for a limit of the first read).
    tats: dict[str, float] = dataclasses.field(default_factory=dict)
    floor: float = float("-inf")
    admitted: int = 0
    throttled: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class Refusal:
    gate: Gate
    # RATE: when the bucket admits the units; None for a concurrency limit.
    at: float | None


@dataclasses.dataclass(slots=True)
class _Hold:
    # When its lease was known to be in the store (inf until then: a resync's
    # read may not see a lease not yet committed, so it must not free it).
    since: float
    # Every limit the attempt uses, as its task names them: what it holds is
    # worked out from the limits as they are now (a limit made global, per key or
    # of the other kind moves its holds: _recount).
    uses: tuple[Use, ...]
    # Its task's tenant: the tenant's quota, as it is now, counts it too.
    tenant: str = ""


def bucket_of(limit: _Limit, name: str, key: str, tenant: str) -> str:
    """The bucket of a use of ``name`` with ``key`` by ``tenant``'s task: its key (""
    for a global limit), in ``tenant``'s own buckets when the limit is a declared
    per-key one (a bare name a tenant's task uses: two tenants' key "b-acct" are two
    customers; the quotas are keyed by the tenant already). A declared global limit
    stays one bucket for every tenant: it bounds the one downstream their tasks call
    (``@task(rate="100/s")`` on a third party's API), and its gate lets tenants in by
    turns (gates.py)."""
    if not limit.per_key:
        return ""
    own = key
    if not tenant or name in QUOTAS or name.startswith(tenant + tenant_names.SEPARATOR):
        return own
    return tenant_names.qualify(tenant, own)


def _limit_state(spec: limit_pb2.Limit) -> _Limit:
    if spec.HasField("rate"):
        interval = rules.period_ms(spec.rate) / 1000.0 / spec.rate.units
        return _Limit(spec, spec.per_key, interval, rules.burst_of(spec), True, False)
    if spec.HasField("breaker"):
        return _Limit(spec, spec.per_key, 0.0, rules.burst_of(spec), False, True)
    return _Limit(spec, spec.per_key, 0.0, spec.concurrency.max_units, False, False)


def _rescaled(old: _Limit, new: _Limit, now: float) -> tuple[dict[str, float], float]:
    """A rate limit's buckets under its new numbers: each keeps the units it has
    spent of its burst (at most the new burst), so a change neither forgets what
    was admitted nor makes the old rate's debt last at the new one's pace."""
    if old.interval == new.interval and old.burst == new.burst:
        return old.tats, old.floor

    def at(tat: float) -> float:
        spent = max(0.0, tat - now) / old.interval
        return now + min(spent, float(new.burst)) * new.interval

    floor = at(old.floor) if old.floor > now else old.floor
    return {bucket: at(tat) for bucket, tat in old.tats.items() if tat > now}, floor


class Admission:
    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self.limits: dict[str, _Limit] = {}
        self.breakers = Breakers(clock)
        self.flights = Flights()
        # Until the limits are first read, every task that uses one waits (CATALOG).
        self.ready = False
        # Limits seen deleted: their uses are ignored without waiting for a read.
        self.gone: set[str] = set()
        # Tenants' quotas: tenant -> quota name -> its state (set_quotas), and the
        # uses every task of a tenant with a quota takes.
        self.quotas: dict[str, dict[str, _Limit]] = {}
        self.quota_uses: dict[str, tuple[Use, ...]] = {}
        self._quotas_read = False
        # Concurrency units held, by limit then key, and by which task (derived
        # from _holds under the limits as they are).
        self._held: dict[str, dict[str, int]] = {}
        self._holders: dict[Gate, dict[str, int]] = {}
        # What each task is counted for, by gate.
        self._tallies: dict[str, dict[Gate, int]] = {}
        # What each task's attempts hold, by lease token.
        self._holds: dict[str, dict[str, _Hold]] = {}
        # Attempts released here, by (task id, lease token): a resync whose
        # read still saw one (its end not committed yet when it read) does not count
        # it again. A token is never leased twice, so this cannot hide a new lease.
        self._ended: set[tuple[str, str]] = set()

    # --- the limits ------------------------------------------------------------
    def set_limits(self, specs: Iterable[limit_pb2.Limit]) -> set[str]:
        """Replace the limits; returns the names whose definition changed (their
        gates must be looked at again). A bucket's state survives a change."""
        now = self._clock()
        first = not self.ready
        fresh: dict[str, _Limit] = {}
        changed: set[str] = set()
        regate = False
        for spec in specs:
            old = self.limits.get(spec.name)
            state = _limit_state(spec)
            if old is not None:
                state.admitted, state.throttled = old.admitted, old.throttled
                if old.spec != spec:
                    changed.add(spec.name)
                if old.is_breaker != state.is_breaker or (state.is_breaker and old.per_key != state.per_key):
                    self.breakers.drop(spec.name)  # its old buckets are other buckets now
                if old.is_rate != state.is_rate or old.per_key != state.per_key:
                    # Its buckets are other buckets now: concurrency counts move
                    # with the holds, a rate's new buckets start empty (what the
                    # old ones admitted is not theirs to forget).
                    regate = True
                    if state.is_rate:
                        state.floor = now + state.burst * state.interval
                elif state.is_rate:
                    state.tats, state.floor = _rescaled(old, state, now)
            else:
                changed.add(spec.name)
                if first and state.is_rate:
                    state.floor = now + state.burst * state.interval
            fresh[spec.name] = state
        removed = set(self.limits) - set(fresh)
        changed |= removed
        if len(self.gone) > rules.MAX_LIMITS:
            self.gone.clear()  # only a shortcut: a read settles the rest
        self.gone = (self.gone | removed) - set(fresh)
        added = set(fresh) - set(self.limits)
        self.limits = fresh
        self.breakers.set_specs({n: lim.spec.breaker for n, lim in fresh.items() if lim.is_breaker})
        self.ready = True
        # Holds count under the limits as they are: one that went, changed its buckets
        # or came (back: running attempts may name it) moves the counts.
        if regate or removed or (added and not first and self._holds):
            self._recount()
        return changed

    def set_quotas(self, quotas: Mapping[str, Sequence[limit_pb2.Limit]]) -> set[Gate]:
        """Replace the tenants' quotas (tenant -> its quota as limits named QUOTA_*);
        returns the gates whose quota changed (their tasks must be looked at again).
        A rate quota keeps what its bucket spent across a change, and one seen in the
        term's first read starts spent, as a rate limit does."""
        now = self._clock()
        first = not self._quotas_read
        fresh: dict[str, dict[str, _Limit]] = {}
        changed: set[Gate] = set()
        for tenant, specs in quotas.items():
            had = self.quotas.get(tenant, {})
            mine: dict[str, _Limit] = {}
            for spec in specs:
                old = had.get(spec.name)
                state = _limit_state(spec)
                if old is not None:
                    state.admitted, state.throttled = old.admitted, old.throttled
                    if old.spec != spec:
                        changed.add((spec.name, tenant))
                    if state.is_rate and old.is_rate:
                        state.tats, state.floor = _rescaled(old, state, now)
                else:
                    changed.add((spec.name, tenant))
                    if first and state.is_rate:
                        state.floor = now + state.burst * state.interval
                mine[spec.name] = state
            if mine:
                fresh[tenant] = mine
        for tenant, had in self.quotas.items():
            changed |= {(name, tenant) for name in had if name not in fresh.get(tenant, {})}
        self.quotas = fresh
        self.quota_uses = {
            tenant: tuple((name, tenant, 1) for name in (QUOTA_RATE, QUOTA_CONCURRENCY) if name in mine)
            for tenant, mine in fresh.items()
        }
        self._quotas_read = True
        if self._holds and any(gate[0] == QUOTA_CONCURRENCY for gate in changed):
            self._recount()
        return changed

    def limit_of(self, name: str, key: str) -> _Limit | None:
        """The limit a use of ``name`` with ``key`` meets: a tenant's quota's own
        numbers, or the limit of that name."""
        if name in QUOTAS:
            return self.quotas.get(key, {}).get(name)
        return self.limits.get(name)

    # --- admission ----------------------------------------------------------------
    def admit(self, ref: Ref, token: str, *, batch: int, known: bool = False) -> Refusal | None:
        """Take the units of every limit ``ref`` uses, its tenant's quota included
        (None), or none of them and the first gate that refuses, rate limits before
        concurrency limits. A limit this scheduler does not know holds the task at
        CATALOG (it may have been created a moment ago) unless ``known``: the limits
        were read since the task arrived there, so the limit is gone and its use is
        ignored. ``batch`` (``flights.new_batch``): the lease request the attempt
        goes in; a rate bucket with another request in flight refuses."""
        quota = self.quota_uses.get(ref.tenant) if self.quota_uses else None
        uses = ref.uses
        if uses:
            if not self.ready:
                return Refusal(CATALOG, None)
            if not known and any(u[0] not in self.limits and u[0] not in self.gone for u in uses):
                return Refusal(CATALOG, None)
            if quota:
                uses = uses + quota
        elif quota:
            uses = quota
        else:
            return None
        now = self._clock()
        breakers: list[tuple[Gate, bool]] = []
        for limit_name, key, _units in uses:
            limit = self.limits.get(limit_name)
            if limit is None or not limit.is_breaker or limit_name in QUOTAS:
                continue
            gate = (limit_name, bucket_of(limit, limit_name, key, ref.tenant))
            admitted, probe, at = self.breakers.check(gate)
            if not admitted:
                limit.throttled += 1
                return Refusal(gate, at)
            breakers.append((gate, probe))
        rates: list[tuple[_Limit, Gate, float, int]] = []
        counts: list[tuple[_Limit, Gate, int]] = []
        refusal: Refusal | None = None
        # Units over a limit's burst (it was lowered since the task was submitted)
        # take the whole limit: never more than it admits at once, so never stuck.
        for limit_name, key, units in uses:
            limit = self.limit_of(limit_name, key)
            if limit is None or not limit.is_rate:
                continue
            units = min(units, limit.burst)
            at_bucket = bucket_of(limit, limit_name, key, ref.tenant)
            if self.flights.blocks((limit_name, at_bucket), batch, now):
                limit.throttled += 1
                return Refusal((limit_name, at_bucket), now + flight_rules.RECHECK)
            tat = max(limit.tats.get(at_bucket, limit.floor), now)
            after = tat + units * limit.interval
            if after - now > limit.burst * limit.interval + _EPS:
                refusal = Refusal((limit_name, at_bucket), after - limit.burst * limit.interval)
                limit.throttled += 1
                return refusal
            rates.append((limit, (limit_name, at_bucket), after, units))
        for limit_name, key, units in uses:
            limit = self.limit_of(limit_name, key)
            if limit is None or limit.is_rate or limit.is_breaker:
                continue
            gate = (limit_name, bucket_of(limit, limit_name, key, ref.tenant))
            units = min(units, limit.burst)
            # What this task holds already (a lease whose outcome is unknown) is
            # its own: it has one live lease at most, so it needs no more units.
            own = self._holders.get(gate, {}).get(ref.id, 0)
            if self.held(gate) - own + max(units, own) > limit.burst:
                limit.throttled += 1
                return Refusal(gate, None)
            counts.append((limit, gate, units))
        for limit, gate, after, units in rates:
            limit.tats[gate[1]] = after
            limit.admitted += 1
            self.flights.add(gate, batch, token, now, units * limit.interval)
        for limit, _gate, _units in counts:
            limit.admitted += 1
        if breakers:
            for gate, _probe in breakers:
                self.limits[gate[0]].admitted += 1
            self.breakers.admitted(ref.id, token, breakers)
        if counts:
            self._holds.setdefault(ref.id, {})[token] = _Hold(float("inf"), ref.uses, ref.tenant)
            self._tally(ref.id)
        return None

    def confirm(self, task_id: str, token: str, now: float) -> list[Gate]:
        """The attempt's lease is in the store (or its outcome unknown): from now on
        a resync that does not find it there frees its units. Returns the rate gates
        whose batch in flight has landed."""
        hold = self._holds.get(task_id, {}).get(token)
        if hold is not None and hold.since > now:
            hold.since = now
        self.breakers.confirm(task_id, token, now)
        return self._land(token, now)

    def _land(self, token: str, now: float) -> list[Gate]:
        """The store answered for ``token``'s lease at ``now``: its batch's units
        count from then on in each rate bucket it took (at the earliest: a bucket
        already spent past that keeps its time)."""
        landed: list[Gate] = []
        for gate, spent, whole in self.flights.land(token):
            limit = self.limit_of(*gate)
            if limit is not None and limit.is_rate:
                since = now + min(spent, limit.burst * limit.interval)
                if limit.tats.get(gate[1], limit.floor) < since:
                    limit.tats[gate[1]] = since
            if whole:
                landed.append(gate)
        return landed

    def next_admission(self, gate: Gate, units: int = 1) -> float | None:
        """When a rate gate admits ``units`` again, or a breaker's admits a probe
        (None: a concurrency limit, or now)."""
        limit = self.limit_of(*gate)
        if limit is not None and limit.is_breaker:
            return self.breakers.next_probe(gate)
        if limit is None or not limit.is_rate:
            return None
        now = self._clock()
        tat = max(limit.tats.get(gate[1], limit.floor), now)
        at = tat + units * limit.interval - limit.burst * limit.interval
        return at if at > now + _EPS else None

    def room(self, gate: Gate) -> int:
        """Units a gate could admit now (a gate that is no longer a limit: unbounded)."""
        limit = self.limit_of(*gate)
        if gate == CATALOG:
            return 1 << 30 if self.ready else 0
        if limit is None:
            return 1 << 30
        if limit.is_breaker:
            return self.breakers.room(gate)
        if limit.is_rate:
            now = self._clock()
            tat = max(limit.tats.get(gate[1], limit.floor), now)
            return max(0, int((now + limit.burst * limit.interval - tat) / limit.interval + _EPS))
        return max(0, limit.burst - self.held(gate))

    # --- concurrency holders ----------------------------------------------------------
    def held(self, gate: Gate) -> int:
        return self._held.get(gate[0], {}).get(gate[1], 0)

    def _tally(self, task_id: str) -> list[Gate]:
        """Count what ``task_id`` holds again, under the limits as they are: per gate
        the most units of any of its attempts (a task has one live lease at most;
        the others are leases whose outcome is not known yet, which the store's
        answer or a resync settles). Returns the gates whose count went down."""
        mine: dict[Gate, int] = {}
        quotas = self.quota_uses
        for hold in self._holds.get(task_id, {}).values():
            uses = hold.uses
            if quotas and hold.tenant in quotas:
                uses = uses + quotas[hold.tenant]
            for name, key, units in uses:
                limit = self.limit_of(name, key)
                if limit is None or limit.is_rate or limit.is_breaker:
                    continue
                gate = (name, bucket_of(limit, name, key, hold.tenant))
                mine[gate] = max(mine.get(gate, 0), min(units, limit.burst))
        before = self._tallies.pop(task_id, {})
        if mine:
            self._tallies[task_id] = mine
        freed: list[Gate] = []
        for gate in before.keys() | mine.keys():
            change = mine.get(gate, 0) - before.get(gate, 0)
            if change == 0:
                continue
            if change < 0:
                freed.append(gate)
            name, bucket = gate
            keys = self._held.setdefault(name, {})
            left = keys.get(bucket, 0) + change
            if left > 0:
                keys[bucket] = left
            else:
                keys.pop(bucket, None)
                if not keys:
                    del self._held[name]
            holders = self._holders.setdefault(gate, {})
            if gate in mine:
                holders[task_id] = mine[gate]
            else:
                holders.pop(task_id, None)
                if not holders:
                    del self._holders[gate]
        return freed

    def _recount(self) -> None:
        self._held.clear()
        self._holders.clear()
        self._tallies.clear()
        for task_id in self._holds:
            self._tally(task_id)

    def holds(self, task_id: str) -> bool:
        return task_id in self._holds or self.breakers.holds(task_id)

    def outcome(self, task_id: str, token: str, *, failed: bool, attempt: int = 0) -> list[Gate]:
        """The attempt ended with a result: its breakers count it (and refund it,
        an outage's failure). Returns the breakers whose state changed (call
        ``release`` after it)."""
        return self.breakers.outcome(task_id, token, failed=failed, attempt=attempt)

    def release(self, task_id: str, token: str) -> list[Gate]:
        """The attempt leased under ``token`` ended (or was never leased): its units
        are free. Returns the gates that have room again."""
        freed = self.breakers.forget(task_id, token) if self.breakers.holds(task_id) else []
        return freed + self._land(token, self._clock()) + self._release(task_id, token)

    def _release(self, task_id: str, token: str) -> list[Gate]:
        held = self._holds.get(task_id)
        if held is None:
            return []
        hold = held.pop(token, None)
        if not held:
            del self._holds[task_id]
        if hold is None:
            return []
        self._ended.add((task_id, token))
        return self._tally(task_id)

    def release_task(self, task_id: str, *, before: float) -> list[Gate]:
        """The task's lease ended (lapsed, handed back, reconciled): free what its
        attempts admitted before ``before`` hold (a later one is a new attempt)."""
        freed = self.breakers.forget_task(task_id, before=before)
        held = self._holds.get(task_id)
        if held is None:
            return freed
        for token in [t for t, h in held.items() if h.since < before]:
            freed += self._release(task_id, token)
        return freed

    def resync(self, leased: Sequence[Leased], *, before: float) -> list[Gate]:
        """The leased attempts that use limits or a quota, as the store has them (task
        id, lease token, uses, tenant), read after ``before``. The store is the truth for what it has
        committed: its attempts are held with the uses it gives (a predecessor's
        included), bar the ones ended here already; a hold it does not have is
        freed if its lease was known before the read began (its end was missed), and
        kept otherwise (its lease may commit after the read). Returns the gates freed."""
        now = self._clock()
        before_counts = {name: dict(keys) for name, keys in self._held.items()}
        fresh: dict[str, dict[str, _Hold]] = {}
        seen: set[tuple[str, str]] = set()
        for task_id, token, uses, tenant in leased:
            seen.add((task_id, token))
            if (task_id, token) in self._ended:
                continue
            old = self._holds.get(task_id, {}).get(token)
            fresh.setdefault(task_id, {})[token] = _Hold(
                old.since if old is not None else now, tuple((n, k, u) for n, k, u in uses), tenant
            )
        for task_id, held in self._holds.items():
            for token, hold in held.items():
                if (task_id, token) not in seen and hold.since >= before:
                    fresh.setdefault(task_id, {})[token] = hold
        self._holds = fresh
        freed: list[Gate] = self.breakers.resync(((t, tok) for t, tok, _uses, _t in leased), before=before)
        # What the store no longer has cannot come back: forget its tombstone.
        self._ended &= seen
        self._recount()
        for name, keys in before_counts.items():
            now_keys = self._held.get(name, {})
            freed += [(name, key) for key, n in keys.items() if now_keys.get(key, 0) < n]
        return freed

    # --- what it looks like -------------------------------------------------------------
    def holder_ids(self, gate: Gate, tenant: str | None = None) -> list[str]:
        """The tasks holding ``gate``'s units, those of ``tenant`` only (None: every tenant's)."""
        holders = self._holders.get(gate, {})
        if tenant is None:
            return sorted(holders)[:SHOWN_HOLDERS]
        return sorted(t for t in holders if self.tenant_of(t) == tenant)[:SHOWN_HOLDERS]

    def tenant_of(self, task_id: str) -> str | None:
        """The tenant of a task that holds units (None: it holds none)."""
        for hold in self._holds.get(task_id, {}).values():
            return hold.tenant
        return None

    def usage(
        self, name: str, waiting: dict[str, int], tenant: str | None = None
    ) -> limit_pb2.LimitUsage | None:
        """A limit's live usage; ``waiting``: tasks held at its gates, by key.
        ``tenant``: as that tenant may see it (None: every tenant's). A declared
        limit (bare) is every tenant's, each in buckets of its own: the tenant is
        shown its own buckets, by its own keys, and not the limit's admitted and
        throttled counts, which are every tenant's."""
        limit = self.limits.get(name)
        if limit is None:
            return None
        in_use = self._in_use(name, limit)
        owner = tenant_names.split(name)[0]
        if tenant is not None and (owner != tenant or (not tenant and limit.spec.task_name)):
            mine = tenant_names.qualify(tenant, "") if tenant else ""
            in_use = _own_buckets(in_use, tenant, mine)
            waiting = _own_buckets(waiting, tenant, mine)
            out = limit_pb2.LimitUsage()
        else:
            out = limit_pb2.LimitUsage(admitted=limit.admitted, throttled=limit.throttled)
        out.units_in_use = sum(in_use.values())
        out.waiting = sum(waiting.values())
        out.keys = len(in_use.keys() | waiting.keys())
        busiest = heapq.nsmallest(
            TOP_KEYS,
            in_use.keys() | waiting.keys(),
            key=lambda k: (-in_use.get(k, 0), -waiting.get(k, 0), k),
        )
        for key in busiest:
            out.busiest_keys.add(key=key, units_in_use=in_use.get(key, 0), waiting=waiting.get(key, 0))
        return out

    def _in_use(self, name: str, limit: _Limit) -> dict[str, int]:
        """Units in use by bucket: held (concurrency), spent of the burst (rate), or
        1 for a breaker that is not closed."""
        if limit.is_breaker:
            return dict.fromkeys(self.breakers.not_closed(name), 1)
        if not limit.is_rate:
            return dict(self._held.get(name, {}))
        now = self._clock()
        out: dict[str, int] = {}
        for bucket, tat in limit.tats.items():
            ahead = tat - now
            if ahead > 0:
                out[bucket] = min(limit.burst, int(ahead / limit.interval + 1 - _EPS))
        return out

    def prune(self) -> int:
        """Forget the rate buckets that are full again (no state: an absent bucket
        is a full one once the term's start is a burst behind); returns how many."""
        now = self._clock()
        dropped = self.breakers.prune()
        quotas = [limit for mine in self.quotas.values() for limit in mine.values()]
        for limit in [*self.limits.values(), *quotas]:
            if limit.is_rate and limit.floor <= now:
                full = [bucket for bucket, tat in limit.tats.items() if tat <= now]
                for bucket in full:
                    del limit.tats[bucket]
                dropped += len(full)
        return dropped


def _own_buckets(counts: Mapping[str, int], tenant: str, prefix: str) -> dict[str, int]:
    """``counts`` by bucket, of ``tenant``'s buckets only, by the keys it knows them by
    (the default tenant's: the buckets of no tenant)."""
    if tenant:
        return {k[len(prefix) :]: n for k, n in counts.items() if k.startswith(prefix)}
    return {k: n for k, n in counts.items() if tenant_names.SEPARATOR not in k}
