"""`bench/chaos --scaled`: the scale-out proof on one machine. Two gateways, two
schedulers (one leading, one standing by), two result-stores sharing the database and
three pools, each instance on a loopback address of its own over NNG tcp; 8,000 tasks
submitted through both gateways while one instance of each service is SIGKILLed for
good (the leading scheduler among them), then the killed ones started again. Every
acknowledged task must end final, the row history must be clean, every duplicate
execution must be one the delivery contract allows (--strict), and the standby must
lead within the failover bound."""

from __future__ import annotations

import re

import pytest
from support import bench
from support.postgres import server_bindir

pytestmark = [pytest.mark.acceptance, pytest.mark.slow, pytest.mark.timeout(480)]

TASKS = 8000
LABELS = (
    "SIGKILL gateway (1 of 2), for good",
    "SIGKILL the leading scheduler, for good",
    "SIGKILL result-store (1 of 2), for good",
    "SIGKILL the busiest pool (1 of 3), for good",
    "restart the killed instances",
)
# docs/scaling.md: the failover objective.
FAILOVER_BOUND = 5.0


def _figure(out: str, label: str) -> int:
    match = re.search(rf"^  {label}\s+(\d+)", out, re.MULTILINE)
    assert match, f"no {label!r} line in the report:\n{out}"
    return int(match.group(1))


@pytest.mark.skipif(server_bindir() is None, reason="needs PostgreSQL server binaries (pg_config --bindir)")
def test_two_of_every_service_lose_nothing_when_one_of_each_is_killed() -> None:
    code, out = bench.run(
        "chaos", "--scaled", "--tasks", str(TASKS), "--strict", "--deadline", "400", timeout=450
    )
    assert code == 0, out
    for label in LABELS:
        assert re.search(rf"{re.escape(label)}.*recovery +\d+\.\d+ s", out), f"{label} not reported:\n{out}"
    # The leader when the fault strikes: term 1 unless the leadership moved before (a
    # stalled leader lets its lease lapse on a loaded machine), which is no failure.
    failover = re.search(r"scheduler failover (\d+\.\d+) s \(SIGKILL of the leader of term \d+ to", out)
    assert failover, f"no scheduler failover measured:\n{out}"
    assert float(failover.group(1)) < FAILOVER_BOUND, out

    assert _figure(out, "acknowledged") == TASKS + len(LABELS)
    assert _figure(out, "final") == _figure(out, "acknowledged")
    assert _figure(out, "lost") == 0 and _figure(out, "stuck") == 0
    assert _figure(out, "body runs") >= TASKS
    assert _figure(out, "unexplained") == 0
    # A batch refused by the dead gateway went through the other one, with the same request ids.
    rerouted = re.search(r"acknowledged by another gateway than the one first tried: (\d+)", out)
    assert rerouted and int(rerouted.group(1)) > 0, out
    assert re.search(r"no final row rewritten, every change legal \(\d+ row changes\): ok", out), out
    assert "result: PASS" in out, out
