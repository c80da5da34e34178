"""What bench/load prints: a table per round, the medians, the targets."""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Sequence

from .figures import BEHIND_MS, MAX, Step, Verdict


def now_and_load() -> str:
    # The machine's speed swings from minute to minute: every round says when it ran.
    one, five, _ = os.getloadavg()
    return time.strftime("%H:%M:%S UTC", time.gmtime()) + f", load {one:.2f} / {five:.2f}"


def _ms(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.2f}"


def _rate(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:,.0f}"


def print_steps(title: str, steps: Sequence[Step]) -> None:
    print(f"\n## {title}\n")
    print(
        "| system | step | asked /s | sent /s | done /s | p50 ms | p99 ms | probe p50 ms | probe p90 ms "
        "| probe p99 ms | probe n | generator CPU µs/task | sent late p99 / max ms | errors | unfinished |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in steps:
        asked = f"{s.rate:,.0f} in flight" if s.name == MAX else _rate(s.rate)
        late = "—" if math.isnan(s.late_p99_ms) else f"{s.late_p99_ms:.2f} / {s.late_max_ms:.2f}"
        if s.behind:
            late += " BEHIND"
        print(
            f"| {s.system} | {s.name} | {asked} | {_rate(s.sent_per_s)} | {_rate(s.done_per_s)} "
            f"| {_ms(s.p50_ms)} | {_ms(s.p99_ms)} | {_ms(s.probe_p50_ms)} | {_ms(s.probe_p90_ms)} "
            f"| {_ms(s.probe_p99_ms)} | {s.probe_count} | {_rate(s.generator_cpu_us)} | {late} "
            f"| {s.errors} | {s.unfinished} |"
        )
    for s in steps:
        if s.behind:
            print(
                f"- {s.system} {s.name}: the generator fell behind its schedule (p99 send "
                f"{s.late_p99_ms:.1f} ms late, over {BEHIND_MS:.0f} ms); its latencies count from the "
                "schedule, so they include its own stall"
            )
        if s.errors or s.unfinished:
            print(
                f"- {s.system} {s.name}: {s.errors} failed, {s.unfinished} unfinished; first: {s.first_error}"
            )
    sys.stdout.flush()


def print_targets(system: str, rounds: int, verdicts: Sequence[Verdict]) -> None:
    print(f"\n## targets ({system}, median of {rounds} round(s))\n")
    print("| target | figure | |")
    print("|---|---|---|")
    for v in verdicts:
        mark = "not measured" if v.met is None else ("met" if v.met else "not met")
        print(f"| {v.target} | {v.figure} | {mark} |")
    sys.stdout.flush()
