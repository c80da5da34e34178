"""The proof of bench/chaos's flow-control schedule: given what the database recorded
of every lease and what the task bodies journalled, it checks the limits held.

- (a) concurrency: no key ever had more than its limit of attempts running. A run
  is its journal's start to its end; a run without an end (its worker or pool was
  killed) is an orphan and counts from its start until its lease lapsed (the last
  expiry the database wrote for that attempt) or the store ended the attempt,
  whichever came first.
- (b) rate: no window of ``window`` seconds admitted more than
  rate x window / period + burst attempts, by the instant the database recorded
  each lease (every attempt, retries included), with a sliding window.
- (d) gates: no attempt waited QUEUED for more than ``wait_bound`` seconds in one
  stretch with nothing holding it. Held means: its key had the limit's attempts
  leased (the database's lease to its end), or the rate bucket, replayed over the
  recorded admissions (empty at every scheduler takeover), had no unit left, or the
  last second's admissions reached 95 % of the rate, or the suite was down (a fault
  until its probe task finished).

(c), no task lost or stuck, is bench/chaos's own contract check. Everything here is
pure: the runner (bench/chaos_flow.py) reads the rows and the journal; the tests
(tests/unit/test_flow_check.py) feed made-up ones.
"""

from __future__ import annotations

import bisect
import collections
import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence

LEASED = frozenset({"ASSIGNED", "RUNNING"})
# (d): the rate counts as spent when the last second admitted this share of it.
WINDOW_SHARE = 0.95
Span = tuple[float, float]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Change:
    """One row of the runner's trigger table: a task inserted, or its state or lease
    token changed (``at``: the database's clock_timestamp, epoch seconds)."""

    task_id: str
    attempt: int
    state: str
    token: str
    at: float


@dataclasses.dataclass(frozen=True, kw_only=True)
class Lease:
    """One attempt leased: when it began waiting QUEUED, when it was leased (admitted)
    and when the store ended it (None: still leased at the end of the run)."""

    task_id: str
    attempt: int
    token: str
    key: str
    queued_at: float
    leased_at: float
    released_at: float | None
    expires_at: float  # the last lease expiry written for it (inf: none recorded)

    @property
    def lapses_at(self) -> float:
        """When it stopped holding the key by the database's account."""
        return min(self.expires_at, math.inf if self.released_at is None else self.released_at)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Run:
    """One body execution, from the journal (``ended`` None: cut short)."""

    task_id: str
    attempt: int
    key: str
    started: float
    ended: float | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class Outage:
    label: str
    start: float
    end: float


def leases_from_changes(
    changes: Iterable[Change], expiries: Mapping[tuple[str, int, str], float], keys: Mapping[str, str]
) -> list[Lease]:
    """Every lease of the tasks in ``keys`` (task id -> limit key), from their changes
    in the order the database made them."""
    by_task: dict[str, list[Change]] = collections.defaultdict(list)
    for c in changes:
        if c.task_id in keys:
            by_task[c.task_id].append(c)
    out: list[Lease] = []
    for task_id, rows in by_task.items():
        queued_since: float | None = None
        current: Lease | None = None
        for c in rows:
            leased = c.state in LEASED
            if current is not None and (not leased or c.token != current.token):
                out.append(dataclasses.replace(current, released_at=c.at))
                current = None
            if c.state == "QUEUED":
                queued_since = queued_since if queued_since is not None else c.at
            elif leased and current is None:
                current = Lease(
                    task_id=task_id,
                    attempt=c.attempt,
                    token=c.token,
                    key=keys[task_id],
                    # Inserted already leased (the scheduler's fast path): no wait.
                    queued_at=queued_since if queued_since is not None else c.at,
                    leased_at=c.at,
                    released_at=None,
                    expires_at=expiries.get((task_id, c.attempt, c.token), math.inf),
                )
                queued_since = None
            elif not leased:
                queued_since = None
        if current is not None:
            out.append(current)
    return sorted(out, key=lambda lease: lease.leased_at)


def runs_from_journal(lines: Iterable[str]) -> list[Run]:
    """``start``/``ok``/``raise`` lines of bench/chaos_tasks.py's flow task:
    event, task id, attempt, pid, epoch seconds, key. Other lines are skipped."""
    starts: list[tuple[str, int, int, float, str]] = []
    ends: dict[tuple[str, int, int], float] = {}
    for line in lines:
        parts = line.split()
        if len(parts) != 6:
            continue
        event, task_id, attempt, pid, at, key = parts
        if event == "start":
            starts.append((task_id, int(attempt), int(pid), float(at), key))
        else:
            ends[(task_id, int(attempt), int(pid))] = float(at)
    return [
        Run(task_id=t, attempt=a, key=k, started=at, ended=ends.get((t, a, p))) for t, a, p, at, k in starts
    ]


# --------------------------------------------------------------------------- (a)
@dataclasses.dataclass(frozen=True, kw_only=True)
class ConcurrencyFigures:
    limit: int
    runs: int
    orphans: int
    orphans_ended_by_store: int  # ended before their lease lapsed (the store learned of the death)
    orphans_without_lease: int  # no lease recorded for them: counted until the end of the run
    most: int  # most attempts of one key running at once
    most_key: str
    most_at: float
    keys_at_limit: int
    violations: tuple[tuple[str, float, int, tuple[str, ...]], ...]  # key, instant, running, task ids

    @property
    def passed(self) -> bool:
        return not self.violations

    def lines(self) -> list[str]:
        out = [
            f"  body runs {self.runs}, orphans {self.orphans} (no end in the journal: counted until "
            f"their lease lapsed; {self.orphans_ended_by_store} ended by the store before that, "
            f"{self.orphans_without_lease} without a lease on record)",
            f"  most attempts of one key running at once: {self.most} (limit {self.limit}; "
            f"key {self.most_key or '-'}); keys that reached the limit: {self.keys_at_limit}",
        ]
        for key, at, n, ids in self.violations[:5]:
            out.append(f"    OVER: {key} had {n} running at {at:.3f}: {' '.join(ids)}")
        out.append(f"  (a) no key over {self.limit} running: {_ok(self.passed)}")
        return out


def check_concurrency(
    runs: Sequence[Run], leases: Sequence[Lease], limit: int, *, end: float
) -> ConcurrencyFigures:
    lease_of = {(lease.task_id, lease.attempt): lease for lease in leases}
    intervals: dict[str, list[tuple[float, float, str]]] = collections.defaultdict(list)
    orphans = by_store = unleased = 0
    for r in runs:
        stop = r.ended
        if stop is None:
            orphans += 1
            lease = lease_of.get((r.task_id, r.attempt))
            if lease is None:
                unleased += 1
                stop = end
            else:
                stop = max(r.started, min(lease.lapses_at, end))
                by_store += lease.released_at is not None and lease.released_at < lease.expires_at
        intervals[r.key].append((r.started, stop, r.task_id))
    most, most_key, most_at = 0, "", 0.0
    at_limit = 0
    violations: list[tuple[str, float, int, tuple[str, ...]]] = []
    for key in sorted(intervals):
        peak, peak_at, over = _sweep(intervals[key], limit)
        at_limit += peak >= limit
        if peak > most:
            most, most_key, most_at = peak, key, peak_at
        if over:
            violations.append((key, *over))
    return ConcurrencyFigures(
        limit=limit,
        runs=len(runs),
        orphans=orphans,
        orphans_ended_by_store=by_store,
        orphans_without_lease=unleased,
        most=most,
        most_key=most_key,
        most_at=most_at,
        keys_at_limit=at_limit,
        violations=tuple(violations),
    )


def _sweep(
    spans: list[tuple[float, float, str]], limit: int
) -> tuple[int, float, tuple[float, int, tuple[str, ...]] | None]:
    """Most spans open at once, when, and the first instant over ``limit`` with the
    ids open then. An end and a start at the same instant do not overlap."""
    events = sorted([(s, 1, i) for s, _, i in spans] + [(e, 0, i) for _, e, i in spans])
    open_ids: collections.Counter[str] = collections.Counter()
    count = peak = 0
    peak_at = 0.0
    first_over: tuple[float, int, tuple[str, ...]] | None = None
    for at, starting, task_id in events:
        if starting:
            count += 1
            open_ids[task_id] += 1
        else:
            count -= 1
            open_ids[task_id] -= 1
        if count > peak:
            peak, peak_at = count, at
        if count > limit and first_over is None:
            first_over = (at, count, tuple(sorted(k for k, n in open_ids.items() if n > 0)))
    return peak, peak_at, first_over


# --------------------------------------------------------------------------- (b)
@dataclasses.dataclass(frozen=True, kw_only=True)
class RateFigures:
    source: str
    admissions: int
    window: float
    bound: float
    most: int
    most_from: float

    @property
    def passed(self) -> bool:
        return self.most <= self.bound

    def lines(self) -> list[str]:
        return [
            f"  admissions ({self.source}): {self.admissions}; most in one {self.window:g} s window "
            f"(sliding): {self.most} from {self.most_from:.3f}, bound {self.bound:g} (rate + burst)",
        ]


def rate_bound(units: int, period: float, burst: int, window: float) -> float:
    """What a GCRA admits at most in any ``window``: a full bucket plus the refill."""
    return units * window / period + burst


def check_rate(
    instants: Iterable[float], *, units: int, period: float, burst: int, window: float, source: str
) -> RateFigures:
    times = sorted(instants)
    most, most_from = 0, 0.0
    j = 0
    for i, t in enumerate(times):
        # Admissions in [t, t + window): the window that starts at one of them holds the most.
        j = max(j, i)
        while j < len(times) and times[j] < t + window:
            j += 1
        if j - i > most:
            most, most_from = j - i, t
    return RateFigures(
        source=source,
        admissions=len(times),
        window=window,
        bound=rate_bound(units, period, burst, window),
        most=most,
        most_from=most_from,
    )


# --------------------------------------------------------------------------- (d)
@dataclasses.dataclass(frozen=True, kw_only=True)
class WaitFigures:
    bound: float
    waits: int
    longest_wait: float
    longest_ungated: float
    longest_task: str
    rate_gated: float  # seconds the rate was spent (the replayed bucket empty, or a second at the rate)
    violations: tuple[tuple[str, int, str, float, float], ...]  # task, attempt, key, from, seconds

    @property
    def passed(self) -> bool:
        return not self.violations

    def lines(self) -> list[str]:
        out = [
            f"  attempts that waited QUEUED: {self.waits}; longest wait {self.longest_wait:.2f} s; "
            f"longest stretch with no gate holding it {self.longest_ungated:.3f} s "
            f"({self.longest_task or '-'}); rate spent {self.rate_gated:.1f} s in all",
        ]
        for task_id, attempt, key, since, seconds in self.violations[:5]:
            out.append(
                f"    UNGATED: {task_id}/{attempt} ({key}) waited {seconds:.2f} s from {since:.3f} "
                "with its key under the limit, a unit of rate left and the suite up"
            )
        out.append(f"  (d) no task QUEUED over {self.bound:g} s with no gate holding it: {_ok(self.passed)}")
        return out


def rate_gated_spans(
    admissions: Iterable[float],
    *,
    units: int,
    period: float,
    burst: int,
    takeovers: Iterable[float],
    tolerance: float,
) -> list[tuple[float, float]]:
    """When a token bucket of ``burst`` refilled at units/period, replayed over the
    recorded admissions, held fewer than 1 + ``tolerance`` units: the rate gate was
    shut. It starts full, and empty at each takeover (a new leader's buckets start
    empty). ``tolerance`` absorbs the gap between the scheduler's admission and the
    database's record of the lease."""
    refill = units / period
    level, last = float(burst), -math.inf
    spans: list[tuple[float, float]] = []
    marks = sorted([(t, 0) for t in takeovers] + [(t, 1) for t in admissions])
    for at, admitted in marks:
        if last > -math.inf:
            level = min(float(burst), level + (at - last) * refill)
        last = at
        level = level - 1 if admitted else 0.0
        threshold = 1 + tolerance
        if level < threshold:
            spans.append((at, at + (threshold - level) / refill))
    return _merge(spans)


def window_full_spans(
    admissions: Sequence[float], *, units: int, period: float, share: float, window: float = 1.0
) -> list[Span]:
    """When the last ``window`` seconds' recorded admissions reached ``share`` of what the
    rate allows in it: the rate was spent as fast as it refills. The replay alone cannot
    see this when the scheduler spent units the database never recorded (a lease that
    failed while PostgreSQL was down is charged, since its outcome is unknown): its
    bucket then looks that many units fuller than the scheduler's for as long as the
    rate stays saturated."""
    k = max(1, math.ceil(units * window / period * share))
    times = sorted(admissions)
    return _merge(
        (times[j], times[j - k + 1] + window)
        for j in range(k - 1, len(times))
        if times[j - k + 1] + window > times[j]
    )


def key_full_spans(
    leases: Sequence[Lease], limit: int, *, end: float
) -> dict[str, list[tuple[float, float]]]:
    """Per key, when it had ``limit`` attempts leased (lease to the store's end of it)."""
    per_key: dict[str, list[tuple[float, float, str]]] = collections.defaultdict(list)
    for lease in leases:
        stop = end if lease.released_at is None else lease.released_at
        per_key[lease.key].append((lease.leased_at, stop, lease.task_id))
    out: dict[str, list[tuple[float, float]]] = {}
    for key, spans in per_key.items():
        events = sorted(
            [(s, 1) for s, _, _ in spans] + [(e, -1) for _, e, _ in spans], key=lambda x: (x[0], x[1])
        )
        count, since = 0, 0.0
        full: list[tuple[float, float]] = []
        for at, step in events:
            before = count
            count += step
            if before < limit <= count:
                since = at
            elif count < limit <= before:
                full.append((since, at))
        if count >= limit:
            full.append((since, end))
        out[key] = full
    return out


def check_waits(
    leases: Sequence[Lease],
    *,
    limit: int,
    units: int,
    period: float,
    burst: int,
    outages: Sequence[Outage],
    takeovers: Sequence[float],
    end: float,
    bound: float = 1.0,
    tolerance: float | None = None,
) -> WaitFigures:
    tol = max(1.0, 0.05 * burst) if tolerance is None else tolerance
    admitted = sorted(lease.leased_at for lease in leases)
    rate = _merge(
        rate_gated_spans(
            admitted, units=units, period=period, burst=burst, takeovers=takeovers, tolerance=tol
        )
        + window_full_spans(admitted, units=units, period=period, share=WINDOW_SHARE)
    )
    down = _merge([(o.start, o.end) for o in outages])
    full = key_full_spans(leases, limit, end=end)
    everywhere = _merge(rate + down)
    longest_wait = longest = 0.0
    longest_task = ""
    waits = 0
    violations: list[tuple[str, int, str, float, float]] = []
    for lease in leases:
        if lease.leased_at <= lease.queued_at:
            continue
        waits += 1
        longest_wait = max(longest_wait, lease.leased_at - lease.queued_at)
        window = (lease.queued_at, lease.leased_at)
        gates = _merge(_overlapping(everywhere, *window) + _overlapping(full.get(lease.key, []), *window))
        since, stretch = _longest_gap(gates, lease.queued_at, lease.leased_at)
        if stretch > longest:
            longest, longest_task = stretch, f"{lease.task_id}/{lease.attempt}"
        if stretch > bound:
            violations.append((lease.task_id, lease.attempt, lease.key, since, stretch))
    return WaitFigures(
        bound=bound,
        waits=waits,
        longest_wait=longest_wait,
        longest_ungated=longest,
        longest_task=longest_task,
        rate_gated=sum(e - s for s, e in rate),
        violations=tuple(sorted(violations, key=lambda v: -v[4])),
    )


def _merge(spans: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _overlapping(spans: list[tuple[float, float]], start: float, stop: float) -> list[tuple[float, float]]:
    """The spans of a sorted list of disjoint ``spans`` that meet [start, stop]."""
    out: list[tuple[float, float]] = []
    for s, e in spans[max(0, bisect.bisect_left(spans, (start, -math.inf)) - 1) :]:
        if s >= stop:
            break
        if e > start:
            out.append((s, e))
    return out


def _longest_gap(gates: list[tuple[float, float]], start: float, stop: float) -> tuple[float, float]:
    """The longest stretch of [start, stop] outside every gate: where it began, how long."""
    cursor, best, best_at = start, 0.0, start
    for s, e in gates:
        if e <= cursor:
            continue
        if s >= stop:
            break
        if s > cursor and s - cursor > best:
            best, best_at = s - cursor, cursor
        cursor = max(cursor, e)
        if cursor >= stop:
            break
    if stop > cursor and stop - cursor > best:
        best, best_at = stop - cursor, cursor
    return best_at, best


def _ok(flag: bool) -> str:
    return "ok" if flag else "NO"
