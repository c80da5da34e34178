"""Circuit breakers: a limit that holds a downstream key's tasks while its recent
attempts keep failing (docs/flow-control.md, "Circuit breakers").

A breaker is per bucket of its limit, as a rate or a concurrency limit is: one
for all (global) or one per key (``per_key``: "payments-api"). It is

- **closed**: every attempt is admitted; the outcomes of the last ``window``
  are counted. When at least ``failure_threshold`` of them failed (and at least
  ``min_attempts`` ended), it **opens**.
- **open**: nothing is admitted until ``cool_down`` has passed since it opened;
  then it is **half-open**: up to ``half_open_probes`` attempts at once are
  admitted as probes. A probe's success closes it (its history forgotten); a
  probe's failure opens it again for another ``cool_down``. A probe that ends
  without an outcome (its worker died, its lease lapsed, a resync did not find
  it) frees its place for another probe. Outcomes of attempts admitted before
  it opened are ignored while it is open: they tell of the outage it already
  knows.

**Refunds.** The failures that open a breaker (those in its window then) and
every failure of its attempts while it is open or half-open (a failed probe
included, and the attempts admitted before it opened) are the outage's, not
their tasks': each becomes a ``Refund`` (``refunds``), which the leader sends to
the store (flow.py, STORE_BREAKER_REFUNDS) to give the attempt's retry back; a
task those charges failed is retried at the breaker's next probe. The store
refunds an attempt once, whoever asks how often, and never a throttled one
(it spent nothing). Refunds are bounded, so a task whose own code fails (a bad
deploy behind a breaker) still ends a dead letter: a breaker refunds at most
``max_refunds_per_task`` failures of one task, and only within ``max_outage``
of when it opened (a failed probe does not restart that clock); past either,
a failure is charged as always, a failed probe's too.

**Memory.** A breaker counts its window's outcomes in ``BUCKETS`` buckets of
``window / BUCKETS`` (an outcome counts for the window less at most one bucket)
and remembers one by one only the failures it may refund when it opens: at most
``MAX_FAILURES_KEPT`` per key and ``MAX_FAILURES_KEPT_ALL`` in all (past them, a
failure is counted but not refunded). At most ``MAX_KEYS`` breakers have state
at once (a closed one with a quiet window has none); past it, a new key's
outcomes are not counted (``untracked``). Refund counts are kept for at most
``MAX_REFUND_TASKS`` tasks (the oldest forgotten first).

Only the leading scheduler keeps breakers, in memory: a new leader starts every
one closed (what the old one saw is gone; the downstream's next failures open
it again). All times are the injected clock's seconds.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence

from taskyard.core import limits as rules
from taskyard.v1 import limit_pb2

# (limit name, bucket): the same shape as admission's gates.
Gate = tuple[str, str]
Attempt = tuple[str, str]  # (task id, lease token)

CLOSED = "closed"
OPEN = "open"
HALF_OPEN = "half_open"
# A gate's room when its breaker is closed: everything waiting.
UNBOUNDED = 1 << 30
# Float slack for comparing computed times with the clock's.
_EPS = 1e-9


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Spec:
    threshold: int
    window: float
    min_attempts: int
    cool_down: float
    probes: int
    max_refunds: int = rules.DEFAULT_MAX_REFUNDS_PER_TASK
    max_outage: float = rules.DEFAULT_MAX_OUTAGE_MS / 1000.0

    @classmethod
    def of(cls, breaker: limit_pb2.CircuitBreaker) -> Spec:
        return cls(
            threshold=breaker.failure_threshold,
            window=rules.window_ms(breaker) / 1000.0,
            min_attempts=rules.min_attempts_of(breaker),
            cool_down=rules.cool_down_ms(breaker) / 1000.0,
            probes=rules.probes_of(breaker),
            max_refunds=rules.max_refunds_of(breaker),
            max_outage=rules.max_outage_ms(breaker) / 1000.0,
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """A breaker that opened or closed (an event for the store to log)."""

    gate: Gate
    change: str  # "opened" or "closed"
    failures: int
    # Opened: when it admits a probe (clock seconds).
    probe_at: float


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Refund:
    """A failed attempt its breaker counted as the outage's: its retry goes back."""

    task_id: str
    attempt: int
    # When its breaker admits the next probe (clock seconds): when a task these
    # charges failed is due again.
    probe_at: float


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Figures:
    """A breaker limit's figures for metrics: opens and closes this term, and its
    breakers that are not closed (key -> open or half_open)."""

    opened: int
    closed: int
    not_closed: dict[str, str]


BUCKETS = 32
MAX_KEYS = 100_000
MAX_FAILURES_KEPT = 1000
MAX_FAILURES_KEPT_ALL = 200_000
MAX_REFUND_TASKS = 100_000


@dataclasses.dataclass(slots=True)
class _Breaker:
    state: str = CLOSED
    # Closed: the window's outcomes in buckets, oldest first: [bucket number
    # (clock // width), attempts ended, failed], and their sums.
    buckets: collections.deque[list[int]] = dataclasses.field(default_factory=collections.deque)
    attempts: int = 0
    failures: int = 0
    # Closed: the window's failures one by one, oldest first, for their refunds
    # if it opens: (bucket number, task id, attempt number).
    failed: collections.deque[tuple[int, str, int]] = dataclasses.field(default_factory=collections.deque)
    # When it last counted an outcome.
    last: float = 0.0
    # Open: when it (re)opened, and when it half-opens.
    since: float = 0.0
    until: float = 0.0
    # When the outage began: it opened from closed (a failed probe keeps it).
    outage: float = 0.0
    # Probes out now (half-open).
    probes: set[Attempt] = dataclasses.field(default_factory=set)


@dataclasses.dataclass(slots=True)
class _Admitted:
    # The breakers an attempt went through, and whether it is a probe at each.
    gates: tuple[tuple[Gate, bool], ...]
    # When its lease was known to be in the store (inf until then), as a
    # concurrency hold's: a resync's read may be older than an in-flight lease.
    at: float


class Breakers:
    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self.specs: dict[str, Spec] = {}
        self._breakers: dict[Gate, _Breaker] = {}
        self._attempts: dict[Attempt, _Admitted] = {}
        self._by_task: dict[str, set[str]] = {}
        # Opens and closes not yet logged by the store (flow.py sends them), at most MAX_CHANGES.
        self.changes: list[Change] = []
        # Since the term began, by limit (metrics).
        self.opened: collections.Counter[str] = collections.Counter()
        self.closed: collections.Counter[str] = collections.Counter()
        # Failed attempts to refund, not yet sent to the store (flow.py sends them),
        # at most MAX_REFUNDS; the ones dropped past it stay charged (counted).
        self.refunds: list[Refund] = []
        self.refunds_dropped = 0
        # Failures left charged: past a breaker's max_refunds_per_task or max_outage.
        self.refunds_refused = 0
        # Refunds made per task: (how many, the last attempt counted), oldest first.
        self._refunded: dict[str, tuple[int, int]] = {}
        # Failures remembered for refunds, all keys; outcomes not counted (MAX_KEYS).
        self._kept = 0
        self.untracked = 0

    MAX_CHANGES = 10_000
    MAX_REFUNDS = 100_000

    # --- the limits ------------------------------------------------------------------
    def set_specs(self, specs: Mapping[str, limit_pb2.CircuitBreaker]) -> None:
        """The breaker limits as they are now: a breaker keeps its state through a
        change of its numbers (an open one half-opens a new cool-down after it
        opened, a closed one with a new window counts afresh); the breakers of a
        limit that is gone are forgotten."""
        old = self.specs
        self.specs = {name: Spec.of(b) for name, b in specs.items()}
        for gate in [g for g in self._breakers if g[0] not in self.specs]:
            self._delete(gate)
        # Its buckets' width is its window's: counted in other buckets, they mean nothing.
        rewindowed = {n for n, spec in self.specs.items() if n in old and old[n].window != spec.window}
        for gate in [g for g, b in self._breakers.items() if g[0] in rewindowed and b.state == CLOSED]:
            self._delete(gate)
        changed = {n for n, spec in self.specs.items() if n in old and old[n].cool_down != spec.cool_down}
        if changed:
            for gate, breaker in self._breakers.items():
                if gate[0] in changed and breaker.state == OPEN:
                    breaker.until = breaker.since + self.specs[gate[0]].cool_down

    def drop(self, name: str) -> None:
        """Forget the breakers of limit ``name`` (its buckets changed: per key or not)."""
        for gate in [g for g in self._breakers if g[0] == name]:
            self._delete(gate)

    # --- admission ---------------------------------------------------------------------
    def check(self, gate: Gate) -> tuple[bool, bool, float | None]:
        """Whether ``gate`` admits an attempt now: (admitted, as a probe, when to look
        again if not: the end of its cool-down, None while its probes run)."""
        breaker = self._breakers.get(gate)
        if breaker is None or breaker.state == CLOSED:
            return True, False, None
        now = self._clock()
        if now + _EPS < breaker.until:
            return False, False, breaker.until
        spec = self.specs.get(gate[0])
        if spec is not None and len(breaker.probes) < spec.probes:
            return True, True, None
        return False, False, None

    def admitted(self, task_id: str, token: str, gates: Sequence[tuple[Gate, bool]]) -> None:
        """An attempt of these breakers was admitted (each: whether as a probe)."""
        self._attempts[(task_id, token)] = _Admitted(tuple(gates), float("inf"))
        self._by_task.setdefault(task_id, set()).add(token)
        for gate, probe in gates:
            if probe:
                self._breakers[gate].probes.add((task_id, token))

    def confirm(self, task_id: str, token: str, now: float) -> None:
        """The attempt's lease is in the store (or its outcome unknown): from now on
        a resync that does not find it there forgets it."""
        admitted = self._attempts.get((task_id, token))
        if admitted is not None and admitted.at > now:
            admitted.at = now

    def holds(self, task_id: str) -> bool:
        return task_id in self._by_task

    def _pop(self, task_id: str, token: str) -> _Admitted | None:
        admitted = self._attempts.pop((task_id, token), None)
        if admitted is not None:
            tokens = self._by_task[task_id]
            tokens.discard(token)
            if not tokens:
                del self._by_task[task_id]
        return admitted

    # --- outcomes ------------------------------------------------------------------------
    def outcome(self, task_id: str, token: str, *, failed: bool, attempt: int = 0) -> list[Gate]:
        """The attempt ended with a result (``failed``: any failure, a throttling
        answer included). Returns the breakers whose state changed. ``attempt``:
        its number, for a refund (0: unknown, never refunded)."""
        admitted = self._pop(task_id, token)
        if admitted is None:
            return []
        now = self._clock()
        changed: list[Gate] = []
        # Refunded once, at the latest probe time of its breakers that are not
        # closed and still refund (within max_outage), up to the largest cap of them.
        refund_at: float | None = None
        cap = 0
        if not failed:
            self._refunded.pop(task_id, None)  # it ran: its next outage counts afresh
        for gate, probe in admitted.gates:
            spec = self.specs.get(gate[0])
            if spec is None:
                continue
            breaker = self._breakers.get(gate)
            if breaker is None:
                if not failed:
                    continue  # a success of a closed breaker with no history changes nothing
                breaker = self._new(gate)
                if breaker is None:
                    continue
            if breaker.state == CLOSED:
                if self._count(breaker, spec, now, failed, (task_id, attempt)):
                    # Its window's failures (this one among them) were the outage's.
                    self._refund_window(breaker, spec, until=now + spec.cool_down, skip=(task_id, attempt))
                    self._open(gate, breaker, spec, now)
                    changed.append(gate)
                    if failed:
                        refund_at, cap = max(refund_at or 0.0, breaker.until), max(cap, spec.max_refunds)
                continue
            if probe and (task_id, token) in breaker.probes:
                breaker.probes.discard((task_id, token))
                if failed:
                    breaker.since, breaker.until = now, now + spec.cool_down
                else:
                    self._close(gate, breaker)
                changed.append(gate)
            # else admitted before it opened: it tells of the outage it knows (not counted).
            if failed and breaker.state != CLOSED:
                if now - breaker.outage < spec.max_outage:
                    refund_at, cap = max(refund_at or 0.0, breaker.until), max(cap, spec.max_refunds)
                elif attempt > 0:
                    self.refunds_refused += 1  # an outage this long: charged as always
        if refund_at is not None and attempt > 0:
            self._refund(Refund(task_id=task_id, attempt=attempt, probe_at=refund_at), cap)
        return changed

    def forget(self, task_id: str, token: str) -> list[Gate]:
        """The attempt ended with no outcome (released, died, lapsed): a probe's place
        is free again. Returns the breakers with a probe's place freed."""
        admitted = self._pop(task_id, token)
        if admitted is None:
            return []
        freed: list[Gate] = []
        for gate, probe in admitted.gates:
            breaker = self._breakers.get(gate)
            if probe and breaker is not None and (task_id, token) in breaker.probes:
                breaker.probes.discard((task_id, token))
                freed.append(gate)
        return freed

    def forget_task(self, task_id: str, *, before: float) -> list[Gate]:
        """Every attempt of the task admitted before ``before`` ended with no outcome."""
        freed: list[Gate] = []
        for token in list(self._by_task.get(task_id, ())):
            admitted = self._attempts.get((task_id, token))
            if admitted is not None and admitted.at < before:
                freed += self.forget(task_id, token)
        return freed

    def resync(self, leased: Iterable[Attempt], *, before: float) -> list[Gate]:
        """The attempts the store has leased now, read after ``before``: one admitted
        before it and not leased there ended, and its outcome was missed (a lost
        notice): it is forgotten, so a lost probe does not hold a breaker half-open."""
        live = set(leased)
        freed: list[Gate] = []
        for attempt in [a for a, adm in self._attempts.items() if adm.at < before and a not in live]:
            freed += self.forget(*attempt)
        return freed

    def _new(self, gate: Gate) -> _Breaker | None:
        """A breaker for a key with no state yet; None past MAX_KEYS (not counted)."""
        if len(self._breakers) >= MAX_KEYS and not self.prune():
            self.untracked += 1
            return None
        breaker = self._breakers[gate] = _Breaker()
        return breaker

    def _delete(self, gate: Gate) -> None:
        breaker = self._breakers.pop(gate)
        self._kept -= len(breaker.failed)

    def _count(
        self, breaker: _Breaker, spec: Spec, now: float, failed: bool, attempt: tuple[str, int]
    ) -> bool:
        """Count an outcome of a closed breaker; whether it must open."""
        width = spec.window / BUCKETS
        bucket = int(now // width)
        buckets = breaker.buckets
        if buckets and buckets[-1][0] == bucket:
            buckets[-1][1] += 1
            buckets[-1][2] += failed
        else:
            buckets.append([bucket, 1, int(failed)])
        breaker.attempts += 1
        breaker.failures += failed
        breaker.last = now
        if failed and attempt[1] > 0:
            full = len(breaker.failed) >= MAX_FAILURES_KEPT or self._kept >= MAX_FAILURES_KEPT_ALL
            if full and breaker.failed:
                breaker.failed.popleft()  # the oldest gives its place
                self._kept -= 1
            if self._kept < MAX_FAILURES_KEPT_ALL:
                breaker.failed.append((bucket, *attempt))
                self._kept += 1
        # A bucket counts while it is less than a window old.
        oldest = bucket - BUCKETS
        while buckets and buckets[0][0] <= oldest:
            _b, attempts, failures = buckets.popleft()
            breaker.attempts -= attempts
            breaker.failures -= failures
        while breaker.failed and breaker.failed[0][0] <= oldest:
            breaker.failed.popleft()
            self._kept -= 1
        return failed and breaker.failures >= spec.threshold and breaker.attempts >= spec.min_attempts

    def _refund_window(self, breaker: _Breaker, spec: Spec, *, until: float, skip: tuple[str, int]) -> None:
        """Refund the failures in a closed breaker's window (it opens on them), bar ``skip``."""
        for _bucket, task_id, attempt in breaker.failed:
            if (task_id, attempt) != skip:
                self._refund(Refund(task_id=task_id, attempt=attempt, probe_at=until), spec.max_refunds)

    def _refund(self, refund: Refund, cap: int) -> None:
        count, last = self._refunded.pop(refund.task_id, (0, 0))
        if refund.attempt != last:
            if count >= cap:
                # Its own failures, not the outage's: charged, so it ends a dead letter.
                self._refunded[refund.task_id] = (count, last)
                self.refunds_refused += 1
                return
            count, last = count + 1, refund.attempt
        self._refunded[refund.task_id] = (count, last)
        if len(self._refunded) > MAX_REFUND_TASKS:
            del self._refunded[next(iter(self._refunded))]
        if len(self.refunds) < self.MAX_REFUNDS:
            self.refunds.append(refund)
        else:
            self.refunds_dropped += 1

    def _open(self, gate: Gate, breaker: _Breaker, spec: Spec, now: float) -> None:
        failures = breaker.failures
        breaker.state = OPEN
        breaker.since, breaker.until, breaker.outage = now, now + spec.cool_down, now
        breaker.buckets.clear()
        self._kept -= len(breaker.failed)
        breaker.failed.clear()
        breaker.attempts = breaker.failures = 0
        self.opened[gate[0]] += 1
        self._note(Change(gate=gate, change="opened", failures=failures, probe_at=breaker.until))

    def _close(self, gate: Gate, breaker: _Breaker) -> None:
        # Its other probes' outcomes no longer matter: they count as a closed one's.
        breaker.state = CLOSED
        breaker.probes.clear()
        breaker.until = 0.0
        self.closed[gate[0]] += 1
        self._note(Change(gate=gate, change="closed", failures=0, probe_at=0.0))

    def _note(self, change: Change) -> None:
        if len(self.changes) < self.MAX_CHANGES:
            self.changes.append(change)

    # --- what it looks like ----------------------------------------------------------------
    def room(self, gate: Gate) -> int:
        """Attempts ``gate`` admits now: all when closed, none while cooling down,
        the free probe places when half-open."""
        breaker = self._breakers.get(gate)
        if breaker is None or breaker.state == CLOSED:
            return UNBOUNDED
        if self._clock() + _EPS < breaker.until:
            return 0
        spec = self.specs.get(gate[0])
        return max(0, spec.probes - len(breaker.probes)) if spec is not None else UNBOUNDED

    def next_probe(self, gate: Gate) -> float | None:
        """When an open breaker half-opens; None when closed or half-open already."""
        breaker = self._breakers.get(gate)
        if breaker is None or breaker.state == CLOSED or self._clock() + _EPS >= breaker.until:
            return None
        return breaker.until

    def state(self, gate: Gate) -> str:
        breaker = self._breakers.get(gate)
        if breaker is None or breaker.state == CLOSED:
            return CLOSED
        return OPEN if self._clock() + _EPS < breaker.until else HALF_OPEN

    def not_closed(self, limit: str) -> dict[str, str]:
        """The buckets of ``limit`` whose breaker is open or half-open, and which."""
        return {g[1]: self.state(g) for g, b in self._breakers.items() if g[0] == limit and b.state != CLOSED}

    def figures(self) -> dict[str, Figures]:
        """Every breaker limit's figures (metrics: read from the scrape's thread, whole)."""
        states: dict[str, dict[str, str]] = {name: {} for name in self.specs}
        for gate, b in list(self._breakers.items()):
            if b.state != CLOSED and gate[0] in states:
                states[gate[0]][gate[1]] = self.state(gate)
        return {
            name: Figures(opened=self.opened[name], closed=self.closed[name], not_closed=keys)
            for name, keys in states.items()
        }

    def prune(self) -> int:
        """Forget closed breakers whose window holds no failure (no state: an absent
        breaker is a closed one); returns how many."""
        now = self._clock()
        drop = []
        for gate, b in self._breakers.items():
            spec = self.specs.get(gate[0])
            if b.state == CLOSED and (spec is None or not b.attempts or b.last <= now - spec.window):
                drop.append(gate)
        for gate in drop:
            self._delete(gate)
        return len(drop)

    def memory(self) -> tuple[int, int]:
        """What the breakers keep: (buckets of outcomes, failures remembered), all keys."""
        return sum(len(b.buckets) for b in self._breakers.values()), self._kept
