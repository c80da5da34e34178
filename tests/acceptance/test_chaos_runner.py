"""`bench/chaos --quick`: the fault-schedule runner, end to end, small. Every fault of
the schedule (each service SIGKILLed and restarted, a worker and a pool frozen
past the lease, PostgreSQL crashed, the store's port flooded by a peer without the
bus key, a pool cut off, and cut off from the store alone, when root) against a few
hundred tasks; it must exit 0 and print its whole report."""

from __future__ import annotations

import os
import re
import shutil

import pytest
from support import bench
from support.postgres import server_bindir

pytestmark = [pytest.mark.acceptance, pytest.mark.slow, pytest.mark.timeout(150)]

LABELS = (
    "SIGKILL result-store",
    "SIGKILL scheduler",
    "SIGKILL gateway",
    "SIGKILL pool-a manager",
    "SIGKILL a pool-a worker",
    "SIGSTOP a pool-b worker",
    "SIGSTOP pool-a",
    "PostgreSQL immediate restart",
    "keyless peer floods the store's port",
)


def _run(*args: str, timeout: float) -> tuple[int, str]:
    return bench.run("chaos", *args, timeout=timeout)


def _figure(out: str, label: str) -> int:
    match = re.search(rf"^  {label}\s+(\d+)", out, re.MULTILINE)
    assert match, f"no {label!r} line in the report:\n{out}"
    return int(match.group(1))


@pytest.mark.skipif(server_bindir() is None, reason="needs PostgreSQL server binaries (pg_config --bindir)")
def test_quick_schedule_loses_nothing_and_reports_every_fault() -> None:
    code, out = _run("--quick", "--tasks", "200", "--deadline", "85", timeout=120)
    assert code == 0, out
    for label in LABELS:
        assert re.search(rf"{re.escape(label)}.*recovery +\d+\.\d+ s", out), f"{label} not reported:\n{out}"
    partitioned = os.geteuid() == 0 and shutil.which("ip") is not None
    if partitioned:
        assert re.search(r"NNG partition of pool-b.*recovery +\d+\.\d+ s", out), out
        # One side of a link: pool-b's route to the store alone.
        assert re.search(r"pool-b's route to the store cut.*recovery +\d+\.\d+ s", out), out
    # A probe per fault; as root also the two cuts (both sides, the store's side).
    assert _figure(out, "acknowledged") == 200 + len(LABELS) + 2 * int(partitioned)
    assert _figure(out, "final") == _figure(out, "acknowledged")
    assert _figure(out, "lost") == 0 and _figure(out, "stuck") == 0
    assert _figure(out, "body runs") >= 200
    assert _figure(out, "bodies run more than once for one attempt") == 0
    for heading in ("## faults", "## tasks", "## executions", "## contract"):
        assert heading in out, out
    # The flood's two phases (60 MiB, then just under the store's receive limit), each
    # within its bounds (the exit code says so too).
    assert len(re.findall(r"^## flood from a keyless peer", out, re.MULTILINE)) == 2, out
    assert len(re.findall(r"^  within bounds: ok", out, re.MULTILINE)) == 2, out
    assert "result: PASS" in out, out
