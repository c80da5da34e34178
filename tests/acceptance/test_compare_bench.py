"""`bench/compare --quick --systems taskyard`: the comparison runner end to end, Taskyard
alone (so the benchmark extras, pgqueuer and Celery, need not be installed). Checks the
shape of what it prints, never a figure: the figures live in docs/benchmarks.md."""

from __future__ import annotations

import re

import pytest
from support import bench
from support.postgres import server_bindir

pytestmark = [pytest.mark.acceptance, pytest.mark.slow, pytest.mark.timeout(90)]

NUMBER = r"[\d,]+(?:\.\d+)?"
SUMMARY_ROW = re.compile(
    rf"^\| taskyard \| {NUMBER} \| — \| {NUMBER} \| {NUMBER} \| {NUMBER} \| {NUMBER} \| {NUMBER} \|$",
    re.MULTILINE,
)
KINDS = ("gateway", "scheduler", "result-store", "pool manager", "worker", "postgres")


def _run(*args: str, timeout: float) -> tuple[int, str]:
    return bench.run("compare", *args, timeout=timeout)


@pytest.mark.skipif(server_bindir() is None, reason="needs PostgreSQL server binaries (pg_config --bindir)")
def test_quick_taskyard_run_prints_a_round_and_the_median() -> None:
    code, out = _run("--quick", "--systems", "taskyard", "--tasks", "1000", "--samples", "50", timeout=60)
    assert code == 0, out
    assert out.startswith("# compare\ncommand: "), out
    for heading in ("## round 1", "## median of 1 round(s)"):
        assert heading in out, out
    assert len(re.findall(r"^\| system \| tasks/s \| vs pgqueuer \| p50 ms \| p99 ms \|", out, re.M)) == 2, (
        out
    )
    assert len(SUMMARY_ROW.findall(out)) == 2, out
    for kind in KINDS:
        rows = re.findall(rf"^\| taskyard \| {kind} \| \d+ \| {NUMBER} \| {NUMBER} \|$", out, re.M)
        assert len(rows) == 2, f"{kind!r} rows:\n{out}"
    assert "| pgqueuer |" not in out and "| celery |" not in out, out


def test_unknown_system_is_refused() -> None:
    code, out = _run("--systems", "taskyard,rq", timeout=30)
    assert code == 2 and "--systems: choose from taskyard, pgqueuer, celery" in out, out
