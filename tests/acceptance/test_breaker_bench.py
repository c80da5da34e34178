"""`bench/breaker` with tiny numbers: the circuit-breaker bench end to end (a suite,
the breaker limit, a control window, one key's outage behind the breaker, its
recovery, a second control, the same outage with no breaker). Checks what it prints
and the verdicts that are facts, not figures: the breaker opened during the outage
(without it the run fails), no task of the failing key ended FAILURE, and all of
them completed once it recovered. The throughput figures live in
docs/benchmarks.md (a loaded test machine is no place to judge 5 %)."""

from __future__ import annotations

import re

import pytest
from support import bench

pytestmark = [pytest.mark.acceptance, pytest.mark.slow, pytest.mark.timeout(240)]

TINY = (
    "--keys", "5", "--outage", "3", "--retry-after", "0.5", "--cool-down", "0.5",
    "--work-ms", "20", "--hang-ms", "200", "--backlog", "100", "--warmup", "1", "--loss-target", "100",
)  # fmt: skip
RATE = r"[\d,]+\.\d"


def test_the_tiny_breaker_bench_runs_and_the_failing_key_loses_no_task() -> None:
    code, out = bench.run("breaker", *TINY, timeout=200)
    assert code == 0, out
    for label in (
        "control, no key down",
        "k000 down, behind the breaker",
        "control again",
        "k000 down, no breaker",
    ):
        assert re.search(rf"^  {label}: +{RATE}$", out, re.M), (label, out)
    assert re.search(
        r"^throughput lost behind the breaker: -?[\d.]+ % of the controls' mean \(target: under 100 %\): ok$",
        out,
        re.M,
    ), out
    assert re.search(r"^throughput lost with no breaker: -?[\d.]+ % \(", out, re.M), out
    opened = re.search(
        r"^the breaker opened during the outage: (\d+) times \(target: at least 1\): ok$", out, re.M
    )
    assert opened is not None and int(opened.group(1)) >= 1, out
    assert "key k000 tasks ended FAILURE: 0 (target: 0): ok" in out, out
    count = r"(\d+(?:,\d{3})*)"
    done = re.search(rf"^key k000 tasks completed once it recovered: {count} of {count}", out, re.M)
    assert done is not None and done.group(1) == done.group(2) and done.group(1) != "0", out
    # The outage opened the breaker and the recovery closed it.
    events = re.search(r"^breaker events: (.*)$", out, re.M)
    assert events is not None and "breaker.opened" in events.group(1) and "breaker.closed" in events.group(1)
    assert out.rstrip().endswith("result: PASS"), out
