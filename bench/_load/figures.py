"""One step's figures, put together from what every generator process and the probe
measured; their medians over rounds; the issue's targets."""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence

from _common import percentile

from .plan import Outcome, ProbeOutcome

# An open step's sends later than this at p99 mean the generator could not keep its
# schedule: its latencies still count from the schedule, but its own stall is in them.
BEHIND_MS = 5.0
MAX = "max"
IDLE = "idle probe"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Step:
    system: str
    round: int
    name: str  # MAX, IDLE, or "50 %" / "80 %"
    rate: float  # open: the arrivals asked for per second; MAX: the in-flight count
    sent_per_s: float = math.nan
    done_per_s: float = math.nan
    p50_ms: float = math.nan
    p99_ms: float = math.nan
    probe_p50_ms: float = math.nan
    probe_p90_ms: float = math.nan
    probe_p99_ms: float = math.nan
    probe_count: int = 0
    generator_cpu_us: float = math.nan  # per task sent, all generator processes
    late_p99_ms: float = math.nan
    late_max_ms: float = math.nan
    errors: int = 0
    unfinished: int = 0
    first_error: str = ""

    @property
    def behind(self) -> bool:
        return not math.isnan(self.late_p99_ms) and self.late_p99_ms > BEHIND_MS


def step_figures(
    system: str,
    round_no: int,
    name: str,
    rate: float,
    outcomes: Sequence[Outcome],
    probed: ProbeOutcome | None,
) -> Step:
    """The figures of one step: the generator processes' outcomes (none: the probe alone)
    and the probe's (none: no probe beside)."""
    latencies = sorted(x for o in outcomes for x in o.latencies_ms)
    lags = sorted(x for o in outcomes for x in o.lags_ms)
    probe = sorted(probed.latencies_ms) if probed is not None else []
    sent = sum(o.sent for o in outcomes)
    first_errors = [o.first_error for o in outcomes] + [probed.first_error if probed is not None else ""]
    return Step(
        system=system,
        round=round_no,
        name=name,
        rate=rate,
        # Each process's own window: a closed loop's ends where its bound on tasks came.
        sent_per_s=sum(o.counted / o.window for o in outcomes) if outcomes else math.nan,
        done_per_s=sum(len(o.latencies_ms) / o.window for o in outcomes) if outcomes else math.nan,
        p50_ms=percentile(latencies, 50),
        p99_ms=percentile(latencies, 99),
        probe_p50_ms=percentile(probe, 50),
        probe_p90_ms=percentile(probe, 90),
        probe_p99_ms=percentile(probe, 99),
        probe_count=len(probe),
        generator_cpu_us=sum(o.cpu_seconds for o in outcomes) * 1e6 / sent if sent else math.nan,
        late_p99_ms=percentile(lags, 99),
        late_max_ms=lags[-1] if lags else math.nan,
        errors=sum(o.errors for o in outcomes) + (probed.errors if probed is not None else 0),
        unfinished=sum(o.unfinished for o in outcomes),
        first_error=next((e for e in first_errors if e), ""),
    )


def median_step(steps: Sequence[Step]) -> Step:
    """Each figure's median over the rounds; counts of trouble are summed."""

    def med(field: str) -> float:
        values = [float(getattr(s, field)) for s in steps]
        values = [v for v in values if not math.isnan(v)]
        return statistics.median(values) if values else math.nan

    return Step(
        system=steps[0].system,
        round=0,
        name=steps[0].name,
        rate=med("rate"),
        sent_per_s=med("sent_per_s"),
        done_per_s=med("done_per_s"),
        p50_ms=med("p50_ms"),
        p99_ms=med("p99_ms"),
        probe_p50_ms=med("probe_p50_ms"),
        probe_p90_ms=med("probe_p90_ms"),
        probe_p99_ms=med("probe_p99_ms"),
        probe_count=sum(s.probe_count for s in steps),
        generator_cpu_us=med("generator_cpu_us"),
        late_p99_ms=med("late_p99_ms"),
        late_max_ms=max((s.late_max_ms for s in steps if not math.isnan(s.late_max_ms)), default=math.nan),
        errors=sum(s.errors for s in steps),
        unfinished=sum(s.unfinished for s in steps),
        first_error=next((s.first_error for s in steps if s.first_error), ""),
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class Verdict:
    target: str
    figure: str
    met: bool | None  # None: not measured


def targets(steps: Sequence[Step]) -> list[Verdict]:
    """Issue 26's latency-under-load targets, on one system's (median) steps."""
    by_name = {s.name: s for s in steps}
    maximum, idle = by_name.get(MAX), by_name.get(IDLE)
    half, most = by_name.get("50 %"), by_name.get("80 %")
    verdicts: list[Verdict] = []

    def check(target: str, value: float, bound: float, shown: str, *of: Step) -> None:
        met = None if math.isnan(value) or math.isnan(bound) else value <= bound
        verdicts.append(_whole(Verdict(target=target, figure=shown, met=met), of))

    if maximum is not None:
        value = maximum.done_per_s
        verdict = Verdict(
            target="unary maximum >= 2,000 tasks/s",
            figure=f"{value:,.0f} tasks/s",
            met=None if math.isnan(value) else value >= 2000,
        )
        verdicts.append(_whole(verdict, (maximum,)))
    if half is not None and idle is not None:
        ratio = half.probe_p50_ms / idle.probe_p50_ms if idle.probe_p50_ms else math.nan
        check(
            "probe p50 at 50 % <= 1.5x idle p50",
            ratio,
            1.5,
            f"{half.probe_p50_ms:.2f} ms vs {idle.probe_p50_ms:.2f} ms idle ({ratio:.2f}x)",
            half,
            idle,
        )
    if half is not None:
        check("probe p99 at 50 % <= 10 ms", half.probe_p99_ms, 10.0, f"{half.probe_p99_ms:.2f} ms", half)
    if most is not None:
        check("probe p99 at 80 % <= 25 ms", most.probe_p99_ms, 25.0, f"{most.probe_p99_ms:.2f} ms", most)
    return verdicts


def _whole(verdict: Verdict, steps: Sequence[Step]) -> Verdict:
    """``verdict``, not met when a step it reads lost tasks: the percentiles count the
    tasks that finished, and those that failed or never finished are the slowest."""
    lost = sum(s.errors + s.unfinished for s in steps)
    if not lost:
        return verdict
    return Verdict(target=verdict.target, figure=f"{verdict.figure} ({lost} failed or unfinished)", met=False)
