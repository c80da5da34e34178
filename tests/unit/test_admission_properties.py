"""Properties of the admission step under random limits, keys, completions and a
manual clock: no limit is ever exceeded, and no task waits forever."""

from __future__ import annotations

import asyncio
import collections
import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.admission import Harness, concurrency, rate

from taskyard.scheduler.lanes import Use
from taskyard.v1 import limit_pb2

KEYS = ("a", "b", "c")


@dataclasses.dataclass(frozen=True)
class Spec:
    name: str
    is_rate: bool
    n: int  # rate units per period, or max concurrent units
    period_ms: int
    burst: int
    per_key: bool

    def proto(self) -> limit_pb2.Limit:
        if self.is_rate:
            return rate(self.name, self.n, self.period_ms, self.burst, per_key=self.per_key)
        return concurrency(self.name, self.n, per_key=self.per_key)


@st.composite
def specs(draw: st.DrawFn) -> list[Spec]:
    count = draw(st.integers(1, 4))
    out = []
    for i in range(count):
        out.append(
            Spec(
                name=f"l{i}",
                is_rate=draw(st.booleans()),
                n=draw(st.integers(1, 5)),
                period_ms=draw(st.sampled_from([10, 100, 1000])),
                burst=draw(st.integers(0, 4)),
                per_key=draw(st.booleans()),
            )
        )
    return out


Action = tuple[str, int, int]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    limit_specs=specs(),
    tasks=st.lists(
        st.tuples(
            st.lists(st.tuples(st.integers(0, 3), st.sampled_from(KEYS), st.integers(1, 3)), max_size=3),
            st.sampled_from(KEYS),
        ),
        min_size=1,
        max_size=40,
    ),
    actions=st.lists(
        st.tuples(
            st.sampled_from(["dispatch", "finish", "lapse", "advance"]),
            st.integers(0, 50),
            st.integers(1, 400),
        ),
        max_size=80,
    ),
)
def test_no_limit_is_exceeded_and_no_task_starves(
    limit_specs: list[Spec], tasks: list[tuple[list[tuple[int, str, int]], str]], actions: list[Action]
) -> None:
    by_name = {s.name: s for s in limit_specs}
    h = Harness(*(s.proto() for s in limit_specs))
    h.load()
    uses_of: dict[str, tuple[Use, ...]] = {}
    for i, (raw_uses, fkey) in enumerate(tasks):
        seen: set[str] = set()
        uses: list[Use] = []
        for index, key, units in raw_uses:
            spec = limit_specs[index % len(limit_specs)]
            if spec.name in seen:
                continue
            seen.add(spec.name)
            burst = spec.burst or spec.n if spec.is_rate else spec.n
            uses.append((spec.name, key, min(units, burst)))
        uses_of[f"t{i}"] = tuple(uses)
        h.submit(f"t{i}", *uses, key=fkey)
    admitted: dict[tuple[str, str], list[tuple[float, int]]] = collections.defaultdict(list)

    def bucket(spec: Spec, key: str) -> tuple[str, str]:
        return spec.name, key if spec.per_key else ""

    def dispatch(slots: int) -> None:
        for task_id in h.dispatch(slots):
            for name, key, units in uses_of[task_id]:
                spec = by_name[name]
                if spec.is_rate:
                    admitted[bucket(spec, key)].append((h.clock.now, units))
        check_concurrency()

    def check_concurrency() -> None:
        held: collections.Counter[tuple[str, str]] = collections.Counter()
        for task_id in h.running:
            for name, key, units in uses_of[task_id]:
                spec = by_name[name]
                if not spec.is_rate:
                    held[bucket(spec, key)] += units
        for (name, _key), units in held.items():
            assert units <= by_name[name].n, f"{name} holds {units} units"

    for kind, pick, amount in actions:
        if kind == "dispatch":
            dispatch(1 + pick % 5)
        elif kind in ("finish", "lapse") and h.running:
            task_id = sorted(h.running)[pick % len(h.running)]
            if kind == "finish":
                h.finish(task_id)
            else:  # its lease lapsed: the store says so by task
                h.running.pop(task_id)
                h.flow.release_tasks([task_id], before=h.clock.now + 1e-6)
        elif kind == "advance":
            h.tick(amount / 1000)

    # Then everything ends and time goes on: every task is admitted in the end.
    for _ in range(2000):
        for task_id in list(h.running):
            h.finish(task_id)
        dispatch(5)
        if not h.lanes and not len(h.flow.gates) and not h.running:
            break
        h.tick(0.05)
    assert not h.lanes and not len(h.flow.gates), "tasks left waiting"

    # No window of any rate bucket admitted more than its burst plus its rate.
    for (name, _key), stamps in admitted.items():
        spec = by_name[name]
        interval = spec.period_ms / 1000 / spec.n
        burst = spec.burst or spec.n
        for i in range(len(stamps)):
            units = 0
            for j in range(i, len(stamps)):
                units += stamps[j][1]
                window = stamps[j][0] - stamps[i][0]
                assert units <= burst + window / interval + 1e-6, f"{name}: {units} units in {window:.3f} s"


def test_properties_hold_through_a_takeover() -> None:
    """A second term over the same store: its buckets start empty, so the first
    window after the takeover admits no more than the rate allows."""
    h = Harness(rate("api", 10, 1000, burst=10))
    h.load()
    h.clock.now += 5
    for i in range(30):
        h.submit(f"t{i}", ("api", "", 1))
    first = h.dispatch(100)
    assert len(first) == 10
    successor = Harness(rate("api", 10, 1000, burst=10))
    successor.clock.now = h.clock.now
    asyncio.run(successor.load_async())
    for i in range(30, 60):
        successor.submit(f"t{i}", ("api", "", 1))
    successor.tick(0.5)
    assert len(successor.dispatch(100)) == 5  # 10 + 5 in half a second: within 10 + 10 * 0.5
