"""`bench/chaos --flow --quick`: the fault schedule with flow control on every task, end
to end, small. A per-key concurrency limit and a global rate limit, created through the
gateway's LimitService, on a few hundred tasks over 20 keys, while the leader scheduler,
the store, a pool and a worker are SIGKILLed and PostgreSQL is crashed; the run must
exit 0 with every check of its proof (bench/flow_check.py) printed and passed, and the
limits must have bound (a key at its limit, the rate spent for a while), or the proof
would prove nothing."""

from __future__ import annotations

import re

import pytest
from support import bench
from support.postgres import server_bindir

pytestmark = [pytest.mark.acceptance, pytest.mark.slow, pytest.mark.timeout(200)]

LABELS = (
    "SIGKILL result-store",
    "SIGKILL scheduler",
    "SIGKILL pool-a manager",
    "SIGKILL a pool-a worker",
    "PostgreSQL immediate restart",
)


def _number(out: str, pattern: str) -> float:
    match = re.search(pattern, out, re.MULTILINE)
    assert match, f"no {pattern!r} in the report:\n{out}"
    return float(match.group(1))


@pytest.mark.skipif(server_bindir() is None, reason="needs PostgreSQL server binaries (pg_config --bindir)")
def test_quick_flow_schedule_holds_every_limit_through_the_faults() -> None:
    code, out = bench.run("chaos", "--flow", "--quick", "--tasks", "300", "--deadline", "130", timeout=170)
    assert "result: PASS" in out, out
    for label in LABELS:
        assert re.search(rf"{re.escape(label)}.*recovery +\d+\.\d+ s", out), f"{label} not reported:\n{out}"
    assert "limits created through the gateway: chaos.customer" in out, out
    for check in (
        r"\(a\) no key over 3 running: ok",
        r"\(b\) no 1 s window over the rate plus the burst: ok",
        r"\(c\) tasks lost 0, stuck 0: ok",
    ):
        assert re.search(check, out), f"{check} not passed:\n{out}"
    # The limits bound: a key had 3 running at once, the rate was spent for a while.
    assert _number(out, r"most attempts of one key running at once: (\d+) \(limit 3") == 3, out
    assert _number(out, r"rate spent ([\d.]+) s in all") > 0, out
    admitted = _number(out, r"admissions \(leases the database recorded\): (\d+)")
    assert admitted >= 300, out
    assert re.search(r"\(d\) no task QUEUED over 1.5 s with no gate holding it: ok", out), out
    assert code == 0 and "flow control: PASS" in out, out
